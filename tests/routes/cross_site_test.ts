/**
 * Cross-site isolation over HTTP with the headers browsers send: a page on another site can make
 * a browser load our private routes (`<img>`, `<script>`, a form GET, a link), and with
 * environment credentials or zero-login no cookie is even needed. Those requests are refused
 * before any backend work; our own pages, the user's own navigation and the public surface still
 * work. The same in a real browser: tests/browser/cross_site_test.ts.
 */
import assert from "node:assert/strict";
import { type Harness, withHarness } from "../helpers/harness.ts";
import { W } from "../../sims/world.ts";

const withBackends = (fn: (h: Harness) => Promise<void>) =>
  withHarness(fn, { parser: true, parserSession: true });

/** Costly private GETs: an AI analysis, a semantic search, a Core search, an image. */
const COSTLY = [
  "/api/ai/gaps",
  "/api/rag?text=harbour",
  "/api/search?mode=rag&q=harbour",
  "/api/lore",
  `/api/lore/${W.imgChart}/image`,
];

/** What a browser sends for a subresource or navigation started by another site's page. */
const FOREIGN: Record<string, Record<string, string>> = {
  "<img>": {
    "sec-fetch-site": "cross-site",
    "sec-fetch-mode": "no-cors",
    "sec-fetch-dest": "image",
  },
  "<script>": {
    "sec-fetch-site": "cross-site",
    "sec-fetch-mode": "no-cors",
    "sec-fetch-dest": "script",
  },
  "link click": {
    "sec-fetch-site": "cross-site",
    "sec-fetch-mode": "navigate",
    "sec-fetch-dest": "document",
  },
  "sibling subdomain": {
    "sec-fetch-site": "same-site",
    "sec-fetch-mode": "no-cors",
    "sec-fetch-dest": "image",
  },
  "cross-origin fetch": { origin: "https://evil.example" },
  "sandboxed frame": { origin: "null" },
};

function backendCalls(h: Harness): string[] {
  return [...h.core.requests, ...h.parser!.requests].map((r) => `${r.method} ${r.path}`);
}

Deno.test("cross-site: private GETs from another site are 403 and reach no backend", () =>
  withBackends(async (h) => {
    h.core.clearRequests();
    h.parser!.clearRequests();
    for (const path of COSTLY) {
      for (const [what, headers] of Object.entries(FOREIGN)) {
        for (const method of ["GET", "HEAD"]) {
          const res = await h.request(path, { method, headers });
          assert.equal(res.status, 403, `${what}: ${method} ${path}`);
          assert.ok(res.headers.get("x-request-id"));
          if (method === "GET") assert.equal((await res.json()).error, "CSRF_REJECTED");
          else await res.body?.cancel();
        }
      }
    }
    assert.deepEqual(backendCalls(h), []);
  }));

Deno.test("cross-site: our own pages and the user's own navigation still reach private routes", () =>
  withBackends(async (h) => {
    const own = { "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors" };
    const typed = { "sec-fetch-site": "none", "sec-fetch-mode": "navigate" };
    for (const headers of [own, typed, {}]) {
      for (const path of ["/api/ai/gaps", "/api/rag?text=harbour", "/api/lore"]) {
        const res = await h.request(path, { headers });
        assert.equal(res.status, 200, `${JSON.stringify(headers)} ${path}`);
        await res.body?.cancel();
      }
    }
    const origin = new URL(h.url).origin;
    const res = await h.request("/api/lore", { headers: { origin, ...own } });
    assert.equal(res.status, 200);
    await res.body?.cancel();
  }));

Deno.test("cross-site: public routes and pages stay reachable from anywhere, for GET only", () =>
  withBackends(async (h) => {
    const img = FOREIGN["<img>"];
    const paths = [
      "/",
      "/public/site.css",
      "/public/theme.js",
      "/healthz",
      "/api/public/search?q=%23lore",
    ];
    for (const path of paths) {
      const res = await h.request(path, { headers: FOREIGN["link click"] });
      assert.equal(res.status, 200, path);
      await res.body?.cancel();
    }
    // the editor's image URL redirects, but the private image it names refuses the other site
    const redirect = await h.request(`/api/images/${W.imgChart}/chart.png`, {
      headers: img,
      redirect: "manual",
    });
    assert.equal(redirect.status, 301);
    await redirect.body?.cancel();
    const login = await h.request("/api/auth/login", {
      method: "POST",
      headers: FOREIGN["cross-origin fetch"],
      json: { email: "a@b.example", password: "x" },
    });
    assert.equal(login.status, 403, "unsafe methods are refused on public routes too");
    await login.body?.cancel();
  }));
