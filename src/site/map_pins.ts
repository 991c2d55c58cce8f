/**
 * Where a map's pins and their labels go. The pins are drawn in an SVG without a `viewBox` laid
 * over the image: positions are percentages of the image, sizes are CSS pixels, so a pin and its
 * label keep their screen size whatever the image's pixel size, the column's width or the zoom.
 * Labels are placed for the narrowest width the map is drawn at: pins only move apart on a wider
 * one while labels keep their size, so a label that fits there fits everywhere. Pure.
 *
 * @module
 */
import type { PixelSize } from "../share/image_sizes.ts";

/** A pin's tap target radius in CSS px: 28 px across (WCAG 2.5.8 asks for 24). */
export const PIN_TARGET_RADIUS = 14;
/** The visible dot's radius in CSS px. */
export const PIN_DOT_RADIUS = 7;
/** A label's font size in CSS px. */
export const PIN_LABEL_SIZE = 14;

/**
 * The map's width in CSS px in the narrowest phone column it is laid out for: a 360 px wide
 * screen less the page's padding (16 px a side) and the map's border (1 px a side).
 */
export const PHONE_MAP_WIDTH = 326;

/** From a pin's centre to the near end of its label. */
const GAP = PIN_DOT_RADIUS + 5;
/** The label's outline (stroke 3 px, half of it outside the glyphs), rounded up. */
const HALO = 2;
/** The label's baseline below its vertical centre, and its glyphs' extent around that centre. */
const BASELINE = 0.35 * PIN_LABEL_SIZE;
const ABOVE = 0.45 * PIN_LABEL_SIZE + HALO;
const BELOW = 0.6 * PIN_LABEL_SIZE + HALO;
/** A dot as other labels avoid it: the dot and its white ring. */
const DOT_CLEAR = PIN_DOT_RADIUS + 2;
const ELLIPSIS = "…";

/** A point of the map image, in its pixels, with the title its label shows. */
export interface PinPoint {
  x: number;
  y: number;
  title: string;
}

/** Which end of a label its anchor is (SVG's `text-anchor`). */
export type Anchor = "start" | "end" | "middle";

/** A pin's label: its text and where it starts, relative to the pin. */
export interface PlacedLabel {
  text: string;
  /** `start`: the label runs right of the pin; `end`: it ends left of it; `middle`: centred. */
  anchor: Anchor;
  /** From the pin's centre to the label's anchor on its baseline, in CSS px. */
  dx: number;
  dy: number;
}

/** A pin as the map draws it. */
export interface PlacedPin<P extends PinPoint> {
  pin: P;
  /** The pin's centre, in percent of the image's width and height. */
  left: number;
  top: number;
  /** Moves the tap target (CSS px) so a pin at the image's edge keeps a whole target on it. */
  shiftX: number;
  shiftY: number;
  /** Null when not even one letter of the title fits on the map. */
  label: PlacedLabel | null;
  /** Whether the label shows the whole title. */
  whole: boolean;
}

interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

const overlaps = (a: Box, b: Box) => a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;

/**
 * Each character's advance in ems, by groups, as DejaVu Sans Bold (the widest of the usual
 * system sans-serifs, and Linux's) draws it; anything else counts as a wide letter or digit.
 */
const ADVANCES: ReadonlyMap<string, number> = new Map(
  ([
    [0.35, " "],
    [0.4, ".,:;'’|ijlIJ"],
    [0.48, "!()[]-ft"],
    [0.5, "r"],
    [0.6, "csz"],
    [0.69, "aekovxySEFL"],
    [0.74, "bdghnpqu0123456789CPTYZ"],
    [0.78, "ABKRVX"],
    [0.86, "DGHNOQU&"],
    [1.1, "mwMW@%…"],
  ] as const).flatMap(([em, chars]) => [...chars].map((c) => [c, em] as const)),
);
const OTHER_ADVANCE = 0.86;

/**
 * A label's width in CSS px, estimated generously: the server cannot measure text, and a label
 * estimated too narrow would run off the map.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.ok(labelWidth("Saltmarrow Harbor") > labelWidth("Saltmarrow"));
 * assert.ok(labelWidth("WWW") > labelWidth("iii"));
 * ```
 */
export function labelWidth(text: string): number {
  let em = 0;
  for (const ch of text) em += ADVANCES.get(ch) ?? OTHER_ADVANCE;
  return em * PIN_LABEL_SIZE + 2 * HALO;
}

/** The longest start of `title` (with an ellipsis) that fits in `room` px, or null. */
function shortened(title: string, room: number): string | null {
  const chars = [...title];
  for (let n = chars.length - 1; n > 0; n--) {
    const text = chars.slice(0, n).join("").trimEnd() + ELLIPSIS;
    if (labelWidth(text) <= room) return text;
  }
  return null;
}

