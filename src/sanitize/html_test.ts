import assert from "node:assert/strict";
import {
  attachmentIdFromImageSrc,
  editorRewriter,
  type HtmlRewriter,
  noteIdFromHref,
  noteIdFromImageSrc,
  sanitizeLoreHtml,
  sanitizePlayerHtml,
} from "./html.ts";
import { loadHtmlEngine } from "./html_engine.ts";
import { REDACTION_HTML } from "./redaction.ts";

await loadHtmlEngine();

const lore = (html: string) => sanitizeLoreHtml(html);
const player = (html: string) => sanitizePlayerHtml(html);

/** Every input used below; the idempotence test runs them all again. */
const corpus: string[] = [];
function both(html: string): { lore: string; player: string } {
  corpus.push(html);
  return { lore: lore(html), player: player(html) };
}

/** Asserts the lore and player outputs (same unless `playerExpected` is given). */
function check(html: string, expected: string, playerExpected = expected): void {
  const out = both(html);
  assert.equal(out.lore, expected, `lore: ${html}`);
  assert.equal(out.player, playerExpected, `player: ${html}`);
}

// ---------------------------------------------------------------------------------------------
// Script execution vectors

Deno.test("script elements are dropped with their content; surrounding text stays", () => {
  check(
    "<p>Before<script>alert(1)</script>after</p><script src=//evil/x.js></script>",
    "<p>Beforeafter</p>",
  );
});

Deno.test("img onerror: the broken image and its handler go, the text stays", () => {
  check("<p>Map <img src=x onerror=alert(1)> here</p>", "<p>Map  here</p>");
  check(
    '<img src="api/images/AbC123/map.png" onerror="alert(1)" onload="alert(2)">',
    '<img src="/api/images/AbC123/map.png">',
  );
});

Deno.test("javascript: hrefs in every disguise lose the href, keep the text", () => {
  const vectors = [
    "javascript:alert(1)",
    "JaVaScRiPt:alert(1)",
    "jav&#x09;ascript:alert(1)",
    "jav&#x0A;ascript:alert(1)",
    "&#106;avascript:alert(1)",
    "&#x6A;avascript&#x3A;alert(1)",
    "javascript&colon;alert(1)",
    "javascript&#0000058alert(1)",
    "  javascript:alert(1)",
    "&#1;javascript:alert(1)",
    "java script:alert(1)",
    "ｊavascript:alert(1)",
    "vbscript:msgbox(1)",
    "VBScript:msgbox(1)",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "DATA:text/html,<script>alert(1)</script>",
    "file:///etc/passwd",
    "tel:+123",
  ];
  for (const href of vectors) {
    check(`<p><a href="${href}" title="t">click</a> ok</p>`, "<p><a>click</a> ok</p>");
  }
});

Deno.test("allowed link forms are kept", () => {
  check(
    '<a href="https://example.com/a?b=1#c">h</a><a href="http://x.example">i</a>' +
      '<a href="mailto:gm@example.com">m</a><a href="/public/lore/AbC123">r</a>' +
      '<a href="../x:y">d</a><a href="?q=a:b">q</a><a href="#section">f</a>',
    '<a href="https://example.com/a?b=1#c">h</a><a href="http://x.example">i</a>' +
      '<a href="mailto:gm@example.com">m</a><a href="/public/lore/AbC123">r</a>' +
      '<a href="../x:y">d</a><a href="?q=a:b">q</a><a href="#section">f</a>',
  );
});

Deno.test("data: URLs: images removed, links lose their href", () => {
  check(
    '<p>A<img src="data:image/png;base64,iVBORw0KGgo=">B' +
      '<img src="data:image/svg+xml,<svg onload=alert(1)>">C</p>',
    "<p>ABC</p>",
  );
  check('<a href="data:text/html;base64,PHNjcmlwdD4=">file</a>', "<a>file</a>");
});

Deno.test("svg and math are dropped whole (script, onload, mutation-XSS shape)", () => {
  check("<p>a<svg><script>alert(1)</script></svg>b</p>", "<p>ab</p>");
  check('<p>a<svg onload="alert(1)"><circle r="1"/></svg>b</p>', "<p>ab</p>");
  check('<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>ok', "ok");
  check(
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style></mglyph></table>" +
      "</mtext></math><p>after</p>",
    "<p>after</p>",
  );
  check("<svg><style><img src=x onerror=alert(1)></style></svg>ok", "ok");
});

Deno.test("noscript whose attribute hides a closing tag cannot smuggle an image", () => {
  const out = both('<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>ok');
  for (const html of [out.lore, out.player]) {
    assert.ok(!html.includes("<img"), html);
    assert.ok(!html.includes("onerror"), html);
  }
  // browsers run scripts, so <noscript> is raw text there: both views drop just the element
  check("<p>a</p><noscript><p>no js</p></noscript><p>b</p>", "<p>a</p><p>b</p>");
});

