/**
 * A small built-in bitmap font (5 × 7 pixels, descenders 2 more) for text the site draws into
 * pictures of its own, such as the generated preview card: printable ASCII, with Latin letters
 * carrying accents drawn as their base letters. Nothing is read from disk, no font engine runs.
 *
 * @module
 */

/** Pixels of a glyph across. */
export const GLYPH_WIDTH = 5;
/** Pixel rows of a line: 7 above the baseline, 2 for descenders. */
export const LINE_ROWS = 9;
/** Advance from one glyph to the next, in font pixels (one blank column between glyphs). */
export const ADVANCE = GLYPH_WIDTH + 1;

/** Each glyph: its rows from the top, `#` drawn; 7 rows, or 8–9 with a descender. */
const GLYPHS: Readonly<Record<string, string>> = {
  " ": "..... ..... ..... ..... ..... ..... .....",
  "!": "..#.. ..#.. ..#.. ..#.. ..#.. ..... ..#..",
  '"': ".#.#. .#.#. ..... ..... ..... ..... .....",
  "#": ".#.#. .#.#. ##### .#.#. ##### .#.#. .#.#.",
  "$": "..#.. .#### #.#.. .###. ..#.# ####. ..#..",
  "%": "##... ##..# ...#. ..#.. .#... #..## ...##",
  "&": ".##.. #..#. #.#.. .#... #.#.# #..#. .##.#",
  "'": "..#.. ..#.. .#... ..... ..... ..... .....",
  "(": "...#. ..#.. .#... .#... .#... ..#.. ...#.",
  ")": ".#... ..#.. ...#. ...#. ...#. ..#.. .#...",
  "*": "..... ..#.. #.#.# .###. #.#.# ..#.. .....",
  "+": "..... ..#.. ..#.. ##### ..#.. ..#.. .....",
  ",": "..... ..... ..... ..... ..... .##.. ..#.. .#...",
  "-": "..... ..... ..... ##### ..... ..... .....",
  ".": "..... ..... ..... ..... ..... .##.. .##..",
  "/": "..... ....# ...#. ..#.. .#... #.... .....",
  "0": ".###. #...# #..## #.#.# ##..# #...# .###.",
  "1": "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",
  "2": ".###. #...# ....# ...#. ..#.. .#... #####",
  "3": "####. ....# ....# .###. ....# ....# ####.",
  "4": "...#. ..##. .#.#. #..#. ##### ...#. ...#.",
  "5": "##### #.... ####. ....# ....# #...# .###.",
  "6": "..##. .#... #.... ####. #...# #...# .###.",
  "7": "##### ....# ...#. ..#.. .#... .#... .#...",
  "8": ".###. #...# #...# .###. #...# #...# .###.",
  "9": ".###. #...# #...# .#### ....# ...#. .##..",
  ":": "..... .##.. .##.. ..... .##.. .##.. .....",
  ";": "..... .##.. .##.. ..... .##.. ..#.. .#...",
  "<": "...#. ..#.. .#... #.... .#... ..#.. ...#.",
  "=": "..... ..... ##### ..... ##### ..... .....",
  ">": ".#... ..#.. ...#. ....# ...#. ..#.. .#...",
  "?": ".###. #...# ....# ...#. ..#.. ..... ..#..",
  "@": ".###. #...# ....# .##.# #.#.# #.#.# .###.",
  A: ".###. #...# #...# ##### #...# #...# #...#",
  B: "####. #...# #...# ####. #...# #...# ####.",
  C: ".###. #...# #.... #.... #.... #...# .###.",
  D: "####. #...# #...# #...# #...# #...# ####.",
  E: "##### #.... #.... ####. #.... #.... #####",
  F: "##### #.... #.... ####. #.... #.... #....",
  G: ".###. #...# #.... #.### #...# #...# .####",
  H: "#...# #...# #...# ##### #...# #...# #...#",
  I: ".###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.",
  J: "..### ...#. ...#. ...#. ...#. #..#. .##..",
  K: "#...# #..#. #.#.. ##... #.#.. #..#. #...#",
  L: "#.... #.... #.... #.... #.... #.... #####",
  M: "#...# ##.## #.#.# #.#.# #...# #...# #...#",
  N: "#...# #...# ##..# #.#.# #..## #...# #...#",
  O: ".###. #...# #...# #...# #...# #...# .###.",
  P: "####. #...# #...# ####. #.... #.... #....",
  Q: ".###. #...# #...# #...# #.#.# #..#. .##.#",
  R: "####. #...# #...# ####. #.#.. #..#. #...#",
  S: ".#### #.... #.... .###. ....# ....# ####.",
  T: "##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
  U: "#...# #...# #...# #...# #...# #...# .###.",
  V: "#...# #...# #...# #...# #...# .#.#. ..#..",
  W: "#...# #...# #...# #.#.# #.#.# #.#.# .#.#.",
  X: "#...# #...# .#.#. ..#.. .#.#. #...# #...#",
  Y: "#...# #...# .#.#. ..#.. ..#.. ..#.. ..#..",
  Z: "##### ....# ...#. ..#.. .#... #.... #####",
  "[": ".###. .#... .#... .#... .#... .#... .###.",
  "\\": "..... #.... .#... ..#.. ...#. ....# .....",
  "]": ".###. ...#. ...#. ...#. ...#. ...#. .###.",
  "^": "..#.. .#.#. #...# ..... ..... ..... .....",
  _: "..... ..... ..... ..... ..... ..... #####",
  "`": ".#... ..#.. ...#. ..... ..... ..... .....",
  a: "..... ..... .###. ....# .#### #...# .####",
  b: "#.... #.... #.##. ##..# #...# #...# ####.",
  c: "..... ..... .###. #.... #.... #...# .###.",
  d: "....# ....# .##.# #..## #...# #...# .####",
  e: "..... ..... .###. #...# ##### #.... .###.",
  f: "..##. .#..# .#... ###.. .#... .#... .#...",
  g: "..... ..... .#### #...# #...# #...# .#### ....# .###.",
  h: "#.... #.... #.##. ##..# #...# #...# #...#",
  i: "..#.. ..... .##.. ..#.. ..#.. ..#.. .###.",
  j: "...#. ..... ..##. ...#. ...#. ...#. ...#. #..#. .##..",
  k: "#.... #.... #..#. #.#.. ##... #.#.. #..#.",
  l: ".##.. ..#.. ..#.. ..#.. ..#.. ..#.. .###.",
  m: "..... ..... ##.#. #.#.# #.#.# #.#.# #.#.#",
  n: "..... ..... #.##. ##..# #...# #...# #...#",
  o: "..... ..... .###. #...# #...# #...# .###.",
  p: "..... ..... ####. #...# #...# #...# ####. #.... #....",
  q: "..... ..... .#### #...# #...# #...# .#### ....# ....#",
  r: "..... ..... #.##. ##..# #.... #.... #....",
  s: "..... ..... .#### #.... .###. ....# ####.",
  t: ".#... .#... ###.. .#... .#... .#..# ..##.",
  u: "..... ..... #...# #...# #...# #..## .##.#",
  v: "..... ..... #...# #...# #...# .#.#. ..#..",
  w: "..... ..... #...# #...# #.#.# #.#.# .#.#.",
  x: "..... ..... #...# .#.#. ..#.. .#.#. #...#",
  y: "..... ..... #...# #...# #...# #...# .#### ....# .###.",
  z: "..... ..... ##### ...#. ..#.. .#... #####",
  "{": "...#. ..#.. ..#.. .#... ..#.. ..#.. ...#.",
  "|": "..#.. ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
  "}": ".#... ..#.. ..#.. ...#. ..#.. ..#.. .#...",
  "~": "..... ..... .#... #.#.# ...#. ..... .....",
};

