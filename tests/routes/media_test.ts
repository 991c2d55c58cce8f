/** Images (streamed download, legacy redirect) and image uploads over HTTP, real app + Core double. */
import assert from "node:assert/strict";
import { type Harness, upstreamCalls, withHarness } from "../helpers/harness.ts";
import { eventually, HANG_GUARD_MS, manualDeadlines } from "../helpers/manual_deadlines.ts";
import { CHART_PNG, makePng, W } from "../../sims/world.ts";

interface ErrorBody {
  error: string;
  message: string;
  details?: Record<string, unknown>;
}

interface Uploaded {
  url: string;
  noteId: string;
  mime: string;
  width: number;
  height: number;
}

const LIMIT = 64 * 1024;
const BAD_IDS = ["a%2Fb", "..%2F..%2Fapp-info", "a.b", "a'b", "a%5Cb", "x".repeat(129)];

/** A minimal baseline JPEG header (SOI, APP0, SOF0, EOI) of the given size. */
function jpeg(width: number, height: number): Uint8Array {
  // deno-fmt-ignore
  return new Uint8Array([
    0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01,
    0x00, 0x01, 0x00, 0x00, 0xff, 0xc0, 0x00, 0x11, 0x08, height >> 8, height & 0xff, width >> 8,
    width & 0xff, 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01, 0xff, 0xd9,
  ]);
}

/** A GIF89a header of the given size plus a trailer. */
function gif(width: number, height: number): Uint8Array {
  const out = new Uint8Array(14);
  out.set(new TextEncoder().encode("GIF89a"));
  out.set([width & 0xff, width >> 8, height & 0xff, height >> 8, 0, 0, 0, 0x3b], 6);
  return out;
}

/** `bytes` padded with zeros to `size` (a "large image": the header decides the type). */
function padded(bytes: Uint8Array, size: number): Uint8Array {
  const out = new Uint8Array(size);
  out.set(bytes);
  return out;
}

/** A chunked request body (no Content-Length) of `bytes` in `chunk`-sized pieces. */
function chunked(bytes: Uint8Array, chunk = 8192): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.length) return c.close();
      c.enqueue(bytes.slice(at, at + chunk));
      at += chunk;
    },
  });
}

async function upload(
  h: Harness,
  body: Uint8Array | ReadableStream<Uint8Array>,
  opts: { type?: string; filename?: string; query?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = {
    "content-type": opts.type ?? "image/png",
    ...opts.headers,
  };
  if (opts.filename !== undefined) headers["x-host-filename"] = opts.filename;
  return await h.requestJson<Uploaded & ErrorBody>(
    `/api/lore/upload-image${opts.query ?? ""}`,
    { method: "POST", headers, body: body as BodyInit },
  );
}

function notesTitled(h: Harness, title: string): string[] {
  return h.core.store.noteIds().filter((id) => h.core.store.getNote(id)?.title === title);
}

/**
 * Uploads over a raw socket so the header can carry unencoded UTF-8 (fetch() refuses it);
 * returns the title Core stored.
 */
async function rawUploadTitle(h: Harness, filename: string, png: Uint8Array): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(h.url).port) });
  const enc = new TextEncoder();
  await conn.write(
    new Uint8Array([
      ...enc.encode(
        `POST /api/lore/upload-image HTTP/1.1\r\nHost: ${new URL(h.url).host}\r\n` +
          "Connection: close\r\n" +
          `Content-Type: image/png\r\nContent-Length: ${png.length}\r\nx-host-filename: `,
      ),
      ...enc.encode(filename),
      ...enc.encode("\r\n\r\n"),
      ...png,
    ]),
  );
  const answer = new TextDecoder().decode(await new Response(conn.readable).bytes());
  const status = answer.slice(9, 12);
  if (status !== "201") throw new Error(`upload of ${JSON.stringify(filename)}: ${answer}`);
  const created = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as Uploaded;
  return h.core.store.getNote(created.noteId)!.title;
}

/**
 * A stand-in Core that streams one big PNG slowly for `GET /etapi/notes/<id>/content`, so tests
 * can watch bytes arrive (or the stream being cancelled) while it is still sending.
 */
