/**
 * The application: one function from `Request` to `Response`, composed of the request
 * pipeline's phases (src/pipeline/), in the order a request meets them:
 *
 * 1. record.ts  — opens the request's record (id, timing, what later phases need);
 * 2. accept.ts  — URL, host rule, route matching (preflight, 404, 405), cross-site check,
 *    body slot;
 * 3. input.ts   — params, query and body, read and validated;
 * 4. run.ts     — credentials (non-public routes only), the context (context.ts), the
 *    handler (AI routes through ai_route.ts), HEAD;
 * 5. errors.ts  — an error on the way as the answer (499, JSON error, or the site's page);
 * 6. finish.ts  — share-cache invalidation after a Core write, the response check (tests,
 *    response_check.ts), common headers, cookies, CORS, the request log line.
 *
 * This module only builds the app's state and dependencies and puts the phases in that order.
 *
 * @module
 */
import { type AppState, createAppState } from "./state/app_state.ts";
import type { Config } from "./config/service_config.ts";
import { createPublicCoreSource } from "./credentials/public_core.ts";
import type { CredentialResolver } from "./credentials/request_credentials.ts";
import { createCredentialResolver } from "./credentials/resolver.ts";
import { createLogger } from "./http/access_log.ts";
import { corsPolicy } from "./http/cors.ts";
import type { Logger } from "./http/log.ts";
import type { Route } from "./api/router.ts";
import { allRoutes } from "./routes/index.ts";
import { sharedHttp1Client } from "./upstream/http1/client.ts";
import { type Deadlines, sharedDeadlines } from "./util/deadlines.ts";
import { openRecord } from "./pipeline/record.ts";
import { acceptor, type RequestInfo } from "./pipeline/accept.ts";
import { inputReader, readParamsAndQuery } from "./pipeline/input.ts";
import { contextBuilders } from "./pipeline/context.ts";
import { runner } from "./pipeline/run.ts";
import { errorAnswerer } from "./pipeline/errors.ts";
import { finisher } from "./pipeline/finish.ts";
import type { ResponseCheck } from "./pipeline/response_check.ts";

export type { RequestInfo } from "./pipeline/accept.ts";

/** What an app needs from the outside world; everything but `config` has a default. */
export interface AppDeps {
  config: Config;
  fetch?: typeof fetch;
  log?: Logger;
  credentials?: CredentialResolver;
  now?: () => number;
  /**
   * Where every deadline of the app is counted (backend calls, AI waits, streams); default the
   * process-wide scheduler. Tests give one on a clock they move themselves.
   */
  deadlines?: Deadlines;
  /** Extra routes (tests); appended after the built-in table. */
  routes?: readonly Route[];
  /**
   * Tests only: holds each answer of a route to its declared responses
   * (pipeline/response_check.ts). Unset in production, which then pays nothing for it.
   */
  checkResponse?: ResponseCheck;
}

/** A built application. */
export interface App {
  /** A request's answer: at once when nothing waits (a kept page), else a promise of it. */
  handle(req: Request, info?: RequestInfo): Response | Promise<Response>;
  routes: readonly Route[];
  state: AppState;
  log: Logger;
  /** How the app calls its backends (`UPSTREAM_CLIENT`), for checks that must see them alike. */
  fetch: typeof fetch;
}

/**
 * Builds the app from its dependencies.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "./config/service_config.ts";
 * import { jsonLogger } from "./http/log.ts";
 * const app = createApp({ config: loadConfig({}), log: jsonLogger("silent") });
 * const res = await app.handle(new Request("http://127.0.0.1:8080/api/no-such-route"));
 * assert.equal(res.status, 404);
 * assert.equal((await res.json()).error, "NOT_FOUND");
 * ```
 */
export function createApp(deps: AppDeps): App {
  const { config } = deps;
  const deadlines = deps.deadlines ?? sharedDeadlines;
  const fetchFn = deps.fetch ??
    (config.UPSTREAM_CLIENT === "pooled" ? sharedHttp1Client().fetch : globalThis.fetch);
  const secrets = [config.CORE_TOKEN, config.PUBLIC_CORE_TOKEN, config.PARSER_TOKEN]
    .filter((s): s is string => !!s);
  const log = deps.log ??
    createLogger({ level: config.LOG_LEVEL, format: config.LOG_FORMAT }, secrets);
  const state = createAppState(config, deps.now, log, fetchFn, deadlines);
  const credentials = deps.credentials ?? createCredentialResolver({
    config,
    fetch: fetchFn,
    log,
    now: deps.now,
    deadlines,
    store: state.store,
  });
  const publicCoreSource = createPublicCoreSource({ config, fetch: fetchFn, log, now: deps.now });
  const routes = [...allRoutes, ...(deps.routes ?? [])];
  const cors = corsPolicy(config.CORS_ORIGINS);

  const accept = acceptor({ config, log, routes, cors, bodies: state.bodies });
  const readInput = inputReader({ config, log, deadlines });
  const contexts = contextBuilders({
    config,
    log,
    state,
    routes,
    fetch: fetchFn,
    deadlines,
    publicCoreSource,
  });
  const run = runner({ credentials, contexts, aiCalls: state.aiCalls, journal: state.journal });
  const errorAnswer = errorAnswerer(log, () => state.publicShare.worldName);
  const finish = finisher({ config, log, state, cors, checkResponse: deps.checkResponse });

  /**
   * One request through the phases. Not async: a request whose route reads no body and whose
   * handler answers at once (a kept page, its 304) is answered without a promise, which the
   * server then sends on its fast path.
   */
  function handle(req: Request, info: RequestInfo = {}): Response | Promise<Response> {
    const record = openRecord(req);
    const done = (res: Response) => {
      record.bodyDone?.();
      return finish(req, info, res, record);
    };
    const failed = async (e: unknown) => done(await errorAnswer(e, record));
    let res: Response | Promise<Response>;
    try {
      const accepted = accept(req, info, record);
      if (accepted.kind === "preflight") {
        res = accepted.res;
      } else if (accepted.route.body) {
        const { url, route, params } = accepted;
        res = readInput(route, params, req, url, record.requestId).then((input) => {
          if (route.body?.kind !== "stream") record.bodyDone?.();
          return run(req, url, route, input, info, record);
        });
      } else {
        const { url, route, params } = accepted;
        const input = readParamsAndQuery(route, params, url);
        record.bodyDone?.();
        res = run(req, url, route, input, info, record);
      }
    } catch (e) {
      return failed(e);
    }
    return res instanceof Promise ? res.then(done, failed) : done(res);
  }

  return { handle, routes, state, log, fetch: fetchFn };
}
