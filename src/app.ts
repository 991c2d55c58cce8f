/**
 * The application: one function from `Request` to `Response`. Everything cross-cutting happens
 * here, once, around the route table: request ids, the host rule, CSRF, input validation, body
 * limits, credentials, AI routes' deadlines and kept answers, error mapping, dropping the public
 * share snapshot after a write to Core, and the request log line.
 *
 * @module
 */
import type { z } from "zod";
import { type AppState, createAppState } from "./state/app_state.ts";
import type { Config } from "./config/service_config.ts";
import { credentialIdentity } from "./credentials/identity.ts";
import { createPublicCoreSource } from "./credentials/public_core.ts";
import type { CredentialResolver, RequestCredentials } from "./credentials/request_credentials.ts";
import { createCredentialResolver } from "./credentials/resolver.ts";
import {
  bodyReading,
  checkDeclaredLength,
  readLimitedText,
  requireMediaType,
  requireUtf8,
} from "./http/body.ts";
import { createLogger, requestPath } from "./http/access_log.ts";
import { corsPolicy } from "./http/cors.ts";
import { checkCrossSite, type OriginPolicy } from "./http/csrf.ts";
import { bodySlots } from "./http/body_slots.ts";
import { ApiError, errorResponse, type FieldIssue, invalidRequest } from "./http/errors.ts";
import type { Logger } from "./http/log.ts";
import { hostRule } from "./http/host_check.ts";
import { requestIdFor } from "./http/request_id.ts";
import { requestUrl } from "./http/request_url.ts";
import { clientAddress, type ClientInfo, clientKey } from "./http/client_address.ts";
import {
  compileRoutes,
  type Ctx,
  matchRoute,
  type PublicCtx,
  type Route,
  type SessionCtx,
  textBodyTypes,
} from "./api/router.ts";
import { allRoutes } from "./routes/index.ts";
import { invalidatePublicShare } from "./share/public_snapshot.ts";
import { createCoreClient } from "./upstream/core.ts";
import { createParserClient } from "./upstream/parser.ts";
import type { AiWork } from "./upstream/ai_calls.ts";
import { ClientAbortError, type UpstreamFailure } from "./upstream/fetch.ts";
import { errorPageResponse } from "./site/error_page.ts";
import { sharedHttp1Client } from "./upstream/http1/client.ts";
import { answerAiRoute } from "./pipeline/ai_route.ts";
import type { ResponseCheck } from "./pipeline/response_check.ts";
import { jsonAnswerPaths } from "./api/route_responses.ts";
import { type Deadlines, sharedDeadlines } from "./util/deadlines.ts";

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

/** What the server knows of a request besides the request itself. */
export interface RequestInfo extends ClientInfo {
  /**
   * The request came off a connection (`Deno.serve`), which makes up a host for a request that
   * sent none: such a request must carry its own `Host` (see http/request_url.ts). A request
   * made in the process (tests) leaves its host to its URL.
   */
  served?: boolean;
}

/** A built application. */
export interface App {
  handle(req: Request, info?: RequestInfo): Promise<Response>;
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
  const combinedLog = config.LOG_FORMAT === "combined";
  const credentials = deps.credentials ??
    createCredentialResolver({ config, fetch: fetchFn, log, now: deps.now, deadlines });
  const publicCoreSource = createPublicCoreSource({ config, fetch: fetchFn, log, now: deps.now });
  const routes = [...allRoutes, ...(deps.routes ?? [])];
  const state = createAppState(config, deps.now, log, fetchFn, deadlines);
  const table = compileRoutes(routes);
  const cors = corsPolicy(config.CORS_ORIGINS);
  const bodies = bodySlots({
    total: config.MAX_BODIES_IN_FLIGHT,
    perClient: config.MAX_BODIES_PER_CLIENT,
  });
  const hosts = hostRule(config);
  const origins: OriginPolicy = {
    trustProxy: config.TRUST_PROXY,
    publicOrigin: config.PUBLIC_ORIGIN,
    allowed: cors?.allows,
  };
  // outside /api/, unknown paths and methods answer the site's HTML page, except where health
  // checkers (JSON readers) call; the documented answers follow the same rule
  const answersJson = jsonAnswerPaths(routes);

