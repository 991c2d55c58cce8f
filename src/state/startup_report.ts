/**
 * The start-up summary: once the service listens, which host names it answers to (and a warning
 * when browsers would reach it by a name it refuses), then one log line per backend saying
 * whether it is configured, whether it answers (else why: refused, DNS, TLS, timeout, a bad
 * answer, a refused token) and Core's version; with no backend configured, a warning naming what
 * to set. It uses the readiness probe, bounded by a short deadline, and never puts a URL or token
 * in a line.
 * A backend's host name is looked up first, with the resolver the runtime's `fetch` uses: a name
 * that does not resolve, or whose resolver does not answer before the deadline, is reported as
 * DNS, not as a backend that is down or slow.
 *
 * @module
 */
import { lookup } from "node:dns/promises";
import type { Config } from "../config/service_config.ts";
import { namedHosts } from "../http/host_check.ts";
import type { Logger, LogLevel } from "../http/log.ts";
import { type BackendReadiness, createReadinessProbe, NOTHING_CONFIGURED } from "./readiness.ts";
import { networkFailure, type UpstreamFailure } from "../upstream/fetch.ts";
import type { Deadlines } from "../util/deadlines.ts";
import { loopbackAddress } from "../util/host_name.ts";

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
 * error behind it. A name that did not resolve is DNS whatever the code: a resolver that does
 * not answer makes the check time out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const dns = new TypeError("fetch failed", {
 *   cause: new Error("client error (Connect): dns error: failed to lookup address information"),
 * });
 * assert.equal(failureClass("UNREACHABLE", dns), "DNS");
 * assert.equal(failureClass("UPSTREAM_TIMEOUT", dns), "DNS");
 * assert.equal(failureClass("UPSTREAM_TIMEOUT", undefined), "timeout");
 * assert.equal(failureClass("UNAUTHORIZED", undefined), "token refused");
 * assert.equal(failureClass("UPSTREAM_ERROR", undefined), "bad answer");
 * ```
 */
export function failureClass(code: string, cause: unknown): FailureClass {
  if (cause !== undefined && networkFailure(cause) === "dns") return "DNS";
  if (code === "UPSTREAM_TIMEOUT") return "timeout";
  if (code === "UNAUTHORIZED" || code === "UPSTREAM_FORBIDDEN") return "token refused";
  if (code !== "UNREACHABLE") return "bad answer";
  return NETWORK_CLASSES[networkFailure(cause)] ?? "unreachable";
}

/** The network failures the report names apart (see `networkFailure`). */
const NETWORK_CLASSES: Partial<Record<UpstreamFailure, FailureClass>> = {
  dns: "DNS",
  tls: "TLS",
  refused: "refused",
};

/** What the start-up check uses besides the config and the client (tests give their own). */
export interface StartupCheckOptions {
  /**
   * Whether a host name resolves: false when the resolver says it does not; it may also never
   * settle (a resolver that does not answer). Default {@linkcode systemResolves}.
   */
  resolves?: (hostname: string) => Promise<boolean>;
  /** Where the check's deadline is counted; default the process-wide scheduler. */
  deadlines?: Deadlines;
}

/** The resolver's answers that mean "this name does not resolve" (getaddrinfo's, as Node names them). */
const UNRESOLVED = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NODATA", "ENODATA"]);

/**
 * Looks `hostname` up with the system resolver (getaddrinfo, as the runtime's `fetch` does):
 * false when the resolver says the name does not resolve, true when it resolves or the lookup
 * fails for another reason (then the check's own call tells what is wrong).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * // Declared, not run here: the answer depends on this machine's resolver.
 * async function localhostResolves(): Promise<void> {
 *   assert.equal(await systemResolves("localhost"), true);
 * }
 * ```
 */
export async function systemResolves(hostname: string): Promise<boolean> {
  try {
    await lookup(hostname);
    return true;
  } catch (e) {
    return !UNRESOLVED.has((e as { code?: unknown })?.code as string);
  }
}

/** An IP address needs no lookup (`URL.hostname` keeps an IPv6 literal's brackets). */
const IP_LITERAL = /^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-f:.]+\])$/i;

/** The error of a name that did not resolve, as the runtime's `fetch` words it (see `networkFailure`). */
const unresolved = (how: string) =>
  new TypeError("fetch failed", { cause: new Error(`dns error: ${how}`) });

/**
 * `fetchFn` after the host name's lookup, recording every failure by origin: the readiness
 * probe reports an error code only, the error behind it tells refused from DNS. A lookup still
 * pending when the deadline aborts the call is recorded as DNS too.
 */
function lookingUp(
  fetchFn: typeof fetch,
  resolves: (hostname: string) => Promise<boolean>,
  causes: Map<string, unknown>,
): typeof fetch {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input);
    const signal = init?.signal ?? undefined;
    let resolving = !IP_LITERAL.test(url.hostname);
    try {
      if (resolving && !await untilAborted(resolves(url.hostname), signal)) {
        throw unresolved("the name does not resolve");
      }
      resolving = false;
      return await fetchFn(input, init);
    } catch (e) {
      causes.set(url.origin, resolving && signal?.aborted ? unresolved("no answer") : e);
      throw e;
    }
  };
}

