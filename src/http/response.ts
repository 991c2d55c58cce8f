/**
 * Small response builders shared by every handler.
 *
 * @module
 */

/**
 * A JSON response with `no-store` unless the caller sets its own cache policy.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const res = json({ results: [] }, 201);
 * assert.equal(res.status, 201);
 * assert.deepEqual(await res.json(), { results: [] });
 * ```
 */
export function json(data: unknown, status = 200, headers?: HeadersInit): Response {
  const h = new Headers(headers);
  h.set("content-type", "application/json; charset=utf-8");
  if (!h.has("cache-control")) h.set("cache-control", "no-store");
  return new Response(JSON.stringify(data), { status, headers: h });
}

/**
 * 204 No Content.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(noContent().status, 204);
 * ```
 */
export function noContent(): Response {
  return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
}

/**
 * Headers for HTML we did not write (raw note content): the browser must treat it as an inert,
 * sandboxed document that cannot run script or load anything.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const res = new Response("<p>Raw</p>", { headers: sandboxedHtmlHeaders("text/html") });
 * assert.equal(res.headers.get("content-security-policy"), "sandbox; default-src 'none'");
 * ```
 */
export function sandboxedHtmlHeaders(contentType: string): Headers {
  return new Headers({
    "content-type": contentType,
    "content-security-policy": "sandbox; default-src 'none'",
    "x-content-type-options": "nosniff",
    "cache-control": "no-store",
  });
}