function slowCore(opts: { chunks: number; gate?: Promise<void>; headBytes?: number }) {
  // by default more than the sniffed prefix
  const head = padded(makePng(4, 4, () => [1, 2, 3]), 1024).slice(0, opts.headBytes ?? 1024);
  let sentChunks = 0;
  let finished = false;
  let markCancelled!: () => void;
  const cancelled = new Promise<void>((r) => markCancelled = r);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(head);
      },
      async pull(c) {
        if (opts.gate) await opts.gate;
        else await new Promise((r) => setTimeout(r, 5));
        if (sentChunks >= opts.chunks) {
          finished = true;
          return c.close();
        }
        sentChunks++;
        c.enqueue(new Uint8Array(64 * 1024).fill(sentChunks & 0xff));
      },
      cancel() {
        markCancelled();
      },
    });
    return new Response(body, { headers: { "content-type": "image/png", etag: 'W/"big"' } });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    total: head.length + opts.chunks * 64 * 1024,
    finished: () => finished,
    cancelled,
    close: () => server.shutdown(),
  };
}

/**
 * `p`, or a rejection after the hang guard: turns a deadlock (the service waiting for what the
 * test holds back) into a failure, however slowly the machine runs.
 */
async function unlessStuck<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`stuck: ${what}`)), HANG_GUARD_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------
// GET /api/lore/:id/image

Deno.test("GET image: verified PNG bytes with cache, nosniff, sandbox CSP and Core's ETag", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    const res = await h.request(`/api/lore/${W.imgChart}/image`);
    const bytes = await res.bytes();
    assert.equal(res.status, 200);
    assert.deepEqual(bytes, CHART_PNG);
    assert.equal(res.headers.get("content-type"), "image/png");
    assert.equal(res.headers.get("cache-control"), "private, max-age=86400");
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    assert.equal(res.headers.get("content-security-policy"), "default-src 'none'; sandbox");
    assert.match(res.headers.get("etag")!, /^W\/"160-/);
    assert.equal(res.headers.get("content-disposition"), null);
    assert.deepEqual(upstreamCalls(h), [`GET /etapi/notes/${W.imgChart}/content`]);
  }));

Deno.test("GET image: If-None-Match is forwarded and Core's 304 passed back", () =>
  withHarness(async (h) => {
    const first = await h.request(`/api/lore/${W.imgChart}/image`);
    await first.body?.cancel();
    const etag = first.headers.get("etag")!;
    h.core.clearRequests();
    const res = await h.request(`/api/lore/${W.imgChart}/image`, {
      headers: { "if-none-match": etag },
    });
    assert.equal(res.status, 304);
    assert.equal(await res.text(), "");
    assert.equal(res.headers.get("etag"), etag);
    assert.equal(res.headers.get("cache-control"), "private, max-age=86400");
    assert.equal(h.core.requests.length, 1);
    assert.equal(h.core.requests[0].headers.get("if-none-match"), etag);
    const stale = await h.request(`/api/lore/${W.imgChart}/image`, {
      headers: { "if-none-match": 'W/"stale"' },
    });
    assert.equal(stale.status, 200);
    assert.deepEqual(await stale.bytes(), CHART_PNG);
  }));

Deno.test("GET image: text, SVG, HTML-as-PNG and mismatched bytes are 404 'not a raster image'", () =>
  withHarness(async (h) => {
    const add = (title: string, mime: string, content: string | Uint8Array) =>
      h.core.store.createNote({ parentNoteId: W.media, title, type: "image", mime, content }).note
        .noteId;
    const svg = add("sigil.svg", "image/svg+xml", '<svg xmlns="http://www.w3.org/2000/svg"/>');
    const html = add(
      "fake.png",
      "image/png",
      new TextEncoder().encode("<html><script>alert(1)</script></html>"),
    );
    const jpegAsPng = add("photo.png", "image/png", jpeg(10, 10));
    const empty = add("empty.png", "image/png", new Uint8Array());
    for (const id of [W.charMira, W.media, svg, html, jpegAsPng, empty]) {
      const r = await h.requestJson<ErrorBody>(`/api/lore/${id}/image`);
      assert.equal(r.status, 404, id);
      assert.equal(r.body.error, "NOT_FOUND");
      assert.equal(r.body.message, "Note is not a raster image");
      assert.equal(r.headers.get("content-type"), "application/json; charset=utf-8");
    }
    const missing = await h.requestJson<ErrorBody>("/api/lore/noSuchNote01/image");
    assert.equal(missing.status, 404);
    assert.equal(missing.body.message, "Note not found");
  }));

