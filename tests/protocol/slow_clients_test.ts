/**
 * Slow clients over raw TCP: a request head that never completes, a body shorter than its
 * `Content-Length`, a body trickling below the minimum rate and an idle kept-alive connection
 * all end — the server closes the connection (the client reads EOF). Nothing here measures
 * speed: every wait is bounded only by a generous hang guard; the connection deadlines are set
 * short so the suite stays quick, and the body-rate tests run the service's clock by hand.
 */
import assert from "node:assert/strict";
import { type Harness, type HarnessOptions, withHarness } from "../helpers/harness.ts";
import { eventually, type ManualDeadlines, manualDeadlines } from "../helpers/manual_deadlines.ts";
import { parseResponse, rawExchange } from "../helpers/raw_http.ts";
import { makePng, W } from "../../sims/world.ts";

const SHORT: HarnessOptions = {
  env: {
    CLIENT_DEADLINES: "on", // on loopback they would be off (a local proxy's job)
    CLIENT_HEADER_TIMEOUT_MS: "400",
    CLIENT_BODY_TIMEOUT_MS: "400",
    CLIENT_IDLE_TIMEOUT_MS: "600",
    ALLOWED_HOSTS: "lore.example", // the Host the raw requests below name
  },
};
const HANG_GUARD_MS = 30_000;

const logs = (h: Harness) => h.logs.map((l) => JSON.parse(l) as Record<string, unknown>);

Deno.test("slow client: a request head that never completes is closed", () =>
  withHarness(async (h) => {
    const r = await rawExchange(h.url, "GET /healthz HTTP/1.1\r\nHost: lore.example\r\nX-A: b", {
      hangGuardMs: HANG_GUARD_MS,
    });
    assert.ok(r.closedByServer, "the server closed the connection");
    assert.equal(r.status, null);
    assert.ok(logs(h).some((l) => l.msg === "connection closed"), "the close is logged");
  }, SHORT));

Deno.test("slow client: a head trickled a byte at a time is closed too (a deadline, not an idle gap)", () =>
  withHarness(async (h) => {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: h.server.port });
    const head = "GET /healthz HTTP/1.1\r\nHost: lore.example\r\n" + "X-Slow: a\r\n".repeat(10_000);
    let closed = false;
    const reading = conn.read(new Uint8Array(1024)).then((n) => closed = n === null, () => {
      closed = true;
    });
    const guard = setTimeout(() => conn.close(), HANG_GUARD_MS);
    try {
      for (let i = 0; i < head.length && !closed; i++) {
        await conn.write(new Uint8Array([head.charCodeAt(i)])).catch(() => closed = true);
        await new Promise((r) => setTimeout(r, 50)); // far below the idle deadline
      }
      await reading;
      assert.ok(closed, "the server closed the connection");
    } finally {
      clearTimeout(guard);
      try {
        conn.close();
      } catch { /* closed by the guard */ }
    }
  }, SHORT));

Deno.test("slow client: a JSON body shorter than its Content-Length is 408, then closed; Core untouched", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    const r = await rawExchange(
      h.url,
      "POST /api/lore HTTP/1.1\r\nHost: lore.example\r\nContent-Type: application/json\r\n" +
        'Content-Length: 100\r\n\r\n{"title":',
      { hangGuardMs: HANG_GUARD_MS },
    );
    assert.equal(r.status, 408);
    const body = JSON.parse(r.body);
    assert.equal(body.error, "REQUEST_TIMEOUT");
    assert.equal(r.headers.get("x-request-id"), body.requestId);
    assert.ok(
      logs(h).some((l) =>
        l.msg === "request" && l.requestId === body.requestId && l.status === 408
      ),
    );
    assert.ok(r.closedByServer, "the server closed the connection");
    assert.equal(h.core.requests.length, 0);
  }, SHORT));

Deno.test("slow client: a stalled image upload is 408 and the half-made note is removed", () =>
  withHarness(async (h) => {
    const png = makePng(4, 4, () => [0, 0, 0]);
    const head = String.fromCharCode(...png.subarray(0, 40)); // a complete header, then silence
    const r = await rawExchange(
      h.url,
      "POST /api/lore/upload-image HTTP/1.1\r\nHost: lore.example\r\nContent-Type: image/png\r\n" +
        `X-Host-Filename: stalled.png\r\nContent-Length: ${png.length + 10_000}\r\n\r\n${head}`,
      { hangGuardMs: HANG_GUARD_MS },
    );
    assert.equal(r.status, 408, r.text.slice(0, 300));
    assert.equal(JSON.parse(r.body).error, "REQUEST_TIMEOUT");
    assert.ok(r.closedByServer);
    const left = h.core.store.noteIds().filter((id) =>
      h.core.store.getNote(id)?.title === "stalled.png"
    );
    assert.deepEqual(left, []);
  }, SHORT));