Deno.test("style elements, @import and CSS in attributes are removed", () => {
  check("<style>@import 'http://evil.example/x.css';</style><p>text</p>", "<p>text</p>");
  check(
    '<div style="background:url(javascript:alert(1))">a</div>' +
      '<div style="color: expression(alert(1))">b</div>' +
      '<div style="width: expression(alert(1)); behavior: url(x.htc)">c</div>' +
      '<div style="color:#abc;background-image:url(http://tracker.example/p.gif)">d</div>',
    '<div>a</div><div>b</div><div>c</div><div style="color:#abc">d</div>',
  );
});

Deno.test("only allow-listed style properties and value forms survive", () => {
  check(
    '<p style="text-align: center; color: #AABBCC; background-color: rgba(1, 2, 3, 0.5); ' +
      "font-weight: bold; font-style: italic; text-decoration: underline line-through; " +
      'position: fixed; top: 0; z-index: 99">x</p>',
    '<p style="text-align:center;color:#AABBCC;background-color:rgba(1, 2, 3, 0.5);' +
      'font-weight:bold;font-style:italic;text-decoration:underline line-through">x</p>',
  );
  // Named colours and hsl() are not in the allow-list (hex and numeric rgb only).
  check(
    '<span style="color:red">a</span><span style="color:hsl(0,0%,0%)">b</span>',
    "<span>a</span><span>b</span>",
  );
  // Sizes only on img/table/td/col, only px or %.
  check(
    '<table style="width:100%"><tbody><tr><td style="width:25.5%;height:20px">c</td></tr>' +
      '</tbody></table><div style="width:10px">d</div><table><tr><td style="width:10em">e</td>',
    '<table style="width:100%"><tbody><tr><td style="width:25.5%;height:20px">c</td></tr>' +
      "</tbody></table><div>d</div><table><tbody><tr><td>e</td></tr></tbody></table>",
  );
});

Deno.test("iframe (srcdoc), object, embed, base, meta refresh and link are dropped", () => {
  check('<iframe srcdoc="<script>alert(1)</script>">fallback</iframe><p>ok</p>', "<p>ok</p>");
  check('<iframe src="javascript:alert(1)"></iframe>ok', "ok");
  check('<object data="javascript:alert(1)"><p>fallback</p></object>ok', "ok");
  check('<embed src="javascript:alert(1)">ok', "ok");
  check(
    '<base href="https://evil.example/"><p><a href="x">rel</a></p>',
    '<p><a href="x">rel</a></p>',
  );
  check('<meta http-equiv="refresh" content="0;url=javascript:alert(1)"><p>ok</p>', "<p>ok</p>");
  check('<link rel="stylesheet" href="//evil.example/x.css"><p>ok</p>', "<p>ok</p>");
});

Deno.test("forms: form tag unwrapped, controls dropped with their content", () => {
  check(
    '<form action="javascript:alert(1)"><p>Pick</p><input value="v" onfocus="alert(1)" autofocus>' +
      '<button formaction="javascript:alert(1)">Go</button><select><option>o</option></select>' +
      "<textarea><img src=x onerror=alert(1)></textarea></form>",
    "<p>Pick</p>",
  );
});

Deno.test("protocol-relative: allowed for links; an image never loads from another host", () => {
  check('<a href="//evil.example/page">ext</a>', '<a href="//evil.example/page">ext</a>');
  check(
    '<p>A<img src="//evil.example/p.gif">B<img src="\\\\evil.example\\p.gif">C</p>',
    "<p>ABC</p>",
  );
  // a note's image named on another host is shown from our own route, never fetched there
  check(
    '<p><img src="/\\evil.example/api/images/AbC123/x.png">' +
      '<img src="//evil.example/api/images/AbC123/x.png"></p>',
    '<p><img src="/api/images/AbC123/x.png"><img src="/api/images/AbC123/x.png"></p>',
  );
});

Deno.test("remote images (trackers) are removed; attachment URLs elsewhere load from us", () => {
  check(
    '<p>A<img src="https://tracker.example/p.gif" width="1" height="1">B' +
      '<img src="data:image/png;base64,iVBORw0KGgo=">C</p>',
    "<p>ABC</p>",
  );
  check(
    '<p><img src="http://tracker.example/api/attachments/x/image/p.gif">' +
      '<img src="//tracker.example/api/attachments/AtT123/image/p.gif"></p>',
    '<p><img src="/api/attachments/x/image/p.gif">' +
      '<img src="/api/attachments/AtT123/image/p.gif"></p>',
  );
});

