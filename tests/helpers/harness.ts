/**
 * Test harness: the real app served over HTTP on a free port, wired to a fresh Core double, with
 * every log line captured so tests can assert what was (and was not) logged.
 *
 * @module
 */
import { loadConfig } from "../../src/config/service_config.ts";
import { createLogger } from "../../src/http/access_log.ts";
import { responseCheck } from "../../src/pipeline/response_check.ts";
import { type RunningServer, startServer } from "../../src/server.ts";
import { type CoreSim, type CoreSimOptions, startCoreSim } from "../../sims/core.ts";
import { type ParserSim, type ParserSimOptions, startParserSim } from "../../sims/parser.ts";
import type { Deadlines } from "../../src/util/deadlines.ts";

/**
 * A base URL where nothing listens, so a connection is refused: a port below those `port: 0`
 * hands out, so no server another test starts meanwhile can take it (as one could a port a test
 * opened and closed again).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(new URL(REFUSED_URL).port, "9");
 * ```
 */
export const REFUSED_URL = "http://127.0.0.1:9";

/** The session secret test services use (so tests can seal cookies themselves). */
export const TEST_SESSION_SECRET = "test-session-secret-0123456789abcdefghijklmnop";

/** A running service plus its Core double. */
export interface Harness {
  /** Base URL of the service, e.g. `http://127.0.0.1:41234`. */
  url: string;
  server: RunningServer;
  core: CoreSim;
  /** The Parser double, when the harness was started with `parser`. */
  parser?: ParserSim;
  /** The Parser session token given to the service (`parserSession`). */
  parserToken?: string;
  /** Every JSON log line the service wrote. */
  logs: string[];
  /** With `LOG_FORMAT=combined`: the access log's lines (the request lines). */
  accessLines: string[];
  /**
   * Answers that broke their route's declared responses (status or schema), one line each; the
   * client got a 500 `RESPONSE_SCHEMA` instead, and `close()` fails the test.
   */
  responseProblems: string[];
  /** Calls the service; `json` sets the body and `content-type: application/json`. */
  request(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  /** Calls the service and parses a JSON answer. */
  requestJson<T = Record<string, unknown>>(
    path: string,
    init?: RequestInit & { json?: unknown },
  ): Promise<{ status: number; headers: Headers; body: T }>;
  /**
   * Calls the Core double's ETAPI directly (test setup and checks through the real wire format);
   * these calls are removed from `h.core.requests`.
   */
  etapi<T = unknown>(
    path: string,
    init?: { method?: string; json?: unknown; text?: string },
  ): Promise<T>;
  close(): Promise<void>;
}

/** Options: extra env for the service, Core double options, or no Core credentials at all. */
export interface HarnessOptions {
  env?: Record<string, string>;
  core?: CoreSimOptions;
  /** Do not give the service Core credentials (NOT_CONFIGURED tests). */
  noCoreCredentials?: boolean;
  /** Point the service at this Core URL instead of the double (e.g. a closed port). */
  coreUrlOverride?: string;
  /**
   * Start the Parser double too (its default owner's Core integration points at the Core
   * double) and configure the service with `PARSER_URL` and `PARSER_INTERNAL_SECRET`. Core env
   * credentials stay set unless `noCoreCredentials` is given.
   */
  parser?: boolean | ParserSimOptions;
  /**
   * With `parser`: give the service the default owner's Parser session through `PARSER_TOKEN`
   * (the env fallback), so Parser routes work without a browser login.
   */
  parserSession?: boolean;
  /**
   * The clock of every deadline in the service and of the doubles' delays, keepalives and paces
   * (e.g. a `manualDeadlines()` the test advances); default the runtime's timers.
   */
  deadlines?: Deadlines;
  /** The service's wall clock (cache ages, cooldowns, sessions); default `Date.now`. */
  now?: () => number;
}

/**
 * Starts a Core double and the service wired to it via env credentials, with the response check
 * on: every answer of a route that declares its responses is held to them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * // Declared, not run here: it starts the service and a Core double.
 * async function loreListStatus(): Promise<void> {
 *   const h = await startHarness({ env: { LOG_LEVEL: "info" } });
 *   try {
 *     assert.equal((await h.requestJson("/api/lore")).status, 200);
 *   } finally {
 *     await h.close();
 *   }
 * }
 * ```
 */
export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const { deadlines } = opts;
  const core = await startCoreSim({ deadlines, ...opts.core });
  const parser = opts.parser
    ? await startParserSim({
      core: { url: core.url, token: core.token },
      deadlines,
      ...(typeof opts.parser === "object" ? opts.parser : {}),
    })
    : undefined;
  const parserToken = parser && opts.parserSession ? parser.ownerToken() : undefined;
  const dataDir = await Deno.makeTempDir({ prefix: "lpp-test-" });
  const env: Record<string, string> = {
    HOST: "127.0.0.1",
    PORT: "0",
    LOG_LEVEL: "debug",
    UPSTREAM_TIMEOUT_MS: "60000",
    SHUTDOWN_GRACE_MS: "200",
    SESSION_SECRET: TEST_SESSION_SECRET,
    DATA_DIR: dataDir,
    ...(opts.noCoreCredentials
      ? { CORE_ALLOWED_URLS: core.url }
      : { CORE_URL: opts.coreUrlOverride ?? core.url, CORE_TOKEN: core.token }),
    ...(parser
      ? { PARSER_URL: parser.url, PARSER_INTERNAL_SECRET: parser.internalSecret ?? "" }
      : {}),
    ...(parserToken ? { PARSER_TOKEN: parserToken } : {}),
    ...opts.env,
  };
  const config = loadConfig(env);
  const logs: string[] = [];
  const accessLines: string[] = [];
  const responseProblems: string[] = [];
  const secrets = [config.CORE_TOKEN, config.PARSER_TOKEN].filter((s): s is string => !!s);
  const server = await startServer({
    config,
    deadlines,
    now: opts.now,
    log: createLogger({ level: "debug", format: config.LOG_FORMAT }, secrets, {
      out: () => (l) => (config.LOG_FORMAT === "combined" ? accessLines : logs).push(l),
      err: () => (l) => logs.push(l),
    }),
    checkResponse: responseCheck((p) => responseProblems.push(p)),
  });
  const request = (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const { json, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (json !== undefined) {
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
      rest.body = JSON.stringify(json);
    }
    return fetch(server.url + path, { ...rest, headers });
  };
  return {
    url: server.url,
    server,
    core,
    parser,
    parserToken,
    logs,
    accessLines,
    responseProblems,
    request,
    async requestJson<T>(path: string, init?: RequestInit & { json?: unknown }) {
      const res = await request(path, init);
      const text = await res.text();
      let body: T;
      try {
        body = JSON.parse(text) as T;
      } catch {
        throw new Error(
          `expected JSON from ${path} (status ${res.status}), got: ${text.slice(0, 200)}`,
        );
      }
      return { status: res.status, headers: res.headers, body };
    },
    async etapi<T>(path: string, init: { method?: string; json?: unknown; text?: string } = {}) {
      const before = core.requests.length;
      const headers: Record<string, string> = { authorization: core.token };
      let body: string | undefined;
      if (init.json !== undefined) {
        headers["content-type"] = "application/json";
        body = JSON.stringify(init.json);
      } else if (init.text !== undefined) {
        headers["content-type"] = "text/plain";
        body = init.text;
      }
      const res = await fetch(`${core.url}/etapi${path}`, {
        method: init.method ?? "GET",
        headers,
        body,
      });
      const text = await res.text();
      core.requests.splice(before);
      if (!res.ok) throw new Error(`etapi ${path} → ${res.status}: ${text}`);
      return (text ? JSON.parse(text) : undefined) as T;
    },
    async close() {
      await server.stop();
      await parser?.close();
      await core.close();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
      if (responseProblems.length) {
        throw new Error(
          `answers that break their route's declared responses:\n${responseProblems.join("\n")}`,
        );
      }
    },
  };
}

/**
 * Runs `fn` with a fresh harness and always closes it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * // Declared, not run here: the test it registers starts the service and a Core double.
 * function registerLoreListTest(): void {
 *   Deno.test("lists lore", () =>
 *     withHarness(async (h) => {
 *       assert.equal((await h.requestJson("/api/lore")).status, 200);
 *     }));
 * }
 * ```
 */
export async function withHarness(
  fn: (h: Harness) => Promise<void>,
  opts?: HarnessOptions,
): Promise<void> {
  const h = await startHarness(opts);
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}

/**
 * Requests the double received since the last `clearRequests()`, as "METHOD /path?search" lines,
 * ignoring share-API and app-info noise when asked.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * // Declared, not run here: `h` is a running harness.
 * async function noteReadCallsCoreOnce(h: Harness): Promise<void> {
 *   h.core.clearRequests();
 *   await (await h.request("/api/lore/x")).body?.cancel();
 *   assert.deepEqual(upstreamCalls(h), ["GET /etapi/notes/x"]);
 * }
 * ```
 */
export function upstreamCalls(h: Harness): string[] {
  return h.core.requests.map((r) => `${r.method} ${r.path}${r.search}`);
}

/**
 * Asserts that nothing secret or internal appears in `text`: the Core URL, host:port, or token.
 *
 * @example
 * ```ts
 * // Declared, not run here: `h` is a running harness.
 * async function errorsLeakNothing(h: Harness): Promise<void> {
 *   const res = await h.request("/api/lore/missing");
 *   assertNoSecrets(h, await res.text()); // throws when the Core URL or token shows
 * }
 * ```
 */
export function assertNoSecrets(h: Harness, text: string): void {
  const host = new URL(h.core.url).host;
  const parser = h.parser
    ? [h.parser.url, new URL(h.parser.url).host, h.parser.internalSecret, h.parserToken]
    : [];
  for (const secret of [h.core.url, host, h.core.token, h.core.token.split("_")[1], ...parser]) {
    if (secret && text.includes(secret)) {
      throw new Error(
        `leaked ${/^http|:\d+$/.test(secret) ? "internal address" : "a secret"} in: ${
          text.slice(0, 300)
        }`,
      );
    }
  }
}
