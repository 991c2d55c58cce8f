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
 * return json({ results: [] });
 * return json(note, 201);
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
 * return noContent();
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
 * new Response(html, { headers: sandboxedHtmlHeaders("text/html; charset=utf-8") });
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
