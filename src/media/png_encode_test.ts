import assert from "node:assert/strict";
import { crc32, inflateSync } from "node:zlib";
import { imageSize } from "./image_info.ts";
import { encodeIndexedPng, type Rgb } from "./png_encode.ts";

/** The chunks of a PNG, each checked against its CRC. */
function chunks(png: Uint8Array): Map<string, Uint8Array> {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const out = new Map<string, Uint8Array>();
  let at = 8;
  while (at < png.length) {
    const length = view.getUint32(at);
    const type = new TextDecoder().decode(png.subarray(at + 4, at + 8));
    assert.equal(view.getUint32(at + 8 + length), crc32(png.subarray(at + 4, at + 8 + length)));
    out.set(type, png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  assert.equal(at, png.length, "nothing after the last chunk");
  return out;
}

Deno.test("encodeIndexedPng: a valid indexed PNG whose rows inflate to the pixels given", () => {
  const palette: Rgb[] = [[47, 42, 61], [242, 230, 201], [93, 85, 115]];
  const [width, height] = [7, 3];
  const pixels = Uint8Array.from({ length: width * height }, (_, i) => i % 3);
  const png = encodeIndexedPng(width, height, palette, pixels);
  assert.deepEqual(imageSize(png), { width, height });
  const parts = chunks(png);
  assert.deepEqual([...parts.keys()], ["IHDR", "PLTE", "IDAT", "IEND"]);
  assert.deepEqual([...parts.get("IHDR")!.subarray(8)], [8, 3, 0, 0, 0]);
  assert.deepEqual([...parts.get("PLTE")!], palette.flat());
  const raw = new Uint8Array(inflateSync(parts.get("IDAT")!));
  assert.equal(raw.length, height * (width + 1));
  for (let y = 0; y < height; y++) {
    assert.equal(raw[y * (width + 1)], 0, "filter: none");
    assert.deepEqual(
      [...raw.subarray(y * (width + 1) + 1, (y + 1) * (width + 1))],
      [...pixels.subarray(y * width, (y + 1) * width)],
    );
  }
});

Deno.test("encodeIndexedPng: refuses pixels that do not fit the size or the palette", () => {
  assert.throws(() => encodeIndexedPng(2, 2, [[0, 0, 0]], new Uint8Array(3)), RangeError);
  assert.throws(() => encodeIndexedPng(1, 1, [[0, 0, 0]], new Uint8Array([1])), RangeError);
  assert.throws(() => encodeIndexedPng(1, 1, [], new Uint8Array([0])), RangeError);
});
