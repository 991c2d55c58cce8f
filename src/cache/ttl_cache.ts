/**
 * A small bounded cache with per-entry expiry and single-flight loading: concurrent misses for one
 * key share one load, so a burst of requests causes one upstream call.
 *
 * @module
 */

/** A bounded TTL cache. */
export interface TtlCache<V> {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  /** Returns the cached value or runs `load` once for all concurrent callers of this key. */
  getOrLoad(key: string, load: () => Promise<V>): Promise<V>;
  delete(key: string): void;
  /** Drops every key for which `pred` is true (e.g. all entries of one session). */
  deleteWhere(pred: (key: string) => boolean): void;
  clear(): void;
  readonly size: number;
}

/** Options of {@linkcode createTtlCache}. */
export interface TtlCacheOptions {
  ttlMs: number;
  maxEntries: number;
  now?: () => number;
}

/**
 * Creates a cache. When full, the least recently used entry is evicted. A failed load is not
 * cached.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * let loads = 0;
 * const loadTitles = () => Promise.resolve([`load ${++loads}`]);
 * const titles = createTtlCache<string[]>({ ttlMs: 60_000, maxEntries: 100 });
 * const [a, b] = await Promise.all([
 *   titles.getOrLoad("user-1", loadTitles),
 *   titles.getOrLoad("user-1", loadTitles), // shares the first call's load
 * ]);
 * assert.deepEqual([a, b, loads], [["load 1"], ["load 1"], 1]);
 * ```
 */
export function createTtlCache<V>(opts: TtlCacheOptions): TtlCache<V> {
  const now = opts.now ?? (() => Date.now());
  const entries = new Map<string, { value: V; expires: number }>();
  // `live` turns false when the key is invalidated mid-load: that load's value may be stale
  const inflight = new Map<string, { promise: Promise<V>; live: boolean }>();
  const drop = (key: string) => {
    const pending = inflight.get(key);
    if (pending) pending.live = false;
    inflight.delete(key);
  };

  const get = (key: string): V | undefined => {
    const e = entries.get(key);
    if (!e) return undefined;
    if (e.expires <= now()) {
      entries.delete(key);
      return undefined;
    }
    entries.delete(key); // refresh LRU position
    entries.set(key, e);
    return e.value;
  };

  const set = (key: string, value: V) => {
    if (opts.ttlMs <= 0) return;
    entries.delete(key);
    entries.set(key, { value, expires: now() + opts.ttlMs });
    while (entries.size > opts.maxEntries) {
      entries.delete(entries.keys().next().value as string);
    }
  };

  return {
    get,
    set,
    getOrLoad(key, load) {
      const hit = get(key);
      if (hit !== undefined) return Promise.resolve(hit);
      const pending = inflight.get(key);
      if (pending) return pending.promise;
      const entry = { live: true, promise: Promise.resolve() as Promise<V> };
      entry.promise = load().then((v) => {
        if (entry.live) set(key, v); // invalidated meanwhile: serve it, do not keep it
        return v;
      }).finally(() => {
        if (inflight.get(key) === entry) inflight.delete(key);
      });
      inflight.set(key, entry);
      return entry.promise;
    },
    delete(key) {
      entries.delete(key);
      drop(key);
    },
    deleteWhere(pred) {
      for (const k of [...entries.keys()]) if (pred(k)) entries.delete(k);
      for (const k of [...inflight.keys()]) if (pred(k)) drop(k);
    },
    clear() {
      entries.clear();
      for (const k of [...inflight.keys()]) drop(k);
    },
    get size() {
      return entries.size;
    },
  };
}