Deno.test("Core's image attachments point at our attachment route, file name made URL-safe", () => {
  const route = "/api/attachments/AtT123abcDEF/image";
  // as Core stores a pasted image (title encoded), with a leading /, with query and fragment
  check(
    '<p><img src="api/attachments/AtT123abcDEF/image/inline%20image" width="12" alt="x"></p>',
    `<p><img src="${route}/inline-image" alt="x" width="12"></p>`,
  );
  check(
    '<img src="/api/attachments/AtT123abcDEF/image/K%C3%BCste%20map.png?1712345#top">',
    `<img src="${route}/K-ste-map.png">`,
  );
  check(
    '<img src="api/attachments/AtT123abcDEF/image/%22%3E%3Cscript%3E.png">',
    `<img src="${route}/script-.png">`,
  );
  check(`<img src="api/attachments/AtT123abcDEF/image/%%">`, `<img src="${route}/image">`);
  // gm-only images go for players like any gm-only content
  check(
    '<p>A<span class="gm-only"><img src="api/attachments/AtT123abcDEF/image/s.png"></span></p>',
    `<p>A<span class="gm-only"><img src="${route}/s.png"></span></p>`,
    "<p>A</p>",
  );
  // any base path or spelling naming the image attachment
  check(
    '<img src="x/api/attachments/AtT123abcDEF/image/a/b.png">',
    `<img src="${route}/b.png">`,
  );
  // not an image attachment: another role, a dot segment out of it, a bad id
  for (
    const src of [
      "api/attachments/AtT123abcDEF/download",
      "api/attachments/AtT123abcDEF/file/x.pdf",
      "api/attachments/../notes/image/x.png",
      "api/attachments/AtT-123/image/x.png",
    ]
  ) {
    check(`<p>A<img src="${src}">B</p>`, "<p>AB</p>");
  }
});

Deno.test("DOM clobbering: id and name never survive", () => {
  check(
    '<div id="__proto__" class="box">a</div>' +
      '<img name="getElementById" src="/api/lore/AbC123/image">' +
      '<a id="x" name="y" href="/z">z</a><form name="cookie">f</form>',
    '<div class="box">a</div><img src="/api/images/AbC123/image"><a href="/z">z</a>f',
  );
});

Deno.test("event handlers, srcset, formaction and xlink attributes are stripped", () => {
  check(
    '<p onclick="alert(1)" onmouseover="alert(2)">p</p>' +
      '<img src="api/images/AbC123/x.png" srcset="javascript:alert(1) 1x, //evil/x.png 2x" ' +
      'loading="lazy" usemap="#m">' +
      '<a href="/ok" xlink:href="javascript:alert(1)" ping="//evil" ' +
      'formaction="javascript:1">a</a>',
    '<p>p</p><img src="/api/images/AbC123/x.png"><a href="/ok">a</a>',
  );
});

Deno.test("comments and CDATA are dropped, including markup hidden inside them", () => {
  check("<p>a<!-- <img src=x onerror=alert(1)> -->b</p>", "<p>ab</p>");
  // outside SVG/MathML, `<![CDATA[` opens a bogus comment that ends at the first `>`
  check("<p>a<![CDATA[<img src=x onerror=alert(1)>]]>b</p>", "<p>a]]&gt;b</p>");
  check("<!--><img src=x onerror=alert(1)>-->ok", "--&gt;ok");
});

Deno.test('attribute values containing "><script> stay inside the attribute, escaped', () => {
  check(
    `<a href="/x" title='"><script>alert(1)</script>'>t</a><abbr title="a&quot;><b>">b</abbr>`,
    '<a href="/x" title="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">t</a>' +
      '<abbr title="a&quot;&gt;&lt;b&gt;">b</abbr>',
  );
});

Deno.test("text is escaped; entities are decoded once and re-encoded", () => {
  check(
    "<p>&lt;script&gt;alert(1)&lt;/script&gt; &amp; Tom &amp;amp; Jerry</p>",
    "<p>&lt;script&gt;alert(1)&lt;/script&gt; &amp; Tom &amp;amp; Jerry</p>",
  );
});

Deno.test("unknown elements lose the tag but keep their text; drop-list loses both", () => {
  check(
    '<center><font color="red">Red</font> text</center><marquee>m</marquee>' +
      "<html><body>b</body></html>",
    "Red textmb",
  );
  check(
    "<p>a<template><p>t</p></template><title>T</title><noembed>n</noembed><noframes>f</noframes>" +
      "<xmp><img src=x onerror=alert(1)></xmp>b</p>",
    // as browsers parse it: <xmp> closes the open <p>, and the stray </p> opens an empty one
    "<p>a</p>b<p></p>",
  );
  check("<p>before</p><plaintext><p>all the rest</p>", "<p>before</p>");
});

