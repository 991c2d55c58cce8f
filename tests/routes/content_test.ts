/** Content, previews and revisions over HTTP through the real app against the Core double. */
import assert from "node:assert/strict";
import { SANITIZER_VERSION } from "../../src/sanitize/html.ts";
import { type Harness, upstreamCalls, withHarness } from "../helpers/harness.ts";
import { eventually, manualDeadlines } from "../helpers/manual_deadlines.ts";
import { W } from "../../sims/world.ts";

const SANDBOX_CSP = "sandbox; default-src 'none'";

interface ErrorBody {
  error: string;
  message: string;
  requestId: string;
  details?: Record<string, unknown>;
}

/** Status, headers and text of a call (the body is always consumed). */
async function get(h: Harness, path: string, init?: RequestInit) {
  const res = await h.request(path, init);
  return { status: res.status, headers: res.headers, text: await res.text() };
}

function putText(h: Harness, id: string, body: string, type = "text/plain; charset=utf-8") {
  return get(h, `/api/lore/${id}/content`, {
    method: "PUT",
    headers: { "content-type": type },
    body,
  });
}

function addNote(
  h: Harness,
  p: { title: string; type: string; mime?: string; content: string | Uint8Array },
): string {
  return h.core.store.createNote({ parentNoteId: W.loreRoot, ...p }, { rawTitle: true }).note
    .noteId;
}

// (`..` and `%2E%2E` as a whole segment are resolved by the client's URL parser before sending)
const BAD_IDS = ["a%2Fb", "..%2F..%2Fapp-info", "a.b", "a'b", "a%5Cb", "a%22b", "x".repeat(129)];

// ---------------------------------------------------------------------------------------------
// GET /api/lore/:id/content

Deno.test("GET content: raw HTML for the editor, gm-only parts intact, sandboxed", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    const r = await get(h, `/api/lore/${W.charMira}/content`);
    assert.equal(r.status, 200);
    // Core's relative image source, rooted so it resolves from /lore/<id> too; nothing else
    const stored = h.core.store.getContent(W.charMira) as string;
    const relative = `src="api/images/${W.imgPortrait}/mira-portrait.png"`;
    assert.ok(stored.includes(relative));
    assert.equal(
      r.text,
      stored.replace(relative, `src="/api/images/${W.imgPortrait}/mira-portrait.png"`),
    );
    assert.match(r.text, /class="gm-only"/);
    assert.equal(r.headers.get("content-type"), "text/html; charset=utf-8");
    assert.equal(r.headers.get("content-security-policy"), SANDBOX_CSP);
    assert.equal(r.headers.get("x-content-type-options"), "nosniff");
    assert.equal(r.headers.get("cache-control"), "no-store");
    assert.equal(r.headers.get("content-disposition"), null);
    assert.deepEqual(upstreamCalls(h), [`GET /etapi/notes/${W.charMira}/content`]);
  }));

Deno.test("GET content: JSON and plain text keep their type; binaries and scripts do not", () =>
  withHarness(async (h) => {
    const canvas = addNote(h, { title: "Board", type: "canvas", content: '{"elements":[]}' });
    const plain = addNote(h, { title: "Notes", type: "code", mime: "text/plain", content: "hi" });
    const js = addNote(h, {
      title: "Macro",
      type: "code",
      mime: "application/javascript",
      content: "alert(document.cookie)",
    });
    const svg = addNote(h, {
      title: "Sigil",
      type: "image",
      mime: "image/svg+xml",
      content: '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>',
    });
    const cases: [string, string, string | null][] = [
      [canvas, "application/json; charset=utf-8", '{"elements":[]}'],
      [plain, "text/plain; charset=utf-8", "hi"],
      [js, "application/octet-stream", "alert(document.cookie)"],
      [svg, "application/octet-stream", null],
      [W.imgChart, "application/octet-stream", null],
    ];
    for (const [id, type, text] of cases) {
      const r = await get(h, `/api/lore/${id}/content`);
      assert.equal(r.status, 200, id);
      assert.equal(r.headers.get("content-type"), type, id);
      assert.equal(r.headers.get("content-security-policy"), SANDBOX_CSP, id);
      if (text !== null) assert.equal(r.text, text);
    }
  }));

