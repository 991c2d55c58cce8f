import assert from "node:assert/strict";
import { imageSize, sniffImageMime } from "../src/media/image_info.ts";
import { crc32 } from "../sims/world.ts";
import { largePng } from "./large_png.ts";

Deno.test("large PNG: the size asked for, and the service reads it as an 8000×6000 PNG", () => {
  const png = largePng(300_000);
  assert.equal(png.byteLength, 300_000);
  assert.equal(sniffImageMime(png), "image/png");
  assert.deepEqual(imageSize(png), { width: 8000, height: 6000 });
});

Deno.test("large PNG: chunks with correct lengths and CRCs, ending in IEND", () => {
  const png = largePng(70_000);
  const view = new DataView(png.buffer);
  const types: string[] = [];
  for (let at = 8; at < png.byteLength;) {
    const length = view.getUint32(at);
    types.push(new TextDecoder().decode(png.subarray(at + 4, at + 8)));
    assert.equal(view.getUint32(at + 8 + length), crc32(png.subarray(at + 4, at + 8 + length)));
    at += 12 + length;
  }
  assert.deepEqual(types, ["IHDR", "IDAT", "IEND"]);
  assert.throws(() => largePng(56), RangeError);
});
