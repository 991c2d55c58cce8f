/**
 * What a handler gets: the three contexts (`public`, `session`, `private`), how they are built,
 * and the one lazy `signal` they and what they hand on share. Every backend client a context
 * makes comes from one place ({@linkcode contextBuilders}'s `access`), so which signal a call
 * follows, its deadline and what the log line hears of it are decided once.
 *
 * The contexts name their route table only as `R`: api/router.ts's `Route` names these
 * contexts in turn, and the two modules must not import each other; router.ts binds `R`.
 *
 * @module
 */
import type { Config } from "../config/service_config.ts";
import type { Logger } from "../http/log.ts";
import { type ClientInfo, clientKey } from "../http/client_address.ts";
import { credentialIdentity } from "../credentials/identity.ts";
import type { PublicCoreSource } from "../credentials/public_core.ts";
import type { RequestCredentials } from "../credentials/request_credentials.ts";
import { lazySealKey } from "../credentials/session_cookies.ts";
import type { SealKey } from "../session/seal.ts";
import { type PublicShare, publicShare, type PublicShareDeps } from "../share/public_api.ts";
import type { PublicCoreReader } from "../share/public_snapshot.ts";
import { warmSite } from "../site/warm.ts";
import type { AppState } from "../state/app_state.ts";
import type { RequestWrites } from "../state/write_journal.ts";
import type { AiWork } from "../upstream/ai_calls.ts";
import { type CoreClient, createCoreClient } from "../upstream/core.ts";
import type { UpstreamDeps } from "../upstream/fetch.ts";
import { createParserClient, type ParserClient } from "../upstream/parser.ts";
import type { Deadlines } from "../util/deadlines.ts";

/**
 * The context of a `public` route: the request, its validated input and server capabilities.
 * `R`: a row of the route table (api/router.ts binds it to `Route`).
 */
export interface PublicCtx<P = unknown, Q = unknown, B = unknown, R = unknown> {
  req: Request;
  url: URL;
  requestId: string;
  /**
   * Aborted when the client goes away (AI work: when the work ends). Read lazily, inherited
   * from a shared prototype ({@linkcode withLazySignal}): `{ ...ctx }` drops it, so derive an
   * object from a context with `withLazySignal(fields, ctx)`.
   */
  signal: AbortSignal;
  params: P;
  query: Q;
  body: B;
  config: Config;
  log: Logger;
  state: AppState;
  /** The route table this app serves (for the generated API description). */
  routes: readonly R[];
  /**
   * Core for the public share routes: server-side credentials only (`PUBLIC_CORE_TOKEN`,
   * `CORE_TOKEN`, or the zero-login user's, kept on the server), never this caller's cookies;
   * 503 NOT_CONFIGURED when there are none. `identity` partitions caches like `coreIdentity`.
   */
  publicCore: PublicCoreReader;
  /** The client's rate-limit key (its address; the proxy's view only when trusted). */
  clientKey(): string;
  /**
   * The key that seals the public site's own cookie (the unlock cookie of password-protected
   * branches, share/unlock_cookie.ts): `SESSION_SECRET`'s, loaded on first use. It reads no
   * caller's backend credentials.
   */
  sealKey(): Promise<SealKey>;
  /** Run at most this many upstream calls at once. */
  concurrency: number;
  /** Where this request's deadlines are counted (streams, images; backend calls have theirs). */
  deadlines: Deadlines;
}

/** The session-cookie half of {@linkcode RequestCredentials}: no backend credentials. */
export type SessionCredentials = Pick<
  RequestCredentials,
  "session" | "startSession" | "endSession" | "parserAllowed" | "coreAllowed"
>;

/** The context of a `session` route: a public context plus the browser session's cookies. */
export interface SessionCtx<P = unknown, Q = unknown, B = unknown, R = unknown>
  extends PublicCtx<P, Q, B, R> {
  /** This request's session cookies and allow-lists. */
  credentials: SessionCredentials;
  /**
   * A Parser client for the browser session in this request's cookies, null without one (never
   * a zero-login or environment session).
   */
  sessionParser(opts?: { detached?: boolean }): Promise<ParserClient | null>;
  /** An unauthenticated Parser client for an allow-listed base URL (sign-in, sign-up). */
  parserAt(baseUrl: string): ParserClient;
  /** A Core client without a token for an allow-listed base URL (password login only). */
  coreAt(baseUrl: string): CoreClient;
}

