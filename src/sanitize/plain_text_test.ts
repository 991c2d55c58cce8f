import assert from "node:assert/strict";
import { sanitizePlayerHtml } from "./html.ts";
import { loadHtmlEngine } from "./html_engine.ts";
import { decodeHtmlEntities, htmlTextContent, htmlToText } from "./plain_text.ts";

await loadHtmlEngine();

Deno.test("htmlToText: visible text only, decoded, word breaks at elements, collapsed", () => {
  assert.equal(
    htmlToText(
      '<h1>Salt&nbsp;&amp; tar</h1><p>Sea<b>farer</b>\n  <img alt="a > b" src="x.png">' +
        "<script>steal()</script><style>p{}</style>&lt;ok&gt;</p>",
    ),
    "Salt & tar Sea farer <ok>",
  );
  const secret = '<p>Town<span class="gm-only"> (cult base)</span></p>';
  assert.equal(htmlToText(secret), "Town (cult base)", "the lore sanitizer keeps gm-only parts");
  assert.equal(htmlToText(secret, (h) => sanitizePlayerHtml(h)), "Town");
  assert.equal(htmlToText(""), "");
});

Deno.test("htmlTextContent: text nodes joined as written, decoded, invisible text left out", () => {
  assert.equal(
    htmlTextContent("<b>Salt</b>y&nbsp;&amp; <i>dry</i>  <script>x()</script><style>p{}</style>"),
    "Salty\u00a0& dry  ",
  );
  assert.equal(htmlTextContent('<span class="gm-only">s</span>T'), "sT", "lore keeps gm-only");
  assert.equal(htmlTextContent('<span class="gm-only">s</span>T', sanitizePlayerHtml), "T");
  assert.equal(htmlTextContent("a < b"), "a < b");
});

Deno.test("decodeHtmlEntities: numeric and escaping's named references, once", () => {
  assert.equal(decodeHtmlEntities("Tom &amp; Jerry &#x2014; &#39;74"), "Tom & Jerry — '74");
  assert.equal(decodeHtmlEntities("&amp;lt; &QUOT;q&quot; a&nbsp;b"), '&lt; "q" a b');
  assert.equal(decodeHtmlEntities("&#0; &#x110000; &copy;"), "    &copy;");
});