Deno.test("GET image: a legacy image/jpg mime is served when the bytes are JPEG", () =>
  withHarness(async (h) => {
    const bytes = jpeg(3, 2);
    const id = h.core.store.createNote({
      parentNoteId: W.media,
      title: "old.jpg",
      type: "image",
      mime: "image/jpg",
      content: bytes,
    }).note.noteId;
    const res = await h.request(`/api/lore/${id}/image`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "image/jpeg");
    assert.deepEqual(await res.bytes(), bytes);
  }));

Deno.test("GET image: a multi-MiB image streams (first bytes before Core finished sending)", async () => {
  let open!: () => void;
  const gate = new Promise<void>((r) => open = r);
  const core = slowCore({ chunks: 64, gate }); // 4 MiB, held back until we saw the first bytes
  try {
    await withHarness(async (h) => {
      const res = await unlessStuck("response head", h.request("/api/lore/slowImage001/image"));
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-type"), "image/png");
      const reader = res.body!.getReader();
      const first = await unlessStuck("first bytes", reader.read());
      assert.ok(!first.done && first.value.byteLength > 0);
      assert.equal(core.finished(), false, "first bytes arrived while Core was still sending");
      open();
      let total = first.value!.byteLength;
      for (;;) {
        const r = await reader.read();
        if (r.done) break;
        total += r.value.byteLength;
      }
      assert.equal(total, core.total);
      assert.equal(core.finished(), true);
    }, { coreUrlOverride: core.url });
  } finally {
    open();
    await core.close();
  }
});

Deno.test("GET image: a client abort mid-stream cancels the upstream body", async () => {
  const core = slowCore({ chunks: 100_000 }); // ~6 GiB if nobody stopped it
  try {
    await withHarness(async (h) => {
      const abort = new AbortController();
      const res = await unlessStuck(
        "response head",
        h.request("/api/lore/slowImage001/image", { signal: abort.signal }),
      );
      const reader = res.body!.getReader();
      await reader.read();
      await reader.read();
      abort.abort();
      await reader.cancel().catch(() => {});
      await unlessStuck("upstream cancel", core.cancelled);
      assert.equal(core.finished(), false);
    }, { coreUrlOverride: core.url });
  } finally {
    await core.close();
  }
});

Deno.test("GET image: Core stalling before the sniffable head is a 504 and is cancelled", async () => {
  const core = slowCore({ chunks: 1, gate: new Promise(() => {}), headBytes: 10 });
  const time = manualDeadlines();
  try {
    await withHarness(async (h) => {
      const answer = h.requestJson<ErrorBody>("/api/lore/slowImage001/image");
      // the answer's head arrived (its call's deadline ended) and the sniff waits for more bytes
      await eventually(
        "the service waits for the image's first bytes",
        () => time.setAt(300).length === 2 && time.pendingOf(300) === 1,
      );
      time.advance(300);
      const r = await answer;
      assert.equal(r.status, 504);
      assert.equal(r.body.error, "UPSTREAM_TIMEOUT");
      assert.equal(time.now(), 300, "the head's own deadline, UPSTREAM_TIMEOUT_MS, ended it");
      await unlessStuck("upstream cancel", core.cancelled);
    }, { coreUrlOverride: core.url, env: { UPSTREAM_TIMEOUT_MS: "300" }, deadlines: time });
  } finally {
    await core.close();
  }
});

Deno.test("GET image: bad ids are 400 with nothing sent upstream", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    for (const id of BAD_IDS) {
      const r = await h.requestJson<ErrorBody>(`/api/lore/${id}/image`);
      assert.equal(r.status, 400, id);
      assert.equal(r.body.error, "INVALID_REQUEST");
    }
    assert.deepEqual(upstreamCalls(h), []);
  }));

// ---------------------------------------------------------------------------------------------
// GET /api/images/:id/:filename

