/**
 * What HTTP/1.1 text is made of, shared by the request writer and the response reader: tokens,
 * field text, and Latin-1, the byte-per-character encoding heads travel in. One definition, so
 * what the client sends and what it accepts cannot drift apart.
 *
 * @module
 */

/** A token (a method, a field name): RFC 9110's `tchar`s, at least one. */
export const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Field values and reason phrases: visible characters, obs-text, space and tab. */
export const FIELD_TEXT = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Bytes as Latin-1 text (one character per byte, as header fields are carried).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(latin1(new Uint8Array([0x48, 0x49, 0xe9]), 0, 3), "HI\u00e9");
 * ```
 */
export function latin1(buf: Uint8Array, from: number, to: number): string {
  let out = "";
  for (let i = from; i < to; i += 4096) {
    const part = buf.subarray(i, Math.min(to, i + 4096)) as unknown as number[];
    out += String.fromCharCode.apply(null, part);
  }
  return out;
}

/**
 * Text as Latin-1 bytes (the inverse of {@linkcode latin1}; every character is ≤ U+00FF).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(latin1Bytes("H\u00e9"), new Uint8Array([0x48, 0xe9]));
 * ```
 */
export function latin1Bytes(text: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}