Deno.test("slow client: an idle kept-alive connection is closed after its answers", () =>
  withHarness(async (h) => {
    // two requests on one connection, then silence
    const get = "GET /healthz HTTP/1.1\r\nHost: lore.example\r\n\r\n";
    const r = await rawExchange(h.url, get, {
      hangGuardMs: HANG_GUARD_MS,
      then: { afterMs: 100, bytes: get },
    });
    assert.equal(r.status, 200);
    assert.equal(r.text.match(/HTTP\/1\.1 200/g)?.length, 2, "both requests answered");
    assert.ok(r.closedByServer, "the idle connection was closed");
    // a connection that never sends anything ends the same way
    const silent = await rawExchange(h.url, "", { hangGuardMs: HANG_GUARD_MS });
    assert.ok(silent.closedByServer);
    assert.equal(silent.status, null);
  }, SHORT));

Deno.test("slow client: a slow backend is not a slow client; the answer waits for it", () =>
  withHarness(async (h) => {
    // Core answers after every client deadline has passed: the request is in progress, so the
    // connection stays open until the response is delivered
    h.core.fault({ path: `/etapi/notes/${W.charMira}`, delayMs: 1_200, times: 1 });
    const res = await h.request(`/api/lore/${W.charMira}`);
    assert.equal(res.status, 200);
    await res.body?.cancel();
  }, SHORT));

/**
 * The service on a clock the test moves: bodies must average 1000 bytes per second over each
 * second of waiting, and nothing else can end them (the idle limit and backend deadlines are far
 * away; a backend call's deadline is told apart by its duration).
 */
const BACKEND_MS = 600_000;
const paced = (time: ManualDeadlines): HarnessOptions => ({
  deadlines: time,
  env: {
    CLIENT_DEADLINES: "on",
    CLIENT_BODY_MIN_BYTES_PER_SECOND: "1000",
    CLIENT_BODY_RATE_WINDOW_MS: "1000",
    CLIENT_BODY_TIMEOUT_MS: String(BACKEND_MS - 10_000),
    UPSTREAM_TIMEOUT_MS: String(BACKEND_MS),
  },
});

/** A raw connection that keeps sending while its answer is collected. */
async function rawConnection(h: Harness, request: string | Uint8Array) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: h.server.port });
  let guardFired = false;
  const guard = setTimeout(() => {
    guardFired = true;
    conn.close();
  }, HANG_GUARD_MS);
  let text = "";
  const reading = (async () => {
    const buf = new Uint8Array(16 * 1024);
    for (;;) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) return;
      text += String.fromCharCode(...buf.subarray(0, n));
    }
  })();
  const send = async (bytes: string | Uint8Array) => {
    let data = typeof bytes === "string" ? Uint8Array.from(bytes, (c) => c.charCodeAt(0)) : bytes;
    try {
      while (data.byteLength) data = data.subarray(await conn.write(data));
    } catch {
      // the server closed the connection
    }
  };
  await send(request);
  return {
    send,
    answered: () => /^HTTP\/1\.1 \d{3}/.test(text),
    /** The answer, once the server has closed the connection. */
    async done() {
      await reading;
      clearTimeout(guard);
      if (!guardFired) conn.close();
      return { ...parseResponse(text), closedByServer: !guardFired };
    },
  };
}

const uploadHead = (name: string, length: number) =>
  "POST /api/lore/upload-image HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/png\r\n" +
  `X-Host-Filename: ${name}\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`;
const notesTitled = (h: Harness, title: string) =>
  h.core.store.noteIds().filter((id) => h.core.store.getNote(id)?.title === title);
const latin1 = (bytes: Uint8Array) => String.fromCharCode(...bytes);

Deno.test("slow client: an upload trickling below the minimum rate is 408, its note removed, the cut logged", async () => {
  const time = manualDeadlines();
  await withHarness(async (h) => {
    const png = makePng(4, 4, () => [0, 0, 0]);
    const conn = await rawConnection(
      h,
      uploadHead("trickle.png", png.length + 10_000) + latin1(png),
    );
    await eventually("the image note is made", () => notesTitled(h, "trickle.png").length === 1);
    // a byte for every quarter second of the service's clock: never silent, far too slow
    await eventually("the upload is cut off", () => {
      if (conn.answered()) return true;
      time.advance(250);
      void conn.send("x");
      return false;
    });
    const r = await conn.done();
    assert.equal(r.status, 408, r.body);
    const body = JSON.parse(r.body);
    assert.equal(body.error, "REQUEST_TIMEOUT");
    assert.match(
      body.message,
      /^The request body is too slow: \d+ bytes arrived in the last 1000 ms/,
    );
    assert.equal(body.details.reason, "slow");
    assert.equal(r.headers.get("x-request-id"), body.requestId);
    assert.ok(r.closedByServer, "the server closed the connection");
    assert.deepEqual(notesTitled(h, "trickle.png"), [], "the half-made note is removed");
    const cut = logs(h).find((l) => l.msg === "request body cut off");
    assert.equal(cut?.requestId, body.requestId);
    assert.equal(cut?.reason, "slow");
    assert.equal(cut?.route, "/api/lore/upload-image");
  }, paced(time));
});

