/**
 * A PNG file of a chosen byte size for upload benchmarks: a real signature and `IHDR` (what the
 * service reads to accept an image and learn its size), one `IDAT` chunk of incompressible
 * filler, `IEND`. Decoders would reject the pixel data; nothing on the upload path decodes it.
 *
 * @module
 */
import { crc32 } from "../sims/world.ts";

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * A `bytes`-long PNG of 8000×6000 pixels (at least 57 bytes: the chunks need that much).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const png = largePng(1024);
 * assert.equal(png.byteLength, 1024);
 * new DataView(png.buffer).getUint32(16); // 8000 (IHDR width)
 * ```
 */
export function largePng(bytes: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(bytes);
  const view = new DataView(out.buffer);
  let at = 0;
  const chunk = (type: string, length: number, fill: (data: Uint8Array) => void) => {
    view.setUint32(at, length);
    out.set(new TextEncoder().encode(type), at + 4);
    const data = out.subarray(at + 8, at + 8 + length);
    fill(data);
    view.setUint32(at + 8 + length, crc32(out.subarray(at + 4, at + 8 + length)));
    at += 12 + length;
  };
  out.set(SIGNATURE);
  at = SIGNATURE.length;
  chunk("IHDR", 13, (d) => {
    new DataView(d.buffer, d.byteOffset).setUint32(0, 8000);
    new DataView(d.buffer, d.byteOffset).setUint32(4, 6000);
    d.set([8, 2, 0, 0, 0], 8); // 8-bit truecolour, deflate, no filter method, no interlace
  });
  const filler = bytes - at - 12 - 12;
  if (filler < 0) throw new RangeError("a PNG needs at least 57 bytes");
  chunk("IDAT", filler, (d) => {
    const block = crypto.getRandomValues(new Uint8Array(Math.min(65_536, filler)));
    for (let i = 0; i < filler; i += block.length) d.set(block.subarray(0, filler - i), i);
  });
  chunk("IEND", 0, () => {});
  return out;
}
