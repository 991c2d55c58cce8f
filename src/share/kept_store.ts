/**
 * Kept readings of one kind (note_readings.ts), per public Core identity, in memory and — when
 * the app has a `DATA_DIR` — on disk (share_disk.ts): an identity's file is read on its first use
 * after a start, and written again by {@linkcode KeptStore.flush} once entries changed. Entries
 * do not expire: each is reused only while its note and its recorded answers still hold.
 *
 * @module
 */
import { z } from "zod";
import { type Kept, policyAnswerSchema } from "./policy_record.ts";
import type { KeptKind, ShareDisk } from "./share_disk.ts";

/** Kept readings of one kind; see {@linkcode createKeptStore}. */
export interface KeptStore<T> {
  /** The entry under `key`, after the identity's file was read (once). */
  get(identity: string, key: string): Promise<Kept<T> | undefined>;
  set(identity: string, key: string, kept: Kept<T>): void;
  /**
   * Writes every identity whose entries changed since its last write; one write at a time.
   * `many`: only those where many changed (a write blocks while it serialises every entry, so
   * one edited note waits for the shutdown's write).
   */
  flush(opts?: { many?: boolean }): Promise<void>;
  /** Entries in memory, all identities. */
  readonly size: number;
}

/** Options of {@linkcode createKeptStore}. */
export interface KeptStoreOptions<T> {
  kind: KeptKind;
  /** Most entries per identity; the oldest go first. */
  maxEntries: number;
  disk: ShareDisk | null;
  /** Checks a kept value read from disk (a value that fails is dropped). */
  schema: z.ZodType<T>;
}

/** Fewest changed entries a `many` flush writes for. */
const MANY = 64;

/**
 * A store of kept readings.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 * import { shareDisk } from "./share_disk.ts";
 * const dir = await Deno.makeTempDir();
 * const opts = { kind: "texts" as const, maxEntries: 100, schema: z.string() };
 * const first = createKeptStore({ ...opts, disk: shareDisk(dir) });
 * first.set("identity1", "note1", { answers: [["root", "", "guide"]], value: "harbor town" });
 * await first.flush();
 * const afterRestart = createKeptStore({ ...opts, disk: shareDisk(dir) });
 * assert.equal((await afterRestart.get("identity1", "note1"))?.value, "harbor town");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function createKeptStore<T>(opts: KeptStoreOptions<T>): KeptStore<T> {
  const { kind, disk, maxEntries } = opts;
  const byIdentity = new Map<string, Map<string, Kept<T>>>();
  const loading = new Map<string, Promise<Map<string, Kept<T>>>>();
  /** Entries set since the identity's last write. */
  const dirty = new Map<string, number>();
  let writing = Promise.resolve();

  const entriesOf = (identity: string) => {
    let p = loading.get(identity);
    if (!p) {
      p = (disk ? disk.loadKept(identity, kind) : Promise.resolve([])).then((read) => {
        const entries = byIdentity.get(identity) ?? new Map<string, Kept<T>>();
        const schema = z.object({ answers: z.array(policyAnswerSchema), value: opts.schema });
        for (const [key, kept] of read) {
          const checked = schema.safeParse(kept);
          if (checked.success && !entries.has(key)) entries.set(key, checked.data);
        }
        byIdentity.set(identity, entries);
        return entries;
      });
      loading.set(identity, p);
    }
    return p;
  };

  return {
    async get(identity, key) {
      return (await entriesOf(identity)).get(key);
    },
    set(identity, key, kept) {
      let entries = byIdentity.get(identity);
      if (!entries) byIdentity.set(identity, entries = new Map());
      entries.delete(key);
      entries.set(key, kept);
      while (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
      dirty.set(identity, (dirty.get(identity) ?? 0) + 1);
    },
    flush(flushOpts = {}) {
      if (!disk) return Promise.resolve();
      writing = writing.then(async () => {
        for (const [identity, changed] of [...dirty]) {
          const size = byIdentity.get(identity)?.size ?? 0;
          if (flushOpts.many && changed < Math.max(MANY, size / 8)) continue;
          dirty.delete(identity);
          const entries = byIdentity.get(identity);
          // failures cost the next start some Core calls, nothing more
          if (entries) await disk.saveKept(identity, kind, entries.entries()).catch(() => {});
        }
      });
      return writing;
    },
    get size() {
      let n = 0;
      for (const entries of byIdentity.values()) n += entries.size;
      return n;
    },
  };
}
