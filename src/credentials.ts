/**
 * Which backend credentials a request may use:
 *
 * 1. a signed-in browser (sealed `parser_url`/`parser_token` cookies): its Parser token, and its
 *    Core credentials fetched from the Parser's internal credentials route (cached per session);
 * 2. zero-login (only when `ZERO_LOGIN` is on): a session minted by the Parser for this request,
 *    whose cookies the response then sets;
 * 3. the server's environment (`PARSER_URL`/`PARSER_TOKEN`, `CORE_URL`/`CORE_TOKEN`).
 *
 * Every URL used comes from configuration or the configured allow-lists; the internal secret is
 * only ever sent to `PARSER_URL`.
 *
 * The public share routes use a separate, server-side source ({@linkcode createPublicCoreSource}):
 * they never read a visitor's cookies and never give a visitor a session.
 *
 * @module
 */
import { backendBaseUrl } from "./backend_url.ts";
import { createTtlCache, stringBytes, type TtlCache } from "./cache/ttl_cache.ts";
import type { Config } from "./config.ts";
import { ApiError, notAuthenticated, notConfigured } from "./http/errors.ts";
import type { Logger } from "./http/log.ts";
import {
  type BrowserSession,
  clearSessionCookies,
  coreOffCookie,
  isHttps,
  readCookieState,
  sessionCookies,
} from "./session/browser_session.ts";
import { deriveSealKey, type SealKey } from "./session/seal.ts";
import { loadOrCreateSessionSecret } from "./session/secret.ts";
import type { CoreCredentials } from "./upstream/core.ts";
import type { UpstreamDeps } from "./upstream/fetch.ts";
import { createParserClient, type ParserCredentials } from "./upstream/parser.ts";

/** How a request's Parser credentials were found. */
export type CredentialSource = "session" | "provisioned" | "env";

/** The credentials of one request, resolved lazily and at most once. */
export interface RequestCredentials {
  /**
   * Parser credentials; when there are none, 401 UNAUTHORIZED if a login would give them,
   * else 503 NOT_CONFIGURED.
   */
  parser(): Promise<ParserCredentials & { source: CredentialSource }>;
  /** Core credentials; when there are none, 401 UNAUTHORIZED or 503 like `parser()`. */
  core(): Promise<CoreCredentials>;
  /** The browser session from the cookies (null when absent or forged). */
  session(): Promise<BrowserSession | null>;
  /** `Set-Cookie` values the response must carry. */
  readonly setCookies: string[];
  /** Starts a browser session (login/register): cookies set, cached Core credentials dropped. */
  startSession(session: BrowserSession): Promise<void>;
  /** Ends the browser session (logout): cookies cleared, cached Core credentials dropped. */
  endSession(): Promise<void>;
  /** Marks Core as disconnected (or connected again) in this browser. */
  setCoreOff(on: boolean): Promise<void>;
  /** Forget cached Core credentials of this session (connect/disconnect changed them). */
  invalidateCore(): Promise<void>;
  /** Reacts to a backend error: stale Core credentials dropped, dead Parser sessions cleared. */
  onError(e: unknown): Promise<void>;
  /** Whether `url` is an allowed Parser / Core base URL. */
  parserAllowed(url: string): boolean;
  coreAllowed(url: string): boolean;
}

/** Resolves credentials for requests. */
export interface CredentialResolver {
  forRequest(
    req: Request,
    deps: Pick<UpstreamDeps, "onTiming" | "onFailure">,
  ): RequestCredentials;
}

/** What the resolver needs. */
export interface ResolverDeps {
  config: Config;
  fetch: typeof fetch;
  log: Logger;
  now?: () => number;
  /** Where its backend calls' deadlines are counted (see `UpstreamDeps.deadlines`). */
  deadlines?: UpstreamDeps["deadlines"];
}

/**
 * Creates the resolver of one app.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "./config.ts";
 * import { jsonLogger } from "./http/log.ts";
 * const config = loadConfig({ CORE_URL: "http://core:8080", CORE_TOKEN: "etapi-token" });
 * const resolver = createCredentialResolver({ config, fetch, log: jsonLogger("silent") });
 * const creds = resolver.forRequest(new Request("http://127.0.0.1:8080/api/lore"), {});
 * assert.deepEqual(await creds.core(), { baseUrl: "http://core:8080", token: "etapi-token" });
 * await assert.rejects(creds.parser(), { status: 503, code: "NOT_CONFIGURED" });
 * ```
 */
