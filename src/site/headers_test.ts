import assert from "node:assert/strict";
import { SITE_CSP, siteHeaders } from "./headers.ts";

Deno.test("SITE_CSP: scripts, styles and images from our origin only, nothing inline", () => {
  const directives = new Map(
    SITE_CSP.split(";").map((d) => {
      const [name, ...values] = d.trim().split(/\s+/);
      return [name, values.join(" ")] as const;
    }),
  );
  assert.equal(directives.get("default-src"), "'none'");
  // the theme script; no 'unsafe-inline' or 'unsafe-eval' (checked below), no other host
  assert.equal(directives.get("script-src"), "'self'");
  assert.equal(directives.get("style-src"), "'self'");
  assert.equal(directives.get("img-src"), "'self'");
  assert.equal(directives.get("form-action"), "'self'");
  assert.equal(directives.get("base-uri"), "'none'");
  assert.equal(directives.get("frame-ancestors"), "'none'");
  assert.ok(!SITE_CSP.includes("unsafe"));
});

Deno.test("siteHeaders: security headers always; robots, ETag and Vary only when asked", () => {
  const plain = siteHeaders({ contentType: "text/html; charset=utf-8", cacheControl: "no-cache" });
  assert.equal(plain.get("content-security-policy"), SITE_CSP);
  assert.equal(plain.get("x-content-type-options"), "nosniff");
  assert.equal(plain.get("referrer-policy"), "no-referrer");
  assert.equal(plain.get("x-frame-options"), "DENY");
  assert.equal(plain.get("cache-control"), "no-cache");
  assert.equal(plain.has("x-robots-tag"), false);
  assert.equal(plain.has("etag"), false);
  assert.equal(plain.has("vary"), false);

  const full = siteHeaders({
    contentType: "text/html; charset=utf-8",
    cacheControl: "no-cache",
    noIndex: true,
    etag: 'W/"x"',
    varyAuthorization: true,
  });
  assert.equal(full.get("x-robots-tag"), "noindex");
  assert.equal(full.get("etag"), 'W/"x"');
  assert.equal(full.get("vary"), "Authorization");
});
