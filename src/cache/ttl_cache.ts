/**
 * A small bounded cache with per-entry expiry and single-flight loading: concurrent misses for one
 * key share one load, so a burst of requests causes one upstream call. Optionally bounded in
 * bytes too, and refreshed ahead of expiry in the background.
 *
 * @module
 */

/** A bounded TTL cache. */
export interface TtlCache<V> {
  get(key: string): V | undefined;
  /**
   * The value while it is fresh and not yet due for a reload (`refreshAfterMs`), else undefined;
   * never starts a load. For a caller that must fall back to `getOrLoad` once a reload is due.
   */
  settled(key: string): V | undefined;
  /**
   * What `getOrLoad` would answer at once without starting a load: the value while it is fresh
   * and either not yet due for a reload or already being reloaded; else undefined.
   */
  serving(key: string): V | undefined;
  set(key: string, value: V): void;
  /** Returns the cached value or runs `load` once for all concurrent callers of this key. */
  getOrLoad(key: string, load: () => Promise<V>): Promise<V>;
  /**
   * Runs `load` now, whatever the entry's age, and keeps its value; meanwhile callers still get
   * the current entry. A load already running for the key is not kept: it may have read what
   * this reload is about. Rejects when `load` fails, leaving the entry as it was.
   */
  reload(key: string, load: () => Promise<V>): Promise<V>;
  delete(key: string): void;
  /** Drops every key for which `pred` is true (e.g. all entries of one session). */
  deleteWhere(pred: (key: string) => boolean): void;
  clear(): void;
  readonly size: number;
  /** What the entries weigh together, as `sizeOf` counts them (0 without it). */
  readonly bytes: number;
}

/** Options of {@linkcode createTtlCache}. */
export interface TtlCacheOptions<V> {
  ttlMs: number;
  maxEntries: number;
  now?: () => number;
  /** Most bytes the entries may hold together, as `sizeOf` counts them (needs `sizeOf`). */
  maxBytes?: number;
  /** An entry's size in bytes; an entry larger than `maxBytes` is never kept. */
  sizeOf?: (value: V) => number;
  /**
   * From this age on, `getOrLoad` still answers with the entry at once but reloads it in the
   * background (one reload per key; a failed one keeps the entry until it expires), so a key in
   * steady use never makes a caller wait.
   */
  refreshAfterMs?: number;
}

/** One kept value: when it expires and was stored, what it weighs, where it is in the LRU order. */
interface Entry<V> {
  value: V;
  expires: number;
  stored: number;
  bytes: number;
  touched: number;
}

/**
 * Creates a cache. When full (entries or bytes), the least recently used entries are evicted. A
 * failed load is not cached.
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
export function createTtlCache<V>(opts: TtlCacheOptions<V>): TtlCache<V> {
  const now = opts.now ?? (() => Date.now());
  const sizeOf = opts.sizeOf ?? (() => 0);
  const maxBytes = opts.maxBytes ?? Infinity;
  const refreshAfter = opts.refreshAfterMs ?? Infinity;
  const entries = new Map<string, Entry<V>>();
  let bytes = 0;
  /** Counts stores and moves to the back: an entry's `touched` is the count when it got there. */
  let sequence = 0;
  // `live` turns false when the key is invalidated mid-load: that load's value may be stale
  const inflight = new Map<string, { promise: Promise<V>; live: boolean }>();
  const drop = (key: string) => {
    const pending = inflight.get(key);
    if (pending) pending.live = false;
    inflight.delete(key);
  };

  const remove = (key: string) => {
    const e = entries.get(key);
    if (!e) return;
    entries.delete(key);
    bytes -= e.bytes;
  };

  const fresh = (key: string) => {
    const e = entries.get(key);
    if (!e) return undefined;
    if (e.expires <= now()) {
      remove(key);
      return undefined;
    }
    // Move it to the back (LRU) only once it is in the older half: moving every hit would make
    // V8 rebuild the map's table every few hits, garbage a hot cache cannot afford.
    if (sequence - e.touched >= Math.max(1, entries.size >> 1)) {
      entries.delete(key);
      entries.set(key, e);
      e.touched = ++sequence;
    }
    return e;
  };

  const set = (key: string, value: V) => {
    if (opts.ttlMs <= 0) return;
    remove(key);
    const size = sizeOf(value);
    if (size > maxBytes) return;
    const t = now();
    entries.set(key, {
      value,
      expires: t + opts.ttlMs,
      stored: t,
      bytes: size,
      touched: ++sequence,
    });
    bytes += size;
    while (entries.size > opts.maxEntries || bytes > maxBytes) {
      remove(entries.keys().next().value as string);
    }
  };

  const startLoad = (key: string, load: () => Promise<V>) => {
    const entry = { live: true, promise: Promise.resolve() as Promise<V> };
    entry.promise = load().then((v) => {
      if (entry.live) set(key, v); // invalidated meanwhile: serve it, do not keep it
      return v;
    }).finally(() => {
      if (inflight.get(key) === entry) inflight.delete(key);
    });
    inflight.set(key, entry);
    return entry.promise;
  };

  return {
    get: (key) => fresh(key)?.value,
    settled(key) {
      const hit = fresh(key);
      return hit !== undefined && now() - hit.stored < refreshAfter ? hit.value : undefined;
    },
    serving(key) {
      const hit = fresh(key);
      if (hit === undefined) return undefined;
      return now() - hit.stored < refreshAfter || inflight.has(key) ? hit.value : undefined;
    },
    set,
    getOrLoad(key, load) {
      const hit = fresh(key);
      if (hit !== undefined) {
        if (now() - hit.stored >= refreshAfter && !inflight.has(key)) {
          startLoad(key, load).catch(() => {}); // the entry serves until it expires
        }
        return Promise.resolve(hit.value);
      }
      return inflight.get(key)?.promise ?? startLoad(key, load);
    },
    reload(key, load) {
      drop(key);
      return startLoad(key, load);
    },
    delete(key) {
      remove(key);
      drop(key);
    },
    deleteWhere(pred) {
      for (const k of [...entries.keys()]) if (pred(k)) remove(k);
      for (const k of [...inflight.keys()]) if (pred(k)) drop(k);
    },
    clear() {
      entries.clear();
      bytes = 0;
      for (const k of [...inflight.keys()]) drop(k);
    },
    get size() {
      return entries.size;
    },
    get bytes() {
      return bytes;
    },
  };
}

/**
 * What a string weighs in memory at most (two bytes a character, plus its header), for a cache's
 * `sizeOf`. V8 keeps Latin-1 text in one byte a character, so this errs on the safe side.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const previews = createTtlCache<string>({
 *   ttlMs: 60_000,
 *   maxEntries: 100,
 *   maxBytes: 1024,
 *   sizeOf: stringBytes,
 * });
 * previews.set("big", "x".repeat(1024));
 * assert.equal(previews.get("big"), undefined); // larger than the whole bound: never kept
 * assert.equal(stringBytes("abc"), 6 + 32);
 * ```
 */
export function stringBytes(text: string): number {
  return text.length * 2 + 32;
}
