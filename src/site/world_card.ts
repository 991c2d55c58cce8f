/**
 * The world's generated preview card: a 1200 × 630 PNG in the site's colours (those of its
 * icon) with the open book and the world's name in the built-in bitmap font, for link previews
 * of pages that have no picture of their own. It is drawn from the share root's title alone, so
 * it cannot show anything else, and its URL names a digest of its bytes, so it can be cached for
 * good.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { encodeIndexedPng, type Rgb } from "../media/png_encode.ts";
import {
  ADVANCE,
  drawText,
  fillRect,
  fontText,
  type IndexedCanvas,
  LINE_ROWS,
  textWidth,
} from "./bitmap_font.ts";

/** The card's size: what link previews show large (1.91:1). */
export const CARD_SIZE = { width: 1200, height: 630 } as const;

/** The icon's ink (the background, index 0), its paper, and a muted line between them. */
const PALETTE: readonly Rgb[] = [[0x2f, 0x2a, 0x3d], [0xf2, 0xe6, 0xc9], [0x5d, 0x55, 0x73]];
const [PAPER, LINE] = [1, 2];

/** Where the name may go, and the font scales tried, largest first. */
const TEXT_BOX = { left: 90, top: 230, width: 1020, height: 320 };
const SCALES = [14, 12, 10, 9, 8, 7, 6, 5, 4];

/** A generated card: its bytes and the digest its URL carries. */
export interface WorldCard {
  png: Uint8Array<ArrayBuffer>;
  key: string;
}

/** Lines of at most `max` characters, broken between words (inside one only when it is longer). */
function wrap(text: string, max: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (let word of text.split(" ")) {
    while (word.length > max) {
      if (line) lines.push(line);
      lines.push(word.slice(0, max));
      word = word.slice(max);
      line = "";
    }
    if (!line) line = word;
    else if (line.length + 1 + word.length <= max) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/** The name's lines and scale: the largest scale at which it fits, cut with "..." at the least. */
function layoutName(name: string): { lines: string[]; scale: number } {
  const fit = (scale: number) => {
    const max = Math.floor((TEXT_BOX.width + scale) / (ADVANCE * scale));
    const rows = Math.floor((TEXT_BOX.height + 2 * scale) / ((LINE_ROWS + 2) * scale));
    return { lines: wrap(name, max), max, rows, scale };
  };
  for (const scale of SCALES) {
    const f = fit(scale);
    if (f.lines.length <= f.rows) return f;
  }
  const f = fit(SCALES.at(-1)!);
  const lines = f.lines.slice(0, f.rows);
  lines[lines.length - 1] = `${lines[lines.length - 1].slice(0, f.max - 3)}...`;
  return { lines, scale: f.scale };
}

/** Whether (x, y) lies inside the polygon (even-odd rule). */
function inside(points: readonly (readonly [number, number])[], x: number, y: number): boolean {
  let odd = false;
  for (let i = 0, j = points.length - 1; i < points.length; j = i++) {
    const [xi, yi] = points[i];
    const [xj, yj] = points[j];
    if ((yi > y) !== (yj > y) && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) odd = !odd;
  }
  return odd;
}

/** The icon's left page, its curved edges as two straight segments each. */
const BOOK_PAGE: readonly (readonly [number, number])[] = [
  [6, 9.5],
  [10.5, 8.6],
  [15, 10.3],
  [15, 24],
  [10.5, 22.3],
  [6, 23.2],
];

/** The icon's open book (its two pages, in the icon's 32-unit box), centred at `cx`. */
function drawBook(canvas: IndexedCanvas, cx: number, top: number, unit: number): void {
  const pages = [BOOK_PAGE, BOOK_PAGE.map(([x, y]) => [32 - x, y] as const)];
  const [x0, y0] = [cx - 16 * unit, top - 8.5 * unit];
  for (let y = Math.floor(8 * unit); y < 25 * unit; y++) {
    for (let x = Math.floor(5 * unit); x < 27 * unit; x++) {
      const [ux, uy] = [(x + 0.5) / unit, (y + 0.5) / unit];
      if (pages.some((p) => inside(p, ux, uy))) {
        canvas.pixels[(Math.round(y0) + y) * canvas.width + Math.round(x0) + x] = PAPER;
      }
    }
  }
}

/** Draws the card for a world name. */
function drawCard(name: string): Uint8Array<ArrayBuffer> {
  const { width, height } = CARD_SIZE;
  const canvas: IndexedCanvas = { width, height, pixels: new Uint8Array(width * height) };
  // a frame inside the edge, the book above the name
  const [edge, stroke] = [28, 4];
  fillRect(canvas, edge, edge, width - 2 * edge, stroke, LINE);
  fillRect(canvas, edge, height - edge - stroke, width - 2 * edge, stroke, LINE);
  fillRect(canvas, edge, edge, stroke, height - 2 * edge, LINE);
  fillRect(canvas, width - edge - stroke, edge, stroke, height - 2 * edge, LINE);
  drawBook(canvas, width / 2, 80, 6);
  const { lines, scale } = layoutName(fontText(name));
  const lineHeight = (LINE_ROWS + 2) * scale;
  const block = lines.length * lineHeight - 2 * scale;
  const top = TEXT_BOX.top + Math.floor((TEXT_BOX.height - block) / 2);
  lines.forEach((line, i) => {
    const x = Math.floor((width - textWidth(line, scale)) / 2);
    drawText(canvas, line, x, top + i * lineHeight, scale, PAPER);
  });
  return encodeIndexedPng(width, height, PALETTE, canvas.pixels);
}

/** Cards already drawn, by name: a world has one, a process serves a few. */
const drawn = new Map<string, WorldCard>();
const DRAWN_MAX = 16;

/**
 * The card of the world named `name` (the share root's visible title), drawn once per name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const card = worldCard("The Shattered Coast");
 * assert.equal(new DataView(card.png.buffer).getUint32(16), 1200); // IHDR width
 * assert.equal(worldCard("The Shattered Coast"), card);
 * assert.notEqual(worldCard("Another World").key, card.key);
 * ```
 */
export function worldCard(name: string): WorldCard {
  let card = drawn.get(name);
  if (!card) {
    const png = drawCard(name);
    card = { png, key: createHash("sha256").update(png).digest("base64url").slice(0, 22) };
    if (drawn.size >= DRAWN_MAX) drawn.delete(drawn.keys().next().value!);
    drawn.set(name, card);
  }
  return card;
}

/**
 * The site-relative URL of a card.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(worldCardPath({ png: new Uint8Array(), key: "abc" }), "/public/card/abc.png");
 * ```
 */
export function worldCardPath(card: WorldCard): string {
  return `/public/card/${card.key}.png`;
}
