/**
 * The public share's version in the shared store (`STATE_URL`): instances tell one another what
 * the share is instead of each asking Core. Every read of the share from Core publishes what it
 * found under `share-version:<identity>`: the version and when it was read. An instance whose
 * snapshot is due for its reload (`PUBLIC_CACHE_MS`/2) looks there first: when Core was read less
 * than that long ago, or another instance claimed the next read (`share-check:<identity>:<when
 * the last was>`), it compares its snapshot's version with the published one, and only a
 * different one (or none) costs it a read of Core; else it claims the read itself. So the
 * instances read the share from Core about as often as one instance alone. Before serving, an
 * instance compares its snapshot with the store at most every {@linkcode SHARE_VERSION_CHECK_MS},
 * so a write through any instance shows on all of them within that time; a snapshot the store
 * does not name is read again from Core before it is served.
 *
 * A read publishes only over what it saw before it started: when another instance published
 * meanwhile with another version (two writes racing, or a read that began before a write), the
 * record is deleted instead, so every instance reads Core again rather than trust a version that
 * may be older. When the store does not answer, the share is read as without it (snapshots
 * reloaded from Core every `PUBLIC_CACHE_MS`/2) and visitors stop waiting for it: only a due
 * reload, which nobody waits for, asks it again. The store logs the outage.
 *
 * @module
 */
import type { SharedStore } from "../store/shared_store.ts";

/**
 * Longest time a snapshot is served after it was last compared with the store's version: the
 * bound within which a write through one instance shows on every instance's public pages.
 */
export const SHARE_VERSION_CHECK_MS = 250;

/**
 * How long a published version is kept unless published again (every reload interval while
 * visitors come); longer than any snapshot lives (`PUBLIC_CACHE_MS` is at most an hour).
 */
export const SHARE_VERSION_TTL_MS = 2 * 3_600_000;

/** The version of a share with nothing published (a null snapshot). */
const UNPUBLISHED = "unpublished";

/** A record in the store: when Core was read (ms, the reader's clock) and the version found. */
function record(version: string, readAt: number): string {
  return `${readAt} ${version}`;
}

function parseRecord(text: string): { readAt: number; version: string } {
  const space = text.indexOf(" ");
  return { readAt: Number(text.slice(0, space)) || 0, version: text.slice(space + 1) };
}

/** A snapshot as this module sees it: its version, or null while nothing is published. */
export type Versioned = { readonly version: string } | null;

/** Options of {@linkcode shareVersions}. */
export interface ShareVersionsOptions {
  store: SharedStore;
  /** The reload interval (`PUBLIC_CACHE_MS`/2): Core is read about this often for all. */
  intervalMs: number;
  /** The instance's clock (intervals and checks). */
  now: () => number;
  /** This instance, as its claims name it. */
  instanceId: string;
}

/** The share's version in the store, for one instance; see {@linkcode shareVersions}. */
export interface ShareVersions<S extends Versioned> {
  /** Whether `snapshot` must be compared with the store before it is served. */
  due(identity: string, snapshot: S): boolean;
  /**
   * The snapshot cache's load: a first load (`previous` undefined) reads Core and publishes; a due
   * reload keeps `previous` while the store names it and Core was read (or its next read claimed)
   * less than an interval ago, else reads Core.
   */
  load(identity: string, previous: S | undefined, read: () => Promise<S>): Promise<S>;
  /**
   * `snapshot` when the store names it (or does not answer), else what `reread` reads from Core
   * (and publishes); concurrent callers share one comparison.
   */
  current(identity: string, snapshot: S, reread: () => Promise<S>): Promise<S>;
  /**
   * After a write through this instance: `reread` the share and publish it; without `reread`
   * (nothing read here yet), or when it fails, the version is deleted so every instance reads
   * Core again.
   */
  written(identity: string, reread?: () => Promise<S>): Promise<S | undefined>;
}

/**
 * The {@linkcode ShareVersions} of one instance on `store`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { memoryStore } from "../store/shared_store.ts";
 * const store = memoryStore({ maxKeys: 100 });
 * let t = 10_000;
 * const now = () => t;
 * const a = shareVersions({ store, intervalMs: 2_500, now, instanceId: "a" });
 * const b = shareVersions({ store, intervalMs: 2_500, now, instanceId: "b" });
 * const v1 = { version: "v1" };
 * let coreReads = 0;
 * const read = () => Promise.resolve(v1).finally(() => coreReads++);
 * await a.load("identity", undefined, read); // a first load: Core, published
 * t += 2_500;
 * await a.load("identity", v1, read); // due, and Core read an interval ago: a reads it
 * assert.equal(await b.load("identity", v1, read), v1); // due: the store names v1
 * assert.equal(coreReads, 2);
 * assert.equal(b.due("identity", v1), false); // just compared
 * ```
 */
