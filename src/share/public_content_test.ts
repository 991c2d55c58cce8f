import assert from "node:assert/strict";
import { REDACTION_HTML } from "../sanitize/redaction.ts";
import type { CoreAttachment, CoreNote } from "../upstream/core.ts";
import {
  linkTarget,
  normalizeForSearch,
  publicImagePath,
  type PublicLinkPolicy,
  publicRewriter,
  renderPublicContent,
} from "./public_content.ts";

function note(noteId: string, type = "text", title = noteId): CoreNote {
  return {
    noteId,
    title,
    type,
    mime: "",
    isProtected: false,
    parentNoteIds: [],
    childNoteIds: [],
    parentBranchIds: [],
    childBranchIds: [],
    attributes: [],
  };
}

const NOTES = new Map([
  ["pub", note("pub")],
  ["aliased", note("aliased")],
  ["img", note("img", "image", "Sea Chart (v2).png")],
  ["lockedImg", note("lockedImg", "image")],
  ["hidden", note("hidden", "text", "The Drowned & Bell")],
  ["hiddenImg", note("hiddenImg", "image")],
  ["aliasedHidden", {
    ...note("aliasedHidden", "text", "Cult Ledger"),
    attributes: [{
      attributeId: "al1",
      noteId: "aliasedHidden",
      type: "label" as const,
      name: "shareAlias",
      value: "secret-ledger",
      isInheritable: false,
      position: 10,
    }],
  }],
]);
const PUBLIC = new Set(["pub", "aliased", "img", "lockedImg"]);

const policy: PublicLinkPolicy = {
  rootId: "pub",
  isPublic: (id) => PUBLIC.has(id),
  canSee: (id) => PUBLIC.has(id) && id !== "lockedImg",
  target: (id) => {
    const n = NOTES.get(id);
    return n && linkTarget(n);
  },
  resolve: (ref) => ref === "secret-ledger" ? "aliasedHidden" : NOTES.get(ref)?.noteId,
  pagePath: (id) => `/public/lore/${id === "aliased" ? "the-alias" : id}`,
  backendHosts: new Set(["core.internal:8080"]),
};

const attachment = (attachmentId: string, role: string): CoreAttachment => ({
  attachmentId,
  ownerId: "pub",
  role,
  mime: "image/png",
  title: "Sigil.png",
});
const rewriter = publicRewriter(
  policy,
  new Map([["att1", attachment("att1", "image")], ["file1", attachment("file1", "file")]]),
);

Deno.test("publicRewriter: images only of notes the visitor may see, or own image attachments", () => {
  const cases: [string, string | null][] = [
    ["api/images/img/x.png?123", "/api/public/images/img/Sea-Chart-v2-.png"],
    ["/api/lore/img/image", "/api/public/images/img/Sea-Chart-v2-.png"],
    ["https://core.internal:8080/api/images/img/x.png", "/api/public/images/img/Sea-Chart-v2-.png"],
    ["api/images/lockedImg/x.png", null], // public, but behind credentials this visitor lacks
    ["api/images/hiddenImg/x.png", null],
    ["api/images/pub/x.png", null], // not an image note
    ["api/images/nope/x.png", null],
    ["api/attachments/att1/image/s.png", "/api/public/images/att1/Sigil.png"],
    ["api/attachments/file1/image/s.png", null], // not an image attachment
    ["api/attachments/other/image/s.png", null], // not this note's
    // any spelling naming a visible image: shown from our own route, never fetched elsewhere
    ["https://x.example/api/attachments/att1/image/s.png", "/api/public/images/att1/Sigil.png"],
    ["//evil.example/api/images/img/x.png", "/api/public/images/img/Sea-Chart-v2-.png"],
    ["../share/api/images/img/x.png", "/api/public/images/img/Sea-Chart-v2-.png"],
    ["/api/public/images/att1/x", "/api/public/images/att1/Sigil.png"],
    ["./img", "/api/public/images/img/Sea-Chart-v2-.png"],
    ["http://core.internal:8080/share/hiddenImg", null],
    ["https://tracker.example/pixel.gif", null],
    ["data:image/png;base64,AAAA", null],
  ];
  for (const [src, expected] of cases) assert.equal(rewriter.image(src), expected, src);
});