Deno.test("structure, tables and their attributes are kept per the allow-list", () => {
  check(
    '<h2 class="title">H</h2><blockquote><p>q</p></blockquote><pre><code>x &lt; y</code></pre>' +
      '<ol start="3" type="i" reversed><li>one</li></ol>' +
      '<ol start="x" type="disc"><li>two</li></ol>' +
      '<table><caption>c</caption><colgroup><col style="width:30%" span="2"></colgroup><thead>' +
      '<tr><th scope="COL" colspan="2" abbr="x">h</th></tr></thead><tbody><tr>' +
      '<td colspan="2" rowspan="x" headers="h">d</td></tr></tbody><tfoot><tr><td>f</td></tr>' +
      "</tfoot></table>" +
      '<details open><summary>S</summary>D</details><abbr title="HyperText">HTML</abbr>' +
      '<dl><dt>t</dt><dd>d</dd></dl><figure class="image"><img src="api/images/AbC123/m.png" ' +
      'alt="Map" title="The map" width="300" height="20%" style="width:50%"><figcaption>Map' +
      "</figcaption></figure><p><strong>b</strong><em>i</em><u>u</u><s>s</s><sub>1</sub>" +
      "<sup>2</sup><mark>m</mark><small>s</small><del>d</del><ins>i</ins><kbd>k</kbd><br></p><hr>",
    '<h2 class="title">H</h2><blockquote><p>q</p></blockquote><pre><code>x &lt; y</code></pre>' +
      '<ol start="3" type="i"><li>one</li></ol><ol><li>two</li></ol>' +
      '<table><caption>c</caption><colgroup><col style="width:30%"></colgroup><thead>' +
      '<tr><th colspan="2" scope="col">h</th></tr></thead><tbody><tr>' +
      '<td colspan="2">d</td></tr></tbody><tfoot><tr><td>f</td></tr></tfoot></table>' +
      '<details><summary>S</summary>D</details><abbr title="HyperText">HTML</abbr>' +
      '<dl><dt>t</dt><dd>d</dd></dl><figure class="image"><img src="/api/images/AbC123/m.png" ' +
      'alt="Map" title="The map" width="300" style="width:50%"><figcaption>Map' +
      "</figcaption></figure><p><strong>b</strong><em>i</em><u>u</u><s>s</s><sub>1</sub>" +
      "<sup>2</sup><mark>m</mark><small>s</small><del>d</del><ins>i</ins><kbd>k</kbd><br></p>" +
      "<hr>",
  );
});

Deno.test("class tokens are filtered, deduplicated and kept in order", () => {
  check(
    '<p class="  lead  lead x$y ok_1 a-b \u00e9t\u00e9 ' + "z".repeat(65) +
      '">c</p><p class="$">d</p>',
    '<p class="lead ok_1 a-b">c</p><p>d</p>',
  );
});

// ---------------------------------------------------------------------------------------------
// Links: target, rel, Core's reference links and included notes

Deno.test('target="_blank" always comes with rel="noopener noreferrer"; other targets go', () => {
  check(
    '<a href="https://x.example" target="_blank">a</a>' +
      '<a href="https://x.example" target="_BLANK " rel="opener nofollow">b</a>' +
      '<a href="https://x.example" target="_self">c</a>' +
      '<a href="https://x.example" target="_top" rel="noreferrer">d</a>' +
      '<a href="javascript:alert(1)" target="_blank" rel="noopener">e</a>',
    '<a href="https://x.example" target="_blank" rel="noopener noreferrer">a</a>' +
      '<a href="https://x.example" target="_blank" rel="noopener noreferrer nofollow">b</a>' +
      '<a href="https://x.example">c</a>' +
      '<a href="https://x.example" rel="noreferrer">d</a>' +
      "<a>e</a>",
  );
});

Deno.test("Core reference links, internal links and include-note sections are kept", () => {
  check(
    '<p><a class="reference-link" href="#root/x/AbC123" data-note-id="AbC123">Ref</a> and ' +
      '<a href="#root/a/b/Zz_9">link</a></p>' +
      '<section class="include-note" data-note-id="Inc_1"></section>' +
      '<section class="include-note" data-note-id="../etapi/notes"></section>' +
      '<span data-note-id="">x</span>',
    '<p><a href="#root/x/AbC123" class="reference-link" data-note-id="AbC123">Ref</a> and ' +
      '<a href="#root/a/b/Zz_9">link</a></p>' +
      '<section class="include-note" data-note-id="Inc_1"></section>' +
      '<section class="include-note"></section><span>x</span>',
  );
});

// ---------------------------------------------------------------------------------------------
// Images: Core's stored forms