Deno.test("slow client: an upload slow but above the minimum rate goes through whole", async () => {
  const time = manualDeadlines();
  await withHarness(async (h) => {
    const png = makePng(96, 96, (x, y) => [(x * 37) % 256, (y * 91) % 256, (x * y * 13) % 256]);
    assert.ok(png.length > 10_000, `a PNG of ${png.length} bytes lasts several windows`);
    const conn = await rawConnection(h, uploadHead("steady.png", png.length));
    await conn.send(png.subarray(0, 500));
    await eventually("the image note is made", () => notesTitled(h, "steady.png").length === 1);
    // 500 bytes per 100 ms of the service's clock: 5000 bytes per second, five times the minimum.
    // Each piece is on its way to Core (its backend deadline restarted) before the clock moves,
    // so no byte the client sent is left waiting at the service when a window is judged.
    for (let at = 500; at < png.length; at += 500) {
      time.advance(100);
      await conn.send(png.subarray(at, at + 500));
      await eventually("the piece went on", () => time.setAt(BACKEND_MS).at(-1) === time.now());
    }
    const r = await conn.done();
    assert.equal(r.status, 201, r.body);
    assert.ok(r.closedByServer);
    const { noteId } = JSON.parse(r.body);
    assert.deepEqual(h.core.store.getContent(noteId), png);
    assert.ok(time.now() > 2_000, "the upload took several windows of the service's clock");
    assert.ok(!logs(h).some((l) => l.msg === "request body cut off"));
  }, paced(time));
});

Deno.test("slow client: a JSON body trickling below the minimum rate is 408; Core untouched", async () => {
  const time = manualDeadlines();
  await withHarness(async (h) => {
    h.core.clearRequests();
    const conn = await rawConnection(
      h,
      "POST /api/lore HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
        'Content-Length: 1000\r\n\r\n{"title":"',
    );
    await eventually("the body is cut off", () => {
      if (conn.answered()) return true;
      time.advance(250);
      void conn.send("a");
      return false;
    });
    const r = await conn.done();
    assert.equal(r.status, 408);
    const body = JSON.parse(r.body);
    assert.equal(body.error, "REQUEST_TIMEOUT");
    assert.equal(body.details.reason, "slow");
    assert.ok(r.closedByServer);
    assert.deepEqual(h.core.requests, []);
    assert.ok(
      logs(h).some((l) =>
        l.msg === "request body cut off" && l.requestId === body.requestId &&
        l.route === "/api/lore"
      ),
    );
  }, paced(time));
});

Deno.test("slow client: bodies past the per-client and the total bound are refused unread, 429 and 503", async () => {
  const time = manualDeadlines(); // stands still: the held uploads stay in progress
  const bounded = (env: Record<string, string>) => ({
    ...paced(time),
    env: { ...paced(time).env, ...env },
  });
  const png = makePng(4, 4, () => [0, 0, 0]);
  const hold = async (h: Harness, name: string) => {
    const conn = await rawConnection(h, uploadHead(name, png.length + 1000) + latin1(png));
    await eventually(`${name} is in progress`, () => notesTitled(h, name).length === 1);
    return conn;
  };
  const refusal = async (h: Harness, name: string) => {
    const r = await (await rawConnection(h, uploadHead(name, png.length) + latin1(png))).done();
    assert.ok(r.closedByServer, "the unread body's connection is closed");
    assert.equal(r.headers.get("retry-after"), "5");
    const body = JSON.parse(r.body);
    assert.equal(r.headers.get("x-request-id"), body.requestId);
    assert.deepEqual(notesTitled(h, name), [], "nothing created");
    return { status: r.status, body };
  };

  await withHarness(async (h) => {
    const first = await hold(h, "one.png");
    await hold(h, "two.png");
    const third = await refusal(h, "three.png");
    assert.equal(third.status, 429);
    assert.equal(third.body.error, "RATE_LIMITED");
    assert.deepEqual(third.body.details, { limit: 2, retryAfterSeconds: 5 });
    // one ends: its slot is free again
    await first.send("x".repeat(1000));
    assert.equal((await first.done()).status, 201);
    const fourth = await rawConnection(h, uploadHead("four.png", png.length) + latin1(png));
    assert.equal((await fourth.done()).status, 201);
  }, bounded({ MAX_BODIES_PER_CLIENT: "2" }));

  await withHarness(async (h) => {
    await hold(h, "one.png");
    await hold(h, "two.png");
    const third = await refusal(h, "three.png");
    assert.equal(third.status, 503);
    assert.equal(third.body.error, "SERVICE_BUSY");
  }, bounded({ MAX_BODIES_IN_FLIGHT: "2" }));
});