Deno.test("GET /api/images/:id/:filename: 301 to our image route, no backend, cached a day", () =>
  withHarness(async (h) => {
    const res = await h.request(`/api/images/${W.imgChart}/coast-chart.png`, {
      redirect: "manual",
    });
    await res.body?.cancel();
    assert.equal(res.status, 301);
    assert.equal(res.headers.get("location"), `/api/lore/${W.imgChart}/image`);
    assert.equal(res.headers.get("cache-control"), "public, max-age=86400");
    const long = await h.request(`/api/images/${W.imgChart}/${"f".repeat(255)}`, {
      redirect: "manual",
    });
    await long.body?.cancel();
    assert.equal(long.status, 301);
  }, { noCoreCredentials: true }));

Deno.test("GET /api/images/:id/:filename: bad id or a 256-char file name is 400", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    for (
      const path of [
        ...BAD_IDS.map((id) => `/api/images/${id}/x.png`),
        `/api/images/${W.imgChart}/${"f".repeat(256)}`,
      ]
    ) {
      const r = await h.requestJson<ErrorBody>(path, { redirect: "manual" });
      assert.equal(r.status, 400, path);
      assert.equal(r.body.error, "INVALID_REQUEST");
    }
    assert.deepEqual(upstreamCalls(h), []);
  }));

// ---------------------------------------------------------------------------------------------
// POST /api/lore/upload-image

Deno.test("upload: PNG becomes an image note under the lore root; bytes streamed as octet-stream", () =>
  withHarness(async (h) => {
    const png = makePng(20, 10, (x) => [x * 10, 0, 0]);
    h.core.clearRequests();
    const r = await upload(h, png, { filename: "reef%20chart.png" });
    assert.equal(r.status, 201);
    const { noteId } = r.body;
    assert.deepEqual(r.body, {
      url: `/api/images/${noteId}/reef-chart.png`,
      noteId,
      mime: "image/png",
      width: 20,
      height: 10,
    });
    assert.deepEqual(upstreamCalls(h), [
      "POST /etapi/create-note",
      `PUT /etapi/notes/${noteId}/content`,
    ]);
    assert.deepEqual(JSON.parse(h.core.requests[0].bodyText!), {
      parentNoteId: "root",
      title: "reef chart.png",
      type: "image",
      mime: "image/png",
      content: "",
    });
    assert.equal(h.core.requests[1].headers.get("content-type"), "application/octet-stream");
    const note = h.core.store.notePojo(noteId);
    assert.equal(note.type, "image");
    assert.equal(note.mime, "image/png");
    assert.deepEqual(note.parentNoteIds, ["root"]);
    assert.deepEqual(h.core.store.getContent(noteId), png);
    // and it is served back through the image route (the url redirects there)
    const img = await h.request(r.body.url);
    assert.equal(img.url, `${h.url}/api/lore/${noteId}/image`);
    assert.deepEqual(await img.bytes(), png);
  }));

Deno.test("upload: the file name also comes in x-vercel-filename; x-host-filename wins", () =>
  withHarness(async (h) => {
    const png = makePng(2, 2, () => [0, 0, 0]);
    const vercel = await upload(h, png, {
      headers: { "x-vercel-filename": "mira%20portrait.png" },
    });
    assert.equal(vercel.status, 201);
    assert.equal(h.core.store.getNote(vercel.body.noteId)!.title, "mira portrait.png");
    assert.equal(vercel.body.url, `/api/images/${vercel.body.noteId}/mira-portrait.png`);
    const both = await upload(h, png, {
      filename: "chart.png",
      headers: { "x-vercel-filename": "other.png" },
    });
    assert.equal(h.core.store.getNote(both.body.noteId)!.title, "chart.png");
  }));

