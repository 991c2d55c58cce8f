/**
 * A Parser user's Core credentials: the Parser hands them out on its internal credentials route,
 * and they are cached per Parser session. The internal secret only ever goes to `PARSER_URL`, and
 * a Core address the Parser names is used only when allow-listed.
 *
 * @module
 */
import { backendBaseUrl } from "../config/backend_url.ts";
import { createTtlCache, stringBytes } from "../cache/ttl_cache.ts";
import type { Config } from "../config/service_config.ts";
import { ApiError } from "../http/errors.ts";
import type { BrowserSession } from "../session/browser_session.ts";
import type { CoreCredentials } from "../upstream/core.ts";
import type { UpstreamDeps } from "../upstream/fetch.ts";
import { createParserClient } from "../upstream/parser.ts";

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

/** The Core credentials of Parser sessions, kept for `CREDENTIALS_CACHE_MS`. */
export interface SessionCoreCache {
  /** The session's Core credentials, loaded once (single-flight) while cached. */
  get(s: BrowserSession, load: () => Promise<CoreCredentials>): Promise<CoreCredentials>;
  /** Forgets the session's Core credentials (login, logout, connect, disconnect, 401). */
  drop(s: BrowserSession): void;
}

/**
 * Creates the cache of one resolver.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "../config/service_config.ts";
 * const cache = createSessionCoreCache(loadConfig({}), () => 0);
 * const s = { parserUrl: "http://parser:3000", parserToken: "p" };
 * const creds = { baseUrl: "http://core:8080", token: "c" };
 * assert.equal(await cache.get(s, () => Promise.resolve(creds)), creds);
 * assert.equal(await cache.get(s, () => Promise.reject(new Error("cached"))), creds);
 * cache.drop(s);
 * await assert.rejects(cache.get(s, () => Promise.reject(new Error("dropped"))), /dropped/);
 * ```
 */
export function createSessionCoreCache(config: Config, now: () => number): SessionCoreCache {
  const cache = createTtlCache<CoreCredentials>({
    ttlMs: config.CREDENTIALS_CACHE_MS,
    maxEntries: 1000,
    maxBytes: CREDENTIALS_MAX_BYTES,
    sizeOf: credentialsBytes,
    now,
  });
  // the cache already holds Core tokens as values: hashing its keys would protect nothing and
  // would cost a digest on every request
  const sessionKey = (s: BrowserSession) => `${s.parserUrl}\n${s.parserToken}`;
  return {
    get: (s, load) => cache.getOrLoad(sessionKey(s), load),
    drop: (s) => cache.delete(sessionKey(s)),
  };
}

/**
 * A Parser user's Core credentials from the Parser's internal route; only for the configured
 * Parser (the internal secret goes nowhere else) and only for an allow-listed Core address.
 */
export async function coreCredentialsFromParser(
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