export function createCredentialResolver(deps: ResolverDeps): CredentialResolver {
  const { config, log } = deps;
  const now = deps.now ?? (() => Date.now());
  const parserUrls = new Set([config.PARSER_URL, ...config.PARSER_ALLOWED_URLS].filter(Boolean));
  const coreUrls = allowedCoreUrls(config);
  const coreCache: TtlCache<CoreCredentials> = createTtlCache({
    ttlMs: config.CREDENTIALS_CACHE_MS,
    maxEntries: 1000,
    maxBytes: CREDENTIALS_MAX_BYTES,
    sizeOf: credentialsBytes,
    now,
  });
  let sealKey: Promise<SealKey> | undefined;
  // the key is only needed once a cookie is read or written; no file is created before that
  const key = () =>
    sealKey ??= loadOrCreateSessionSecret({
      fromEnv: config.SESSION_SECRET,
      dataDir: config.DATA_DIR,
      log: (msg) => log.log("warn", msg),
    }).then(deriveSealKey);
  let provisionBlockedUntil = 0;

  const envCore: CoreCredentials | null = config.CORE_URL && config.CORE_TOKEN
    ? { baseUrl: config.CORE_URL, token: config.CORE_TOKEN }
    : null;
  const envParser = config.PARSER_URL && config.PARSER_TOKEN
    ? { baseUrl: config.PARSER_URL, token: config.PARSER_TOKEN, source: "env" as const }
    : null;
  // Without credentials of its own, a caller who could log in is told to (401), not that the
  // service lacks configuration (503); zero-login failing is the service's problem, not theirs.
  const loginGivesParser = !!config.PARSER_URL && !config.ZERO_LOGIN;
  const loginGivesCore = loginGivesParser && !!config.PARSER_INTERNAL_SECRET;

  return {
    forRequest(req, reqDeps) {
      const setCookies: string[] = [];
      // asked only when a cookie is set: most requests set none
      const secure = () => config.COOKIE_SECURE === "always" || isHttps(req, config);
      const upstream = (detached: boolean): UpstreamDeps => ({
        fetch: deps.fetch,
        timeoutMs: config.UPSTREAM_TIMEOUT_MS,
        maxBodyBytes: config.MAX_UPSTREAM_BODY_BYTES,
        signal: detached ? undefined : req.signal,
        onTiming: reqDeps.onTiming,
        onFailure: reqDeps.onFailure,
        deadlines: deps.deadlines,
      });
      let cookies: ReturnType<typeof readCookieState> | undefined;
      const cookieState = () =>
        cookies ??= req.headers.has("cookie")
          ? key().then((k) => readCookieState(req, k))
          : Promise.resolve({ session: null, coreOff: false });
      let provisioned: Promise<BrowserSession | null> | undefined;
      let parserMemo: Promise<ParserCredentials & { source: CredentialSource }> | undefined;

      /** The session from cookies, if its Parser URL is still allowed. */
      const cookieSession = async () => {
        const { session } = await cookieState();
        if (session && !parserUrls.has(session.parserUrl)) {
          log.log("warn", "ignoring a session cookie for a Parser URL that is no longer allowed");
          return null;
        }
        return session;
      };

      /** Zero-login: one minted session per request at most, with a cooldown after failures. */
      const provision = () =>
        provisioned ??= (async () => {
          if (!config.ZERO_LOGIN || !config.PARSER_URL || !config.PARSER_INTERNAL_SECRET) {
            return null;
          }
          if (now() < provisionBlockedUntil) return null;
          try {
            const { token } = await createParserClient(
              { baseUrl: config.PARSER_URL },
              upstream(true),
            )
              .autoProvision(config.PARSER_INTERNAL_SECRET);
            const session = { parserUrl: config.PARSER_URL, parserToken: token };
            setCookies.push(...await sessionCookies(await key(), session, secure()));
            return session;
          } catch (e) {
            provisionBlockedUntil = now() + config.PROVISION_COOLDOWN_MS;
            log.log("warn", "zero-login provisioning failed", {
              error: e instanceof ApiError ? e.code : "INTERNAL_ERROR",
            });
            return null;
          }
        })();

      const userSession = async () => (await cookieSession()) ?? (await provision());

      // the cache already holds Core tokens as values: hashing its keys would protect nothing and
      // would cost a digest on every request
      const sessionKey = (s: BrowserSession) => `${s.parserUrl}\n${s.parserToken}`;

      const loadCoreFor = (s: BrowserSession) =>
        coreCredentialsFromParser(config, coreUrls, s, upstream(true));

      const rc: RequestCredentials = {
        setCookies,
        parserAllowed: (url) => parserUrls.has(url),
        coreAllowed: (url) => coreUrls.has(url),
        session: cookieSession,
        parser: () =>
          parserMemo ??= (async () => {
            const cookie = await cookieSession();
            if (cookie) {
              return {
                baseUrl: cookie.parserUrl,
                token: cookie.parserToken,
                source: "session" as const,
              };
            }
            const minted = await provision();
            if (minted) {
              return {
                baseUrl: minted.parserUrl,
                token: minted.parserToken,
                source: "provisioned" as const,
              };
            }
            if (envParser) return envParser;
            throw loginGivesParser ? notAuthenticated("parser") : notConfigured("parser");
          })(),
        async core() {
          const { coreOff } = await cookieState();
          if (coreOff) {
            throw new ApiError(
              503,
              "NOT_CONFIGURED",
              "Core is disconnected in this browser: connect it in settings",
              {
                service: "core",
                reason: "disconnected",
              },
            );
          }
          const s = await userSession();
          if (s) return coreCache.getOrLoad(sessionKey(s), () => loadCoreFor(s));
          if (envCore) return envCore;
          throw loginGivesCore ? notAuthenticated("core") : notConfigured("core");
        },
        async startSession(s) {
          const k = await key();
          setCookies.push(...await sessionCookies(k, s, secure()));
          coreCache.delete(sessionKey(s));
        },
        async endSession() {
          const s = await cookieSession();
          if (s) coreCache.delete(sessionKey(s));
          setCookies.push(...clearSessionCookies(secure()));
        },
        async setCoreOff(on) {
          setCookies.push(await coreOffCookie(await key(), on, secure()));
          await rc.invalidateCore();
        },
        async invalidateCore() {
          const s = await userSession();
          if (s) coreCache.delete(sessionKey(s));
        },
        async onError(e) {
          if (!(e instanceof ApiError)) return;
          const service = (e.details as { service?: string } | undefined)?.service;
          if (e.code === "UNAUTHORIZED" && service === "core") await rc.invalidateCore();
          if (e.status === 401 && service === "parser" && (await cookieSession())) {
            await rc.endSession(); // a dead Parser session must not keep failing every request
          }
        },
      };
      return rc;
    },
  };
}