/** Letters NFKD does not take apart, and typography, as the font's characters. */
const FOLDS: Readonly<Record<string, string>> = {
  "ß": "ss",
  "æ": "ae",
  "Æ": "AE",
  "œ": "oe",
  "Œ": "OE",
  "ø": "o",
  "Ø": "O",
  "ł": "l",
  "Ł": "L",
  "đ": "d",
  "Đ": "D",
  "ð": "d",
  "Ð": "D",
  "þ": "th",
  "Þ": "Th",
  "ı": "i",
  "‘": "'",
  "’": "'",
  "‚": ",",
  "“": '"',
  "”": '"',
  "„": '"',
  "«": '"',
  "»": '"',
  "‐": "-",
  "‑": "-",
  "–": "-",
  "—": "-",
  "…": "...",
  "·": ".",
  "×": "x",
};

/** Each glyph's rows as bit masks, the leftmost pixel the highest bit. */
const MASKS: ReadonlyMap<string, readonly number[]> = new Map(
  Object.entries(GLYPHS).map(([ch, rows]) => [
    ch,
    rows.split(" ").map((row) => [...row].reduce((m, c) => (m << 1) | (c === "#" ? 1 : 0), 0)),
  ]),
);

/**
 * Text as this font can draw it: accents dropped (`é` → `e`), common typography made ASCII,
 * whitespace collapsed, and any other character left out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(fontText("  Café — Œuvre\n «Ys»  "), 'Cafe - OEuvre "Ys"');
 * assert.equal(fontText("東方 Sea"), "Sea");
 * ```
 */