Deno.test("Core-stored image forms are rewritten to /api/images/<id>/<file>", () => {
  // source → the file name kept (URL-safe; a query or fragment dropped)
  const forms: [string, string][] = [
    ["api/images/AbC123/map.png", "map.png"],
    ["api/images/AbC123/map.png?1700000000000", "map.png"],
    ["/api/images/AbC123/My%20Map.png", "My-Map.png"],
    ["/api/lore/AbC123/image", "image"],
    ["api/lore/AbC123/image", "image"],
    ["https://core.example/api/images/AbC123/map.png", "map.png"],
    ["http://portal.example:3000/api/lore/AbC123/image?v=2", "image"],
    ["HTTPS://core.example/trilium/api/images/AbC123/map.png", "map.png"],
    [" api/images/AbC123/map.png ", "map.png"],
  ];
  for (const [src, file] of forms) {
    check(`<img src="${src}" alt="m">`, `<img src="/api/images/AbC123/${file}" alt="m">`);
  }
  // the fixed words in any letter case, as Core's routes read them; no file name needed
  check('<img src="API/Images/AbC123/x.png">', '<img src="/api/images/AbC123/x.png">');
  check('<img src="api/images/AbC123/">', '<img src="/api/images/AbC123/image">');
  for (const src of ["api/images/a.b/x.png", "api/lore/AbC123/thumb", "AbC123.png", ""]) {
    check(`<p>x<img src="${src}">y</p>`, "<p>xy</p>");
  }
  check("<p>x<img>y</p>", "<p>xy</p>");
});

// ---------------------------------------------------------------------------------------------
// gm-only (player view)

Deno.test("gm-only: simple block removed with its content for players, kept for the GM", () => {
  check(
    '<p>Public</p><div class="gm-only"><p>The mayor is a vampire.</p></div><p>More</p>',
    '<p>Public</p><div class="gm-only"><p>The mayor is a vampire.</p></div><p>More</p>',
    "<p>Public</p><p>More</p>",
  );
});

Deno.test("gm-only: matched as one token among several classes", () => {
  check(
    '<div class="note gm-only secret">hidden</div><div class="note">shown</div>',
    '<div class="note gm-only secret">hidden</div><div class="note">shown</div>',
    '<div class="note">shown</div>',
  );
});

Deno.test("gm-only: token match, not substring", () => {
  check(
    '<p class="not-gm-only-really">kept</p><p class="gm-only-ish">kept too</p>',
    '<p class="not-gm-only-really">kept</p><p class="gm-only-ish">kept too</p>',
  );
});

Deno.test("gm-only: any letter case counts (fail closed)", () => {
  check(
    '<p>a<span class="GM-ONLY">b</span><span class="Gm-Only x">c</span>d</p>',
    '<p>a<span class="GM-ONLY">b</span><span class="Gm-Only x">c</span>d</p>',
    "<p>ad</p>",
  );
});

Deno.test("gm-only: a span inside a paragraph", () => {
  check(
    '<p>The inn <span class="gm-only">(a smugglers\' den)</span> is quiet.</p>',
    '<p>The inn <span class="gm-only">(a smugglers\' den)</span> is quiet.</p>',
    "<p>The inn  is quiet.</p>",
  );
});

Deno.test("gm-only: nested at depth >= 4 inside allowed elements", () => {
  check(
    '<section><div><ul><li><p>Visible <em class="x gm-only">deep <b>secret</b> ' +
      '<img src="api/images/AbC123/x.png"></em> end</p></li></ul></div></section>',
    '<section><div><ul><li><p>Visible <em class="x gm-only">deep <b>secret</b> ' +
      '<img src="/api/images/AbC123/x.png"></em> end</p></li></ul></div></section>',
    "<section><div><ul><li><p>Visible  end</p></li></ul></div></section>",
  );
});

Deno.test("gm-only: a table row, and the next row keeps its own end tag", () => {
  check(
    '<table><tbody><tr class="gm-only"><td>Secret row</td></tr><tr><td>Public row</td></tr>' +
      "</tbody></table>",
    '<table><tbody><tr class="gm-only"><td>Secret row</td></tr><tr><td>Public row</td></tr>' +
      "</tbody></table>",
    "<table><tbody><tr><td>Public row</td></tr></tbody></table>",
  );
});

Deno.test("gm-only: on an element that is otherwise unwrapped, its text still goes", () => {
  check(
    '<p>a<font class="gm-only">secret <b>bold</b></font>b</p><center class="gm-only">c</center>' +
      '<p>x<wbr class="gm-only">y</p>',
    "<p>asecret <b>bold</b>b</p>c<p>xy</p>",
    "<p>ab</p><p>xy</p>",
  );
});

Deno.test("gm-only: nested gm-only, implied end tags and raw-text elements", () => {
  check(
    '<section class="gm-only"><section class="gm-only">a</section>b</section>c',
    '<section class="gm-only"><section class="gm-only">a</section>b</section>c',
    "c",
  );
  check(
    '<ul><li>a<li class="gm-only">b<li>c</ul><p>one<p class="gm-only">two<p>three',
    '<ul><li>a</li><li class="gm-only">b</li><li>c</li></ul><p>one</p><p class="gm-only">two</p>' +
      "<p>three</p>",
    "<ul><li>a</li><li>c</li></ul><p>one</p><p>three</p>",
  );
  check('<textarea class="gm-only"><b>x</b></textarea><p>y</p>', "<p>y</p>");
});