/** Byte bound of the cached Core credentials: a thousand sessions fit many times over. */
const CREDENTIALS_MAX_BYTES = 1024 * 1024;

/**
 * What cached credentials weigh, roughly; a Parser could hand out any token, so its length counts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.ok(credentialsBytes({ baseUrl: "http://core:8080", token: "t".repeat(100) }) > 200);
 * ```
 */
export function credentialsBytes(creds: CoreCredentials): number {
  return stringBytes(creds.baseUrl) + stringBytes(creds.token);
}

function allowedCoreUrls(config: Config): ReadonlySet<string> {
  return new Set([config.CORE_URL, ...config.CORE_ALLOWED_URLS].filter((u): u is string => !!u));
}

/**
 * A Parser user's Core credentials from the Parser's internal route; only for the configured
 * Parser (the internal secret goes nowhere else) and only for an allow-listed Core address.
 */
async function coreCredentialsFromParser(
  config: Config,
  coreUrls: ReadonlySet<string>,
  s: BrowserSession,
  upstream: UpstreamDeps,
): Promise<CoreCredentials> {
  if (s.parserUrl !== config.PARSER_URL || !config.PARSER_INTERNAL_SECRET) {
    throw new ApiError(
      503,
      "NOT_CONFIGURED",
      "Core credentials come from the configured Parser: set PARSER_URL and PARSER_INTERNAL_SECRET",
      { service: "core" },
    );
  }
  const client = createParserClient({ baseUrl: s.parserUrl, token: s.parserToken }, upstream);
  let creds;
  try {
    creds = await client.coreCredentials(config.PARSER_INTERNAL_SECRET);
  } catch (e) {
    throw explainCredentialsError(e);
  }
  const named = backendBaseUrl("core", creds.baseUrl);
  if (!named.ok || !coreUrls.has(named.url)) {
    throw new ApiError(
      502,
      "UPSTREAM_ERROR",
      "The Parser named a Core address that is not allowed (see CORE_URL and CORE_ALLOWED_URLS)",
      { service: "core", reason: "core-url-not-allowed" },
    );
  }
  return { baseUrl: named.url, token: creds.token };
}