Deno.test("GET content: stored XSS comes back inert (sandbox CSP, never our page)", () =>
  withHarness(async (h) => {
    const xss = '<script>alert(1)</script><img src=x onerror="alert(2)">';
    assert.equal((await putText(h, W.charOskar, xss)).status, 204);
    const r = await get(h, `/api/lore/${W.charOskar}/content`);
    assert.equal(r.status, 200);
    assert.ok(r.text.includes("<script>alert(1)</script>"), "raw content is for the editor");
    assert.equal(r.headers.get("content-security-policy"), SANDBOX_CSP);
    assert.equal(r.headers.get("x-content-type-options"), "nosniff");
  }));

Deno.test("GET content: ids that could reach another path are 400 and never sent upstream", () =>
  withHarness(async (h) => {
    for (const id of BAD_IDS) {
      h.core.clearRequests();
      const res = await h.requestJson<ErrorBody>(`/api/lore/${id}/content`);
      assert.equal(res.status, 400, id);
      assert.equal(res.body.error, "INVALID_REQUEST");
      assert.deepEqual(upstreamCalls(h), [], id);
    }
  }));

Deno.test("GET content: a missing note is 404", () =>
  withHarness(async (h) => {
    const r = await h.requestJson<ErrorBody>("/api/lore/noSuchNote01/content");
    assert.equal(r.status, 404);
    assert.equal(r.body.error, "NOT_FOUND");
  }));

// ---------------------------------------------------------------------------------------------
// PUT /api/lore/:id/content

Deno.test("PUT content: forwarded as text/plain, 204, stored exactly", () =>
  withHarness(async (h) => {
    const html = '<p>Oskar keeps two ledgers — one "honest".</p>';
    h.core.clearRequests();
    const r = await putText(h, W.charOskar, html);
    assert.equal(r.status, 204);
    assert.equal(r.text, "");
    assert.deepEqual(upstreamCalls(h), [
      `GET /etapi/notes/${W.charOskar}`,
      `PUT /etapi/notes/${W.charOskar}/content`,
    ]);
    const put = h.core.requests[1];
    assert.equal(put.headers.get("content-type"), "text/plain");
    assert.equal(put.bodyText, html);
    assert.equal(h.core.store.getContent(W.charOskar), html);
  }));

Deno.test("PUT content: text/html (the portal editor's type) is taken as text/plain is", () =>
  withHarness(async (h) => {
    // the editor saves what GET content gave it: a rooted image source, which Core makes relative
    const html = `<p>Ledgers</p><img src="/api/images/${W.imgChart}/coast-chart.png">`;
    h.core.clearRequests();
    for (const type of ["text/html", "Text/HTML; charset=UTF-8"]) {
      const r = await putText(h, W.charOskar, html, type);
      assert.equal(r.status, 204, type);
      assert.equal(h.core.requests.at(-1)!.headers.get("content-type"), "text/plain");
    }
    const stored = `<p>Ledgers</p><img src="api/images/${W.imgChart}/coast-chart.png">`;
    assert.equal(h.core.store.getContent(W.charOskar), stored);
    // ...and rooted again on the way back out
    assert.equal((await get(h, `/api/lore/${W.charOskar}/content`)).text, html);
    const latin1 = await putText(h, W.charOskar, "<p>x</p>", "text/html; charset=iso-8859-1");
    assert.equal(latin1.status, 415);
  }));