Deno.test("publicRewriter: links to public pages, no href to others or to the backends", () => {
  const cases: [string, string | null][] = [
    ["#root/a/b/pub", "/public/lore/pub"],
    ["#root/aliased", "/public/lore/the-alias"],
    ["http://core.internal:8080/#root/x/pub", "/public/lore/pub"],
    ["#root/x/hidden", null],
    ["#root", null],
    ["http://core.internal:8080/share/hidden", null],
    ["HTTP://CORE.INTERNAL:8080/etapi/notes", null],
    ["https://example.org/map?x=1#y", "https://example.org/map?x=1#y"],
    ["mailto:gm@example.org", "mailto:gm@example.org"],
    ["/api/lore/hidden", null],
    ["./hidden", null],
    ["#section-2", null],
    ["javascript:alert(1)", null],
    ["ftp://example.org/x", null],
    // every other way to name a note: its public page, or nothing
    ["http://core.internal:8080/share/pub", "/public/lore/pub"],
    ["HTTPS://lore.example.org/SHARE/the-alias-of-pub", null], // no such alias: unknown
    ["/share/pub?x=1#y", "/public/lore/pub"],
    ["share/pub", "/public/lore/pub"],
    ["../share/p%75b", "/public/lore/pub"],
    ["./pub", "/public/lore/pub"],
    ["pub", "/public/lore/pub"],
    ["./", "/public/lore/pub"], // the share root
    ["/share/", "/public/lore/pub"],
    ["api/notes/pub/download", "/public/lore/pub"],
    ["/etapi/notes/aliased", "/public/lore/the-alias"],
    ["/public/lore/pub", "/public/lore/pub"],
    ["./secret-ledger", null],
    ["/share/api/notes/hidden", null],
    ["api/images/hiddenImg/x.png", null],
    ["api/attachments/att1/download", null], // no public route for attachment files
    ["./outside1", null],
  ];
  for (const [href, expected] of cases) assert.equal(rewriter.link(href), expected, href);
  assert.equal(rewriter.dataNoteId?.("pub"), null);
});

Deno.test("renderPublicContent: player sanitizing with the rewriter; code escaped; others empty", async () => {
  const html = await renderPublicContent(
    note("pub"),
    '<p data-note-id="hidden">Hi <a href="#root/hidden">there</a><span class="gm-only">x</span>' +
      '<img src="api/images/img/a.png"><script>alert(1)</script></p>',
    rewriter,
  );
  assert.equal(
    html,
    '<p>Hi <a>there</a><img src="/api/public/images/img/Sea-Chart-v2-.png"></p>',
  );
  assert.equal(
    await renderPublicContent(
      note("pub"),
      '<p>See <a class="reference-link" href="#root/hidden">The Drowned &amp; Bell</a>, ' +
        '<a href="#root/x/hidden">the bell</a> and <a href="#root/pub">pub</a>.</p>' +
        '<section class="include-note" data-note-id="hidden">The Drowned Bell</section>' +
        '<section class="include-note" data-note-id="pub">&nbsp;</section>',
      rewriter,
    ),
    // a link that went leaves the same mark whatever it named; an included note goes whole
    `<p>See ${REDACTION_HTML}, ${REDACTION_HTML} and <a href="/public/lore/pub">pub</a>.</p>` +
      '<section class="include-note">&nbsp;</section>',
  );
  assert.equal(
    await renderPublicContent(note("c", "code"), "a < b && '\"'", rewriter),
    "<pre><code>a &lt; b &amp;&amp; &#39;&quot;&#39;</code></pre>",
  );
  assert.equal(
    await renderPublicContent(note("img", "image", 'A "chart"'), "", rewriter),
    '<p><img src="/api/public/images/img/A-chart" alt="A &quot;chart&quot;"></p>',
  );
  assert.equal(await renderPublicContent(note("m", "mermaid"), "graph TD", rewriter), "");
});

Deno.test("publicImagePath and normalizeForSearch", () => {
  assert.equal(
    publicImagePath("Ab_1", "Tom & Jerry.png"),
    "/api/public/images/Ab_1/Tom-Jerry.png",
  );
  assert.equal(publicImagePath("Ab_1", "../..//"), "/api/public/images/Ab_1/image");
  assert.equal(publicImagePath("Ab_1", "日本.png"), "/api/public/images/Ab_1/png");
  assert.equal(normalizeForSearch("  Ćafé\tNOIR\n "), "cafe noir");
  assert.equal(normalizeForSearch("ﬁsh"), "fish");
});

Deno.test("a link that goes leaves one mark in its sentence, the same whatever it named", async () => {
  const html = (body: string) => renderPublicContent(note("pub"), `<p>${body}</p>`, rewriter);
  const mark = REDACTION_HTML;
  // the sentence reads on: no double space, no space before punctuation
  assert.equal(
    await html(
      'She trusts <a href="#root/hidden">The Drowned &amp; Bell</a> more than she should.',
    ),
    `<p>She trusts ${mark} more than she should.</p>`,
  );
  assert.equal(
    await html('Beware <a href="./outside123">the old lighthouse</a>.'),
    `<p>Beware ${mark}.</p>`,
  );
  // spaces the link held become the mark's own, whatever the link held
  assert.equal(
    await html(
      'Trust<a href="#root/hidden"> Drowned </a>more, not<a href="./secret-ledger">x</a>.',
    ),
    `<p>Trust ${mark} more, not ${mark}.</p>`,
  );
  // whatever it named, however long, the same bytes
  const named = await Promise.all([
    '<a class="reference-link" href="#root/hidden">The Drowned &amp; Bell</a>',
    '<a href="./secret-ledger">a ledger of every secret the cult ever kept, in full</a>',
    '<a href="http://core.internal:8080/share/outside123">x</a>',
  ].map((link) => html(`Ask ${link} first.`)));
  assert.deepEqual(named, named.map(() => `<p>Ask ${mark} first.</p>`));
});