  async function handle(req: Request, info: RequestInfo = {}): Promise<Response> {
    const started = performance.now();
    const requestId = requestIdFor(req);
    const timing = {
      upstreamMs: 0,
      upstreamCalls: 0,
      failedUpstream: "",
      reason: undefined as UpstreamFailure | undefined,
    };
    let pattern = "(unmatched)";
    let res: Response;
    const meter: UpstreamMeter = {
      onTiming(ms) {
        timing.upstreamMs += ms;
        timing.upstreamCalls++;
      },
      onFailure(service, reason) {
        // the first failure is the one the answer is about; later ones follow from it
        if (timing.reason) return;
        timing.reason = reason;
        timing.failedUpstream = service.toLowerCase();
      },
    };
    let pageErrors = false;
    let creds: RequestCredentials | undefined;
    let wroteCore = false;
    let matched: Route | undefined;
    let bodyDone: (() => void) | undefined;
    try {
      // a malformed or missing Host or a malformed target is a 400 like any bad input
      const url = requestUrl(req, info.served);
      // a host this service does not answer to is refused before any work: no route, no
      // credentials, no zero-login session, no backend call (http/host_check.ts)
      const host = hosts.check(req, url);
      if (!host.ok) {
        // a name refused (421) gets the site's page off the API; an unreadable X-Forwarded-Host
        // (400), like an unreadable Host, the JSON error on every path
        pageErrors = host.error.status === 421 && !answersJson(url.pathname);
        log.log("info", "host refused", { requestId, host: host.host });
        throw host.error;
      }
      const match = matchRoute(table, req.method, url.pathname);
      if (match.kind !== "found") {
        pageErrors = !answersJson(url.pathname);
        const allow = match.kind === "method" ? match.allow : [];
        const preflight = cors?.preflight(req, allow);
        if (!preflight) throw unmatched(allow);
        res = preflight;
      } else {
        const { route } = match;
        pattern = route.path;
        matched = route;
        checkCrossSite(req, url, route.access === "public", origins);
        // a body in progress holds a slot (http/body_slots.ts): JSON and text until read, a
        // streamed one until its handler is done
        if (route.body) bodyDone = bodies.enter(clientKey(req, info, config.TRUST_PROXY));
        // only a body needs awaiting: a route without one takes no extra turn of the event loop
        const input = route.body
          ? await readInput(route, match.params, req, url, requestId)
          : readParamsAndQuery(route, match.params, url);
        if (route.body?.kind !== "stream") bodyDone?.();
        const base = publicContext(req, url, requestId, input, meter, info);
        if (route.access === "public") {
          res = await route.handler(base);
        } else {
          // only routes that declare credentials resolve them: a public route never mints a
          // zero-login session, reads a cookie or sets one
          creds = credentials.forRequest(req, meter);
          const session = sessionContext(base, creds, meter);
          if (route.access === "session") {
            res = await route.handler(session);
          } else {
            const c = creds; // a `let` loses its narrowing inside closures
            const inWork = (work?: AiWork) =>
              privateContext(session, c, meter, work, () => wroteCore = true);
            const ai = route.ai;
            const parserIdentity = async () => credentialIdentity(await c.parser());
            res = ai
              ? await answerAiRoute(
                state.aiCalls,
                withLazySignal({ ...inWork(), parserIdentity }),
                ai,
                (work) => route.handler(inWork(work)),
              )
              : await route.handler(inWork());
          }
        }
        if (req.method === "HEAD") res = await headOf(res);
      }
    } catch (e) {
      if (e instanceof ClientAbortError) {
        res = new Response(null, { status: 499 });
      } else {
        if (!(e instanceof ApiError)) {
          log.log("error", "unhandled error", {
            requestId,
            route: pattern,
            error: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
          });
        }
        await creds?.onError(e).catch(() => {});
        res = pageErrors ? pageError(e, requestId) : errorResponse(e, requestId);
      }
    } finally {
      bodyDone?.();
    }
    // Anything written to Core may change what visitors see (a root moved, a note hidden): they
    // must see it at once, also after a write that failed or was left half done.
    if (wroteCore) invalidatePublicShare(state.publicShare);
    if (deps.checkResponse && matched) {
      res = await deps.checkResponse(matched, req, res, requestId);
    }
    res = withCommonHeaders(res, requestId);
    for (const cookie of creds?.setCookies ?? []) res.headers.append("set-cookie", cookie);
    // a preflight carries its own headers; any other OPTIONS gets none
    if (cors && req.method !== "OPTIONS") cors.decorate(req, res.headers);
    const line: Record<string, unknown> = {
      requestId,
      method: req.method,
      route: pattern,
      status: res.status,
      ms: round(performance.now() - started),
      upstreamMs: round(timing.upstreamMs),
      upstreamCalls: timing.upstreamCalls,
      client: clientAddress(req, info, config.TRUST_PROXY),
    };
    if (timing.reason) {
      line.reason = timing.reason;
      line.upstream = timing.failedUpstream;
    }
    if (combinedLog) {
      line.path = requestPath(req);
      line.bytes = res.headers.get("content-length") ?? undefined;
      line.userAgent = req.headers.get("user-agent") ?? undefined;
    }
    log.log(res.status >= 500 ? "warn" : "info", "request", line);
    return res;
  }

