/**
 * The public share's Core credentials, from the server alone: a visitor's cookies are never
 * read and a visitor never gets a session, so nothing a visitor sends can change which Core
 * identity the share reads with.
 *
 * @module
 */
import { createTtlCache, type TtlCache } from "../cache/ttl_cache.ts";
import type { Config } from "../config/service_config.ts";
import { ApiError } from "../http/errors.ts";
import type { Logger } from "../http/log.ts";
import type { CoreCredentials } from "../upstream/core.ts";
import type { UpstreamDeps } from "../upstream/fetch.ts";
import { allowedCoreUrls } from "./allow_lists.ts";
import { coreCredentialsFromParser } from "./core_from_parser.ts";
import { credentialIdentity } from "./identity.ts";
import type { ResolverDeps } from "./request_credentials.ts";
import { mintSession } from "./zero_login.ts";

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
 * import { loadConfig } from "../config/service_config.ts";
 * import { jsonLogger } from "../http/log.ts";
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
  const token = config.PUBLIC_CORE_TOKEN ?? config.CORE_TOKEN;
  if (config.CORE_URL && token) {
    const fixed = withIdentity({ baseUrl: config.CORE_URL, token });
    return { credentials: () => fixed };
  }
  const secret = config.PARSER_INTERNAL_SECRET;
  if (!config.ZERO_LOGIN || !config.PARSER_URL || !secret) {
    return unconfiguredPublicSource(config, log, now);
  }
  return zeroLoginPublicSource(config, log, now, config.PARSER_URL, secret);
}

async function withIdentity(c: CoreCredentials): Promise<PublicCoreCredentials> {
  return { ...c, identity: await credentialIdentity(c) };
}

/** Step 3 of {@linkcode createPublicCoreSource}: the zero-login user's Core, cached server-side. */
function zeroLoginPublicSource(
  config: Config,
  log: Logger,
  now: () => number,
  parserUrl: string,
  secret: string,
): PublicCoreSource {
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
          const session = await mintSession(parserUrl, secret, detached);
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