Deno.test("upload: JPEG and GIF are sniffed (type, extension, size); octet-stream is accepted", () =>
  withHarness(async (h) => {
    const j = await upload(h, jpeg(640, 480), {
      type: "application/octet-stream",
      filename: "harbor.png",
    });
    assert.equal(j.status, 201);
    assert.equal(j.body.mime, "image/jpeg");
    assert.deepEqual([j.body.width, j.body.height], [640, 480]);
    assert.equal(h.core.store.getNote(j.body.noteId)!.title, "harbor.jpg");
    assert.equal(h.core.store.getNote(j.body.noteId)!.mime, "image/jpeg");
    const g = await upload(h, gif(7, 9), { type: "image/gif" });
    assert.equal(g.body.mime, "image/gif");
    assert.deepEqual([g.body.width, g.body.height], [7, 9]);
    assert.equal(h.core.store.getNote(g.body.noteId)!.title, "image.gif");
  }));

Deno.test("upload: parentNoteId places the note; bad or unknown parents are 400, nothing created", () =>
  withHarness(async (h) => {
    const png = makePng(2, 2, () => [0, 0, 0]);
    const ok = await upload(h, png, {
      query: `?parentNoteId=${W.media}`,
      filename: "in-media.png",
    });
    assert.equal(ok.status, 201);
    assert.deepEqual(h.core.store.notePojo(ok.body.noteId).parentNoteIds, [W.media]);
    h.core.clearRequests();
    for (const id of [...BAD_IDS, ""]) {
      const r = await upload(h, png, { query: `?parentNoteId=${id}` });
      assert.equal(r.status, 400, id);
      assert.equal(r.body.error, "INVALID_REQUEST");
    }
    assert.deepEqual(upstreamCalls(h), []);
    const before = h.core.store.noteIds().length;
    const missing = await upload(h, png, { query: "?parentNoteId=noSuchNote01" });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error, "INVALID_REQUEST");
    assert.deepEqual(missing.body.details?.fields, [{
      path: "query.parentNoteId",
      message: "not found",
    }]);
    assert.equal(h.core.store.noteIds().length, before);
  }));

Deno.test("upload: SVG, HTML or PDF disguised as image/png is 415 and nothing reaches Core", () =>
  withHarness(async (h) => {
    const disguised = [
      '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><circle r="9"/></svg>',
      '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>',
      "<!doctype html><html><script>alert(document.cookie)</script></html>",
      "%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj",
      "GIF8", // too short to be a GIF
      "\x89PNG", // truncated signature
    ];
    h.core.clearRequests();
    for (const text of disguised) {
      const r = await upload(h, new TextEncoder().encode(text), { filename: "map.png" });
      assert.equal(r.status, 415, text);
      assert.equal(r.body.error, "UNSUPPORTED_MEDIA_TYPE");
    }
    // a declared type that is neither image/* nor octet-stream is refused before reading
    for (const type of ["text/plain", "application/json", "text/html", ""]) {
      const r = await upload(h, makePng(2, 2, () => [0, 0, 0]), { type });
      assert.equal(r.status, 415, type);
    }
    const empty = await upload(h, new Uint8Array());
    assert.equal(empty.status, 400);
    assert.equal(empty.body.error, "INVALID_REQUEST");
    assert.deepEqual(upstreamCalls(h), []);
  }));

Deno.test("upload: a bare signature or a header cut short is 415; an image needs its size", () =>
  withHarness(async (h) => {
    const png = makePng(3, 2, () => [0, 0, 0]);
    const jpg = jpeg(8, 6);
    const cut: [string, Uint8Array][] = [
      ["GIF89a alone", new TextEncoder().encode("GIF89a")],
      ["GIF89a without the whole screen descriptor", gif(5, 6).subarray(0, 12)],
      ["the 8-byte PNG signature", png.subarray(0, 8)],
      ["PNG cut inside IHDR", png.subarray(0, 30)],
      ["JPEG without its frame header", jpg.subarray(0, 20)],
      ["JPEG cut inside its frame header", jpg.subarray(0, 30)],
    ];
    h.core.clearRequests();
    for (const [what, bytes] of cut) {
      const r = await upload(h, bytes, { type: "application/octet-stream" });
      assert.equal(r.status, 415, what);
      assert.equal(r.body.error, "UNSUPPORTED_MEDIA_TYPE", what);
    }
    assert.deepEqual(upstreamCalls(h), [], "nothing was created");
    // the smallest complete headers are enough
    const whole = await upload(h, gif(5, 6), { type: "image/gif" });
    assert.equal(whole.status, 201);
    assert.deepEqual([whole.body.width, whole.body.height], [5, 6]);
  }));

