/**
 * Per-client rate limiting for login, register and connect: a fixed window per key that opens at
 * the key's first request, in a bounded table. Memory stays bounded under a flood of distinct
 * keys, and the eviction policy is chosen so that a flood does not erase a lockout. With a shared
 * store (`STATE_URL`), {@linkcode storeRateLimiter} keeps the same windows there, so that every
 * instance counts one client's attempts together.
 *
 * @module
 */
import type { SharedStore } from "../store/shared_store.ts";

/** Options of {@linkcode createRateLimiter}. */
export interface RateLimiterOptions {
  /** Requests allowed per key and window. */
  limit: number;
  /** Window length; a key's window opens at its first request after the previous one closed. */
  windowMs: number;
  /** Most keys tracked at once. */
  maxKeys: number;
  /** Clock in ms; default `Date.now`. */
  now?: () => number;
}

/** The verdict for one request. */
export interface RateLimitResult {
  /** Whether the request may proceed (answer 429 otherwise). */
  allowed: boolean;
  /** Whole seconds until this key may try again (≥ 1 when refused, 0 when allowed). */
  retryAfterSeconds: number;
  /** Requests left in the current window after this one. */
  remaining: number;
}

/** A limiter from {@linkcode createRateLimiter}. */
export interface RateLimiter {
  /** Counts one request for `key` (only if it is allowed) and says whether it may proceed. */
  check(key: string): RateLimitResult;
  /** Keys currently tracked (at most `maxKeys`). */
  readonly size: number;
}

/** How many blocked keys one insertion may skip over before evicting one anyway. */
const SECOND_CHANCES = 8;

/**
 * Creates a limiter: at most `limit` requests per key in each window (so at most `2 × limit` in
 * any span of `windowMs` straddling two windows). Refused requests do not count, so a client that
 * waits `retryAfterSeconds` always gets through.
 *
 * When the table is full, the least recently used key is evicted, except that a key which is
 * currently blocked gets a second chance (moved to the recent end) instead, up to 8 times per
 * insertion. Why this does not let an attacker reset their own window cheaply: every request,
 * refused or not, refreshes the key's recency, so pushing it out takes `maxKeys` requests from
 * other keys, i.e. `maxKeys` distinct addresses (IPv6 counted per /64 by {@linkcode clientKey}),
 * and anyone with that many addresses already has `maxKeys × limit` attempts without evicting
 * anything. A locked-out key that goes quiet is skipped over rather than forgotten, so ordinary
 * traffic from other clients does not lift a lockout either; only a table full of blocked keys
 * forces one out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * let now = 0;
 * const limiter = createRateLimiter({ limit: 2, windowMs: 60_000, maxKeys: 100, now: () => now });
 * assert.equal(limiter.check("203.0.113.7").allowed, true);
 * assert.equal(limiter.check("203.0.113.7").allowed, true);
 * assert.deepEqual(limiter.check("203.0.113.7"), {
 *   allowed: false,
 *   retryAfterSeconds: 60,
 *   remaining: 0,
 * });
 * now = 60_000; // the key's window has closed
 * assert.equal(limiter.check("203.0.113.7").allowed, true);
 * ```
 */
export function createRateLimiter(opts: RateLimiterOptions): RateLimiter {
  const { limit, windowMs, maxKeys } = opts;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new RangeError("rate limiter: limit must be a positive integer");
  }
  if (!Number.isFinite(windowMs) || windowMs <= 0) {
    throw new RangeError("rate limiter: windowMs must be a positive number");
  }
  if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) {
    throw new RangeError("rate limiter: maxKeys must be a positive integer");
  }
  const now = opts.now ?? (() => Date.now());
  // Map iteration order is insertion order: re-inserting on every hit makes the first entry the
  // least recently used.
  const windows = new Map<string, { start: number; count: number }>();

  const makeRoom = (t: number) => {
    let chances = SECOND_CHANCES;
    while (windows.size >= maxKeys) {
      const [oldest, w] = windows.entries().next().value!;
      windows.delete(oldest);
      const blocked = t < w.start + windowMs && w.count >= limit;
      if (blocked && chances-- > 0) windows.set(oldest, w);
    }
  };

  return {
    check(key: string): RateLimitResult {
      const t = now();
      let w = windows.get(key);
      if (w) windows.delete(key);
      else makeRoom(t);
      if (!w || t >= w.start + windowMs) w = { start: t, count: 0 };
      windows.set(key, w);
      if (w.count >= limit) {
        // Clamped: a clock that stepped back must not promise a wait longer than one window.
        const waitMs = Math.min(w.start + windowMs - t, windowMs);
        return {
          allowed: false,
          retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
          remaining: 0,
        };
      }
      w.count++;
      return { allowed: true, retryAfterSeconds: 0, remaining: limit - w.count };
    },
    get size() {
      return windows.size;
    },
  };
}

/** A limiter whose answer may come from a shared store; {@linkcode RateLimiter} is one too. */
export interface AttemptLimiter {
  check(key: string): RateLimitResult | Promise<RateLimitResult>;
}

/**
 * A limiter over `store`: the same fixed windows as {@linkcode createRateLimiter}, counted where
 * every instance on the store counts them. Rejects when the store does not answer (the caller
 * fails closed: no attempt goes unlimited).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { memoryStore } from "../store/shared_store.ts";
 * const limiter = storeRateLimiter(memoryStore({ maxKeys: 10 }), { limit: 1, windowMs: 60_000 });
 * assert.equal((await limiter.check("login:203.0.113.7")).allowed, true);
 * assert.deepEqual(await limiter.check("login:203.0.113.7"), {
 *   allowed: false,
 *   retryAfterSeconds: 60,
 *   remaining: 0,
 * });
 * ```
 */
export function storeRateLimiter(
  store: SharedStore,
  opts: Pick<RateLimiterOptions, "limit" | "windowMs">,
): AttemptLimiter {
  return {
    async check(key) {
      const { hits, msLeft } = await store.hit(`rate:${key}`, opts.windowMs);
      if (hits > opts.limit) {
        const waitMs = Math.min(msLeft, opts.windowMs);
        return {
          allowed: false,
          retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
          remaining: 0,
        };
      }
      return { allowed: true, retryAfterSeconds: 0, remaining: opts.limit - hits };
    },
  };
}
