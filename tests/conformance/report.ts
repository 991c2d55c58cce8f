/**
 * The conformance report: one aligned row per step (method, path, result, reason) and a summary.
 *
 * @module
 */
import type { StepResult } from "./core_suite.ts";

/**
 * Formats the rows as a plain-text table followed by a summary line.
 *
 * @example
 * ```ts
 * console.log(formatReport([{ method: "GET", path: "/readyz", result: "ok", reason: "ready" }]));
 * // METHOD  PATH     RESULT  REASON
 * // GET     /readyz  ok      ready
 * //
 * // 1 ok, 0 FAIL, 0 skipped
 * ```
 */
export function formatReport(rows: readonly StepResult[]): string {
  const table = [
    ["METHOD", "PATH", "RESULT", "REASON"],
    ...rows.map((r) => [r.method, r.path, r.result, r.reason]),
  ];
  const widths = [0, 1, 2].map((i) => Math.max(...table.map((cells) => cells[i].length)));
  const lines = table.map((cells) =>
    cells.map((c, i) => (i < 3 ? c.padEnd(widths[i]) : c)).join("  ").trimEnd()
  );
  const count = (result: StepResult["result"]) => rows.filter((r) => r.result === result).length;
  return `${lines.join("\n")}\n\n${count("ok")} ok, ${count("FAIL")} FAIL, ${
    count("skipped")
  } skipped`;
}
