/**
 * Response headers of the public site: a strict Content-Security-Policy (scripts, styles and
 * images from our origin only, nothing inline), no sniffing, no referrer, no framing, and the
 * robots opt-out for shares that ask for it.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { etagMatches } from "../lore/preview.ts";

/**
 * The site's CSP. Scripts only from our origin (the theme script): nothing inline, no `eval`, so
 * a sanitizer miss in lore content still cannot run code. Our origin serves nothing a writer
 * controls with a script's content type, and every answer carries `nosniff`, so a `<script src>`
 * slipped into content finds no script to load either.
 */
export const SITE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** What a site response says about itself. */
export interface SiteHeaderOptions {
  contentType: string;
  /** `Cache-Control` value. */
  cacheControl: string;
  /** Adds `X-Robots-Tag: noindex` (pages also carry the robots meta tag). */
  noIndex?: boolean;
  etag?: string;
  /** The answer depends on the `Authorization` header (password-protected shares). */
  varyAuthorization?: boolean;
}

/**
 * Headers for any response of the public site.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const h = siteHeaders({
 *   contentType: "text/html; charset=utf-8",
 *   cacheControl: "no-cache",
 *   noIndex: true,
 * });
 * assert.equal(h.get("content-security-policy"), SITE_CSP);
 * assert.equal(h.get("x-robots-tag"), "noindex");
 * ```
 */
export function siteHeaders(opts: SiteHeaderOptions): Headers {
  const h = new Headers({
    "content-type": opts.contentType,
    "cache-control": opts.cacheControl,
    "content-security-policy": SITE_CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
  });
  if (opts.noIndex) h.set("x-robots-tag", "noindex");
  if (opts.etag) h.set("etag", opts.etag);
  if (opts.varyAuthorization) h.set("vary", "Authorization");
  return h;
}

/**
 * An asset of the site's own (stylesheet, favicon, the generated preview card) with the site's
 * headers, or a 304 when the request's `If-None-Match` names its ETag.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const css = { contentType: "text/css", cacheControl: "public, max-age=60", etag: 'W/"1"' };
 * const again = new Request("http://x/site.css", { headers: { "if-none-match": 'W/"1"' } });
 * assert.equal(assetResponse(new Request("http://x/site.css"), "p{}", css).status, 200);
 * assert.equal(assetResponse(again, "p{}", css).status, 304);
 * ```
 */
export function assetResponse(
  req: Request,
  body: string | Uint8Array<ArrayBuffer>,
  opts: { contentType: string; cacheControl: string; etag: string; varyAuthorization?: boolean },
): Response {
  const headers = siteHeaders(opts);
  if (etagMatches(req.headers.get("if-none-match"), opts.etag)) {
    headers.delete("content-type");
    return new Response(null, { status: 304, headers });
  }
  return new Response(body, { headers });
}

/**
 * A short digest of a compiled-in asset: its ETag and the `?v=` that pages link it with, so it
 * can be cached long and a new version is a new URL.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.match(assetVersion("p{}"), /^[\w-]{16}$/);
 * assert.notEqual(assetVersion("p{}"), assetVersion("a{}"));
 * ```
 */
export function assetVersion(body: string): string {
  return createHash("sha256").update(body).digest("base64url").slice(0, 16);
}