Deno.test("PUT content: code notes take text too", () =>
  withHarness(async (h) => {
    const id = addNote(h, { title: "Dice macro", type: "code", mime: "text/plain", content: "" });
    assert.equal((await putText(h, id, "roll 2d6")).status, 204);
    assert.equal(h.core.store.getContent(id), "roll 2d6");
  }));

Deno.test("PUT content: an image note is 409 and its bytes are untouched", () =>
  withHarness(async (h) => {
    const before = h.core.store.getContent(W.imgChart);
    h.core.clearRequests();
    const res = await h.request(`/api/lore/${W.imgChart}/content`, {
      method: "PUT",
      headers: { "content-type": "text/plain" },
      body: "<p>oops</p>",
    });
    const body = await res.json() as ErrorBody;
    assert.equal(res.status, 409);
    assert.equal(body.error, "CONFLICT");
    assert.deepEqual(upstreamCalls(h), [`GET /etapi/notes/${W.imgChart}`]);
    assert.deepEqual(h.core.store.getContent(W.imgChart), before);
    const file = addNote(h, {
      title: "Deed.pdf",
      type: "file",
      mime: "application/pdf",
      content: new Uint8Array([0x25, 0x50, 0x44, 0x46]),
    });
    assert.equal((await putText(h, file, "x")).status, 409);
  }));

Deno.test("PUT content: wrong type 415, missing note 404, system note 400, bad id 400", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    const json = await putText(h, W.charOskar, '{"a":1}', "application/json");
    assert.equal(json.status, 415);
    const xhtml = await putText(h, W.charOskar, "<p>x</p>", "application/xhtml+xml");
    assert.equal(xhtml.status, 415);
    assert.deepEqual(JSON.parse(xhtml.text).details.expected, ["text/plain", "text/html"]);
    const root = await putText(h, "root", "<p>x</p>");
    assert.equal(root.status, 400);
    assert.equal(JSON.parse(root.text).error, "INVALID_REQUEST");
    const share = await putText(h, "_share", "<p>x</p>");
    assert.equal(share.status, 400);
    for (const id of BAD_IDS) {
      const r = await putText(h, id, "<p>x</p>");
      assert.equal(r.status, 400, id);
      assert.equal(JSON.parse(r.text).error, "INVALID_REQUEST");
    }
    assert.deepEqual(upstreamCalls(h), []);
    const missing = await putText(h, "noSuchNote01", "<p>x</p>");
    assert.equal(missing.status, 404);
    assert.deepEqual(upstreamCalls(h), ["GET /etapi/notes/noSuchNote01"]);
  }));

Deno.test("PUT content: MAX_CONTENT_BYTES exactly is accepted, one byte more is 413", () =>
  withHarness(async (h) => {
    const ok = "a".repeat(2048);
    assert.equal((await putText(h, W.charOskar, ok)).status, 204);
    assert.equal(h.core.store.getContent(W.charOskar), ok);
    h.core.clearRequests();
    const big = await putText(h, W.charOskar, `${ok}b`);
    assert.equal(big.status, 413);
    assert.equal(JSON.parse(big.text).error, "PAYLOAD_TOO_LARGE");
    // chunked, no Content-Length: still cut off while reading
    const chunks = [ok, "b"].map((s) => new TextEncoder().encode(s));
    const stream = new ReadableStream({
      pull(c) {
        const next = chunks.shift();
        if (next) c.enqueue(next);
        else c.close();
      },
    });
    const chunked = await get(h, `/api/lore/${W.charOskar}/content`, {
      method: "PUT",
      headers: { "content-type": "text/plain" },
      body: stream,
    });
    assert.equal(chunked.status, 413);
    assert.deepEqual(upstreamCalls(h), []);
    assert.equal(h.core.store.getContent(W.charOskar), ok);
  }, { env: { MAX_CONTENT_BYTES: "2048" } }));

// ---------------------------------------------------------------------------------------------
// GET /api/lore/:id/preview

