/**
 * `deno task test:parser [--integration | --all]`: runs the Parser conformance suite against the
 * Parser named by `PARSER_URL` (with its internal secret and owner account) and the Core it is
 * connected to, prints the report, and exits 1 when a step failed (2 on a usage or configuration
 * error). Ctrl-C stops after the current step; the clean-up still runs and the exit status is 130.
 *
 * @module
 */
import { ConfigError, loadConfig } from "../../src/config/service_config.ts";
import { runSuiteCommand, type SuiteCommand } from "./cli.ts";
import { PARSER_FLAGS, type ParserFlag, runParserSuite } from "./parser_suite.ts";

/** The account the Parser's bootstrap creates when no other is configured. */
export const BOOTSTRAP_OWNER = {
  email: "default@allcodex.local",
  password: "allcodex-default-password",
} as const;

const USAGE = `usage: PARSER_URL=http://parser:3001 PARSER_INTERNAL_SECRET=<secret> \\
       CORE_URL=http://core:8080 CORE_TOKEN=<ETAPI token> \\
       [PARSER_EMAIL=<owner e-mail> PARSER_PASSWORD=<password>] \\
       deno task test:parser [--integration | --all]

Drives every Parser-backed route of the service, sign-in and zero-login against that Parser as
its owner account (default: the Parser's bootstrap account ${BOOTSTRAP_OWNER.email}), with the
Core the Parser is connected to. Everything written goes into a scratch note under Core's root,
removed at the end; the owner's budgets and Core integration are recorded and put back.
  --integration  also disconnect the owner's Core integration and connect it again with the
                 same credentials (Core is unavailable to the owner for a moment)
  --all          every optional part (= --integration)`;

/** What the suite needs from the environment. */
export interface ParserSettings {
  parserUrl: string;
  internalSecret: string;
  owner: { email: string; password: string };
  coreUrl: string;
  coreToken: string;
}

/**
 * The settings from the environment, URLs validated like the service validates them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const settings = parserFromEnv({
 *   PARSER_URL: "http://parser:3001",
 *   PARSER_INTERNAL_SECRET: "an-internal-secret-of-32-characters",
 *   CORE_URL: "http://core:8080",
 *   CORE_TOKEN: "etapi-token",
 * });
 * assert.deepEqual(settings.owner, BOOTSTRAP_OWNER); // without PARSER_EMAIL and PARSER_PASSWORD
 * assert.throws(() => parserFromEnv({ PARSER_URL: "http://parser:3001" }), /CORE_URL, CORE_TOKEN/);
 * ```
 */
export function parserFromEnv(env: Record<string, string | undefined>): ParserSettings {
  const config = loadConfig({
    PARSER_URL: env.PARSER_URL,
    PARSER_INTERNAL_SECRET: env.PARSER_INTERNAL_SECRET,
    CORE_URL: env.CORE_URL,
    CORE_TOKEN: env.CORE_TOKEN,
  });
  const missing = [
    ["PARSER_URL", config.PARSER_URL],
    ["PARSER_INTERNAL_SECRET", config.PARSER_INTERNAL_SECRET],
    ["CORE_URL", config.CORE_URL],
    ["CORE_TOKEN", config.CORE_TOKEN],
  ].filter(([, v]) => !v).map(([k]) => k);
  if (missing.length) throw new ConfigError([`${missing.join(", ")}: needed`]);
  const email = env.PARSER_EMAIL || BOOTSTRAP_OWNER.email;
  const password = env.PARSER_PASSWORD || BOOTSTRAP_OWNER.password;
  return {
    parserUrl: config.PARSER_URL!,
    internalSecret: config.PARSER_INTERNAL_SECRET!,
    owner: { email, password },
    coreUrl: config.CORE_URL!,
    coreToken: config.CORE_TOKEN!,
  };
}

const command: SuiteCommand<ParserFlag, ParserSettings> = {
  usage: USAGE,
  flags: PARSER_FLAGS,
  settings: parserFromEnv,
  banner: (p) =>
    `Parser conformance: ${new URL(p.parserUrl).host} as ${p.owner.email}, Core ${
      new URL(p.coreUrl).host
    }`,
  run: (settings, flags, signal) => runParserSuite({ ...settings, flags, signal }),
};

if (import.meta.main) Deno.exit(await runSuiteCommand(command, Deno.args, Deno.env.toObject()));