Deno.test("upload: file names are reduced to a safe basename with the sniffed extension", () =>
  withHarness(async (h) => {
    const png = makePng(2, 2, () => [0, 0, 0]);
    const long = "n".repeat(500);
    const cases: [string | undefined, string][] = [
      ["../../etc/passwd", "passwd.png"],
      ["a/b.png", "b.png"],
      ["C:\\Users\\gm\\map.png", "map.png"],
      ["..%2F..%2Fsecret.png", "secret.png"],
      ["%2e%2e%2f%2e%2e%2f", "image.png"],
      ["evil%00name%0A%0D.png", "evilname.png"],
      ["bell%07ring%1B[31m%7F.png", "bellring[31m.png"],
      ["tab\there.png", "tabhere.png"],
      ["gpj.%E2%80%AEexe.png", "gpj.exe.png"],
      ["photo.jpeg", "photo.png"],
      [".htaccess", "htaccess.png"],
      [".png", "image.png"],
      ["   ", "image.png"],
      [undefined, "image.png"],
      ['<i>"Maps" & plans.png', "_i__Maps_ _ plans.png"],
      ["<img src=x onerror=alert(1)>.png", "_img src=x onerror=alert(1)_.png"],
      ["Karte%20%C3%9Cbersicht.png", "Karte Übersicht.png"],
      ["100%.png", "100%.png"],
      ["map v1.2", "map v1.2.png"],
      [long, `${"n".repeat(124)}.png`],
      [`${long}.png`, `${"n".repeat(124)}.png`],
    ];
    for (const [filename, expected] of cases) {
      const r = await upload(h, png, { filename });
      assert.equal(r.status, 201, String(filename));
      const title = h.core.store.getNote(r.body.noteId)!.title;
      assert.equal(title, expected, String(filename));
      assert.ok(title.length <= 128);
    }
    // raw UTF-8 in the header, which fetch() will not send (raw C0 controls never get past
    // the HTTP parser; percent-encoded ones are covered above)
    const raw: [string, string][] = [
      ["Küste.png", "Küste.png"],
      ["gpj.\u202Eexe.png", "gpj.exe.png"],
      ["a\u0085b.png", "ab.png"],
    ];
    for (const [filename, expected] of raw) {
      assert.equal(await rawUploadTitle(h, filename, png), expected, JSON.stringify(filename));
    }
  }));

Deno.test("upload: bytes reach Core while the client is still sending (never buffered)", async () => {
  let open!: () => void;
  const gate = new Promise<void>((r) => open = r);
  let firstBytesBeforeClientDone = false;
  let clientDone = false;
  let received = 0;
  // a stand-in Core: create-note answers a note; the PUT opens the client's gate on first bytes
  const core = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const path = new URL(req.url).pathname;
    if (req.method === "POST" && path === "/etapi/create-note") {
      await req.body?.cancel();
      const note = {
        noteId: "streamImg001",
        isProtected: false,
        title: "s.png",
        type: "image",
        mime: "image/png",
        parentNoteIds: ["root"],
        childNoteIds: [],
        parentBranchIds: ["root_streamImg001"],
        childBranchIds: [],
        attributes: [],
      };
      const branch = { branchId: "root_streamImg001", noteId: note.noteId, parentNoteId: "root" };
      return Response.json({ note, branch: { ...branch, notePosition: 10 } }, { status: 201 });
    }
    if (req.method === "PUT" && path === "/etapi/notes/streamImg001/content") {
      for await (const chunk of req.body!) {
        if (received === 0) {
          firstBytesBeforeClientDone = !clientDone;
          open();
        }
        received += chunk.byteLength;
      }
      return new Response(null, { status: 204 });
    }
    return new Response("unexpected", { status: 500 });
  });
  const png = makePng(2, 2, () => [0, 0, 0]);
  const total = 1024 * 1024;
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(c) {
      if (sent === 0) {
        c.enqueue(padded(png, 4096));
        sent = 4096;
        return;
      }
      await gate; // the rest only once Core has seen the first bytes
      if (sent >= total) {
        clientDone = true;
        return c.close();
      }
      c.enqueue(new Uint8Array(64 * 1024));
      sent += 64 * 1024;
    },
  });
  try {
    await withHarness(async (h) => {
      const r = await unlessStuck("upload", upload(h, body, { filename: "s.png" }));
      assert.equal(r.status, 201);
      assert.equal(r.body.noteId, "streamImg001");
      assert.ok(firstBytesBeforeClientDone);
      assert.equal(received, sent);
    }, { coreUrlOverride: `http://127.0.0.1:${core.addr.port}` });
  } finally {
    open();
    await core.shutdown();
  }
});