// ---------------------------------------------------------------------------------------------
// Determinism, idempotence, rewriters

Deno.test("attributes come out in one canonical order whatever the input order", () => {
  const a = lore('<a class="c" rel="nofollow" target="_blank" title="t" href="/x">l</a>');
  const b = lore('<a href="/x" title="t" target="_blank" rel="nofollow" class="c">l</a>');
  assert.equal(a, b);
  assert.equal(
    a,
    '<a href="/x" title="t" target="_blank" rel="noopener noreferrer nofollow" class="c">l</a>',
  );
});

Deno.test("removing an unwrapped element does not change the tree on the next pass", () => {
  // htmlparser2 closes <p> before <div> only when <p> is the innermost open element.
  check("<p>a<center><div>b</div></center>c</p>", "<p>a</p><div>b</div>c<p></p>");
  check("<dl><dd>a<form><dd>b</form></dl>", "<dl><dd>a</dd><dd>b</dd></dl>");
});

/** Small seeded generator of hostile tag soup. */
function soup(seed: number, count: number): string[] {
  let state = seed;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)];
  // noscript is left out: sanitize-html re-emits, as escaped text, markup that htmlparser2 read
  // as raw text while the browser would have ended the <noscript> (harmless, but not "secret").
  const tags = ("p div span b table tr td tbody li ul ol a font section select textarea title " +
    "svg math template style pre h1 details summary form center iframe xmp caption col dl dd")
    .split(" ");
  const gm = "p div span b table tr td li ul a font section center details h1 dl dd caption"
    .split(" ");
  const docs: string[] = [];
  for (let n = 0; n < count; n++) {
    let doc = "";
    const parts = 1 + Math.floor(next() * 20);
    for (let i = 0; i < parts; i++) {
      const r = next();
      if (r < 0.25) doc += `<${pick(tags)}>`;
      else if (r < 0.45) doc += `</${pick(tags)}>`;
      else if (r < 0.6) doc += `<${pick(gm)} class="${pick(["gm-only", "x GM-only"])}">SECRET`;
      else if (r < 0.75) doc += pick(["text", "&amp;", "&lt;b&gt;", '"', ">", "<", "<!--", "-->"]);
      else if (r < 0.9) {
        doc += pick([
          "<img src=x onerror=alert(1)>",
          '<img src="api/images/AbC123/x.png">',
          '<a href="javascript:alert(1)" onclick="x">j</a>',
          '<p title="</p><script>alert(1)</script>">',
          "<br>",
        ]);
      } else doc += pick(["<script>alert(1)</script>", "</p>", "</br>", "<p/>", "<div/>"]);
    }
    docs.push(doc);
  }
  return docs;
}

const ALLOWED_IN_OUTPUT = new Set(
  ("p br hr h1 h2 h3 h4 h5 h6 blockquote pre code div span section figure figcaption ul ol li " +
    "dl dt dd strong b em i u s sub sup mark small del ins kbd abbr table thead tbody tfoot tr " +
    "th td caption colgroup col details summary a img").split(" "),
);

Deno.test("fuzz: only allowed tags, no handlers or scripts, no gm-only text for players", () => {
  for (const doc of soup(20261121, 1500)) {
    const gm = lore(doc);
    const pl = player(doc);
    assert.ok(!pl.includes("SECRET"), `gm-only leaked: ${doc} -> ${pl}`);
    for (const out of [gm, pl]) {
      for (const tag of out.match(/<[^>]*>/g) ?? []) {
        const name = /^<\/?([^\s/>]*)/.exec(tag)![1];
        assert.ok(ALLOWED_IN_OUTPUT.has(name), `tag ${tag} from ${doc}`);
        assert.ok(!/\son\w*=|javascript:|\sid=|\sname=/i.test(tag), `attr ${tag} from ${doc}`);
        if (name === "img") assert.match(tag, /^<img src="\/api\/images\/AbC123\/x\.png">$/);
      }
    }
    assert.equal(lore(gm), gm, `lore not idempotent: ${doc}`);
    assert.equal(player(pl), pl, `player not idempotent: ${doc}`);
  }
});

Deno.test("every vector above is deterministic and idempotent in both modes", () => {
  assert.ok(corpus.length > 50, "runs after the vector tests");
  for (const html of corpus) {
    const once = lore(html);
    assert.equal(lore(html), once, `not deterministic: ${html}`);
    assert.equal(lore(once), once, `lore not idempotent: ${html}`);
    const p = player(html);
    assert.equal(player(p), p, `player not idempotent: ${html}`);
  }
});

