/**
 * The application: one function from `Request` to `Response`. Everything cross-cutting happens
 * here, once, around the route table: request ids, CSRF, input validation, body limits,
 * credentials, AI routes' deadlines and kept answers, error mapping, dropping the public share
 * snapshot after a write to Core, and the request log line.
 *
 * @module
 */
import type { z } from "zod";
import { type AppState, createAppState } from "./app_state.ts";
import type { Config } from "./config.ts";
import {
  createCredentialResolver,
  createPublicCoreSource,
  credentialIdentity,
  type CredentialResolver,
  type RequestCredentials,
} from "./credentials.ts";
import {
  checkDeclaredLength,
  readLimitedText,
  requireMediaType,
  requireUtf8,
} from "./http/body.ts";
import { checkCrossSite } from "./http/csrf.ts";
import { ApiError, errorResponse, type FieldIssue, invalidRequest } from "./http/errors.ts";
import { jsonLogger, type Logger } from "./http/log.ts";
import { requestIdFor } from "./http/request_id.ts";
import { requestUrl } from "./http/request_url.ts";
import { type ClientInfo, clientKey } from "./session/rate_limit.ts";
import { compileRoutes, type Ctx, matchRoute, type Route } from "./router.ts";
import { allRoutes } from "./routes/index.ts";
import { invalidatePublicShare } from "./share/public_snapshot.ts";
import { type CoreClient, createCoreClient } from "./upstream/core.ts";
import { createParserClient, type ParserClient } from "./upstream/parser.ts";
import type { AiWork } from "./upstream/ai_calls.ts";
import { ClientAbortError } from "./upstream/fetch.ts";
import { answerAiRoute } from "./http/ai_route.ts";

/** What an app needs from the outside world; everything but `config` has a default. */
export interface AppDeps {
  config: Config;
  fetch?: typeof fetch;
  log?: Logger;
  credentials?: CredentialResolver;
  now?: () => number;
  /** Extra routes (tests); appended after the built-in table. */
  routes?: readonly Route[];
}

/** A built application. */
export interface App {
  handle(req: Request, info?: ClientInfo): Promise<Response>;
  routes: readonly Route[];
  state: AppState;
  log: Logger;
}

/**
 * Builds the app from its dependencies.
 *
 * @example
 * ```ts
 * const app = createApp({ config: loadConfig(Deno.env.toObject()) });
 * Deno.serve((req) => app.handle(req));
 * ```
 */
