/**
 * Request ids: taken from a well-formed incoming `X-Request-Id` (so a reverse proxy's id threads
 * through), otherwise generated.
 *
 * @module
 */

const VALID = /^[A-Za-z0-9._:-]{8,64}$/;

/**
 * The id for this request.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   requestIdFor(new Request("http://x/", { headers: { "x-request-id": "abcdefgh-1" } })),
 *   "abcdefgh-1",
 * );
 * ```
 */
export function requestIdFor(
  req: Request,
  generate: () => string = () => crypto.randomUUID(),
): string {
  const incoming = req.headers.get("x-request-id");
  return incoming && VALID.test(incoming) ? incoming : generate();
}
