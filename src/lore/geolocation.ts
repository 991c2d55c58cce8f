/**
 * Map pins: the `#geolocation="x, y"` label (upstream Trilium's only geo convention) parsed
 * into two finite numbers. Pure, no I/O.
 *
 * @module
 */

/** A pin position on a map image. */
export interface MapPoint {
  x: number;
  y: number;
}

// One number: optional sign, digits with optional decimals (or a leading-dot decimal). No
// exponents, hex, `Infinity` or `NaN`, which `Number()` would otherwise accept.
const NUMBER = String.raw`[+-]?(?:\d+(?:\.\d+)?|\.\d+)`;
const GEOLOCATION = new RegExp(`^\\s*(${NUMBER})\\s*,\\s*(${NUMBER})\\s*$`);

/**
 * Parses a `#geolocation` value: two numbers separated by one comma, spaces allowed around each.
 * Anything else (one number, three, words, `1e3`, huge values that are not finite) is null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseGeolocation("120, -45.5"), { x: 120, y: -45.5 });
 * assert.equal(parseGeolocation("north of the river"), null);
 * ```
 */
export function parseGeolocation(value: string): MapPoint | null {
  if (typeof value !== "string" || value.length > 200) return null;
  const m = GEOLOCATION.exec(value);
  if (!m) return null;
  const x = Number(m[1]);
  const y = Number(m[2]);
  return Number.isFinite(x) && Number.isFinite(y) ? { x, y } : null;
}
