/**
 * Cross-origin use over HTTP: none by default (a same-origin backend for its front end), and
 * with `CORS_ORIGINS` exactly the listed origins, preflights included, while every other
 * cross-site request is still refused.
 */
import assert from "node:assert/strict";
import { type Harness, withHarness } from "../helpers/harness.ts";
import { W } from "../../sims/world.ts";

const APP = "https://app.example.org";
const EVIL = "https://evil.example";

function preflight(h: Harness, path: string, origin: string, method: string): Promise<Response> {
  return h.request(path, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": method,
      "access-control-request-headers": "content-type",
    },
  });
}

function corsHeaders(res: Response): string[] {
  return [...res.headers.keys()].filter((name) => name.startsWith("access-control-"));
}

const withCors = (fn: (h: Harness) => Promise<void>) =>
  withHarness(fn, { env: { CORS_ORIGINS: `${APP}, http://localhost:5173` } });

Deno.test("cors: off by default — OPTIONS keeps its 405 with Allow, no answer names an origin", () =>
  withHarness(async (h) => {
    const res = await preflight(h, "/api/lore", APP, "POST");
    await res.body?.cancel();
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("allow"), "GET, POST");
    assert.deepEqual(corsHeaders(res), []);
    const read = await h.request("/api/lore", { headers: { origin: APP } });
    await read.body?.cancel();
    assert.equal(read.status, 403, "another origin's read of a private route is refused");
    assert.deepEqual(corsHeaders(read), []);
    const pub = await h.request("/healthz", { headers: { origin: APP } });
    await pub.body?.cancel();
    assert.deepEqual(corsHeaders(pub), []);
    assert.equal(pub.headers.get("vary"), null);
  }));

Deno.test("cors: an allowed origin's preflight for a method the route has → 204 with the grant", () =>
  withCors(async (h) => {
    for (
      const [path, method, methods] of [
        ["/api/lore", "POST", "GET, POST, HEAD"],
        ["/api/lore/abc", "PATCH", "GET, PATCH, DELETE, HEAD"],
        ["/api/public/search", "GET", "GET, HEAD"],
      ]
    ) {
      const res = await preflight(h, path, APP, method);
      assert.equal(res.status, 204, `${method} ${path}`);
      assert.equal(await res.text(), "");
      assert.equal(res.headers.get("access-control-allow-origin"), APP);
      assert.equal(res.headers.get("access-control-allow-credentials"), "true");
      assert.equal(res.headers.get("access-control-allow-methods"), methods);
      assert.equal(
        res.headers.get("access-control-allow-headers"),
        "authorization, content-type, if-none-match, x-host-filename, x-request-id, x-vercel-filename",
      );
      assert.equal(res.headers.get("access-control-max-age"), "600");
      assert.match(res.headers.get("vary")!, /\bOrigin\b/);
    }
  }));

Deno.test("cors: any other preflight gets no CORS headers", () =>
  withCors(async (h) => {
    const cases: [string, string, string, number][] = [
      ["/api/lore", EVIL, "POST", 405], // an origin not listed
      ["/api/lore", "null", "POST", 405], // a sandboxed frame
      [`/api/lore`, `${APP}.evil.example`, "POST", 405], // a look-alike
      ["/api/lore", "http://app.example.org", "POST", 405], // the wrong scheme
      ["/api/lore", APP, "PUT", 405], // a method the route does not have
      ["/api/nope", APP, "GET", 404], // no such route
    ];
    for (const [path, origin, method, status] of cases) {
      const res = await preflight(h, path, origin, method);
      await res.body?.cancel();
      assert.equal(res.status, status, `${origin} ${method} ${path}`);
      assert.deepEqual(corsHeaders(res), [], `${origin} ${method} ${path}`);
    }
    // OPTIONS without a requested method is no preflight
    const plain = await h.request("/api/lore", { method: "OPTIONS", headers: { origin: APP } });
    await plain.body?.cancel();
    assert.equal(plain.status, 405);
    assert.deepEqual(corsHeaders(plain), []);
  }));

Deno.test("cors: an allowed origin reads and writes; its answers name it and vary by Origin", () =>
  withCors(async (h) => {
    // what a browser sends for a credentialed fetch from the allowed page
    const fromApp = { origin: APP, "sec-fetch-site": "cross-site", "sec-fetch-mode": "cors" };
    const list = await h.request("/api/lore", { headers: fromApp });
    await list.body?.cancel();
    assert.equal(list.status, 200);
    assert.equal(list.headers.get("access-control-allow-origin"), APP);
    assert.equal(list.headers.get("access-control-allow-credentials"), "true");
    assert.equal(
      list.headers.get("access-control-expose-headers"),
      "etag, retry-after, x-next-cursor, x-request-id, x-total-count",
    );
    assert.match(list.headers.get("vary")!, /\bOrigin\b/);
    const created = await h.request("/api/lore", {
      method: "POST",
      headers: fromApp,
      json: { title: "Port Vell", loreType: "location" },
    });
    await created.body?.cancel();
    assert.equal(created.status, 201, "the allowed origin's write passes the cross-site check");
    assert.equal(created.headers.get("access-control-allow-origin"), APP);
    // a public answer that caches keeps its own Vary and adds Origin
    const pub = await h.request("/api/public/search?q=harbor", { headers: { origin: APP } });
    await pub.body?.cancel();
    assert.equal(pub.headers.get("vary"), "Authorization, Origin");
  }));

Deno.test("cors: every other cross-site request is still refused, and never granted", () =>
  withCors(async (h) => {
    h.core.clearRequests();
    const foreign: Record<string, string>[] = [
      { origin: EVIL, "sec-fetch-site": "cross-site" },
      { origin: "null" },
      // the allowed page's own <img> or link carries no Origin: it is still a cross-site load
      { "sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors" },
      { "sec-fetch-site": "same-site", "sec-fetch-mode": "navigate" },
    ];
    const requests: [string, string][] = [
      ["GET", "/api/lore"],
      ["POST", "/api/lore"],
      ["DELETE", `/api/lore/${W.charMira}`],
    ];
    for (const headers of foreign) {
      for (const [method, path] of requests) {
        const res = await h.request(path, {
          method,
          headers,
          json: method === "POST" ? { title: "Nope", loreType: "character" } : undefined,
        });
        const where = `${method} ${path} ${JSON.stringify(headers)}`;
        assert.equal(res.status, 403, where);
        assert.equal((await res.json()).error, "CSRF_REJECTED", where);
        assert.equal(res.headers.get("access-control-allow-origin"), null, where);
      }
    }
    assert.deepEqual(h.core.requests, [], "no refused request reached Core");
  }));