export function shareVersions<S extends Versioned>(
  opts: ShareVersionsOptions,
): ShareVersions<S> {
  const { store, intervalMs, now, instanceId } = opts;
  const versionKey = (identity: string) => `share-version:${identity}`;
  const versionOf = (snapshot: S) => snapshot?.version ?? UNPUBLISHED;
  /** The version last found in the store, per identity, and when it was asked. */
  const confirmed = new Map<string, { version: string; at: number }>();
  const comparing = new Map<string, Promise<S>>();
  const asking = askingStore();
  const ask = asking.ask;
  const confirm = (identity: string, version: string, at: number) => {
    if ((confirmed.get(identity)?.at ?? -Infinity) <= at) confirmed.set(identity, { version, at });
  };

  /** Publishes `mine`, read after the store held `seen` (its answer at `at`). */
  const publish = async (identity: string, seen: string | null, mine: string, at: number) => {
    const key = versionKey(identity);
    const held = await ask(() => store.get(key));
    if (held === undefined) return;
    if (held === seen) {
      if (await ask(() => store.set(key, record(mine, now()), SHARE_VERSION_TTL_MS))) {
        confirm(identity, mine, at);
      }
    } else if (held !== null && parseRecord(held).version === mine) {
      confirm(identity, mine, at); // another read found the same meanwhile
    } else {
      // published meanwhile from another read, which may have begun before ours or before a
      // write: no version is better than one that could be old
      await ask(() => store.delete(key));
    }
  };

  /** Reads Core and publishes what it found over `seen` (asked first when not given). */
  const readAndPublish = async (
    identity: string,
    read: () => Promise<S>,
    seen?: string | null,
    at = now(),
  ): Promise<S> => {
    if (seen === undefined && !asking.down) seen = await ask(() => store.get(versionKey(identity)));
    const snapshot = await read();
    if (seen !== undefined) await publish(identity, seen, versionOf(snapshot), at);
    return snapshot;
  };

  return {
    due(identity, snapshot) {
      if (asking.down) return false;
      const last = confirmed.get(identity);
      return last?.version !== versionOf(snapshot) || now() - last.at >= SHARE_VERSION_CHECK_MS;
    },

    async load(identity, previous, read) {
      if (previous === undefined) return asking.down ? read() : readAndPublish(identity, read);
      const at = now();
      const held = await ask(() => store.get(versionKey(identity)));
      if (held === undefined) return read(); // as without a store
      if (held !== null) {
        const last = parseRecord(held);
        // (a reading from the future is as old: a clock that was wrong must not stop checks)
        if (Math.abs(at - last.readAt) >= intervalMs) {
          const claim = `share-check:${identity}:${last.readAt}`;
          const won = await ask(() => store.set(claim, instanceId, intervalMs, true));
          if (won === undefined) return read();
          if (won) return readAndPublish(identity, read, held, at);
        }
        if (last.version === versionOf(previous)) {
          confirm(identity, last.version, at);
          return previous;
        }
      }
      return readAndPublish(identity, read, held, at);
    },

    current(identity, snapshot, reread) {
      const running = comparing.get(identity);
      if (running) return running;
      const compared = (async () => {
        const at = now();
        const held = await ask(() => store.get(versionKey(identity)));
        if (held === undefined) return snapshot; // as without a store
        const version = versionOf(snapshot);
        if (held !== null && parseRecord(held).version === version) {
          confirm(identity, version, at);
          return snapshot;
        }
        // the store says it is stale (or knows nothing of it): never served, read again
        return await readAndPublish(identity, reread, held, at);
      })().finally(() => comparing.delete(identity));
      comparing.set(identity, compared);
      return compared;
    },

    async written(identity, reread) {
      const key = versionKey(identity);
      const forget = async () => void await ask(() => store.delete(key));
      if (!reread) return void await forget();
      // asked even while the store seemed down: a write must reach the others if it can
      const at = now();
      const seen = await ask(() => store.get(key));
      let snapshot: S;
      try {
        snapshot = await reread();
      } catch (e) {
        if (!asking.down) await forget();
        throw e;
      }
      if (seen !== undefined) await publish(identity, seen, versionOf(snapshot), at);
      return snapshot;
    },
  };
}

/** A store's answers as {@linkcode shareVersions} asks for them. */
interface AskingStore {
  /** The command's answer, or undefined when the store does not answer. */
  ask<T>(command: () => Promise<T>): Promise<T | undefined>;
  /** The store failed its last command: nobody waits for it until a reload finds it back. */
  readonly down: boolean;
}

/** Asks a store, remembering whether its last command failed. */
function askingStore(): AskingStore {
  let down = false;
  return {
    async ask(command) {
      try {
        const answer = await command();
        down = false;
        return answer;
      } catch {
        down = true; // the store's own log says so, once an outage
        return undefined;
      }
    },
    get down() {
      return down;
    },
  };
}