/** The context of a `private` route: the caller's backend credentials. */
export interface Ctx<P = unknown, Q = unknown, B = unknown, R = unknown>
  extends SessionCtx<P, Q, B, R> {
  /**
   * Core client for this caller's credentials; throws 503 NOT_CONFIGURED when there are none.
   * `detached` clients ignore the client's disconnect (timeouts still apply): multi-step writes
   * use them so a half-done write is always finished or rolled back.
   */
  core(opts?: { detached?: boolean }): Promise<CoreClient>;
  /** A stable, non-secret key for this caller's Core credentials (cache partitioning). */
  coreIdentity(): Promise<string>;
  /**
   * Parser client for this caller (session, zero-login or environment credentials).
   * `timeoutMs` gives its calls a shorter deadline than `UPSTREAM_TIMEOUT_MS` (a latency budget:
   * the call is cancelled, not just abandoned, when it runs out). `ai`: the calls run a model (or
   * a long write) and get `AI_TOTAL_TIMEOUT_MS` instead; on a `Route.ai` route the client waits
   * for them only as its AI deadline allows.
   */
  parser(opts?: { detached?: boolean; timeoutMs?: number; ai?: boolean }): Promise<ParserClient>;
  /**
   * The upstream is still working (an SSE event or keepalive arrived): on an AI route the
   * client's AI deadline starts again. Does nothing elsewhere.
   */
  progress(): void;
  /** This request's credentials: session cookies, allow-lists, invalidation. */
  credentials: RequestCredentials;
  /** The note new lore goes under when a request names no parent. */
  loreRootId(): Promise<string>;
}

/** Where a request's backend calls report their time and failures (the request log line). */
export type UpstreamMeter = Required<Pick<UpstreamDeps, "onTiming" | "onFailure">>;

/** A request's validated path params, query and body (pipeline/input.ts). */
export interface RequestInput {
  params: unknown;
  query: unknown;
  body: unknown;
}

/** What the builders take from the app: its settings, state and how it calls backends. */
export interface ContextDeps<R> {
  config: Config;
  log: Logger;
  state: AppState;
  routes: readonly R[];
  fetch: typeof fetch;
  deadlines: Deadlines;
  publicCoreSource: PublicCoreSource;
}

/** The three builders; each derives from the one before, adding what its access allows. */
export interface ContextBuilders<R> {
  /** What every route gets: the request, its input, and server-side capabilities only. */
  publicContext(
    req: Request,
    url: URL,
    requestId: string,
    input: RequestInput,
    meter: UpstreamMeter,
    info: ClientInfo,
  ): PublicCtx<unknown, unknown, unknown, R>;
  /** A public context plus the browser session's cookies (never a zero-login session). */
  sessionContext(
    base: PublicCtx<unknown, unknown, unknown, R>,
    creds: RequestCredentials,
    meter: UpstreamMeter,
  ): SessionCtx<unknown, unknown, unknown, R>;
  /**
   * The caller's credentials, for the request itself or for AI work (`Route.ai`): work runs
   * detached from the client, so its backend calls and `signal` follow the work's instead.
   * `onCoreWrite` hears of every Core call that may change Core (the share-cache invalidation).
   */
  privateContext(
    session: SessionCtx<unknown, unknown, unknown, R>,
    creds: RequestCredentials,
    meter: UpstreamMeter,
    work: AiWork | undefined,
    onCoreWrite: () => void,
    /** Where the notes this request creates are journaled until its answer is ready. */
    writes?: RequestWrites,
  ): Ctx<unknown, unknown, unknown, R>;
}

