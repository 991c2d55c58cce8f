/**
 * SHA-256 as hex text: the service's fingerprints of credentials, requests and backend answers.
 *
 * @module
 */

/**
 * The SHA-256 of `data` (text is hashed as UTF-8) in lower-case hex, its first `bytes` bytes
 * only when a shorter name will do.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   await sha256Hex("lore"),
 *   "b6598e838f350a97cb734eca208ce0cdc602dd60afbf65a3b8b65195cbd1a7fe",
 * );
 * assert.equal(await sha256Hex(new TextEncoder().encode("lore"), 4), "b6598e83");
 * ```
 */
export async function sha256Hex(
  data: string | Uint8Array<ArrayBuffer>,
  bytes = 32,
): Promise<string> {
  const input = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", input));
  let out = "";
  for (let i = 0; i < Math.min(bytes, digest.length); i++) {
    out += digest[i].toString(16).padStart(2, "0");
  }
  return out;
}
