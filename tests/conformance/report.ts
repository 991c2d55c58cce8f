/**
 * The conformance report: running one step into one row (method, path, result, reason), the
 * suite's own set-up and clean-up rows, and the aligned table with a summary.
 *
 * @module
 */
import { z } from "zod";
import { Blocked, short, Skip, type Step } from "./kit.ts";

/** One row of the report. */
export interface StepResult {
  /** The route's method, or `-` for the suite's own set-up and clean-up rows. */
  method: string;
  path: string;
  result: "ok" | "FAIL" | "skipped";
  reason: string;
}

/**
 * Runs one step: skipped without its flag (or when it throws {@linkcode Skip}), ok with its
 * check (or the text it returned), FAIL with the reason otherwise.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Step } from "./kit.ts";
 * const step: Step<{ flags: ReadonlySet<string> }, string> = {
 *   method: "PUT",
 *   path: "/api/share",
 *   check: "moves the share root",
 *   needs: "share",
 *   run: () => Promise.resolve(),
 * };
 * assert.deepEqual(await runStep(step, { flags: new Set() }), {
 *   method: "PUT",
 *   path: "/api/share",
 *   result: "skipped",
 *   reason: "skipped (needs --share)",
 * });
 * assert.equal((await runStep(step, { flags: new Set(["share"]) })).result, "ok");
 * ```
 */
export async function runStep<S extends { flags: ReadonlySet<string> }>(
  step: Step<S, string>,
  state: S,
): Promise<StepResult> {
  if (step.needs && !state.flags.has(step.needs)) {
    return stepRow(step, "skipped", `skipped (needs --${step.needs})`);
  }
  try {
    const seen = await step.run(state);
    return stepRow(step, "ok", seen || step.check);
  } catch (e) {
    if (e instanceof Skip) return stepRow(step, "skipped", `skipped (${e.message})`);
    return stepRow(step, "FAIL", e instanceof Blocked ? `blocked: ${e.message}` : reasonOf(e));
  }
}

/**
 * A step's row with the given result.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   stepRow({ method: "GET", path: "/readyz" }, "skipped", "skipped (interrupted)"),
 *   {
 *     method: "GET",
 *     path: "/readyz",
 *     result: "skipped",
 *     reason: "skipped (interrupted)",
 *   },
 * );
 * ```
 */
export function stepRow(
  step: { method: string; path: string },
  result: StepResult["result"],
  reason: string,
): StepResult {
  return { method: step.method, path: step.path, result, reason };
}

/**
 * One of the suite's own rows (`-` as method): ok with what `work` says it did, FAIL with why
 * it could not.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const row = await housekeeping(
 *   "(remove the scratch note)",
 *   () => Promise.reject(new Error("Core: 500")),
 * );
 * assert.deepEqual(row, {
 *   method: "-",
 *   path: "(remove the scratch note)",
 *   result: "FAIL",
 *   reason: "Core: 500",
 * });
 * ```
 */
export async function housekeeping(
  path: string,
  work: () => Promise<string>,
): Promise<StepResult> {
  try {
    return { method: "-", path, result: "ok", reason: await work() };
  } catch (e) {
    return { method: "-", path, result: "FAIL", reason: reasonOf(e) };
  }
}

/**
 * An error as one short report reason.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(reasonOf(new Error("Core: 500")), "Core: 500");
 * ```
 */
export function reasonOf(e: unknown): string {
  if (e instanceof z.ZodError) {
    const i = e.issues[0];
    return short(`unexpected body: ${i.path.join(".") || "(root)"}: ${i.message}`);
  }
  return short(e instanceof Error ? e.message : String(e));
}

/**
 * Formats the rows as a plain-text table followed by a summary line. `columns` names the first two
 * columns (a suite whose rows are not routes names them after what they hold).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   formatReport([{ method: "GET", path: "/readyz", result: "ok", reason: "ready" }]),
 *   "METHOD  PATH     RESULT  REASON\nGET     /readyz  ok      ready\n\n1 ok, 0 FAIL, 0 skipped",
 * );
 * ```
 */
export function formatReport(
  rows: readonly StepResult[],
  columns: readonly [string, string] = ["METHOD", "PATH"],
): string {
  const table = [
    [...columns, "RESULT", "REASON"],
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