/** `work`'s outcome, or the abort reason of `signal` if it aborts first. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * Checks both backends as `/readyz` does, within {@linkcode STARTUP_CHECK_MS}, and describes
 * each in one line (`warn` for a failure); with none configured, a `warn` line naming what to
 * set instead.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "../config/service_config.ts";
 * const refused = () => Promise.reject(new TypeError("fetch failed: Connection refused"));
 * const config = loadConfig({ CORE_URL: "http://core:8080", CORE_TOKEN: "t" });
 * const resolves = (name: string) => Promise.resolve(name === "core"); // the resolver's answer
 * const [core, parser] = await startupReport(config, refused, { resolves });
 * assert.deepEqual(core.fields, {
 *   backend: "core",
 *   configured: true,
 *   reachable: false,
 *   failure: "refused",
 *   error: "UNREACHABLE",
 * });
 * assert.deepEqual(parser.fields, { backend: "parser", configured: false });
 * const elsewhere = loadConfig({ CORE_URL: "http://core.invalid:8080", CORE_TOKEN: "t" });
 * const [unknown] = await startupReport(elsewhere, refused, { resolves });
 * assert.equal(unknown.fields.failure, "DNS"); // the name did not resolve: nothing was called
 * ```
 */
export async function startupReport(
  config: Config,
  fetchFn: typeof fetch,
  opts: StartupCheckOptions = {},
): Promise<StartupLine[]> {
  if (!config.CORE_URL && !config.PARSER_URL) {
    return [{ level: "warn", msg: NOTHING_CONFIGURED, fields: {} }];
  }
  const causes = new Map<string, unknown>();
  const checked = lookingUp(fetchFn, opts.resolves ?? systemResolves, causes);
  const bounded = {
    ...config,
    UPSTREAM_TIMEOUT_MS: Math.min(config.UPSTREAM_TIMEOUT_MS, STARTUP_CHECK_MS),
  };
  const report = await createReadinessProbe(bounded, checked, opts.deadlines).check(
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

/** The hosts answered whatever the configuration says (http/host_check.ts). */
const ALWAYS_ANSWERED = "IP addresses, localhost and *.localhost";

/**
 * The host rule's lines (http/host_check.ts): which host names the service answers to, and a
 * `warn` line when browsers on other machines reach it (a `HOST` that is not loopback, or a
 * proxy in front, `TRUST_PROXY`) while it answers no name at all: every request by name would
 * get 421. That line names the variables to set.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "../config/service_config.ts";
 * const [hosts, warning] = hostReport(loadConfig({ HOST: "0.0.0.0", PORT: "8080" }));
 * assert.deepEqual(hosts.fields, { hosts: [], alsoAnswered: "IP addresses, localhost and *.localhost" });
 * assert.equal(warning.level, "warn");
 * assert.match(warning.msg, /http:\/\/lore\.lan:8080\/ is refused with 421: set PUBLIC_ORIGIN/);
 * const named = hostReport(loadConfig({ HOST: "0.0.0.0", ALLOWED_HOSTS: "lore.lan" }));
 * assert.deepEqual(named.map((l) => l.msg), [
 *   "answering host names lore.lan, and IP addresses, localhost and *.localhost",
 * ]);
 * ```
 */
export function hostReport(
  config: Pick<Config, "HOST" | "PORT" | "PUBLIC_ORIGIN" | "ALLOWED_HOSTS" | "TRUST_PROXY">,
): StartupLine[] {
  const hosts = namedHosts(config);
  const lines: StartupLine[] = [{
    level: "info",
    msg: hosts.length
      ? `answering host names ${hosts.join(", ")}, and ${ALWAYS_ANSWERED}`
      : `answering ${ALWAYS_ANSWERED} only`,
    fields: { hosts, alsoAnswered: ALWAYS_ANSWERED },
  }];
  const exposed = !loopbackAddress(config.HOST);
  if (hosts.length === 0 && (exposed || config.TRUST_PROXY)) {
    const port = config.PORT && config.PORT !== 80 ? `:${config.PORT}` : "";
    const example = exposed ? `http://lore.lan${port}/` : "https://lore.example.org/";
    const why = exposed
      ? `HOST=${config.HOST} takes connections from other machines`
      : "TRUST_PROXY is on (a proxy in front passes on the name visitors use)";
    lines.push({
      level: "warn",
      msg: `${why}, but no host name is answered: a request by name such as ${example} is ` +
        "refused with 421: set PUBLIC_ORIGIN to the address browsers use, or list the names " +
        "in ALLOWED_HOSTS",
      fields: { set: ["PUBLIC_ORIGIN", "ALLOWED_HOSTS"] },
    });
  }
  return lines;
}

/**
 * Writes {@linkcode hostReport}'s lines at once, then {@linkcode startupReport}'s (checked with
 * `opts`) to `log`; a failure of the check itself is logged too, never thrown (it runs beside a
 * service that is already listening).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "../config/service_config.ts";
 * import { jsonLogger } from "../http/log.ts";
 * const lines: string[] = [];
 * await logStartupReport(jsonLogger("info", (l) => lines.push(l)), loadConfig({}), fetch);
 * assert.match(JSON.parse(lines[0]).msg, /^answering IP addresses, localhost/);
 * assert.equal(JSON.parse(lines[1]).level, "warn"); // no backend configured
 * ```
 */
export async function logStartupReport(
  log: Logger,
  config: Config,
  fetchFn: typeof fetch,
  opts: StartupCheckOptions = {},
): Promise<void> {
  // at once: the host lines need no backend
  for (const l of hostReport(config)) log.log(l.level, l.msg, l.fields);
  try {
    for (const l of await startupReport(config, fetchFn, opts)) log.log(l.level, l.msg, l.fields);
  } catch (e) {
    log.log("warn", "start-up check failed", { error: e instanceof Error ? e.name : "unknown" });
  }
}
