/**
 * `deno task test:core [--share | --all]`: runs the Core conformance suite against the Core named
 * by `CORE_URL` and `CORE_TOKEN`, prints the report, and exits 1 when a step failed (2 on a usage
 * or configuration error). Ctrl-C stops after the current step; the clean-up still runs and the
 * exit status is 130.
 *
 * @module
 */
import { ConfigError, loadConfig } from "../../src/config/service_config.ts";
import { type Command, parseFlags, runSuiteCommand, type SuiteCommand } from "./cli.ts";
import { runCoreSuite } from "./core_suite.ts";
import { type Flag, FLAGS } from "./kit.ts";

const USAGE =
  `usage: CORE_URL=http://core:8080 CORE_TOKEN=<ETAPI token> deno task test:core [--share | --all]

Drives every Core-backed route of the service against that Core, inside a scratch note it
creates under root and removes at the end. The share configuration is recorded first and put
back exactly.
  --share   also make the suite's note the share root (public routes and pages), then restore
            the previous share root
  --all     every optional part (= --share)`;

/**
 * Reads the command line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseArgs(["--all"]), { kind: "run", flags: ["share"] });
 * assert.deepEqual(parseArgs(["--wipe"]), { kind: "error", message: "unknown option --wipe" });
 * ```
 */
export function parseArgs(args: readonly string[]): Command<Flag> {
  return parseFlags(args, FLAGS);
}

/**
 * Core's URL and token from the environment, validated like the service validates them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   coreFromEnv({ CORE_URL: "http://core:8080", CORE_TOKEN: "t" }),
 *   { coreUrl: "http://core:8080", coreToken: "t" },
 * );
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

const command: SuiteCommand<Flag, { coreUrl: string; coreToken: string }> = {
  usage: USAGE,
  flags: FLAGS,
  settings: coreFromEnv,
  banner: (core) => `Core conformance: ${new URL(core.coreUrl).host}`,
  run: (core, flags, signal) => runCoreSuite({ ...core, flags, signal }),
};

if (import.meta.main) Deno.exit(await runSuiteCommand(command, Deno.args, Deno.env.toObject()));