  /** The request's validated params, query and body. */
  async function readInput(
    route: Route,
    rawParams: Record<string, string | undefined>,
    req: Request,
    url: URL,
    requestId: string,
  ): Promise<{ params: unknown; query: unknown; body: unknown }> {
    const { params, query } = readParamsAndQuery(route, rawParams, url);
    let body: unknown = undefined;
    if (route.body?.kind === "json") {
      requireMediaType(req, ["application/json"]);
      const text = await readLimitedText(
        req,
        route.body.maxBytes ?? config.MAX_JSON_BYTES,
        bodyReading({ config, log, requestId, url, deadlines }),
      );
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch {
        throw invalidRequest("The request body is not valid JSON");
      }
      body = validate(route.body.schema, raw, "body");
    } else if (route.body?.kind === "text") {
      requireMediaType(req, textBodyTypes(route.body));
      requireUtf8(req);
      body = await readLimitedText(
        req,
        config.MAX_CONTENT_BYTES,
        bodyReading({ config, log, requestId, url, deadlines }),
      );
    } else if (route.body?.kind === "stream") {
      checkDeclaredLength(req, config.MAX_UPLOAD_BYTES);
    }
    return { params, query, body };
  }

  /** The request's validated path params and query. */
  function readParamsAndQuery(
    route: Route,
    rawParams: Record<string, string | undefined>,
    url: URL,
  ): { params: unknown; query: unknown; body: undefined } {
    const params = route.params ? validate(route.params, rawParams, "path") : rawParams;
    const query = route.query
      ? validate(route.query, Object.fromEntries(url.searchParams), "query")
      : {};
    return { params, query, body: undefined };
  }

  /** Upstream deps following `signal` (the request's, AI work's, or none when detached). */
  const upstream = (
    signal: AbortSignal | undefined,
    meter: UpstreamMeter,
    timeoutMs = config.UPSTREAM_TIMEOUT_MS,
  ) => ({
    fetch: fetchFn,
    timeoutMs,
    maxBodyBytes: config.MAX_UPSTREAM_BODY_BYTES,
    signal,
    onTiming: meter.onTiming,
    onFailure: meter.onFailure,
    deadlines,
  });