Deno.test("upload: MAX_UPLOAD_BYTES exactly is accepted, streamed without a Content-Length", () =>
  withHarness(async (h) => {
    const png = padded(makePng(30, 20, () => [9, 9, 9]), LIMIT);
    const r = await upload(h, chunked(png), { filename: "exact.png" });
    assert.equal(r.status, 201);
    assert.deepEqual([r.body.width, r.body.height], [30, 20]);
    assert.deepEqual(h.core.store.getContent(r.body.noteId), png);
  }, { env: { MAX_UPLOAD_BYTES: String(LIMIT) } }));

Deno.test("upload: over the limit mid-stream (no Content-Length) is 413 and the note is removed", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    const body = padded(makePng(30, 20, () => [9, 9, 9]), LIMIT + 1);
    const r = await upload(h, chunked(body), { filename: "too-big.png" });
    assert.equal(r.status, 413);
    assert.equal(r.body.error, "PAYLOAD_TOO_LARGE");
    assert.deepEqual(r.body.details?.rolledBack, ["create the image note"]);
    const calls = upstreamCalls(h);
    assert.equal(calls[0], "POST /etapi/create-note");
    assert.match(calls.at(-1)!, /^DELETE \/etapi\/notes\/\w+$/);
    assert.deepEqual(notesTitled(h, "too-big.png"), []);
    // much larger bodies stop being read at the limit
    const huge = await upload(h, chunked(padded(makePng(1, 1, () => [0, 0, 0]), 4 * LIMIT)), {
      filename: "huge.png",
    });
    assert.equal(huge.status, 413);
    assert.deepEqual(notesTitled(h, "huge.png"), []);
  }, { env: { MAX_UPLOAD_BYTES: String(LIMIT) } }));

Deno.test("upload: a declared Content-Length over the limit is 413 before anything is read", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    const r = await upload(h, padded(makePng(1, 1, () => [0, 0, 0]), LIMIT + 1));
    assert.equal(r.status, 413);
    assert.equal(r.body.error, "PAYLOAD_TOO_LARGE");
    assert.deepEqual(upstreamCalls(h), []);
  }, { env: { MAX_UPLOAD_BYTES: String(LIMIT) } }));

Deno.test("upload: a failed byte upload is rolled back; an undeletable note is reported exactly", () =>
  withHarness(async (h) => {
    const png = makePng(2, 2, () => [0, 0, 0]);
    h.core.fault({ method: "PUT", path: /^\/etapi\/notes\/\w+\/content$/, status: 500, times: 1 });
    const rolled = await upload(h, png, { filename: "rolled.png" });
    assert.equal(rolled.status, 502);
    assert.equal(rolled.body.error, "UPSTREAM_ERROR");
    assert.match(rolled.body.message, /nothing was changed/);
    assert.deepEqual(notesTitled(h, "rolled.png"), []);

    h.core.fault({ method: "PUT", path: /^\/etapi\/notes\/\w+\/content$/, status: 500, times: 1 });
    h.core.fault({ method: "DELETE", path: /^\/etapi\/notes\/\w+$/, status: 500, times: 1 });
    const partial = await upload(h, png, { filename: "left.png" });
    assert.equal(partial.status, 502);
    assert.equal(partial.body.error, "PARTIAL_FAILURE");
    assert.deepEqual(partial.body.details, {
      failedStep: "upload the image bytes",
      cause: "UPSTREAM_ERROR",
      completed: ["create the image note"],
      rolledBack: [],
      leftBehind: ["create the image note"],
    });
    assert.equal(notesTitled(h, "left.png").length, 1);
  }));
