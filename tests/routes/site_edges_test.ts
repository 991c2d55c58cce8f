/**
 * The site's edges over HTTP: robots.txt both ways, the favicon, HTML error pages for paths
 * outside the API (JSON inside it and on the health checks), and HEAD wherever GET is.
 */
import assert from "node:assert/strict";
import { allRoutes } from "../../src/routes/index.ts";
import { SITE_CSP } from "../../src/site/headers.ts";
import { assertNoSecrets, type Harness, REFUSED_URL, withHarness } from "../helpers/harness.ts";
import { rawExchange } from "../helpers/raw_http.ts";
import { HARBOR_ALIAS, W } from "../../sims/world.ts";

async function text(h: Harness, path: string, init?: RequestInit) {
  const res = await h.request(path, init);
  const body = await res.text();
  assertNoSecrets(h, body);
  return { status: res.status, headers: res.headers, body };
}

function optOut(h: Harness): void {
  h.core.store.createAttribute({
    noteId: W.guide,
    type: "label",
    name: "shareDisallowRobotIndexing",
    value: "",
  });
}

Deno.test("robots.txt: an indexable share allows the site, keeps crawlers off /api/, names the sitemap", () =>
  withHarness(async (h) => {
    const robots = await text(h, "/robots.txt", {
      headers: { "x-forwarded-host": "lore.example.org", "x-forwarded-proto": "https" },
    });
    assert.equal(robots.status, 200);
    assert.equal(robots.headers.get("content-type"), "text/plain; charset=utf-8");
    assert.equal(robots.headers.get("cache-control"), "no-cache");
    const lines = robots.body.trim().split("\n");
    assert.deepEqual(lines.slice(0, 4), [
      "User-agent: *",
      "Allow: /",
      "Allow: /public/",
      "Disallow: /api/",
    ]);
    // absolute, on the origin the visitor used (the proxy's only when trusted)
    assert.equal(lines.at(-1), `Sitemap: ${h.url}/sitemap.xml`);
    const again = await h.request("/robots.txt", {
      headers: { "if-none-match": robots.headers.get("etag")! },
    });
    assert.equal(again.status, 304);
  }));

Deno.test("robots.txt: behind a trusted proxy the sitemap is on the forwarded origin", () =>
  withHarness(async (h) => {
    const robots = await text(h, "/robots.txt", {
      headers: { "x-forwarded-host": "lore.example.org", "x-forwarded-proto": "https" },
    });
    assert.match(robots.body, /^Sitemap: https:\/\/lore\.example\.org\/sitemap\.xml$/m);
  }, { env: { TRUST_PROXY: "true", ALLOWED_HOSTS: "lore.example.org" } }));

Deno.test("robots.txt: a share root with #shareDisallowRobotIndexing disallows everything", () =>
  withHarness(async (h) => {
    optOut(h);
    const robots = await text(h, "/robots.txt");
    assert.equal(robots.status, 200);
    assert.equal(robots.body, "User-agent: *\nDisallow: /\n");
    const sitemap = await h.request("/sitemap.xml");
    await sitemap.body?.cancel();
    assert.equal(sitemap.status, 404, "the sitemap it would name is gone too");
  }));

Deno.test("robots.txt: no lore database → disallow everything; Core down → a 5xx crawlers retry", async () => {
  await withHarness(async (h) => {
    const robots = await text(h, "/robots.txt");
    assert.equal(robots.status, 200);
    assert.equal(robots.body, "User-agent: *\nDisallow: /\n");
  }, { noCoreCredentials: true });
  await withHarness(async (h) => {
    const robots = await text(h, "/robots.txt");
    assert.equal(robots.status, 503);
    assert.equal(robots.headers.get("content-type"), "text/plain; charset=utf-8");
    assert.doesNotMatch(robots.body, /Allow|Disallow/);
  }, { coreUrlOverride: REFUSED_URL });
});

Deno.test("favicon: SVG at /favicon.svg and /favicon.ico, long-cached, linked from every page", () =>
  withHarness(async (h) => {
    for (const path of ["/favicon.svg", "/favicon.ico"]) {
      const icon = await text(h, path);
      assert.equal(icon.status, 200, path);
      assert.equal(icon.headers.get("content-type"), "image/svg+xml");
      assert.equal(icon.headers.get("cache-control"), "public, max-age=604800");
      assert.equal(icon.headers.get("content-security-policy"), SITE_CSP);
      assert.match(icon.body, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^]*<\/svg>\n$/);
      assert.doesNotMatch(icon.body, /<script|on\w+=/i);
      const again = await h.request(path, {
        headers: { "if-none-match": icon.headers.get("etag")! },
      });
      assert.equal(again.status, 304, path);
    }
    for (const path of ["/", `/public/lore/${W.charMira}`, "/nope"]) {
      const page = await text(h, path);
      assert.match(
        page.body,
        /<link rel="icon" href="\/favicon\.svg" type="image\/svg\+xml">/,
        path,
      );
    }
  }));