  /** What every route gets: the request, its input, and server-side capabilities only. */
  function publicContext(
    req: Request,
    url: URL,
    requestId: string,
    input: { params: unknown; query: unknown; body: unknown },
    meter: UpstreamMeter,
    info: ClientInfo,
  ): PublicCtx {
    return withLazySignal({
      req,
      url,
      requestId,
      ...input,
      config,
      log,
      state,
      routes,
      concurrency: config.UPSTREAM_CONCURRENCY,
      deadlines,
      publicCore: async (opts) => {
        const c = await publicCoreSource.credentials(upstream(undefined, meter));
        return {
          core: createCoreClient(c, upstream(opts?.detached ? undefined : req.signal, meter)),
          identity: c.identity,
        };
      },
      clientKey: () => clientKey(req, info, config.TRUST_PROXY),
    });
  }

  /** A public context plus the browser session's cookies (never a zero-login session). */
  function sessionContext(
    base: PublicCtx,
    creds: RequestCredentials,
    meter: UpstreamMeter,
  ): SessionCtx {
    const detachedDeps = () => upstream(undefined, meter);
    return withLazySignal({
      ...base, // own properties only: the lazy `signal` is inherited, not read
      credentials: {
        session: creds.session,
        startSession: creds.startSession,
        endSession: creds.endSession,
        parserAllowed: creds.parserAllowed,
        coreAllowed: creds.coreAllowed,
      },
      sessionParser: async (opts) => {
        const s = await creds.session();
        return s &&
          createParserClient(
            { baseUrl: s.parserUrl, token: s.parserToken },
            opts?.detached ? detachedDeps() : upstream(base.req.signal, meter),
          );
      },
      parserAt: (baseUrl) => createParserClient({ baseUrl }, detachedDeps()),
      coreAt: (baseUrl) => createCoreClient({ baseUrl, token: "" }, detachedDeps()),
    });
  }

  /**
   * The caller's credentials, for the request itself or for AI work (`Route.ai`): work runs
   * detached from the client, so its backend calls follow the work's signal instead.
   */
  function privateContext(
    session: SessionCtx,
    creds: RequestCredentials,
    meter: UpstreamMeter,
    work: AiWork | undefined,
    onCoreWrite: () => void,
  ): Ctx {
    const deps = (detached: boolean, timeoutMs?: number) =>
      upstream(work?.signal ?? (detached ? undefined : session.req.signal), meter, timeoutMs);
    return withLazySignal(
      {
        ...session,
        credentials: creds,
        loreRootId: async () => (await state.portal.get()).loreRootNoteId,
        core: async (opts) =>
          createCoreClient(await creds.core(), {
            ...deps(opts?.detached ?? false),
            fetch: watchWrites(fetchFn, onCoreWrite),
          }),
        coreIdentity: async () => credentialIdentity(await creds.core()),
        parser: async (opts = {}) =>
          createParserClient(
            await creds.parser(),
            deps(
              opts.detached ?? false,
              opts.ai ? config.AI_TOTAL_TIMEOUT_MS : Math.min(
                opts.timeoutMs ?? config.UPSTREAM_TIMEOUT_MS,
                config.UPSTREAM_TIMEOUT_MS,
              ),
            ),
          ),
        progress: work?.progress ?? (() => {}),
      },
      work?.signal,
    );
  }

  return { handle, routes, state, log, fetch: fetchFn };
}

/**
 * Parses input with a zod schema; failures become 400 with one entry per failing field.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 * const query = z.object({ q: z.string().min(2) });
 * assert.deepEqual(validate(query, { q: "ash" }, "query"), { q: "ash" });
 * assert.throws(() => validate(query, { q: "a" }, "query"), {
 *   status: 400,
 *   code: "INVALID_REQUEST",
 *   message: /^Invalid query: query\.q /, // one entry per failing field, also in `details.fields`
 * });
 * ```
 */
