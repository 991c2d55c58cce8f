/**
 * Slow clients over raw TCP: a request head that never completes, a body shorter than its
 * `Content-Length` and an idle kept-alive connection all end — the server closes the connection
 * (the client reads EOF). Nothing here measures speed: every wait is bounded only by a generous
 * hang guard, and the deadlines are set short so the suite stays quick.
 */
import assert from "node:assert/strict";
import { type Harness, type HarnessOptions, withHarness } from "../helpers/harness.ts";
import { rawExchange } from "../helpers/raw_http.ts";
import { makePng, W } from "../../sims/world.ts";

const SHORT: HarnessOptions = {
  env: {
    CLIENT_DEADLINES: "on", // on loopback they would be off (a local proxy's job)
    CLIENT_HEADER_TIMEOUT_MS: "400",
    CLIENT_BODY_TIMEOUT_MS: "400",
    CLIENT_IDLE_TIMEOUT_MS: "600",
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
