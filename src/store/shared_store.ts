/**
 * What instances of the service keep between requests and may share: ended sessions, rate-limit
 * windows, claims on work that must run once. One small interface over two engines: this
 * instance's memory ({@linkcode memoryStore}, the default: nothing is shared) and Redis
 * (`STATE_URL`, `redis_store.ts`), where every instance with the same `STATE_URL` sees the same
 * keys. Values are strings; what they mean is the caller's business.
 *
 * @module
 */
import { ApiError } from "../http/errors.ts";

/** A key-value store with expiry. Every method may reject with {@linkcode storeUnavailable}. */
export interface SharedStore {
  /** Whether other instances see these keys (Redis) or only this one (memory). */
  readonly shared: boolean;
  get(key: string): Promise<string | null>;
  /** Gets and deletes `key` at once: of callers racing for it, one gets the value. */
  take(key: string): Promise<string | null>;
  /**
   * Sets `key` for `ttlMs`; with `ifAbsent`, only when it is not set (a claim). Resolves whether
   * the value was set.
   */
  set(key: string, value: string, ttlMs: number, ifAbsent?: boolean): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** The keys that start with `prefix` (as set, without any prefix the engine adds). */
  keys(prefix: string): Promise<string[]>;
  /**
   * Counts one hit on `key`'s window, which its first hit opens for `windowMs`: the hits so far
   * (this one included) and the milliseconds until the window closes.
   */
  hit(key: string, windowMs: number): Promise<WindowHits>;
  /** Ends the connection (shutdown); later calls reject. */
  close(): Promise<void>;
}

/** What {@linkcode SharedStore.hit} counted. */
export interface WindowHits {
  hits: number;
  msLeft: number;
}

/**
 * The error of a store that does not answer: 503 `UNREACHABLE` naming the `state` service, never
 * its address. Callers fail closed on it (no login without its rate limit, no session whose
 * logout cannot be checked).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const e = storeUnavailable();
 * assert.deepEqual([e.status, e.code, e.details], [503, "UNREACHABLE", { service: "state" }]);
 * ```
 */
export function storeUnavailable(): ApiError {
  return new ApiError(503, "UNREACHABLE", "The shared state store does not answer", {
    service: "state",
  });
}

/** Options of {@linkcode memoryStore}. */
export interface MemoryStoreOptions {
  /** Most keys held; the least recently set go first. */
  maxKeys: number;
  now?: () => number;
}

/**
 * A store in this instance's memory, bounded to `maxKeys`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * let t = 0;
 * const store = memoryStore({ maxKeys: 100, now: () => t });
 * assert.equal(await store.set("claim", "me", 1000, true), true);
 * assert.equal(await store.set("claim", "you", 1000, true), false); // already claimed
 * assert.deepEqual(await store.hit("tries", 60_000), { hits: 1, msLeft: 60_000 });
 * t = 1000;
 * assert.equal(await store.get("claim"), null); // expired
 * assert.deepEqual(await store.hit("tries", 60_000), { hits: 2, msLeft: 59_000 });
 * ```
 */
export function memoryStore(opts: MemoryStoreOptions): SharedStore {
  const now = opts.now ?? (() => Date.now());
  // insertion order is the order keys were last set: the first is the one to drop
  const entries = new Map<string, { value: string; expires: number }>();
  const live = (key: string) => {
    const e = entries.get(key);
    if (e && e.expires <= now()) entries.delete(key);
    return e && e.expires > now() ? e : undefined;
  };
  const put = (key: string, value: string, expires: number) => {
    entries.delete(key);
    entries.set(key, { value, expires });
    for (const oldest of entries.keys()) {
      if (entries.size <= opts.maxKeys) break;
      entries.delete(oldest);
    }
  };
  return {
    shared: false,
    get: (key) => Promise.resolve(live(key)?.value ?? null),
    take(key) {
      const value = live(key)?.value ?? null;
      entries.delete(key);
      return Promise.resolve(value);
    },
    set(key, value, ttlMs, ifAbsent = false) {
      if (ifAbsent && live(key)) return Promise.resolve(false);
      put(key, value, now() + ttlMs);
      return Promise.resolve(true);
    },
    delete(key) {
      entries.delete(key);
      return Promise.resolve();
    },
    keys: (prefix) =>
      Promise.resolve([...entries.keys()].filter((k) => k.startsWith(prefix) && live(k))),
    hit(key, windowMs) {
      const e = live(key);
      const hits = Number(e?.value ?? 0) + 1;
      const expires = e?.expires ?? now() + windowMs;
      if (e) e.value = String(hits);
      else put(key, String(hits), expires);
      return Promise.resolve({ hits, msLeft: expires - now() });
    },
    close() {
      entries.clear();
      return Promise.resolve();
    },
  };
}