function assertPreviewHeaders(headers: Headers, etag: string) {
  assert.equal(headers.get("content-type"), "text/html; charset=utf-8");
  assert.equal(headers.get("content-security-policy"), SANDBOX_CSP);
  assert.equal(headers.get("x-content-type-options"), "nosniff");
  assert.equal(headers.get("cache-control"), "private, no-cache");
  assert.equal(headers.get("etag"), etag);
}

Deno.test("preview: gm keeps GM-only sections, player drops them (nested and multi-class)", () =>
  withHarness(async (h) => {
    const blob = h.core.store.getNote(W.charMira)!.blobId;
    const gm = await get(h, `/api/lore/${W.charMira}/preview`);
    assert.equal(gm.status, 200);
    assertPreviewHeaders(gm.headers, `"gm-${SANITIZER_VERSION}-${blob}"`);
    assert.match(gm.text, /Mira owes the/);
    assert.match(gm.text, /Her mother still lives beneath the reef/);
    assert.match(gm.text, /Raised by lighthouse keepers/);
    // links to our own image route, never Core's
    assert.match(gm.text, new RegExp(`<img src="/api/images/${W.imgPortrait}/mira-portrait.png"`));

    const player = await get(h, `/api/lore/${W.charMira}/preview?mode=player`);
    assert.equal(player.status, 200);
    assertPreviewHeaders(player.headers, `"player-${SANITIZER_VERSION}-${blob}"`);
    assert.doesNotMatch(player.text, /Mira owes|Lantern Guild|mother still lives|gm-only/);
    assert.match(player.text, /She trusts/);
    assert.match(player.text, /<section class="backstory"><p>Raised by lighthouse keepers.<\/p>/);

    const brannoch = await get(h, `/api/lore/${W.charBrannoch}/preview?mode=player`);
    assert.match(brannoch.text, /sunken bell/);
    assert.doesNotMatch(brannoch.text, /lantern oil/);
    const brannochGm = await get(h, `/api/lore/${W.charBrannoch}/preview?mode=gm`);
    assert.match(brannochGm.text, /lantern oil/);
  }));

Deno.test("preview: players see nothing of #gmOnly / #draft notes (own or inherited)", () =>
  withHarness(async (h) => {
    for (const id of [W.guideGmOnly, W.guideDraft, W.guideWip, W.guideWipChild]) {
      h.core.clearRequests();
      const p = await get(h, `/api/lore/${id}/preview?mode=player`);
      assert.equal(p.status, 200, id);
      assert.equal(p.text, "", id);
      assert.equal(p.headers.get("content-type"), "text/html; charset=utf-8");
      assert.equal(p.headers.get("etag"), `"player-hidden"`);
      // decided from metadata alone: the content is never fetched
      assert.deepEqual(upstreamCalls(h), [`GET /etapi/notes/${id}`], id);
      const gm = await get(h, `/api/lore/${id}/preview?mode=gm`);
      assert.match(gm.text, /<p>.+<\/p>/, `the GM still sees ${id}`);
    }
  }));

Deno.test("preview: If-None-Match answers 304 without fetching content; cache hits skip it too", () =>
  withHarness(async (h) => {
    const path = `/api/lore/${W.charMira}/preview?mode=player`;
    const first = await get(h, path);
    const etag = first.headers.get("etag")!;
    h.core.clearRequests();
    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const res = await h.request(path, { headers: { "if-none-match": inm } });
      assert.equal(res.status, 304, inm);
      assert.equal(await res.text(), "");
      assert.equal(res.headers.get("etag"), etag);
      assert.equal(res.headers.get("cache-control"), "private, no-cache");
    }
    assert.deepEqual(upstreamCalls(h), Array(4).fill(`GET /etapi/notes/${W.charMira}`));
    // an ETag of the other mode does not match
    const gmTag = etag.replace("player-", "gm-");
    const other = await get(h, path, { headers: { "if-none-match": gmTag } });
    assert.equal(other.status, 200);
    assert.equal(other.text, first.text);
    // and a plain repeat is served from the sanitized-output cache
    h.core.clearRequests();
    assert.equal((await get(h, path)).text, first.text);
    assert.deepEqual(upstreamCalls(h), [`GET /etapi/notes/${W.charMira}`]);
  }));