/** The public site's shape: notes map to /public/lore/<id>, hidden notes are unlinked. */
function publicRewriter(visible: ReadonlySet<string>): HtmlRewriter {
  return {
    image(src) {
      const id = noteIdFromImageSrc(src);
      return id !== null && visible.has(id) ? `/api/public/images/${id}/image` : null;
    },
    link(href) {
      const id = noteIdFromHref(href);
      if (id === null) return href.trim().startsWith("#root") ? null : editorRewriter.link(href);
      return visible.has(id) ? `/public/lore/${id}` : null;
    },
  };
}

Deno.test("an injected rewriter controls links and images (public site)", () => {
  const rewriter = publicRewriter(new Set(["Pub1"]));
  const html = '<p><a class="reference-link" href="#root/x/Pub1">Pub</a> ' +
    '<a href="#root/x/Hidden2">Hidden</a> <a href="https://wiki.example">ext</a> ' +
    '<a href="javascript:alert(1)">js</a></p>' +
    '<img src="api/images/Pub1/a.png"><img src="api/images/Hidden2/b.png">' +
    '<div class="gm-only">gm</div>';
  assert.equal(
    sanitizePlayerHtml(html, rewriter),
    '<p><a href="/public/lore/Pub1" class="reference-link">Pub</a> <a>Hidden</a> ' +
      '<a href="https://wiki.example">ext</a> <a>js</a></p>' +
      '<img src="/api/public/images/Pub1/image">',
  );
  assert.equal(
    sanitizeLoreHtml('<img src="api/images/Pub1/a.png">', rewriter),
    '<img src="/api/public/images/Pub1/image">',
  );
  // The default rewriter is untouched by the custom one.
  assert.equal(lore('<img src="api/images/Pub1/a.png">'), '<img src="/api/images/Pub1/a.png">');
});

Deno.test("a rewriter's output is checked again, so a buggy one cannot inject", () => {
  const bad: HtmlRewriter = {
    image: (
      src,
    ) => (src === "a" ? "//evil.example/x.png" : src === "b" ? "javascript:alert(1)" : "/ok.png"),
    link: (
      href,
    ) => (href === "a" ? "javascript:alert(1)" : href === "b" ? " data:text/html,x" : "/ok"),
  };
  assert.equal(
    sanitizeLoreHtml(
      '<img src="a"><img src="b"><img src="c"><a href="a">1</a><a href="b">2</a><a href="c">3</a>',
      bad,
    ),
    '<img src="/ok.png"><a>1</a><a>2</a><a href="/ok">3</a>',
  );
});

Deno.test("a rewriter's redacted link leaves the one canonical mark; its text goes", () => {
  const redacting: HtmlRewriter = {
    image: () => null,
    link: () => null,
    removes: (el) => el.tagName === "a" && el.attr("href") === "#hidden" && "redact",
  };
  const out = sanitizePlayerHtml(
    '<p>Beware <a href="#hidden" title="The Cult">The <b>Drowned</b> Cult</a>, and<a href="#hidden"> ' +
      'Mara</a>sails <a href="#other">home</a>.</p><div class="gm-only"><a href="#hidden">x</a></div>',
    redacting,
  );
  assert.equal(out, `<p>Beware ${REDACTION_HTML}, and ${REDACTION_HTML} sails <a>home</a>.</p>`);
  assert.equal(sanitizePlayerHtml(out), out, "idempotent");
  // a span of that class, written by anyone, gets the mark's fixed attributes and no others
  check(
    '<span title="The Cult" class="redacted" role="button" aria-label="x" onclick="f()">—</span>',
    REDACTION_HTML,
  );
  check(
    '<span class="redacted big" role="img" aria-label="x">—</span>',
    '<span class="redacted big">—</span>',
  );
});

// ---------------------------------------------------------------------------------------------
// Parse helpers and the editor rewriter

Deno.test("noteIdFromImageSrc: image references of a note with a valid id", () => {
  assert.equal(noteIdFromImageSrc("api/images/AbC123/map.png"), "AbC123");
  assert.equal(noteIdFromImageSrc("/api/images/AbC123/map.png?x#y"), "AbC123");
  assert.equal(noteIdFromImageSrc("/api/lore/Ab_9/image"), "Ab_9");
  assert.equal(noteIdFromImageSrc("https://core.example/api/lore/AbC123/image"), "AbC123");
  assert.equal(noteIdFromImageSrc("http://core.example/base/api/images/AbC123/m.png"), "AbC123");
  // any host, base path or spelling a browser would reach it by: still only our image route
  assert.equal(noteIdFromImageSrc("//core.example/api/images/AbC123/m.png"), "AbC123");
  assert.equal(noteIdFromImageSrc("../share/api/images/AbC123/m.png"), "AbC123");
  assert.equal(noteIdFromImageSrc("api/images/AbC123\t/m.png"), "AbC123");
  assert.equal(noteIdFromImageSrc(`api/images/${"a".repeat(128)}/m.png`), "a".repeat(128));
  for (
    const src of [
      "x".repeat(129),
      `api/images/${"a".repeat(129)}/m.png`,
      "api/attachments/AtT1/image/m.png",
      "data:image/png;base64,AAAA",
      "javascript:alert(1)//api/images/AbC123/m.png",
      "ftp://core.example/api/images/AbC123/m.png",
      "api/lore/AbC123/thumb",
      "api/images/Ab-C/m.png",
      "#root/AbC123",
      "https://tracker.example/p.gif",
    ]
  ) {
    assert.equal(noteIdFromImageSrc(src), null, src);
  }
});

