/**
 * Summary statistics the benchmarks report: medians over rounds and percentiles over samples.
 *
 * @module
 */

/**
 * The median of a list of numbers (NaN for an empty list).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(median([3, 1, 2]), 2);
 * ```
 */
export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * The `q`-quantile (0–1) of samples by the nearest-rank method (NaN for an empty list).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(percentile([5, 1, 4, 2, 3], 0.99), 5);
 * ```
 */
export function percentile(values: readonly number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  if (!s.length) return NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}
