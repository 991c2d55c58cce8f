/**
 * Byte helpers.
 *
 * @module
 */

/**
 * Joins chunks into one array of `length` bytes (the sum of their lengths); a single chunk is
 * returned as is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const joined = concatBytes([new Uint8Array([1]), new Uint8Array([2, 3])], 3);
 * assert.deepEqual(joined, new Uint8Array([1, 2, 3]));
 * ```
 */
export function concatBytes<B extends ArrayBufferLike>(
  chunks: readonly Uint8Array<B>[],
  length: number,
): Uint8Array<B | ArrayBuffer> {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(length);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}
