/**
 * The command line shared by the conformance tasks (`test:core`, `test:parser`): options, the
 * backend settings from the environment, Ctrl-C (finish the current step, clean up, exit 130),
 * the report, and the exit status (0 all passed, 1 a step failed, 2 usage or configuration).
 *
 * @module
 */
import { ConfigError } from "../../src/config/service_config.ts";
import { formatReport, type StepResult } from "./report.ts";

/** What the command line asks for. */
export type Command<F extends string> = { kind: "run"; flags: F[] } | { kind: "help" } | {
  kind: "error";
  message: string;
};

/**
 * Reads the options: `--<flag>` for each known flag, `--all` for every flag, `-h`/`--help`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseFlags(["--all"], ["share"]), { kind: "run", flags: ["share"] });
 * assert.deepEqual(
 *   parseFlags(["--wipe"], ["share"]),
 *   { kind: "error", message: "unknown option --wipe" },
 * );
 * ```
 */
export function parseFlags<F extends string>(
  args: readonly string[],
  known: readonly F[],
): Command<F> {
  const flags = new Set<F>();
  for (const arg of args) {
    if (arg === "-h" || arg === "--help") return { kind: "help" };
    if (arg === "--all") known.forEach((f) => flags.add(f));
    else if (known.some((f) => arg === `--${f}`)) flags.add(arg.slice(2) as F);
    else return { kind: "error", message: `unknown option ${arg}` };
  }
  return { kind: "run", flags: known.filter((f) => flags.has(f)) };
}

/** One conformance task. */
export interface SuiteCommand<F extends string, S> {
  usage: string;
  flags: readonly F[];
  /** The report's first two columns; default `METHOD`, `PATH`. */
  columns?: readonly [string, string];
  /** The backend settings from the environment; throws {@linkcode ConfigError} when unusable. */
  settings(env: Record<string, string | undefined>): S;
  /** The first line printed: what is checked, without secrets. */
  banner(settings: S, flags: readonly F[]): string;
  /** Runs the suite; throws only when it could not start (then nothing was changed). */
  run(settings: S, flags: readonly F[], signal: AbortSignal): Promise<StepResult[]>;
}

/**
 * Runs a conformance task and returns its exit status.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * // a run_*.ts entry point ends with:
 * // if (import.meta.main) Deno.exit(await runSuiteCommand(command, Deno.args, Deno.env.toObject()));
 * const command: SuiteCommand<"share", string> = {
 *   usage: "usage: demo [--share]",
 *   flags: ["share"],
 *   settings: (env) => env.DEMO_URL ?? "http://core:8080",
 *   banner: (url) => `checking ${url}`,
 *   run: () =>
 *     Promise.resolve([{ method: "GET", path: "/readyz", result: "ok", reason: "ready" }]),
 * };
 * assert.equal(await runSuiteCommand(command, [], {}), 0); // prints the banner and the report
 * assert.equal(await runSuiteCommand(command, ["--wipe"], {}), 2); // prints the usage
 * ```
 */
export async function runSuiteCommand<F extends string, S>(
  cmd: SuiteCommand<F, S>,
  args: readonly string[],
  env: Record<string, string | undefined>,
): Promise<number> {
  const command = parseFlags(args, cmd.flags);
  if (command.kind === "help") {
    console.log(cmd.usage);
    return 0;
  }
  if (command.kind === "error") {
    console.error(`${command.message}\n\n${cmd.usage}`);
    return 2;
  }
  let settings: S;
  try {
    settings = cmd.settings(env);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    console.error(`${e.message}\n\n${cmd.usage}`);
    return 2;
  }
  const stop = new AbortController();
  const onInterrupt = () => {
    if (stop.signal.aborted) Deno.exit(130); // a second Ctrl-C: the user gives up the clean-up
    console.error("interrupted: finishing the current step, then cleaning up (Ctrl-C again: quit)");
    stop.abort();
  };
  Deno.addSignalListener("SIGINT", onInterrupt);
  const flags = command.flags;
  console.log(
    cmd.banner(settings, flags) + (flags.length ? `, ${flags.map((f) => `--${f}`).join(" ")}` : ""),
  );
  try {
    const rows = await cmd.run(settings, flags, stop.signal);
    console.log(formatReport(rows, cmd.columns));
    if (stop.signal.aborted) return 130; // cleaned up, but the run is incomplete
    return rows.some((r) => r.result === "FAIL") ? 1 : 0;
  } catch (e) {
    console.error(`cannot start: ${e instanceof Error ? e.message : e} (nothing was changed)`);
    return 1;
  } finally {
    Deno.removeSignalListener("SIGINT", onInterrupt);
  }
}