Deno.test("unknown paths: HTML 404/405 on the site, JSON under /api/ and on the health checks", () =>
  withHarness(async (h) => {
    for (const path of ["/nope", "/public/nope", "/wp-login.php", "/public/lore/a/b"]) {
      const page = await text(h, path);
      assert.equal(page.status, 404, path);
      assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8", path);
      assert.equal(page.headers.get("x-robots-tag"), "noindex", path);
      assert.match(page.body, /<h1>Not found<\/h1>/, path);
      assert.match(page.body, new RegExp(page.headers.get("x-request-id")!), path);
    }
    const post = await text(h, "/robots.txt", { method: "POST" });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get("allow"), "GET");
    assert.equal(post.headers.get("content-type"), "text/html; charset=utf-8");
    assert.match(post.body, /<h1>Not available<\/h1>/);
    for (
      const [path, method, status] of [
        ["/api/nope", "GET", 404],
        ["/api", "GET", 404],
        ["/api/lore", "PUT", 405],
        ["/healthz", "POST", 405],
        ["/readyz", "DELETE", 405],
      ] as const
    ) {
      const res = await h.requestJson(path, { method });
      assert.equal(res.status, status, `${method} ${path}`);
      assert.equal(res.body.error, status === 404 ? "NOT_FOUND" : "METHOD_NOT_ALLOWED");
    }
  }));

/** A path for a route's pattern, with a real note where an id goes. */
function samplePath(path: string): string {
  return path.replace(
    /:(\w+)/g,
    (_, name: string) => name === "filename" ? "x.png" : name === "type" ? "character" : W.charMira,
  );
}

/** Headers whose value depends on the moment or the framing, not on the answer. */
const PER_RESPONSE = new Set(["date", "x-request-id", "content-length", "transfer-encoding"]);

function comparable(headers: Headers): Record<string, string> {
  return Object.fromEntries([...headers].filter(([name]) => !PER_RESPONSE.has(name)));
}

Deno.test("HEAD: every GET route of the table answers HEAD with the GET's status and headers, no body", () =>
  withHarness(async (h) => {
    const gets = allRoutes.filter((r) => r.method === "GET");
    assert.ok(gets.length > 40, "the whole table, not a sample");
    for (const route of gets) {
      const path = samplePath(route.path);
      const get = await h.request(path);
      const getLength = get.headers.get("content-length");
      await get.body?.cancel();
      const head = await h.request(path, { method: "HEAD" });
      const where = `HEAD ${path}`;
      assert.equal(head.status, get.status, where);
      assert.deepEqual(comparable(head.headers), comparable(get.headers), where);
      const headLength = head.headers.get("content-length");
      // a HEAD answer may leave the length out, but never state a wrong one
      if (headLength !== null) assert.equal(headLength, getLength, where);
      assert.equal(await head.text(), "", where);
    }
  }, { parser: true, parserSession: true }));

Deno.test("HEAD: on the wire, no body and no claim of an empty one", () =>
  withHarness(async (h) => {
    for (const path of ["/favicon.svg", "/", "/api/lore", "/nope"]) {
      const head = `HEAD ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;
      const raw = await rawExchange(h.url, head);
      assert.equal(raw.status, path === "/nope" ? 404 : 200, path);
      assert.equal(raw.body, "", path);
      assert.notEqual(raw.headers.get("content-length"), "0", path);
    }
  }, { env: { ALLOWED_HOSTS: "x" } }));

Deno.test("/share/<alias|id>: Core's share links land on the public site; hidden notes end as missing ones", () =>
  withHarness(async (h) => {
    const follow = async (path: string) => {
      const r = await h.request(path, { redirect: "manual" });
      await r.body?.cancel();
      assert.equal(r.status, 302, path);
      assert.equal(r.headers.get("cache-control"), "no-store");
      const location = r.headers.get("location")!;
      const page = await text(h, new URL(location).pathname);
      return { location, page };
    };
    const harbor = await follow(`/share/${HARBOR_ALIAS}`);
    assert.equal(harbor.location, `https://lore.example.org/public/lore/${HARBOR_ALIAS}`);
    assert.equal(harbor.page.status, 200);
    assert.match(harbor.page.body, /Saltmarrow Harbor/);
    // a draft and a note that does not exist: the same redirect, then the same 404 page
    const draft = await follow(`/share/${W.guideDraft}`);
    const missing = await follow("/share/zzNoSuchNote1");
    assert.deepEqual([draft.page.status, missing.page.status], [404, 404]);
    const same = (body: string, id: string) =>
      body.replaceAll(id, "X").replace(/<code>[0-9a-f-]{36}<\/code>/, "<code>request</code>");
    assert.equal(same(draft.page.body, W.guideDraft), same(missing.page.body, "zzNoSuchNote1"));
    assert.doesNotMatch(draft.page.body, /Rumours on the Docks/);
    // the root: the home, also at /public where `/` is the front end's
    for (const path of ["/share", "/share/"]) {
      const root = await follow(path);
      assert.equal(root.location, "https://lore.example.org/public");
      assert.equal(root.page.status, 200);
    }
    const [home, alias] = [await text(h, "/"), await text(h, "/public")];
    assert.equal(alias.body, home.body);
    assert.match(home.body, /Player(&#39;|&#x27;|')s Guide/);
  }, { env: { PUBLIC_ORIGIN: "https://lore.example.org" } }));