/**
 * The context builders of an app.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "../config/service_config.ts";
 * import { createPublicCoreSource } from "../credentials/public_core.ts";
 * import { jsonLogger } from "../http/log.ts";
 * import { createAppState } from "../state/app_state.ts";
 * import { sharedDeadlines } from "../util/deadlines.ts";
 *
 * const config = loadConfig({});
 * const log = jsonLogger("silent");
 * const { publicContext } = contextBuilders({
 *   config,
 *   log,
 *   state: createAppState(config, undefined, log, fetch, sharedDeadlines),
 *   routes: [],
 *   fetch,
 *   deadlines: sharedDeadlines,
 *   publicCoreSource: createPublicCoreSource({ config, fetch, log }),
 * });
 * const url = new URL("http://127.0.0.1:8080/api/public/search?q=harbor");
 * const req = new Request(url);
 * const meter = { onTiming() {}, onFailure() {} };
 * const input = { params: {}, query: { q: "harbor" }, body: undefined };
 * const ctx = publicContext(req, url, "req-1", input, meter, {});
 * assert.equal(ctx.signal, req.signal);
 * ```
 */
export function contextBuilders<R>(deps: ContextDeps<R>): ContextBuilders<R> {
  const { config, fetch: fetchFn, deadlines } = deps;
  const access = backendAccess(deps);
  const sealKey = lazySealKey(config, deps.log);

  return {
    publicContext(req, url, requestId, input, meter, info) {
      return withLazySignal<PublicCtx<unknown, unknown, unknown, R>>({
        req,
        url,
        requestId,
        ...input,
        config,
        log: deps.log,
        state: deps.state,
        routes: deps.routes,
        concurrency: config.UPSTREAM_CONCURRENCY,
        deadlines,
        publicCore: async (opts) => {
          // made here: a kept page never calls a backend
          const upstream = access(req, meter);
          const c = await deps.publicCoreSource.credentials(upstream(true));
          // the share is read in one search whose answer grows with the world
          const reads = {
            ...upstream(opts?.detached),
            maxBodyBytes: config.PUBLIC_SHARE_MAX_BYTES,
          };
          return { core: createCoreClient(c, reads), identity: c.identity };
        },
        clientKey: () => clientKey(req, info, config.TRUST_PROXY),
        sealKey,
      }, req);
    },

    sessionContext(base, creds, meter) {
      const upstream = access(base.req, meter);
      return withLazySignal<SessionCtx<unknown, unknown, unknown, R>>({
        ...base, // own properties only: the lazy `signal` is given again
        credentials: sessionCredentials(creds),
        sessionParser: async (opts) => {
          const s = await creds.session();
          return s && createParserClient(
            { baseUrl: s.parserUrl, token: s.parserToken },
            upstream(opts?.detached),
          );
        },
        parserAt: (baseUrl) => createParserClient({ baseUrl }, upstream(true)),
        coreAt: (baseUrl) => createCoreClient({ baseUrl, token: "" }, upstream(true)),
      }, base.req);
    },

    privateContext(session, creds, meter, work, onCoreWrite, writes) {
      const upstream = access(session.req, meter, work);
      return withLazySignal<Ctx<unknown, unknown, unknown, R>>({
        ...session,
        credentials: creds,
        loreRootId: async () => (await deps.state.portal.get()).loreRootNoteId,
        core: async (opts) => {
          const c = await creds.core();
          const core = createCoreClient(c, {
            ...upstream(opts?.detached),
            fetch: watchWrites(fetchFn, onCoreWrite),
          });
          return writes ? journaled(core, c.baseUrl, writes) : core;
        },
        coreIdentity: async () => credentialIdentity(await creds.core()),
        parser: async (opts = {}) =>
          createParserClient(
            await creds.parser(),
            upstream(opts.detached, parserTimeout(config, opts)),
          ),
        progress: work?.progress ?? (() => {}),
      }, work ?? session.req);
    },
  };
}

/**
 * The one way a context reaches a backend: calls follow AI work's signal when there is work,
 * else the client's unless `detached`; all are metered for the request log line.
 */
function backendAccess(deps: Pick<ContextDeps<unknown>, "config" | "fetch" | "deadlines">) {
  const { config } = deps;
  return (req: Request, meter: UpstreamMeter, work?: AiWork) =>
  (detached = false, timeoutMs = config.UPSTREAM_TIMEOUT_MS): UpstreamDeps => ({
    fetch: deps.fetch,
    timeoutMs,
    maxBodyBytes: config.MAX_UPSTREAM_BODY_BYTES,
    signal: work?.signal ?? (detached ? undefined : req.signal),
    onTiming: meter.onTiming,
    onFailure: meter.onFailure,
    deadlines: deps.deadlines,
  });
}

