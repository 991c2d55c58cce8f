/**
 * Cross-origin use of the API, opt-in. The service is a same-origin backend for its front end, so
 * by default it sends no CORS headers at all and browsers keep other origins' pages from reading
 * its answers. `CORS_ORIGINS` names origins that may call it with the browser's cookies: their
 * preflights are answered, their requests pass the cross-site check (csrf.ts) and their answers
 * carry `Access-Control-Allow-Origin` for them alone (never `*`, which cookies rule out).
 *
 * @module
 */

/** Request headers the API reads that a cross-origin page may send (browsers refuse others). */
const ALLOW_HEADERS =
  "authorization, content-type, if-none-match, x-host-filename, x-request-id, x-vercel-filename";

/** Response headers a cross-origin page may read beyond the CORS-safelisted ones. */
const EXPOSE_HEADERS = "etag, retry-after, x-next-cursor, x-request-id, x-total-count";

/** How long a browser may keep a preflight's answer (seconds; Chromium caps it at 7200). */
const MAX_AGE = "600";

/** The cross-origin policy for a list of allowed origins; see {@linkcode corsPolicy}. */
export interface CorsPolicy {
  /** Whether `origin` (an `Origin` header's value) is allowed. */
  allows(origin: string | null): boolean;
  /**
   * The answer to a preflight: 204 with the CORS headers when `req` is an `OPTIONS` request
   * from an allowed origin asking for one of `methods` (the methods the path has); null for
   * anything else, which then gets the answer it would get without CORS.
   */
  preflight(req: Request, methods: readonly string[]): Response | null;
  /**
   * Adds the CORS headers to an answer (its headers must be mutable): `Vary: Origin` always,
   * since the answer depends on it, and the allow headers for an allowed origin.
   */
  decorate(req: Request, headers: Headers): void;
}

/**
 * The policy for `origins` (exact origins, as browsers send them), or null for none: then the
 * pipeline does nothing at all for CORS.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const cors = corsPolicy(["https://app.example.org"])!;
 * const preflight = new Request("http://127.0.0.1:8080/api/lore", {
 *   method: "OPTIONS",
 *   headers: { origin: "https://app.example.org", "access-control-request-method": "POST" },
 * });
 * const res = cors.preflight(preflight, ["GET", "POST"])!;
 * assert.equal(res.status, 204);
 * assert.equal(res.headers.get("access-control-allow-origin"), "https://app.example.org");
 * assert.equal(res.headers.get("access-control-allow-credentials"), "true");
 * assert.equal(cors.allows("https://evil.example"), false);
 * assert.equal(corsPolicy([]), null);
 * ```
 */
export function corsPolicy(origins: readonly string[]): CorsPolicy | null {
  if (origins.length === 0) return null;
  const allowed = new Set(origins);
  const allows = (origin: string | null) => origin !== null && allowed.has(origin);
  const allowOrigin = (headers: Headers, origin: string) => {
    headers.set("access-control-allow-origin", origin);
    headers.set("access-control-allow-credentials", "true");
  };
  return {
    allows,
    preflight(req, methods) {
      const origin = req.headers.get("origin");
      const wanted = req.headers.get("access-control-request-method");
      if (req.method !== "OPTIONS" || !allows(origin) || wanted === null) return null;
      // HEAD is answered wherever GET is (the router maps one to the other)
      const offered = methods.includes("GET") ? [...methods, "HEAD"] : [...methods];
      if (!offered.includes(wanted)) return null;
      const res = new Response(null, { status: 204 });
      const h = res.headers;
      allowOrigin(h, origin!);
      h.set("access-control-allow-methods", offered.join(", "));
      h.set("access-control-allow-headers", ALLOW_HEADERS);
      h.set("access-control-max-age", MAX_AGE);
      h.set("vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers");
      return res;
    },
    decorate(req, headers) {
      headers.append("vary", "Origin");
      const origin = req.headers.get("origin");
      if (!allows(origin)) return;
      allowOrigin(headers, origin!);
      headers.set("access-control-expose-headers", EXPOSE_HEADERS);
    },
  };
}
