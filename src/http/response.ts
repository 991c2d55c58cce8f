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
 * assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
 * assert.deepEqual(await res.json(), { results: [] });
 * ```
 */
export function json(data: unknown, status = 200, headers?: HeadersInit): Response {
  return jsonText(JSON.stringify(data), status, headers);
}

/**
 * {@linkcode json} for a body that is JSON text already (a backend's list passed on as it came).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const res = jsonText('{"results":[],"count":0}');
 * assert.equal(res.headers.get("cache-control"), "no-store");
 * assert.deepEqual(await res.json(), { results: [], count: 0 });
 * ```
 */
export function jsonText(text: string, status = 200, headers?: HeadersInit): Response {
  const res = new Response(text, { status });
  const h = res.headers;
  h.set("content-type", "application/json; charset=utf-8");
  if (headers) addHeaders(h, headers);
  if (!h.has("cache-control")) h.set("cache-control", "no-store");
  return res;
}

/**
 * `new Response(body, { status, headers })`, built faster: Deno copies a `HeadersInit` of more
 * than one entry through a slow generic path (microseconds per answer, on every public answer),
 * while adding them to the new response's own headers is cheap.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const res = responseWith("hi", 200, [["content-type", "text/plain"], ["etag", 'W/"1"']]);
 * assert.equal(res.headers.get("etag"), 'W/"1"');
 * assert.equal(await res.text(), "hi");
 * ```
 */
export function responseWith(
  body: BodyInit | null,
  status: number,
  headers: HeadersInit,
): Response {
  const res = new Response(body, { status });
  addHeaders(res.headers, headers);
  return res;
}

/** The mark of {@linkcode markPolicyHeaders}. */
const POLICY_HEADERS = Symbol("policy headers");

/**
 * Marks a response whose headers are known to include `X-Content-Type-Options` and
 * `Referrer-Policy` (a clone of a kept answer's template), so the finish phase need not look.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const res = markPolicyHeaders(new Response(null));
 * assert.equal(hasPolicyHeaders(res), true);
 * assert.equal(hasPolicyHeaders(new Response(null)), false);
 * ```
 */
export function markPolicyHeaders(res: Response): Response {
  (res as Response & { [POLICY_HEADERS]?: true })[POLICY_HEADERS] = true;
  return res;
}

/** Whether `res` was marked by {@linkcode markPolicyHeaders}. */
export function hasPolicyHeaders(res: Response): boolean {
  return (res as Response & { [POLICY_HEADERS]?: true })[POLICY_HEADERS] === true;
}

/** Adds every entry of `headers` to `target`: `set`, except `set-cookie`, which may repeat. */
function addHeaders(target: Headers, headers: HeadersInit): void {
  const entries = Array.isArray(headers) || headers instanceof Headers
    ? headers
    : Object.entries(headers);
  for (const [name, value] of entries) {
    if (name.toLowerCase() === "set-cookie") target.append(name, value);
    else target.set(name, value);
  }
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