Deno.test("removedForPublic: text that may have come from a hidden note goes with its element", async () => {
  const html = (body: string) => renderPublicContent(note("pub"), `<p>${body}</p>`, rewriter);
  const cases: [string, string][] = [
    // Core writes a reference link's text as the target's title
    ['<a class="reference-link" href="#root/a/hidden">anything</a>.', `<p>${REDACTION_HTML}.</p>`],
    // a typed text that is (part of) the hidden title, alias or id
    ['<a href="#root/hidden">the drowned & bell</a>!', `<p>${REDACTION_HTML}!</p>`],
    ['<a href="#root/hidden">Drowned</a>!', `<p>${REDACTION_HTML}!</p>`],
    ['<a href="#root/aliasedHidden">see SECRET-LEDGER here</a>!', `<p>${REDACTION_HTML}!</p>`],
    ['<a href="#root/hidden">HIDDEN</a>!', `<p>${REDACTION_HTML}!</p>`],
    // a target outside the share: its title is unknown, so fail closed
    ['<a href="#root/outside123">the old lighthouse</a>!', `<p>${REDACTION_HTML}!</p>`],
    ['<a href="http://core.example/share/outside123">rumours</a>!', `<p>${REDACTION_HTML}!</p>`],
    ['<a href="./outside123">rumours</a>!', `<p>${REDACTION_HTML}!</p>`],
    ['<a href="outside123">rumours</a>!', `<p>${REDACTION_HTML}!</p>`],
    ['<a href="/etapi/notes/outside123/content">rumours</a>!', `<p>${REDACTION_HTML}!</p>`],
    ['<a href="api/attachments/att9/download">Map.pdf</a>!', `<p>${REDACTION_HTML}!</p>`],
    ['<a href="#root">home</a>!', `<p>${REDACTION_HTML}!</p>`],
    // Core's share URLs and API forms naming a hidden note: its title, inside or around it
    [
      '<a href="http://core.internal:8080/share/hidden">The Drowned & Bell</a>!',
      `<p>${REDACTION_HTML}!</p>`,
    ],
    ['<a href="../share/secret-ledger">Ledger</a>!', `<p>${REDACTION_HTML}!</p>`],
    [
      '<a href="/share/hidden">all about the drowned &amp; bell, again</a>!',
      `<p>${REDACTION_HTML}!</p>`,
    ],
    ['<a href="/share/api/notes/hidden/download">Bell</a>!', `<p>${REDACTION_HTML}!</p>`],
    ['<a href="api/images/hidden/x.png">the drowned bell</a>!', `<p>${REDACTION_HTML}!</p>`],
    ['<a href="/SHARE/h%69dden?x#y">drowned</a>!', `<p>${REDACTION_HTML}!</p>`],
    // Core's share-page forms: relative id or alias
    ['<a href="./secret-ledger">a ledger</a>!', `<p>${REDACTION_HTML}!</p>`],
    ['<a class="reference-link" href="hidden">x</a>!', `<p>${REDACTION_HTML}!</p>`],
    // text the writer typed, unrelated to the hidden note, stays without its link
    ['<a href="#root/hidden">rumours</a>!', "<p><a>rumours</a>!</p>"],
    ['<a href="#root/hidden" title="The Drowned Bell">rumours</a>!', "<p><a>rumours</a>!</p>"],
    ['<a href="/share/hidden">rumours</a>!', "<p><a>rumours</a>!</p>"],
    [
      '<a href="https://core.example/share/api/notes/hidden">rumours</a>!',
      "<p><a>rumours</a>!</p>",
    ],
    // public targets and ordinary links are untouched
    [
      '<a class="reference-link" href="#root/pub">pub</a>',
      '<p><a href="/public/lore/pub" class="reference-link">pub</a></p>',
    ],
    [
      '<a href="http://core.example/share/the-alias-of-nothing">pub</a>, <a href="./pub">pub</a>',
      `<p>${REDACTION_HTML}, <a href="/public/lore/pub">pub</a></p>`,
    ],
    ['<a href="#section-2">below</a>', "<p><a>below</a></p>"],
    [
      '<a href="https://example.org/">hidden</a>',
      '<p><a href="https://example.org/">hidden</a></p>',
    ],
  ];
  for (const [body, expected] of cases) assert.equal(await html(body), expected, body);
});
