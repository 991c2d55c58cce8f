/**
 * Private image attachments (images pasted into Core's editor) over HTTP: the streamed image
 * route and the previews that point at it, real app + Core double.
 */
import assert from "node:assert/strict";
import { type Harness, upstreamCalls, withHarness } from "../helpers/harness.ts";
import { answerMovingTime, manualDeadlines } from "../helpers/manual_deadlines.ts";
import { LAMP_SKETCH_PNG, makePng, SIGIL_PNG, W } from "../../sims/world.ts";

interface ErrorBody {
  error: string;
  message: string;
  requestId: string;
}

const LAMP_URL = `/api/attachments/${W.attLampSketch}/image/inline-image`;
const BAD_IDS = ["a%2Fb", "..%2F..%2Fapp-info", "a.b", "a'b", "a%5Cb", "x".repeat(129)];

/** A minimal baseline JPEG (SOI, APP0, EOI). */
const JPEG = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 16, 74, 70, 73, 70, 0, 1, 0xff, 0xd9]);

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/** An attachment of the lighthouse note, made in the Core double directly. */
function addAttachment(
  h: Harness,
  p: { role: string; mime: string; title: string; content: string | Uint8Array },
): string {
  return h.core.store.createAttachment({ ownerId: W.locLighthouse, ...p }).attachmentId;
}

/** Status, headers and text of a call (the body is always consumed). */
async function get(h: Harness, path: string, init?: RequestInit) {
  const res = await h.request(path, init);
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** `<img src>` values of an HTML fragment. */
function imageSources(html: string): string[] {
  return [...html.matchAll(/<img src="([^"]*)"/g)].map((m) => m[1]);
}

Deno.test("attachment image: verified PNG bytes, private cache, nosniff, sandbox CSP, blob ETag", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    const res = await h.request(LAMP_URL);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.bytes(), LAMP_SKETCH_PNG);
    assert.equal(res.headers.get("content-type"), "image/png");
    assert.equal(res.headers.get("cache-control"), "private, max-age=86400");
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    assert.equal(res.headers.get("content-security-policy"), "default-src 'none'; sandbox");
    const blobId = h.core.store.getAttachment(W.attLampSketch)!.blobId;
    assert.equal(res.headers.get("etag"), `"attachment-${blobId}"`);
    assert.equal(res.headers.get("content-disposition"), null);
    assert.deepEqual(upstreamCalls(h), [
      `GET /etapi/attachments/${W.attLampSketch}`,
      `GET /etapi/attachments/${W.attLampSketch}/content`,
    ]);
    // the file name only names saved copies
    const renamed = await h.request(`/api/attachments/${W.attSigil}/image/anything.jpg`);
    assert.deepEqual(await renamed.bytes(), SIGIL_PNG);
  }));