/** Core credentials for the public share, with their non-secret identity (cache partitioning). */
export interface PublicCoreCredentials extends CoreCredentials {
  identity: string;
}

/** Where the public share routes get Core credentials; see {@linkcode createPublicCoreSource}. */
export interface PublicCoreSource {
  /** The credentials; 503 NOT_CONFIGURED when there are none (or they cannot be had now). */
  credentials(upstream: UpstreamDeps): Promise<PublicCoreCredentials>;
}

const PUBLIC_UNAVAILABLE = "The public share cannot reach the lore database right now";

/**
 * The Core credentials of the public share routes, from the server alone:
 *
 * 1. `CORE_URL` with `PUBLIC_CORE_TOKEN` (a token that need not open the private routes);
 * 2. else `CORE_URL` with `CORE_TOKEN`;
 * 3. else, when `ZERO_LOGIN` is on, the zero-login user's Core integration: the Parser mints (or
 *    reuses) its session server-side, and the Core credentials are kept in memory for
 *    `CREDENTIALS_CACHE_MS` (single-flight, `PROVISION_COOLDOWN_MS` after a failure). No cookie
 *    is ever set: visitors get no session;
 * 4. else 503 NOT_CONFIGURED, neutral for visitors; the log says what to set.
 *
 * A visitor's own cookies are never read. Failures of step 3 are all 503 NOT_CONFIGURED for
 * Core: a Parser 401 must not reach the app's error handling, which would end the visitor's own
 * session.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "./config.ts";
 * import { jsonLogger } from "./http/log.ts";
 * const config = loadConfig({
 *   CORE_URL: "http://core:8080",
 *   CORE_TOKEN: "etapi-token",
 *   PUBLIC_CORE_TOKEN: "read-only-token",
 * });
 * const source = createPublicCoreSource({ config, fetch, log: jsonLogger("silent") });
 * const { token, identity } = await source.credentials({ fetch, timeoutMs: 15_000 });
 * assert.equal(token, "read-only-token");
 * assert.equal(identity.length, 16);
 * ```
 */
export function createPublicCoreSource(deps: ResolverDeps): PublicCoreSource {
  const { config, log } = deps;
  const now = deps.now ?? (() => Date.now());
  const withIdentity = async (c: CoreCredentials): Promise<PublicCoreCredentials> => ({
    ...c,
    identity: await credentialIdentity(c),
  });
  const token = config.PUBLIC_CORE_TOKEN ?? config.CORE_TOKEN;
  if (config.CORE_URL && token) {
    const fixed = withIdentity({ baseUrl: config.CORE_URL, token });
    return { credentials: () => fixed };
  }
  const secret = config.PARSER_INTERNAL_SECRET;
  if (!config.ZERO_LOGIN || !config.PARSER_URL || !secret) {
    return unconfiguredPublicSource(config, log, now);
  }
  const parserUrl = config.PARSER_URL;
  const coreUrls = allowedCoreUrls(config);
  const cache: TtlCache<PublicCoreCredentials> = createTtlCache({
    ttlMs: config.CREDENTIALS_CACHE_MS,
    maxEntries: 1,
    now,
  });
  let blockedUntil = 0;
  return {
    credentials(upstream) {
      if (now() < blockedUntil) {
        return Promise.reject(
          new ApiError(503, "NOT_CONFIGURED", PUBLIC_UNAVAILABLE, { service: "core" }),
        );
      }
      // Shared by every concurrent visitor: no visitor's disconnect may cancel it.
      const detached = { ...upstream, signal: undefined };
      return cache.getOrLoad("zero-login", async () => {
        try {
          const { token } = await createParserClient({ baseUrl: parserUrl }, detached)
            .autoProvision(secret);
          const session = { parserUrl, parserToken: token };
          return await withIdentity(
            await coreCredentialsFromParser(config, coreUrls, session, detached),
          );
        } catch (e) {
          blockedUntil = now() + config.PROVISION_COOLDOWN_MS;
          log.log("warn", "zero-login Core credentials for the public share failed", {
            error: e instanceof ApiError ? e.code : "INTERNAL_ERROR",
          });
          throw new ApiError(503, "NOT_CONFIGURED", PUBLIC_UNAVAILABLE, { service: "core" });
        }
      });
    },
  };
}

