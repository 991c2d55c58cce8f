/**
 * Printing benchmark results: Markdown tables padded the way `deno fmt` pads them, so a run's
 * output can be pasted into the docs as it is, and the number formats of the tables.
 *
 * @module
 */

/**
 * A Markdown table with every column padded to its widest cell.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   markdownTable(["row", "req/s"], [["bare", "12 000"]]),
 *   "| row  | req/s  |\n| ---- | ------ |\n| bare | 12 000 |",
 * );
 * ```
 */
export function markdownTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(3, h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

/**
 * A count rounded to a whole number, thousands separated by a space ("—" when not a number).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(count(12345.6), "12 346");
 * ```
 */
export function count(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toString().replace(/\B(?=(\d{3})+$)/g, " ") : "—";
}

/**
 * Requests per second: whole numbers as {@linkcode count} does, two decimals below 10 (an upload
 * or a stream is seldom one a second).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(rate(0.234), "0.23");
 * ```
 */
export function rate(n: number): string {
  return Number.isFinite(n) && n < 10 ? n.toFixed(2) : count(n);
}

/**
 * Milliseconds with two decimals ("—" when not a number).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(ms(1.234), "1.23");
 * ```
 */
export function ms(n: number): string {
  return Number.isFinite(n) ? n.toFixed(2) : "—";
}

/**
 * A difference in milliseconds with its sign ("+1.20", "-0.35"; "—" when not a number).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(signedMs(1.2), "+1.20");
 * ```
 */
export function signedMs(n: number): string {
  return Number.isFinite(n) ? `${n >= 0 ? "+" : ""}${n.toFixed(2)}` : "—";
}

/**
 * A ratio `a / b` as "0.42×" ("—" when either is not a number).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(ratio(1, 4), "0.25×");
 * ```
 */
export function ratio(a: number, b: number): string {
  const r = a / b;
  return Number.isFinite(r) ? `${r.toFixed(2)}×` : "—";
}
