/**
 * Per-instance state: the small caches DESIGN.md allows. Created by `createApp`, never global,
 * so two apps in one process (tests) never share entries.
 *
 * @module
 */
import { createTtlCache, type TtlCache } from "./cache/ttl_cache.ts";
import type { Config } from "./config.ts";
import { createRateLimiter, type RateLimiter } from "./session/rate_limit.ts";
import type { AutolinkMatcher } from "./lore/autolink.ts";
import type { Route } from "./router.ts";

/** Everything an app instance keeps between requests. */
export interface AppState {
  /** Compiled autolink title index, keyed by credential identity (60 s by default). */
  autolink: TtlCache<AutolinkMatcher>;
  /** Sanitized previews keyed by `${mode}:${blobId}` (content-addressed, so never stale). */
  preview: TtlCache<string>;
  /** Login, register and connect attempts per client (`AUTH_RATE_LIMIT` per window). */
  authLimiter: RateLimiter;
  /** The route table this app serves (for the generated API description). */
  routes: readonly Route[];
}

/**
 * Creates the state for one app.
 *
 * @example
 * ```ts
 * const state = createAppState(config, routes);
 * ```
 */
export function createAppState(
  config: Config,
  routes: readonly Route[],
  now?: () => number,
): AppState {
  return {
    routes,
    authLimiter: createRateLimiter({
      limit: config.AUTH_RATE_LIMIT,
      windowMs: config.AUTH_RATE_WINDOW_MS,
      maxKeys: 10_000,
      now,
    }),
    autolink: createTtlCache({ ttlMs: config.AUTOLINK_CACHE_MS, maxEntries: 256, now }),
    preview: createTtlCache({ ttlMs: 24 * 3600_000, maxEntries: 1000, now }),
  };
}