Deno.test("attachmentIdFromImageSrc: image attachments only", () => {
  assert.equal(attachmentIdFromImageSrc("api/attachments/AtT1/image/m.png"), "AtT1");
  assert.equal(attachmentIdFromImageSrc("https://x.example/api/attachments/AtT1/image/m"), "AtT1");
  for (
    const src of ["api/attachments/AtT1/download", "api/attachments/At-1/image/m.png", "x.png"]
  ) {
    assert.equal(attachmentIdFromImageSrc(src), null, src);
  }
});

Deno.test("noteIdFromHref: links naming a note by a valid id", () => {
  assert.equal(noteIdFromHref("#root/x/AbC123"), "AbC123");
  assert.equal(noteIdFromHref("#root/AbC123"), "AbC123");
  assert.equal(noteIdFromHref("#root/a/b/AbC123/"), "AbC123");
  assert.equal(noteIdFromHref("#root/a/AbC123?viewMode=attachments"), "AbC123");
  assert.equal(noteIdFromHref("http://core.example/#root/a/b/AbC123"), "AbC123");
  assert.equal(noteIdFromHref("HTTPS://core.example/app#root/AbC123"), "AbC123");
  assert.equal(noteIdFromHref("/share/api/notes/AbC123/download"), "AbC123");
  assert.equal(noteIdFromHref("#root"), "root");
  for (
    const href of [
      "#AbC123",
      "#root/a/Ab-C",
      "https://example.com/page",
      "javascript:alert(1)//#root/AbC123",
      "root/AbC123",
      "/share/harbor-town", // by alias: a lookup decides
      "",
    ]
  ) {
    assert.equal(noteIdFromHref(href), null, href);
  }
});

Deno.test("editorRewriter", () => {
  assert.ok(Object.isFrozen(editorRewriter));
  assert.equal(editorRewriter.image("api/images/AbC123/m.png"), "/api/images/AbC123/m.png");
  assert.equal(editorRewriter.image("https://tracker.example/p.gif"), null);
  assert.equal(
    editorRewriter.image("api/attachments/AtT1/image/m.png"),
    "/api/attachments/AtT1/image/m.png",
  );
  assert.equal(
    editorRewriter.image(" /api/attachments/AtT1/image/inline%20image?x "),
    "/api/attachments/AtT1/image/inline-image",
  );
  assert.equal(editorRewriter.image("/api/lore/AbC123/image"), "/api/images/AbC123/image");
  assert.equal(editorRewriter.image("data:image/png;base64,AAAA"), null);
  assert.equal(editorRewriter.link("  https://example.com  "), "https://example.com");
  assert.equal(editorRewriter.link("#root/x/AbC123"), "#root/x/AbC123");
  assert.equal(editorRewriter.link("//example.com"), "//example.com");
  assert.equal(editorRewriter.link("MAILTO:gm@example.com"), "MAILTO:gm@example.com");
  for (
    const href of ["JAVASCRIPT:x", "jav\tascript:x", "java\nscript:x", "\u0000javascript:x", "  "]
  ) {
    assert.equal(editorRewriter.link(href), null, JSON.stringify(href));
  }
});

Deno.test("large: a 360 kB note keeps its structure and loses every gm-only part", () => {
  const block = '<p style="text-align:center">Lore <strong>text</strong> with ' +
    '<a class="reference-link" href="#root/a/AbC123">a link</a>.</p>' +
    '<figure class="image"><img src="api/images/AbC123/map.png" width="300"></figure>' +
    '<div class="gm-only"><p>secret</p></div><table><tbody><tr><td>a</td></tr></tbody></table>';
  const out = sanitizePlayerHtml(block.repeat(1400));
  assert.ok(!out.includes("secret"));
  assert.equal(out.match(/<figure class="image">/g)?.length, 1400);
  assert.equal(out.match(/<td>a<\/td>/g)?.length, 1400);
});

Deno.test("raw-text elements cannot re-emit gm-only text as markup", () => {
  const trap =
    '<p>public</p><noscript><xmp></noscript><div class="gm-only">the spy is Maren</div></xmp>';
  const out = sanitizePlayerHtml(trap);
  assert.equal(out, "<p>public</p>");
  assert.ok(!sanitizePlayerHtml('<p>a</p><PLAINTEXT><div class="gm-only">x</div>').includes("x<"));
});
