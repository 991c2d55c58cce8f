/**
 * A PNG encoder for pictures the service draws itself (the public site's generated preview
 * card): 8-bit indexed colour, one palette of at most 256 colours, every row unfiltered, the
 * pixels deflated by `node:zlib`. Flat colours compress to a few kilobytes this way.
 *
 * @module
 */
import { crc32, deflateSync } from "node:zlib";

/** An RGB colour, each channel 0–255. */
export type Rgb = readonly [number, number, number];

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * One PNG chunk: length, type, data and the CRC of type and data.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const end = pngChunk("IEND", new Uint8Array());
 * assert.deepEqual([...end], [0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82]);
 * ```
 */
export function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/**
 * A PNG of `width` × `height` pixels, each a palette index (`pixels` row by row, one byte per
 * pixel). Throws when the sizes disagree or an index has no colour.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const png = encodeIndexedPng(2, 1, [[255, 255, 255], [0, 0, 0]], new Uint8Array([0, 1]));
 * assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47]); // "PNG"
 * assert.equal(new DataView(png.buffer).getUint32(16), 2); // IHDR width
 * ```
 */
export function encodeIndexedPng(
  width: number,
  height: number,
  palette: readonly Rgb[],
  pixels: Uint8Array,
): Uint8Array<ArrayBuffer> {
  if (pixels.length !== width * height) throw new RangeError("pixels do not match the size");
  if (palette.length === 0 || palette.length > 256) throw new RangeError("1 to 256 colours");
  const header = new Uint8Array(13);
  const hv = new DataView(header.buffer);
  hv.setUint32(0, width);
  hv.setUint32(4, height);
  header.set([8, 3, 0, 0, 0], 8); // 8-bit, indexed colour, deflate, adaptive filters, no interlace
  for (let i = 0; i < pixels.length; i++) {
    if (pixels[i] >= palette.length) throw new RangeError("index without a colour");
  }
  const raw = new Uint8Array(height * (width + 1)); // each row starts with filter type 0 (none)
  for (let y = 0; y < height; y++) {
    raw.set(pixels.subarray(y * width, (y + 1) * width), y * (width + 1) + 1);
  }
  return pngFile([
    pngChunk("IHDR", header),
    pngChunk("PLTE", new Uint8Array(palette.flat())),
    pngChunk("IDAT", new Uint8Array(deflateSync(raw, { level: 9 }))),
    pngChunk("IEND", new Uint8Array()),
  ]);
}

/**
 * A PNG file: the signature, then `chunks` in order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const file = pngFile([pngChunk("IEND", new Uint8Array())]);
 * assert.equal(file.length, 8 + 12);
 * ```
 */
export function pngFile(chunks: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const parts = [new Uint8Array(SIGNATURE), ...chunks];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
