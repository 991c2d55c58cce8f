/**
 * The start-up summary: once the service listens, one log line per backend saying whether it is
 * configured, whether it answers (else why: refused, DNS, TLS, timeout, a bad answer, a refused
 * token) and Core's version; with no backend configured, a warning naming what to set. It uses
 * the readiness probe, bounded by a short deadline, and never puts a URL or token in a line.
 *
 * @module
 */
import type { Config } from "./config.ts";
import type { Logger, LogLevel } from "./http/log.ts";
import { type BackendReadiness, createReadinessProbe, NOTHING_CONFIGURED } from "./readiness.ts";
import { networkFailure, type UpstreamFailure } from "./upstream/fetch.ts";

/** The longest the start-up check waits for a backend (less when `UPSTREAM_TIMEOUT_MS` is). */
export const STARTUP_CHECK_MS = 5_000;

/** Why a configured backend failed its start-up check. */
export type FailureClass =
  | "refused"
  | "unreachable"
  | "DNS"
  | "TLS"
  | "timeout"
  | "bad answer"
  | "token refused";

/** One line of the summary. */
export interface StartupLine {
  level: LogLevel;
  msg: string;
  fields: Record<string, unknown>;
}

/**
 * Names a failed check: the error code the readiness probe reported, refined by the network
 * error behind an unreachable backend.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const dns = new TypeError("fetch failed", {
 *   cause: new Error("client error (Connect): dns error: failed to lookup address information"),
 * });
 * assert.equal(failureClass("UPSTREAM_UNAVAILABLE", dns), "DNS");
 * assert.equal(failureClass("UPSTREAM_UNAUTHORIZED", undefined), "token refused");
 * assert.equal(failureClass("UPSTREAM_ERROR", undefined), "bad answer");
 * ```
 */
export function failureClass(code: string, cause: unknown): FailureClass {
  if (code === "UPSTREAM_TIMEOUT") return "timeout";
  if (code === "UPSTREAM_UNAUTHORIZED" || code === "UPSTREAM_FORBIDDEN") return "token refused";
  if (code !== "UPSTREAM_UNAVAILABLE") return "bad answer";
  return NETWORK_CLASSES[networkFailure(cause)] ?? "unreachable";
}

/** The network failures the report names apart (see `networkFailure`). */
const NETWORK_CLASSES: Partial<Record<UpstreamFailure, FailureClass>> = {
  dns: "DNS",
  tls: "TLS",
  refused: "refused",
};

const originOf = (input: string | URL | Request) =>
  new URL(input instanceof Request ? input.url : input).origin;

/**
 * Checks both backends as `/readyz` does, within {@linkcode STARTUP_CHECK_MS}, and describes
 * each in one line (`warn` for a failure); with none configured, a `warn` line naming what to
 * set instead.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "./config.ts";
 * const refused = () => Promise.reject(new TypeError("fetch failed: Connection refused"));
 * const config = loadConfig({ CORE_URL: "http://core:8080", CORE_TOKEN: "t" });
 * const [core, parser] = await startupReport(config, refused);
 * assert.deepEqual(core.fields, {
 *   backend: "core",
 *   configured: true,
 *   reachable: false,
 *   failure: "refused",
 *   error: "UPSTREAM_UNAVAILABLE",
 * });
 * assert.deepEqual(parser.fields, { backend: "parser", configured: false });
 * ```
 */
export async function startupReport(config: Config, fetchFn: typeof fetch): Promise<StartupLine[]> {
  if (!config.CORE_URL && !config.PARSER_URL) {
    return [{ level: "warn", msg: NOTHING_CONFIGURED, fields: {} }];
  }
  // the probe reports an error code only; the network error behind it tells refused from DNS
  const causes = new Map<string, unknown>();
  const recording: typeof fetch = (input, init) =>
    fetchFn(input, init).catch((e) => {
      causes.set(originOf(input), e);
      throw e;
    });
  const bounded = {
    ...config,
    UPSTREAM_TIMEOUT_MS: Math.min(config.UPSTREAM_TIMEOUT_MS, STARTUP_CHECK_MS),
  };
  const report = await createReadinessProbe(bounded, recording).check(
    new AbortController().signal,
  );
  const line = (
    backend: "core" | "parser",
    url: string | undefined,
    r: BackendReadiness,
  ): StartupLine => {
    const fields: Record<string, unknown> = { backend, configured: r.configured };
    if (!r.configured) return { level: "info", msg: `${backend}: not configured`, fields };
    if ("error" in r) {
      const failure = failureClass(r.error, url && causes.get(new URL(url).origin));
      Object.assign(fields, { reachable: false, failure, error: r.error });
      return { level: "warn", msg: `${backend}: not available (${failure})`, fields };
    }
    Object.assign(fields, { reachable: true, latencyMs: r.latencyMs });
    if (r.version) fields.version = r.version;
    if (backend === "parser" && !r.status) {
      // any answer makes it ready, but one without the Parser's health status is suspect
      Object.assign(fields, { failure: "bad answer" });
      return { level: "warn", msg: `${backend}: answered, but not as the Parser does`, fields };
    }
    if (r.status) fields.status = r.status;
    return { level: "info", msg: `${backend}: reachable`, fields };
  };
  return [
    line("core", config.CORE_URL, report.core),
    line("parser", config.PARSER_URL, report.parser),
  ];
}

/**
 * Writes {@linkcode startupReport}'s lines to `log`; a failure of the check itself is logged
 * too, never thrown (it runs beside a service that is already listening).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "./config.ts";
 * import { jsonLogger } from "./http/log.ts";
 * const lines: string[] = [];
 * await logStartupReport(jsonLogger("info", (l) => lines.push(l)), loadConfig({}), fetch);
 * assert.equal(JSON.parse(lines[0]).level, "warn");
 * ```
 */
export async function logStartupReport(
  log: Logger,
  config: Config,
  fetchFn: typeof fetch,
): Promise<void> {
  try {
    for (const l of await startupReport(config, fetchFn)) log.log(l.level, l.msg, l.fields);
  } catch (e) {
    log.log("warn", "start-up check failed", { error: e instanceof Error ? e.name : "unknown" });
  }
}