Deno.test("preview: new content means a new ETag and fresh output", () =>
  withHarness(async (h) => {
    const path = `/api/lore/${W.charOskar}/preview`;
    const before = await get(h, path);
    assert.equal((await putText(h, W.charOskar, "<p>Reformed smuggler.</p>")).status, 204);
    h.core.clearRequests();
    const after = await get(h, path, { headers: { "if-none-match": before.headers.get("etag")! } });
    assert.equal(after.status, 200);
    assert.equal(after.text, "<p>Reformed smuggler.</p>");
    assert.notEqual(after.headers.get("etag"), before.headers.get("etag"));
    assert.deepEqual(upstreamCalls(h), [
      `GET /etapi/notes/${W.charOskar}`,
      `GET /etapi/notes/${W.charOskar}/content`,
    ]);
  }));

Deno.test("preview: content saved between metadata and content read is not cached as the old blob", () => {
  const time = manualDeadlines(); // Core's content read waits until the test lets it answer
  return withHarness(async (h) => {
    const id = W.charIselde;
    const original = h.core.store.getContent(id) as string;
    h.core.fault({ path: `/etapi/notes/${id}/content`, delayMs: 150, times: 1 });
    const pending = get(h, `/api/lore/${id}/preview`);
    await eventually(
      "the metadata was read; the content read waits",
      () => time.pendingOf(150) === 1,
    );
    h.core.store.setNoteContent(id, "<p>Iselde left the lighthouse.</p>");
    time.advance(150);
    const racing = await pending;
    assert.equal(racing.text, "<p>Iselde left the lighthouse.</p>");
    // back to the original blob: the newer text must not be served from the cache for it
    h.core.store.setNoteContent(id, original);
    const again = await get(h, `/api/lore/${id}/preview`);
    assert.match(again.text, /Keeper of/);
  }, { deadlines: time });
});

