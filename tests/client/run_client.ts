/**
 * `deno task test:client [--screenshots]`: drives the real front end (the AllCodex Portal UI at
 * `PORTAL_URL`, whose `/api/*` goes to `BFF_URL`) in Chromium through every page and the main
 * journeys, on a service this task starts on the doubles at `BFF_URL`; prints one row per page
 * visit or journey and exits 1 when one failed (2 on a usage or configuration error). Ctrl-C
 * stops after the current step.
 *
 * @module
 */
import { ConfigError } from "../../src/config/service_config.ts";
import {
  type Command,
  parseFlags,
  runSuiteCommand,
  type SuiteCommand,
} from "../conformance/cli.ts";
import { CLIENT_FLAGS, type ClientFlag, SCREENSHOT_DIR } from "./client_kit.ts";
import { type ClientSettings, runClientSuite } from "./client_suite.ts";

const USAGE = `usage: PORTAL_URL=http://127.0.0.1:3100 [BFF_URL=http://127.0.0.1:8080] \\
  deno task test:client [--screenshots]

Starts the service on the Core and Parser doubles (as \`deno task dev\` runs it) at BFF_URL, the
address the UI at PORTAL_URL sends /api/* to (fixed when the UI is built), and drives the UI in
Chromium through every page and the main journeys. A step fails on a console error, a failed
/api call, a crash banner or error message, text such as "undefined", "NaN" or "Invalid Date",
or when the UI does not show what the step expects. See docs/front-end.md to build the UI.
  PORTAL_URL     the running UI (required)
  BFF_URL        where the UI sends /api/* (default http://127.0.0.1:8080); must be free
  --screenshots  save a picture of each page to ${SCREENSHOT_DIR}/<page>.png`;

/** Where the UI sends `/api/*` unless `BFF_URL` says otherwise (the UI build's default too). */
export const DEFAULT_BFF_URL = "http://127.0.0.1:8080";

/**
 * Reads the command line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseArgs(["--screenshots"]), { kind: "run", flags: ["screenshots"] });
 * assert.deepEqual(parseArgs(["--share"]), { kind: "error", message: "unknown option --share" });
 * ```
 */
export function parseArgs(args: readonly string[]): Command<ClientFlag> {
  return parseFlags(args, CLIENT_FLAGS);
}

/**
 * The UI's and the service's addresses from the environment: `PORTAL_URL` is required, both are
 * plain `http(s)` origins (no path, query or credentials).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(clientFromEnv({ PORTAL_URL: "http://127.0.0.1:3100/" }), {
 *   portalUrl: "http://127.0.0.1:3100",
 *   bffUrl: "http://127.0.0.1:8080",
 * });
 * assert.throws(() => clientFromEnv({}), /PORTAL_URL is required/);
 * ```
 */
export function clientFromEnv(env: Record<string, string | undefined>): ClientSettings {
  const problems: string[] = [];
  const origin = (name: string, value: string | undefined): string => {
    if (!value) {
      problems.push(
        `${name} is required: the address of the running UI (e.g. http://127.0.0.1:3100)`,
      );
      return "";
    }
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      problems.push(`${name}: not a URL: ${value}`);
      return "";
    }
    if (
      !/^https?:$/.test(url.protocol) || url.username || url.password || url.search || url.hash ||
      url.pathname !== "/"
    ) {
      problems.push(`${name}: an http(s) origin without path, query or credentials, not ${value}`);
    }
    return url.origin;
  };
  const portalUrl = origin("PORTAL_URL", env.PORTAL_URL);
  const bffUrl = origin("BFF_URL", env.BFF_URL || DEFAULT_BFF_URL);
  if (bffUrl && new URL(bffUrl).protocol !== "http:") {
    problems.push("BFF_URL: the service this task starts speaks http");
  }
  if (problems.length) throw new ConfigError(problems);
  return { portalUrl, bffUrl };
}

const command: SuiteCommand<ClientFlag, ClientSettings> = {
  usage: USAGE,
  flags: CLIENT_FLAGS,
  columns: ["PAGE", "JOURNEY"],
  settings: clientFromEnv,
  banner: (s) => `Front end: ${s.portalUrl}, its /api/* served at ${s.bffUrl} on the doubles`,
  run: (settings, flags, signal) =>
    runClientSuite({
      settings,
      flags,
      env: Deno.env.toObject(),
      signal,
      onStep: (row, details) => {
        console.log(`${row.result.padEnd(7)} ${row.method} · ${row.path}`);
        for (const line of details) console.log(line);
      },
    }),
};

if (import.meta.main) Deno.exit(await runSuiteCommand(command, Deno.args, Deno.env.toObject()));
