/**
 * `deno task test:core [--share | --all]`: runs the Core conformance suite against the Core named
 * by `CORE_URL` and `CORE_TOKEN`, prints the report, and exits 1 when a step failed (2 on a usage
 * or configuration error). Ctrl-C stops after the current step; the clean-up still runs and the
 * exit status is 130.
 *
 * @module
 */
import { ConfigError, loadConfig } from "../../src/config.ts";
import { runCoreSuite } from "./core_suite.ts";
import { type Flag, FLAGS } from "./kit.ts";
import { formatReport } from "./report.ts";

const USAGE =
  `usage: CORE_URL=http://core:8080 CORE_TOKEN=<ETAPI token> deno task test:core [--share | --all]

Drives every Core-backed route of the service against that Core, inside a scratch note it
creates under root and removes at the end. The share configuration is recorded first and put
back exactly.
  --share   also make the suite's note the share root (public routes and pages), then restore
            the previous share root
  --all     every optional part (= --share)`;

/** What the command line asks for. */
export type Command = { kind: "run"; flags: Flag[] } | { kind: "help" } | {
  kind: "error";
  message: string;
};

/**
 * Reads the command line.
 *
 * @example
 * ```ts
 * parseArgs(["--all"]); // { kind: "run", flags: ["share"] }
 * parseArgs(["--wipe"]); // { kind: "error", message: "unknown option --wipe" }
 * ```
 */
export function parseArgs(args: readonly string[]): Command {
  const flags = new Set<Flag>();
  for (const arg of args) {
    if (arg === "-h" || arg === "--help") return { kind: "help" };
    if (arg === "--all") FLAGS.forEach((f) => flags.add(f));
    else if (FLAGS.some((f) => arg === `--${f}`)) flags.add(arg.slice(2) as Flag);
    else return { kind: "error", message: `unknown option ${arg}` };
  }
  return { kind: "run", flags: FLAGS.filter((f) => flags.has(f)) };
}

/**
 * Core's URL and token from the environment, validated like the service validates them.
 *
 * @example
 * ```ts
 * coreFromEnv({ CORE_URL: "http://core:8080", CORE_TOKEN: "t" }); // { coreUrl: "http://core:8080", coreToken: "t" }
 * ```
 */
export function coreFromEnv(
  env: Record<string, string | undefined>,
): { coreUrl: string; coreToken: string } {
  const config = loadConfig({ CORE_URL: env.CORE_URL, CORE_TOKEN: env.CORE_TOKEN });
  if (!config.CORE_URL || !config.CORE_TOKEN) {
    throw new ConfigError(["CORE_URL and CORE_TOKEN: both are needed"]);
  }
  return { coreUrl: config.CORE_URL, coreToken: config.CORE_TOKEN };
}

async function main(): Promise<number> {
  const command = parseArgs(Deno.args);
  if (command.kind === "help") {
    console.log(USAGE);
    return 0;
  }
  if (command.kind === "error") {
    console.error(`${command.message}\n\n${USAGE}`);
    return 2;
  }
  let core: { coreUrl: string; coreToken: string };
  try {
    core = coreFromEnv(Deno.env.toObject());
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    console.error(`${e.message}\n\n${USAGE}`);
    return 2;
  }
  const stop = new AbortController();
  const onInterrupt = () => {
    if (stop.signal.aborted) Deno.exit(130); // a second Ctrl-C: the user gives up the clean-up
    console.error("interrupted: finishing the current step, then cleaning up (Ctrl-C again: quit)");
    stop.abort();
  };
  Deno.addSignalListener("SIGINT", onInterrupt);
  console.log(
    `Core conformance: ${new URL(core.coreUrl).host}` +
      (command.flags.length ? `, ${command.flags.map((f) => `--${f}`).join(" ")}` : ""),
  );
  try {
    const rows = await runCoreSuite({ ...core, flags: command.flags, signal: stop.signal });
    console.log(formatReport(rows));
    if (stop.signal.aborted) return 130; // cleaned up, but the run is incomplete
    return rows.some((r) => r.result === "FAIL") ? 1 : 0;
  } catch (e) {
    console.error(`cannot start: ${e instanceof Error ? e.message : e} (nothing was changed)`);
    return 1;
  } finally {
    Deno.removeSignalListener("SIGINT", onInterrupt);
  }
}

if (import.meta.main) Deno.exit(await main());