/** The session-cookie half of a request's credentials, for a `session` context. */
function sessionCredentials(creds: RequestCredentials): SessionCredentials {
  return {
    session: creds.session,
    startSession: creds.startSession,
    endSession: creds.endSession,
    parserAllowed: creds.parserAllowed,
    coreAllowed: creds.coreAllowed,
  };
}

/** `core` whose every created note is journaled (state/write_journal.ts) as it is made. */
function journaled(core: CoreClient, baseUrl: string, writes: RequestWrites): CoreClient {
  return {
    ...core,
    async createNote(input) {
      const created = await core.createNote(input);
      await writes.created(baseUrl, created.note.noteId);
      return created;
    },
  };
}

/** A Parser call's deadline: `AI_TOTAL_TIMEOUT_MS` for AI work, else at most the usual one. */
function parserTimeout(
  config: Config,
  opts: { timeoutMs?: number; ai?: boolean },
): number {
  if (opts.ai) return config.AI_TOTAL_TIMEOUT_MS;
  return Math.min(opts.timeoutMs ?? config.UPSTREAM_TIMEOUT_MS, config.UPSTREAM_TIMEOUT_MS);
}

const SAFE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);

/** `fetch` that calls `onWrite` before sending any request that may change upstream state. */
function watchWrites(fetchFn: typeof fetch, onWrite: () => void): typeof fetch {
  return (input, init) => {
    if (!SAFE_METHODS.has((init?.method ?? "GET").toUpperCase())) onWrite();
    return fetchFn(input, init);
  };
}

/** Where a lazy `signal` is read: a request, AI work, or a context — anything with a `signal`. */
export interface SignalSource {
  readonly signal: AbortSignal;
}

const SOURCE = Symbol("signal source");

/**
 * The getter behind every lazy `signal`: Deno builds a request's signal on first read, which
 * costs a route that never calls a backend a large share of its time. A getter on one shared
 * prototype, because a getter in each object's own literal, or a per-request prototype, costs
 * V8 a slow path or a new hidden class each time.
 */
const LAZY_SIGNAL = {
  get signal(): AbortSignal {
    return (this as unknown as { [SOURCE]: SignalSource })[SOURCE].signal;
  },
};

/**
 * `fields` plus a `signal` read from `source` only when used. The contexts are built so, and so
 * is anything handed on from a context that must not read its signal early (the public share's
 * deps, an AI call's request). The signal is inherited, not own: `{ ...obj }` drops it, so an
 * object derived from one is built with this again.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const req = new Request("http://127.0.0.1:8080/");
 * const ctx = withLazySignal<{ requestId: string; signal: AbortSignal }>({ requestId: "r1" }, req);
 * assert.equal(ctx.signal, req.signal);
 * assert.equal("signal" in { ...ctx }, false); // why derived objects use this helper again
 * ```
 */
export function withLazySignal<T extends { signal: AbortSignal }>(
  fields: Omit<T, "signal">,
  source: SignalSource,
): T {
  const out = Object.assign(Object.create(LAZY_SIGNAL), fields);
  out[SOURCE] = source;
  return out;
}

/**
 * The public share for one request: the server's public Core and the app's public caches; a
 * snapshot that replaces another is first warmed for the site's pages.
 *
 * @example
 * ```ts
 * import type { PublicCtx } from "./context.ts";
 *
 * async function shareRootTitle(ctx: PublicCtx) {
 *   return (await shareFor(ctx).home(null)).root.title;
 * }
 * ```
 */
export function shareFor<R>(ctx: PublicCtx<unknown, unknown, unknown, R>): PublicShare {
  // the context is the signal's source: the request's signal is read only when an image streams
  return publicShare(
    withLazySignal<PublicShareDeps>({
      publicCore: ctx.publicCore,
      caches: ctx.state.publicShare,
      config: ctx.config,
      concurrency: ctx.concurrency,
      log: ctx.log,
      requestId: ctx.requestId,
      url: ctx.url,
      deadlines: ctx.deadlines,
    }, ctx),
    warmSite,
  );
}
