/**
 * Building upstream paths from client input. Every interpolated value becomes exactly one
 * encoded path segment, so no input can change which upstream resource is addressed.
 *
 * @module
 */

/**
 * Tagged template that percent-encodes each interpolated value as a single segment and refuses
 * empty, `.` and `..` segments (URL normalisation would otherwise resolve them).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(upstreamPath`/etapi/notes/${"a/b"}/content`, "/etapi/notes/a%2Fb/content");
 * assert.throws(() => upstreamPath`/etapi/notes/${".."}`, TypeError);
 * ```
 */
export function upstreamPath(strings: TemplateStringsArray, ...values: string[]): string {
  let out = strings[0];
  values.forEach((v, i) => {
    if (typeof v !== "string" || v === "" || v === "." || v === "..") {
      throw new TypeError("invalid upstream path segment");
    }
    out += encodeURIComponent(v) + strings[i + 1];
  });
  return out;
}