Deno.test("preview: stored XSS vectors never survive, in either mode", () =>
  withHarness(async (h) => {
    const vectors = [
      "<script>alert(1)</script>",
      '<img src=x onerror="alert(2)">',
      '<a href="javascript:alert(3)">link</a>',
      '<a href="jav&#x09;ascript:alert(4)">tab</a>',
      '<iframe srcdoc="<script>alert(5)</script>"></iframe>',
      '<svg onload="alert(6)"><circle/></svg>',
      '<p style="background:url(javascript:alert(7))" onclick="alert(8)">styled</p>',
      '<math><mi xlink:href="javascript:alert(9)">m</mi></math>',
      '<object data="data:text/html,<script>alert(10)</script>"></object>',
      '<img src="https://tracker.example/p.gif">',
      '<form action="https://evil.example"><input name="q"></form>',
      '<div class="gm-only"><script>alert(11)</script>secret</div>',
    ].join("\n");
    assert.equal((await putText(h, W.charOskar, `<p>Safe text.</p>${vectors}`)).status, 204);
    for (const mode of ["gm", "player"]) {
      const r = await get(h, `/api/lore/${W.charOskar}/preview?mode=${mode}`);
      assert.equal(r.status, 200);
      assert.match(r.text, /<p>Safe text.<\/p>/);
      for (
        const bad of [
          /<script/i,
          /onerror/i,
          /onload/i,
          /onclick/i,
          /javascript:/i,
          /<iframe/i,
          /srcdoc/i,
          /<svg/i,
          /<math/i,
          /<object/i,
          /<form/i,
          /<input/i,
          /tracker\.example/,
          /alert\(/,
          /url\(/,
        ]
      ) {
        assert.doesNotMatch(r.text, bad, `${mode}: ${bad}`);
      }
    }
  }));

Deno.test("preview: image notes show an <img> of our route with an escaped alt, no content fetch", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    const r = await get(h, `/api/lore/${W.imgChart}/preview?mode=player`);
    assert.equal(
      r.text,
      `<img src="/api/images/${W.imgChart}/coast-chart.png" alt="coast-chart.png">`,
    );
    assert.match(r.headers.get("etag")!, /^"player-image-/);
    assert.deepEqual(upstreamCalls(h), [`GET /etapi/notes/${W.imgChart}`]);
    const id = addNote(h, {
      // the typed title `x" onerror="alert(1)"><script>alert(2)</script>` as Core stores it
      title: `x" onerror="alert(1)"&gt;&lt;script&gt;alert(2)&lt;/script&gt;`,
      type: "image",
      mime: "image/png",
      content: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    });
    const evil = await get(h, `/api/lore/${id}/preview`);
    assert.equal(
      evil.text,
      `<img src="/api/images/${id}/x-onerror-alert-1-script-alert-2-script" ` +
        `alt="x&quot; onerror=&quot;alert(1)&quot;&gt;` +
        `&lt;script&gt;alert(2)&lt;/script&gt;">`,
    );
  }));

Deno.test("preview: code is escaped in <pre><code>; other types are empty", () =>
  withHarness(async (h) => {
    const id = addNote(h, {
      title: "Macro",
      type: "code",
      mime: "application/javascript",
      content: "if (a < b && c > d) alert('</code><script>x</script>');",
    });
    const r = await get(h, `/api/lore/${id}/preview?mode=player`);
    assert.equal(
      r.text,
      "<pre><code>if (a &lt; b &amp;&amp; c &gt; d) alert(&#39;&lt;/code&gt;&lt;script&gt;x" +
        "&lt;/script&gt;&#39;);</code></pre>",
    );
    const blob = h.core.store.getNote(id)!.blobId;
    assert.equal(r.headers.get("etag"), `"player-code-${blob}"`);
    // the same bytes in a text note render as HTML, not as the cached code view
    const twin = addNote(h, { title: "Twin", type: "text", content: "<p>same</p>" });
    const code = addNote(h, { title: "Code twin", type: "code", content: "<p>same</p>" });
    assert.equal(
      (await get(h, `/api/lore/${code}/preview`)).text,
      "<pre><code>&lt;p&gt;same&lt;/p&gt;</code></pre>",
    );
    assert.equal((await get(h, `/api/lore/${twin}/preview`)).text, "<p>same</p>");

    h.core.clearRequests();
    const book = await get(h, `/api/lore/${W.media}/preview`);
    assert.equal(book.status, 200);
    assert.equal(book.text, "");
    assert.deepEqual(upstreamCalls(h), [`GET /etapi/notes/${W.media}`]);
  }));

Deno.test("preview: mode other than gm|player, or a bad id, is 400 with nothing sent upstream", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    for (
      const path of [
        `/api/lore/${W.charMira}/preview?mode=GM`,
        `/api/lore/${W.charMira}/preview?mode=admin`,
        `/api/lore/${W.charMira}/preview?mode=`,
        ...BAD_IDS.map((id) => `/api/lore/${id}/preview`),
      ]
    ) {
      const r = await h.requestJson<ErrorBody>(path);
      assert.equal(r.status, 400, path);
      assert.equal(r.body.error, "INVALID_REQUEST");
    }
    assert.deepEqual(upstreamCalls(h), []);
    const missing = await h.requestJson<ErrorBody>("/api/lore/noSuchNote01/preview");
    assert.equal(missing.status, 404);
  }));

// ---------------------------------------------------------------------------------------------
// Revisions