Deno.test("attachment image: If-None-Match is answered with 304 without fetching the bytes", () =>
  withHarness(async (h) => {
    const first = await h.request(LAMP_URL);
    await first.body?.cancel();
    const etag = first.headers.get("etag")!;
    h.core.clearRequests();
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`]) {
      const res = await get(h, LAMP_URL, { headers: { "if-none-match": header } });
      assert.equal(res.status, 304, header);
      assert.equal(res.text, "");
      assert.equal(res.headers.get("etag"), etag);
      assert.equal(res.headers.get("cache-control"), "private, max-age=86400");
    }
    assert.deepEqual(upstreamCalls(h), Array(3).fill(`GET /etapi/attachments/${W.attLampSketch}`));
    const stale = await h.request(LAMP_URL, { headers: { "if-none-match": '"attachment-old"' } });
    assert.equal(stale.status, 200);
    assert.deepEqual(await stale.bytes(), LAMP_SKETCH_PNG);
    // new bytes, new blob, new ETag: the old one no longer matches
    h.core.store.putAttachmentContent(W.attLampSketch, makePng(3, 3, () => [1, 2, 3]));
    const changed = await h.request(LAMP_URL, { headers: { "if-none-match": etag } });
    assert.equal(changed.status, 200);
    assert.notEqual(changed.headers.get("etag"), etag);
    assert.deepEqual(await changed.bytes(), makePng(3, 3, () => [1, 2, 3]));
  }));

Deno.test("previews: gm and player show a pasted image through our route, which serves it", () =>
  withHarness(async (h) => {
    for (const mode of ["gm", "player"]) {
      const preview = await get(h, `/api/lore/${W.locLighthouse}/preview?mode=${mode}`);
      assert.equal(preview.status, 200);
      assert.deepEqual(imageSources(preview.text), [LAMP_URL]);
      assert.match(preview.text, /<img [^>]*width="12"/);
      assert.ok(preview.text.includes("Greyfin Lighthouse, dark since the flood."));
    }
    const image = await h.request(LAMP_URL);
    assert.deepEqual(await image.bytes(), LAMP_SKETCH_PNG);
  }));

Deno.test("previews: an image pasted as data: and saved becomes Core's attachment and shows", () =>
  withHarness(async (h) => {
    const png = makePng(5, 4, (x) => [x * 50, 90, 200]);
    // (far enough apart: Core's scan skips an image right after a converted one, see the double)
    const html = `<p>Tide table</p><p><img src="data:image/png;base64,${b64(png)}"></p>` +
      `<p>${"Low water at the third bell. ".repeat(8)}</p>` +
      `<p class="gm-only"><img src="data:image/jpeg;base64,${b64(JPEG)}"></p>`;
    const saved = await h.request(`/api/lore/${W.locReef}/content`, {
      method: "PUT",
      headers: { "content-type": "text/plain" },
      body: html,
    });
    assert.equal(saved.status, 204);
    const [pngAtt, jpegAtt] = h.core.store.attachmentsOf(W.locReef).map((a) => a.attachmentId);
    const gm = await get(h, `/api/lore/${W.locReef}/preview?mode=gm`);
    assert.deepEqual(imageSources(gm.text), [
      `/api/attachments/${pngAtt}/image/inline-image`,
      `/api/attachments/${jpegAtt}/image/inline-image`,
    ]);
    const player = await get(h, `/api/lore/${W.locReef}/preview?mode=player`);
    assert.deepEqual(imageSources(player.text), [`/api/attachments/${pngAtt}/image/inline-image`]);
    const first = await h.request(`/api/attachments/${pngAtt}/image/inline-image`);
    assert.equal(first.headers.get("content-type"), "image/png");
    assert.deepEqual(await first.bytes(), png);
    // Core stores a pasted JPEG as image/jpg; the bytes are JPEG, so it is served as image/jpeg
    assert.equal(h.core.store.getAttachment(jpegAtt)!.mime, "image/jpg");
    const second = await h.request(`/api/attachments/${jpegAtt}/image/inline-image`);
    assert.equal(second.headers.get("content-type"), "image/jpeg");
    assert.deepEqual(await second.bytes(), JPEG);
  }));

Deno.test("attachment image: unknown, not an image, SVG or mismatched bytes are 404 in our shape", () =>
  withHarness(async (h) => {
    const missing = await h.requestJson<ErrorBody>("/api/attachments/noSuchAtt001/image/x.png");
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error, "NOT_FOUND");
    assert.equal(missing.body.message, "Attachment not found");
    assert.ok(missing.body.requestId);

    const svg = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"/>');
    const metadataOnly = [
      addAttachment(h, { role: "file", mime: "image/png", title: "p.png", content: SIGIL_PNG }),
      addAttachment(h, { role: "image", mime: "image/svg+xml", title: "s.svg", content: svg }),
      addAttachment(h, { role: "image", mime: "text/html", title: "x.png", content: "<p>x</p>" }),
    ];
    const sniffed = [
      addAttachment(h, { role: "image", mime: "image/png", title: "j.png", content: JPEG }),
      addAttachment(h, {
        role: "image",
        mime: "image/png",
        title: "h.png",
        content: new TextEncoder().encode("<html><script>alert(1)</script></html>"),
      }),
      addAttachment(h, { role: "image", mime: "image/png", title: "e.png", content: "" }),
    ];
    for (const id of [...metadataOnly, ...sniffed]) {
      h.core.clearRequests();
      const r = await h.requestJson<ErrorBody>(`/api/attachments/${id}/image/x.png`);
      assert.equal(r.status, 404, id);
      assert.equal(r.body.error, "NOT_FOUND");
      assert.equal(r.body.message, "Attachment is not a raster image");
      assert.equal(r.headers.get("content-type"), "application/json; charset=utf-8");
      // a file or SVG is refused from Core's metadata: its bytes are never fetched
      assert.equal(h.core.requests.length, metadataOnly.includes(id) ? 1 : 2, id);
    }
    // what Core makes of a pasted "image" whose bytes are none: optimistic image/jpg, refused
    await h.request(`/api/lore/${W.locReef}/content`, {
      method: "PUT",
      headers: { "content-type": "text/plain" },
      body: `<img src="data:image/png;base64,${b64(new TextEncoder().encode("no image"))}">`,
    }).then((r) => r.body?.cancel());
    const [garbage] = h.core.store.attachmentsOf(W.locReef);
    assert.equal(garbage.mime, "image/jpg");
    const refused = await h.requestJson<ErrorBody>(
      `/api/attachments/${garbage.attachmentId}/image/inline-image`,
    );
    assert.equal(refused.status, 404);
  }));

Deno.test("attachment image: bad ids or a 256-character file name are 400, nothing sent to Core", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    for (
      const path of [
        ...BAD_IDS.map((id) => `/api/attachments/${id}/image/x.png`),
        `/api/attachments/${W.attLampSketch}/image/${"f".repeat(256)}`,
      ]
    ) {
      const r = await h.requestJson<ErrorBody>(path);
      assert.equal(r.status, 400, path);
      assert.equal(r.body.error, "INVALID_REQUEST");
      assert.ok(r.body.requestId);
    }
    assert.deepEqual(upstreamCalls(h), []);
  }));

Deno.test("attachment image: Core stalling before the sniffable head is a 504", async () => {
  let cancelled!: () => void;
  const upstreamCancelled = new Promise<void>((r) => cancelled = r);
  let stalled = false;
  const time = manualDeadlines();
  // a stand-in Core: the metadata answers, the bytes stop after the first ten
  const core = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/etapi/attachments/slowAtt00001") {
      return Response.json({
        attachmentId: "slowAtt00001",
        ownerId: W.locLighthouse,
        role: "image",
        mime: "image/png",
        title: "slow.png",
        blobId: "slowBlob000000000001",
      });
    }
    const body = new ReadableStream<Uint8Array>({
      start: (c) => c.enqueue(LAMP_SKETCH_PNG.slice(0, 10)),
      pull: () => {
        stalled = true;
        return new Promise(() => {});
      },
      cancel: () => cancelled(),
    });
    return new Response(body, { headers: { "content-type": "image/png" } });
  });
  try {
    await withHarness(async (h) => {
      // time moves only once the bytes stalled and one deadline is all that is left
      const r = await answerMovingTime(
        time,
        h.requestJson<ErrorBody>("/api/attachments/slowAtt00001/image/slow.png"),
        () => stalled && time.pending() === 1,
      );
      assert.equal(r.status, 504);
      assert.equal(r.body.error, "UPSTREAM_TIMEOUT");
      await upstreamCancelled;
    }, {
      coreUrlOverride: `http://127.0.0.1:${core.addr.port}`,
      env: { UPSTREAM_TIMEOUT_MS: "300" },
      deadlines: time,
    });
  } finally {
    await core.shutdown();
  }
});