/** Rounds a percentage for the markup (a thousandth of a percent is far below a pixel). */
const percent = (v: number, of: number) => Math.round((v / of) * 100_000) / 1000;

/** How far a target of `r` around `at` must move to stay within `0..extent` (to 0.1 px, up). */
const inward = (at: number, extent: number, r: number) => {
  const by = Math.max(0, r - at) - Math.max(0, at + r - extent);
  return Math.sign(by) * Math.ceil(Math.abs(by) * 10) / 10;
};

/**
 * Places the pins of a map of `size` (image pixels) drawn `width` CSS px wide at its narrowest:
 * each label beside its pin, right or left, level with it or a line above or below, else centred
 * under or over it: the first way that keeps it on the map clear of other labels and pins (pins
 * in the right half try the left first); else the first way on the map; else shortened with an
 * ellipsis to what the roomiest way holds. Pins outside the image are left out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const [harbor, light] = placePins([
 *   { x: 120, y: 300, title: "Harbor" },
 *   { x: 950, y: 100, title: "Lighthouse" },
 * ], { width: 960, height: 640 }, 326);
 * assert.deepEqual([harbor.left, harbor.top], [12.5, 46.875]);
 * assert.equal(harbor.label?.anchor, "start"); // right of its pin
 * assert.equal(light.label?.anchor, "end"); // near the right edge: left of its pin
 * assert.ok(light.shiftX < 0); // its tap target moved onto the map
 * ```
 */
export function placePins<P extends PinPoint>(
  pins: readonly P[],
  size: PixelSize,
  width: number,
): PlacedPin<P>[] {
  const height = (width * size.height) / size.width;
  const inside = pins.filter((p) =>
    p.x >= 0 && p.y >= 0 && p.x <= size.width && p.y <= size.height
  );
  const at = inside.map((p) => ({
    x: (p.x / size.width) * width,
    y: (p.y / size.height) * height,
  }));
  const taken: Box[] = at.map(({ x, y }) => ({
    x0: x - DOT_CLEAR,
    y0: y - DOT_CLEAR,
    x1: x + DOT_CLEAR,
    y1: y + DOT_CLEAR,
  }));
  return inside.map((pin, i) => {
    const { x, y } = at[i];
    const label = placeLabel(pin.title, x, y, width, height, taken);
    if (label) taken.push(label.box);
    return {
      pin,
      left: percent(pin.x, size.width),
      top: percent(pin.y, size.height),
      shiftX: inward(x, width, PIN_TARGET_RADIUS),
      shiftY: inward(y, height, PIN_TARGET_RADIUS),
      label: label?.placed ?? null,
      whole: label?.placed.text === pin.title,
    };
  });
}

/** From a pin's centre to the near edge of a label above or below it. */
const NEAR = PIN_DOT_RADIUS + 3;

/** One pin's label on a map `width` × `height` px, avoiding the `taken` boxes if it can. */
function placeLabel(
  title: string,
  x: number,
  y: number,
  width: number,
  height: number,
  taken: readonly Box[],
): { placed: PlacedLabel; box: Box } | null {
  if (height < ABOVE + BELOW) return null;
  const at = (anchor: Anchor, rise: number, text: string) => {
    // always kept between the map's top and bottom
    const centre = Math.min(Math.max(y + rise, ABOVE), height - BELOW);
    const w = labelWidth(text);
    const dx = anchor === "start" ? GAP : anchor === "end" ? -GAP : 0;
    const x0 = anchor === "start" ? x + dx : anchor === "end" ? x + dx - w : x - w / 2;
    const box = { x0, y0: centre - ABOVE, x1: x0 + w, y1: centre + BELOW };
    const dy = Math.round((centre - y + BASELINE) * 10) / 10;
    return { placed: { text, anchor, dx, dy }, box };
  };
  const sides: Anchor[] = x > width / 2 ? ["end", "start"] : ["start", "end"];
  const line = ABOVE + BELOW;
  const below = NEAR + ABOVE;
  const above = -NEAR - BELOW;
  const ways = [
    ...[0, -line, line].flatMap((rise) => sides.map((side) => at(side, rise, title))),
    at("middle", below, title),
    at("middle", above, title),
  ];
  const onMap = ways.filter(({ box }) => box.x0 >= 0 && box.x1 <= width);
  const clear = onMap.find(({ box }) => !taken.some((t) => overlaps(t, box)));
  if (clear ?? onMap[0]) return clear ?? onMap[0];
  // nothing whole fits: as much of the title as the roomiest way holds
  const rooms: [Anchor, number, number][] = [
    ["start", 0, width - x - GAP],
    ["end", 0, x - GAP],
    ["middle", y < height / 2 ? below : above, 2 * Math.min(x, width - x)],
  ];
  const [anchor, rise, room] = rooms.reduce((a, b) => (b[2] > a[2] ? b : a));
  const text = shortened(title, room);
  return text === null ? null : at(anchor, rise, text);
}