Deno.test("GET revisions: Core's complete list, newest first", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    const r = await h.requestJson<{ revisions: { revisionId: string; title: string }[] }>(
      `/api/lore/${W.charMira}/revisions`,
    );
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.revisions.map((x) => [x.revisionId, x.title]),
      [[W.revMiraNew, "Mira Tallowend"], [W.revMiraOld, "Mira"]],
    );
    assert.deepEqual(upstreamCalls(h), [`GET /etapi/notes/${W.charMira}/revisions`]);
    const none = await h.requestJson<{ revisions: unknown[] }>(
      `/api/lore/${W.charIselde}/revisions`,
    );
    assert.deepEqual(none.body, { revisions: [] });
    const missing = await h.requestJson<ErrorBody>("/api/lore/noSuchNote01/revisions");
    assert.equal(missing.status, 404);
  }));

Deno.test("GET revision content: streamed with the raw-content headers", () =>
  withHarness(async (h) => {
    const r = await get(h, `/api/lore/${W.charMira}/revisions/${W.revMiraOld}/content`);
    assert.equal(r.status, 200);
    assert.equal(r.text, "<p>A harbour pilot.</p>");
    assert.equal(r.headers.get("content-type"), "text/html; charset=utf-8");
    assert.equal(r.headers.get("content-security-policy"), SANDBOX_CSP);
    assert.equal(r.headers.get("x-content-type-options"), "nosniff");
    assert.equal(r.headers.get("cache-control"), "no-store");
  }));

Deno.test("GET revision content: another note's revision is 404 exactly like a missing one", () =>
  withHarness(async (h) => {
    const foreign = await h.request(`/api/lore/${W.charOskar}/revisions/${W.revMiraOld}/content`);
    const foreignText = await foreign.text();
    const missing = await h.requestJson<ErrorBody>(
      `/api/lore/${W.charOskar}/revisions/noSuchRev001/content`,
    );
    assert.equal(foreign.status, 404);
    assert.equal(missing.status, 404);
    assert.doesNotMatch(foreignText, /harbour pilot/);
    const { requestId: _a, ...a } = JSON.parse(foreignText) as ErrorBody;
    const { requestId: _b, ...b } = missing.body;
    assert.deepEqual(a, b);
    assert.equal(a.error, "NOT_FOUND");
  }));

Deno.test("GET revision content: bad ids are 400 with nothing sent upstream", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    for (
      const path of [
        ...BAD_IDS.map((id) => `/api/lore/${W.charMira}/revisions/${id}/content`),
        ...BAD_IDS.map((id) => `/api/lore/${id}/revisions/${W.revMiraOld}/content`),
        ...BAD_IDS.map((id) => `/api/lore/${id}/revisions`),
      ]
    ) {
      const r = await h.requestJson<ErrorBody>(path);
      assert.equal(r.status, 400, path);
      assert.equal(r.body.error, "INVALID_REQUEST");
    }
    assert.deepEqual(upstreamCalls(h), []);
  }));

Deno.test("PUT content: UTF-8 only — another charset is 415 and Core is untouched", () =>
  withHarness(async (h) => {
    const before = h.core.store.getContent(W.charOskar);
    h.core.clearRequests();
    for (const charset of ["utf-7", "UTF-16", "iso-8859-1", '"utf-7"', ""]) {
      const r = await putText(h, W.charOskar, "+ADw-p+AD4-x", `text/plain; charset=${charset}`);
      assert.equal(r.status, 415, charset);
      assert.equal(JSON.parse(r.text).error, "UNSUPPORTED_MEDIA_TYPE", charset);
    }
    assert.deepEqual(upstreamCalls(h), []);
    assert.deepEqual(h.core.store.getContent(W.charOskar), before);
    for (const charset of ["utf-8", "UTF-8", "utf8", '"UTF-8"']) {
      const r = await putText(h, W.charOskar, "<p>é</p>", `text/plain; charset=${charset}`);
      assert.equal(r.status, 204, charset);
    }
    assert.equal(h.core.store.getContent(W.charOskar), "<p>é</p>");
  }));