/** What a visitor is told when the public share has no Core: nothing about configuration. */
const PUBLIC_NOT_AVAILABLE = "The public share is not available";

/**
 * The public share without any Core credentials: each visitor gets a neutral 503, and the
 * operator's log says what is missing once per snapshot lifetime (`PUBLIC_CACHE_MS`, at least a
 * minute apart), not once per request.
 */
function unconfiguredPublicSource(
  config: Config,
  log: Logger,
  now: () => number,
): PublicCoreSource {
  const everyMs = Math.max(config.PUBLIC_CACHE_MS, 60_000);
  let nextLogAt = -Infinity;
  return {
    credentials() {
      if (now() >= nextLogAt) {
        nextLogAt = now() + everyMs;
        log.log(
          "warn",
          "public share: Core is not configured; set CORE_URL with PUBLIC_CORE_TOKEN (or " +
            "CORE_TOKEN), or ZERO_LOGIN with PARSER_URL and PARSER_INTERNAL_SECRET",
        );
      }
      return Promise.reject(
        new ApiError(503, "NOT_CONFIGURED", PUBLIC_NOT_AVAILABLE, { service: "core" }),
      );
    },
  };
}

/**
 * The Parser's internal credentials route answers 401/403/404/503 for different reasons; each
 * becomes a distinct, actionable error.
 */
function explainCredentialsError(e: unknown): unknown {
  if (!(e instanceof ApiError)) return e;
  const upstreamCode = (e.details as { upstreamCode?: string } | undefined)?.upstreamCode;
  switch (e.status) {
    case 401:
      return new ApiError(
        401,
        "UNAUTHORIZED",
        "Your Parser session has ended: log in again",
        {
          service: "parser",
          reason: "session-expired",
        },
      );
    case 403:
      return new ApiError(
        403,
        "UPSTREAM_FORBIDDEN",
        "The Parser refused to hand out Core credentials: this account is not the owner, or PARSER_INTERNAL_SECRET does not match the Parser's",
        { service: "parser", reason: "forbidden" },
      );
    case 404:
      return new ApiError(
        503,
        "NOT_CONFIGURED",
        "Core is not connected for this account: connect it in settings",
        {
          service: "core",
          reason: upstreamCode === "ALLCODEX_NOT_CONNECTED" ? "not-connected" : "not-found",
        },
      );
    case 503:
      return new ApiError(
        502,
        "UPSTREAM_ERROR",
        "The Parser cannot hand out Core credentials: its internal secret is not configured",
        { service: "parser", reason: "parser-misconfigured" },
      );
    default:
      return e;
  }
}

/**
 * A short, non-reversible identity for a set of credentials, to partition caches per caller
 * without keeping tokens as map keys.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const id = await credentialIdentity({ baseUrl: "http://core", token: "t" });
 * assert.match(id, /^[0-9a-f]{16}$/);
 * assert.notEqual(await credentialIdentity({ baseUrl: "http://core", token: "u" }), id);
 * ```
 */
export async function credentialIdentity(creds: CoreCredentials): Promise<string> {
  const data = new TextEncoder().encode(`${creds.baseUrl}\n${creds.token}`);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  return Array.from(digest.slice(0, 8), (b) => b.toString(16).padStart(2, "0")).join("");
}