export function validate<S extends z.ZodType>(
  schema: S,
  input: unknown,
  where: string,
): z.output<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const fields: FieldIssue[] = r.error.issues.map((i) => ({
    path: [where, ...i.path.map(String)].join("."),
    message: i.message,
  }));
  throw invalidRequest(
    `Invalid ${where}: ${fields.map((f) => `${f.path} ${f.message}`).join("; ")}`,
    fields,
  );
}

/** Where a request's backend calls report their time and failures (the request log line). */
interface UpstreamMeter {
  onTiming(ms: number): void;
  onFailure(service: string, reason: UpstreamFailure): void;
}

/** 404 for a path no route has, 405 (with `Allow`) for a method the path does not have. */
function unmatched(allow: readonly string[]): ApiError {
  if (allow.length === 0) return new ApiError(404, "NOT_FOUND", "No such route");
  return new ApiError(405, "METHOD_NOT_ALLOWED", `Use ${allow.join(", ")}`, undefined, {
    allow: allow.join(", "),
  });
}

/** The site's HTML error page for an unmatched path, keeping a 405's `Allow`. */
function pageError(e: unknown, requestId: string): Response {
  const res = errorPageResponse(e, requestId);
  const allow = e instanceof ApiError && e.headers && new Headers(e.headers).get("allow");
  if (allow) res.headers.set("allow", allow);
  return res;
}

/**
 * The answer to HEAD: the GET's status and headers without its body. A streamed body is
 * cancelled (an upstream body must be released, not left to GC, and the server would read it to
 * the end); the server then sends no `Content-Length` unless the GET's answer declared one,
 * where a bodiless answer would claim 0.
 */
async function headOf(res: Response): Promise<Response> {
  await res.body?.cancel();
  if (res.body === null || res.headers.has("content-length") || NULL_BODY.has(res.status)) {
    return new Response(null, res);
  }
  return new Response(new ReadableStream({ start: (c) => c.close() }), res);
}

/** Statuses that cannot carry a body at all. */
const NULL_BODY: ReadonlySet<number> = new Set([101, 103, 204, 205, 304]);

const SAFE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);

/** `fetch` that calls `onWrite` before sending any request that may change upstream state. */
function watchWrites(fetchFn: typeof fetch, onWrite: () => void): typeof fetch {
  return (input, init) => {
    if (!SAFE_METHODS.has((init?.method ?? "GET").toUpperCase())) onWrite();
    return fetchFn(input, init);
  };
}

function withCommonHeaders(res: Response, requestId: string): Response {
  let out = res;
  try {
    out.headers.set("x-request-id", requestId);
  } catch {
    // upstream responses have immutable headers: re-wrap without copying the body
    out = new Response(res.body, res);
    out.headers.set("x-request-id", requestId);
  }
  if (!out.headers.has("x-content-type-options")) {
    out.headers.set("x-content-type-options", "nosniff");
  }
  if (!out.headers.has("referrer-policy")) out.headers.set("referrer-policy", "no-referrer");
  return out;
}

const WORK_SIGNAL = Symbol("work signal");

/**
 * Gives contexts their `signal`, read only when a handler uses it: Deno builds a request's
 * signal on first read, which costs a route that never calls a backend a large share of its
 * time. A prototype getter, because a getter in each context's own literal is slow in V8 too.
 */
const LAZY_SIGNAL = {
  get signal(): AbortSignal {
    const ctx = this as unknown as { req: Request; [WORK_SIGNAL]?: AbortSignal };
    return ctx[WORK_SIGNAL] ?? ctx.req.signal;
  },
};

/** `fields` plus `signal`: `workSignal` when given (AI work), else the request's, lazily. */
function withLazySignal<T extends { req: Request; signal: AbortSignal }>(
  fields: Omit<T, "signal">,
  workSignal?: AbortSignal,
): T {
  const ctx = Object.assign(Object.create(LAZY_SIGNAL), fields);
  if (workSignal) ctx[WORK_SIGNAL] = workSignal;
  return ctx;
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
