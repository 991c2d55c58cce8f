/**
 * Response headers of the public site: a strict Content-Security-Policy (no script at all, styles
 * and images from our origin only), no sniffing, no referrer, no framing, and the robots opt-out
 * for shares that ask for it.
 *
 * @module
 */
import { etagMatches } from "../lore/preview.ts";

/**
 * The site's CSP. There is no `script-src`, so `default-src 'none'` forbids every script, inline
 * or not: a sanitizer miss in lore content still cannot run code.
 */
export const SITE_CSP = [
  "default-src 'none'",
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
 * A compiled-in asset of the site (stylesheet, favicon) with the site's headers, or a 304 when
 * the request's `If-None-Match` names its ETag.
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
  body: string,
  opts: { contentType: string; cacheControl: string; etag: string },
): Response {
  const headers = siteHeaders(opts);
  if (etagMatches(req.headers.get("if-none-match"), opts.etag)) {
    headers.delete("content-type");
    return new Response(null, { status: 304, headers });
  }
  return new Response(body, { headers });
}
