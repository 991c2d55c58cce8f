/**
 * What a raw client can put in the request line and the `Host` header, sent over TCP because
 * `fetch` would refuse to: a malformed or missing `Host` is a 400 in our error shape with a
 * request id and a log line, and nothing but the request target's own path decides the route.
 */
import assert from "node:assert/strict";
import { type Harness, upstreamCalls, withHarness } from "../helpers/harness.ts";
import { rawExchange } from "../helpers/raw_http.ts";
import { W } from "../../sims/world.ts";

const get = (target: string, host: string | null, extra = "") =>
  `GET ${target} HTTP/1.1\r\n${host === null ? "" : `Host: ${host}\r\n`}${extra}` +
  "Connection: close\r\n\r\n";

/** The log line of the request with this id. */
function logLine(h: Harness, requestId: string): Record<string, unknown> | undefined {
  return h.logs.map((l) => JSON.parse(l)).find((l) =>
    l.msg === "request" && l.requestId === requestId
  );
}

async function assertRefused(h: Harness, request: string, what: string) {
  const r = await rawExchange(h.url, request, { hangGuardMs: 20_000 });
  assert.equal(r.status, 400, `${what}: ${r.text.slice(0, 200)}`);
  const body = JSON.parse(r.body);
  assert.equal(body.error, "INVALID_REQUEST", what);
  assert.equal(typeof body.message, "string");
  assert.equal(r.headers.get("x-request-id"), body.requestId, what);
  const line = logLine(h, body.requestId);
  assert.ok(line, `${what}: no log line`);
  assert.equal(line.status, 400);
}

Deno.test("raw: a malformed Host header is a 400 in our error shape, logged, no backend call", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    for (const host of ["a b/c@d", "x:99999", "[::1", "a%zz", "ex.com\\foo", "u@lore.example"]) {
      await assertRefused(h, get(`/api/lore/${W.charMira}`, host), `Host: ${host}`);
    }
    assert.deepEqual(upstreamCalls(h), []);
  }));

Deno.test("raw: a Host carrying a path cannot change which route answers", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    const host = `127.0.0.1:8080/api/lore/${W.charMira}/content?`;
    await assertRefused(h, get("/healthz", host), "Host with a path");
    // a target that looks like another authority stays a path
    const r = await rawExchange(h.url, get(`//127.0.0.1/api/lore/${W.charMira}`, "127.0.0.1"));
    assert.equal(r.status, 404);
    assert.deepEqual(upstreamCalls(h), []);
    // and the plain request still works
    const ok = await rawExchange(h.url, get("/healthz", "lore.example:8080"));
    assert.equal(ok.status, 200);
  }, { env: { ALLOWED_HOSTS: "lore.example" } }));

Deno.test("raw: dot segments and backslashes in the path are 400, not resolved to another route", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    for (
      const target of [
        `/api/public/../lore/${W.charMira}`,
        `/api/public/%2e%2e/lore/${W.charMira}`,
        `/api/lore/${W.charMira}/./content`,
        `/api\\lore\\${W.charMira}`,
      ]
    ) {
      await assertRefused(h, get(target, "127.0.0.1"), target);
    }
    assert.deepEqual(upstreamCalls(h), []);
  }));

Deno.test("raw: an absolute-form target is routed by its own path; a bad authority there is 400", () =>
  withHarness(async (h) => {
    const r = await rawExchange(h.url, get("http://lore.example/healthz", "ignored.example"));
    assert.equal(r.status, 200);
    // its authority, not the Host header, is the request's host (RFC 9112 §3.2.2): checked
    const foreign = await rawExchange(h.url, get("http://attacker.example/healthz", "127.0.0.1"));
    assert.equal(foreign.status, 421);
    await assertRefused(h, get("http://x:99999/healthz", "127.0.0.1"), "absolute-form bad port");
    await assertRefused(h, get("ftp://lore.example/healthz", "127.0.0.1"), "absolute-form ftp");
  }, { env: { ALLOWED_HOSTS: "lore.example" } }));

Deno.test("raw: no Host, or an empty one, is a 400 before any work (HTTP/1.1 and 1.0 alike)", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    // Deno would make up `localhost:<port>` for these, a loopback name the host rule accepts
    const requests = {
      "HTTP/1.1 without Host": get(`/api/lore/${W.charMira}`, null),
      "HTTP/1.1 with an empty Host": get(`/api/lore/${W.charMira}`, ""),
      "absolute form without Host": get(`http://localhost/api/lore/${W.charMira}`, null),
      "HTTP/1.0 without Host": `GET /api/lore/${W.charMira} HTTP/1.0\r\n\r\n`,
      "HTTP/1.0 health check without Host": "GET /healthz HTTP/1.0\r\n\r\n",
    };
    for (const [what, request] of Object.entries(requests)) {
      await assertRefused(h, request, what);
      const r = await rawExchange(h.url, request);
      assert.equal(JSON.parse(r.body).message, "A Host header is required", what);
    }
    assert.deepEqual(upstreamCalls(h), [], "nothing reached Core");
    // the same requests with a Host are answered
    const ok = await rawExchange(h.url, "GET /healthz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    assert.equal(ok.status, 200);
    const page = await rawExchange(h.url, get(`/api/lore/${W.charMira}`, "localhost"));
    assert.equal(page.status, 200);
  }));
