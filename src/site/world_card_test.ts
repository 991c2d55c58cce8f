import assert from "node:assert/strict";
import { inflateSync } from "node:zlib";
import { imageSize } from "../media/image_info.ts";
import { CARD_SIZE, worldCard } from "./world_card.ts";

/** The card's palette indexes, row by row (its rows are stored unfiltered). */
function pixels(png: Uint8Array): Uint8Array[] {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  let at = 8;
  while (new TextDecoder().decode(png.subarray(at + 4, at + 8)) !== "IDAT") {
    at += 12 + view.getUint32(at);
  }
  const raw = new Uint8Array(inflateSync(png.subarray(at + 8, at + 8 + view.getUint32(at))));
  const { width, height } = CARD_SIZE;
  return Array.from({ length: height }, (_, y) => {
    assert.equal(raw[y * (width + 1)], 0, "unfiltered rows");
    return raw.subarray(y * (width + 1) + 1, (y + 1) * (width + 1));
  });
}

/** Whether anything is drawn in the rectangle. */
const drawnIn = (rows: Uint8Array[], x0: number, y0: number, x1: number, y1: number) =>
  rows.slice(y0, y1).some((row) => row.subarray(x0, x1).some((p) => p !== 0));

Deno.test("worldCard: any name fits inside the frame, on a card of the same size", () => {
  const names = ["X", "W".repeat(500), `${"Mmm ".repeat(60)}end`, "東方"];
  for (const name of names) {
    const { png } = worldCard(name);
    assert.deepEqual(imageSize(png), CARD_SIZE);
    const rows = pixels(png);
    // the frame is drawn 28 px in; nothing outside it, and the name never touches it
    assert.ok(!drawnIn(rows, 0, 0, 1200, 28) && !drawnIn(rows, 0, 602, 1200, 630), name);
    assert.ok(!drawnIn(rows, 0, 0, 28, 630) && !drawnIn(rows, 1172, 0, 1200, 630), name);
    assert.ok(!drawnIn(rows, 40, 220, 80, 580) && !drawnIn(rows, 1120, 220, 1160, 580), name);
  }
  // the name is drawn: another name is another picture, one the font cannot draw is left out
  assert.ok(drawnIn(pixels(worldCard("X").png), 90, 230, 1110, 550));
  assert.ok(!drawnIn(pixels(worldCard("東方").png), 90, 230, 1110, 550));
  assert.notDeepEqual(worldCard("Ys").png, worldCard("Yz").png);
  assert.deepEqual(worldCard("Café").png, worldCard("Cafe").png);
});