export function createApp(deps: AppDeps): App {
  const { config } = deps;
  const fetchFn = deps.fetch ?? globalThis.fetch;
  const secrets = [config.CORE_TOKEN, config.PUBLIC_CORE_TOKEN, config.PARSER_TOKEN]
    .filter((s): s is string => !!s);
  const log = deps.log ?? jsonLogger(config.LOG_LEVEL, undefined, secrets);
  const credentials = deps.credentials ??
    createCredentialResolver({ config, fetch: fetchFn, log, now: deps.now });
  const publicCoreSource = createPublicCoreSource({ config, fetch: fetchFn, log, now: deps.now });
  const routes = [...allRoutes, ...(deps.routes ?? [])];
  const state = createAppState(config, routes, deps.now, log);
  const table = compileRoutes(routes);

  async function handle(req: Request, info: ClientInfo = {}): Promise<Response> {
    const started = performance.now();
    const requestId = requestIdFor(req);
    const timing = { upstreamMs: 0, upstreamCalls: 0 };
    let pattern = "(unmatched)";
    let res: Response;
    const onTiming = (ms: number) => {
      timing.upstreamMs += ms;
      timing.upstreamCalls++;
    };
    let creds: RequestCredentials | undefined;
    let wroteCore = false;
    try {
      const url = requestUrl(req); // a malformed Host or target is a 400 like any bad input
      const match = matchRoute(table, req.method, url.pathname);
      if (match.kind === "none") throw new ApiError(404, "NOT_FOUND", "No such route");
      if (match.kind === "method") {
        throw new ApiError(405, "METHOD_NOT_ALLOWED", `Use ${match.allow.join(", ")}`, undefined, {
          allow: match.allow.join(", "),
        });
      }
      const { route } = match;
      pattern = route.path;
      checkCrossSite(req, url, route.access, config.TRUST_PROXY);
      creds = credentials.forRequest(req, { onTiming });
      const { ctx, inWork } = await buildContext(
        route,
        match.params,
        req,
        url,
        requestId,
        creds,
        onTiming,
        info,
        () => wroteCore = true,
      );
      const ai = route.ai;
      res = ai
        ? await answerAiRoute(ctx, ai, (work) => route.handler(inWork(work)))
        : await route.handler(ctx);
      if (req.method === "HEAD") {
        await res.body?.cancel(); // a streamed upstream body must be released, not left to GC
        res = new Response(null, res);
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
        res = errorResponse(e, requestId);
      }
    }
    // Anything written to Core may change what visitors see (a root moved, a note hidden): they
    // must see it at once, also after a write that failed or was left half done.
    if (wroteCore) invalidatePublicShare({ state });
    res = withCommonHeaders(res, requestId);
    for (const cookie of creds?.setCookies ?? []) res.headers.append("set-cookie", cookie);
    log.log(res.status >= 500 ? "warn" : "info", "request", {
      requestId,
      method: req.method,
      route: pattern,
      status: res.status,
      ms: round(performance.now() - started),
      upstreamMs: round(timing.upstreamMs),
      upstreamCalls: timing.upstreamCalls,
    });
    return res;
  }

  async function buildContext(
    route: Route,
    rawParams: Record<string, string | undefined>,
    req: Request,
    url: URL,
    requestId: string,
    creds: RequestCredentials,
    onTiming: (ms: number) => void,
    info: ClientInfo,
    onCoreWrite: () => void,
  ): Promise<{ ctx: Ctx; inWork(work: AiWork): Ctx }> {
    const params = route.params ? validate(route.params, rawParams, "path") : rawParams;
    const query = route.query
      ? validate(route.query, Object.fromEntries(url.searchParams), "query")
      : {};
    let body: unknown = undefined;
    if (route.body?.kind === "json") {
      requireMediaType(req, ["application/json"]);
      const text = await readLimitedText(
        req,
        route.body.maxBytes ?? config.MAX_JSON_BYTES,
        config.CLIENT_BODY_TIMEOUT_MS,
      );
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch {
        throw invalidRequest("The request body is not valid JSON");
      }
      body = validate(route.body.schema, raw, "body");
    } else if (route.body?.kind === "text") {
      requireMediaType(req, ["text/plain"]);
      requireUtf8(req);
      body = await readLimitedText(req, config.MAX_CONTENT_BYTES, config.CLIENT_BODY_TIMEOUT_MS);
    } else if (route.body?.kind === "stream") {
      checkDeclaredLength(req, config.MAX_UPLOAD_BYTES);
    }

    /**
     * The context, for the request itself or for AI work (`Route.ai`): work runs detached from
     * the client, so its backend calls follow the work's signal instead of the request's.
     */
    const contextFor = (work?: AiWork): Ctx => {
      const upstream = (detached: boolean, timeoutMs = config.UPSTREAM_TIMEOUT_MS) => ({
        fetch: fetchFn,
        timeoutMs,
        maxBodyBytes: config.MAX_UPSTREAM_BODY_BYTES,
        signal: work?.signal ?? (detached ? undefined : req.signal),
        onTiming,
      });
      const coreClient = async (detached: boolean): Promise<CoreClient> =>
        createCoreClient(await creds.core(), {
          ...upstream(detached),
          fetch: watchWrites(fetchFn, onCoreWrite),
        });
      const parserClient = async (
        opts: { detached?: boolean; timeoutMs?: number; ai?: boolean } = {},
      ): Promise<ParserClient> =>
        createParserClient(
          await creds.parser(),
          upstream(
            opts.detached ?? false,
            opts.ai
              ? config.AI_TOTAL_TIMEOUT_MS
              : Math.min(opts.timeoutMs ?? config.UPSTREAM_TIMEOUT_MS, config.UPSTREAM_TIMEOUT_MS),
          ),
        );

      return {
        req,
        url,
        requestId,
        signal: work?.signal ?? req.signal,
        params,
        query,
        body,
        config,
        log,
        state,
        concurrency: config.UPSTREAM_CONCURRENCY,
        loreRootId: async () => (await state.portal.get()).loreRootNoteId,
        core: (opts) => coreClient(opts?.detached ?? false),
        coreIdentity: async () => credentialIdentity(await creds.core()),
        publicCore: async (opts) => {
          const c = await publicCoreSource.credentials(upstream(true));
          return {
            core: createCoreClient(c, upstream(opts?.detached ?? false)),
            identity: c.identity,
          };
        },
        parser: parserClient,
        progress: work?.progress ?? (() => {}),
        parserAt: (baseUrl) => createParserClient({ baseUrl }, upstream(true)),
        coreAt: (baseUrl) => createCoreClient({ baseUrl, token: "" }, upstream(true)),
        credentials: creds,
        clientKey: () => clientKey(req, info, config.TRUST_PROXY),
      };
    };
    return { ctx: contextFor(), inWork: contextFor };
  }

  return { handle, routes, state, log };
}

/**
 * Parses input with a zod schema; failures become 400 with one entry per failing field.
 *
 * @example
 * ```ts
 * const q = validate(z.object({ q: z.string() }), { q: "x" }, "query");
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

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