export function fontText(text: string): string {
  const folded = [...text.normalize("NFKD")]
    .map((c) => /\s/.test(c) ? " " : FOLDS[c] ?? (MASKS.has(c) ? c : ""))
    .join("");
  return folded.replace(/ {2,}/g, " ").trim();
}

/**
 * Width in pixels of `text` (already {@linkcode fontText}) drawn at `scale` pixels per font pixel.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(textWidth("Ab", 2), (2 * 6 - 1) * 2);
 * ```
 */
export function textWidth(text: string, scale: number): number {
  return text.length === 0 ? 0 : (text.length * ADVANCE - 1) * scale;
}

/** A picture of palette indexes, row by row. */
export interface IndexedCanvas {
  width: number;
  height: number;
  pixels: Uint8Array;
}

/** Fills a rectangle, clipped to the canvas. */
export function fillRect(
  canvas: IndexedCanvas,
  x: number,
  y: number,
  w: number,
  h: number,
  color: number,
): void {
  const x0 = Math.max(0, x);
  const x1 = Math.min(canvas.width, x + w);
  for (let row = Math.max(0, y); row < Math.min(canvas.height, y + h); row++) {
    if (x1 > x0) canvas.pixels.fill(color, row * canvas.width + x0, row * canvas.width + x1);
  }
}

/**
 * Draws `text` (already {@linkcode fontText}) with its top-left corner at (`x`, `y`), each font
 * pixel a `scale` × `scale` square of palette colour `color`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const canvas = { width: 6, height: 9, pixels: new Uint8Array(54) };
 * drawText(canvas, "I", 0, 0, 1, 1);
 * assert.deepEqual([...canvas.pixels.subarray(0, 6)], [0, 1, 1, 1, 0, 0]); // I's top bar
 * ```
 */
export function drawText(
  canvas: IndexedCanvas,
  text: string,
  x: number,
  y: number,
  scale: number,
  color: number,
): void {
  [...text].forEach((ch, i) => {
    const rows = MASKS.get(ch) ?? [];
    const left = x + i * ADVANCE * scale;
    rows.forEach((mask, row) => {
      for (let col = 0; col < GLYPH_WIDTH; col++) {
        if (mask & (1 << (GLYPH_WIDTH - 1 - col))) {
          fillRect(canvas, left + col * scale, y + row * scale, scale, scale, color);
        }
      }
    });
  });
}
