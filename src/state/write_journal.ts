/**
 * The write journal: what a request has created in Core while its write is under way, so that
 * what an instance killed mid-write leaves behind (an image note whose upload never got its
 * answer, a lore note without its labels) is found and removed, or reported, instead of lying in
 * Core as a duplicate the retry makes again. A request's record is written after each note it
 * creates and dropped once its answer is ready (pipeline/finish.ts), before a byte is sent: an
 * answer the client may have seen never leaves a record, so a swept note is one nobody was told
 * about.
 *
 * Where records live: with a shared store (`STATE_URL`), there, next to a heartbeat of each
 * instance; records of an instance whose heartbeat has lapsed are swept by any other, every
 * {@linkcode SWEEP_EVERY_MS}. Without one, as files in `DATA_DIR/writes/`, swept when the
 * service starts (they are an earlier run's). A journal that cannot be written does not stop the
 * write (the record is a recovery aid); the log says so.
 *
 * @module
 */
import { join } from "node:path";
import { z } from "zod";
import type { Config } from "../config/service_config.ts";
import { nullOn404 } from "../http/errors.ts";
import type { Logger } from "../http/log.ts";
import { createCoreClient } from "../upstream/core.ts";
import type { SharedStore } from "../store/shared_store.ts";
import { type CancelDeadline, type Deadlines, sharedDeadlines } from "../util/deadlines.ts";

/** How often a live instance renews its heartbeat; it lapses after three missed renewals. */
export const HEARTBEAT_MS = 3_000;
/** How often instances sharing a store look for records of instances that are gone. */
export const SWEEP_EVERY_MS = 30_000;

/** One request's record. */
const writeRecord = z.object({
  instance: z.string(),
  requestId: z.string(),
  route: z.string(),
  /** Core's base URL the notes were created on (never logged). */
  core: z.string(),
  notes: z.array(z.string()),
});

/** What a request created while its write was under way. */
export type WriteRecord = z.output<typeof writeRecord>;

/** One request's part of the journal. */
export interface RequestWrites {
  /** Records that the request created `noteId` on the Core at `core`. */
  created(core: string, noteId: string): Promise<void>;
  /** The answer is ready: the record goes, and later creations are not recorded. */
  close(): Promise<void>;
}

/** What the sweep does with the notes of one record left behind. */
export type Sweeper = (record: WriteRecord) => Promise<"removed" | "reported">;

/** The journal of one instance. */
export interface WriteJournal {
  /** A request's part (nothing is written until it creates a note). */
  open(requestId: string, route: string): RequestWrites;
  /**
   * Starts sweeping what stopped instances left: at once (an earlier run's files), then, with a
   * shared store, every {@linkcode SWEEP_EVERY_MS}.
   */
  start(sweep: Sweeper): void;
  /** Stops the heartbeat and the sweeps (shutdown). */
  close(): void;
}

/** Where records are kept. */
interface Records {
  put(record: WriteRecord): Promise<void>;
  drop(record: Pick<WriteRecord, "instance" | "requestId">): Promise<void>;
  /** Records of instances that are gone. */
  orphans(): Promise<WriteRecord[]>;
  /** Runs `sweep` now and, where instances share the store, again later. */
  schedule(run: () => Promise<void>): void;
  close(): void;
}

/** Options of {@linkcode createWriteJournal}. */
export interface WriteJournalOptions {
  /** The shared store, when instances share one; else records go to `dataDir`. */
  store?: SharedStore;
  dataDir: string;
  instanceId: string;
  log: Logger;
  deadlines?: Deadlines;
}

/** The journal of this instance. */
export function createWriteJournal(opts: WriteJournalOptions): WriteJournal {
  const records = opts.store
    ? storeRecords(opts.store, opts.instanceId, opts.deadlines ?? sharedDeadlines)
    : fileRecords(join(opts.dataDir, "writes"));
  const failed = (what: string) => (e: unknown) =>
    opts.log.log("warn", `write journal: ${what}`, {
      error: e instanceof Error ? e.name : "unknown",
    });
  return {
    open(requestId, route) {
      let record: WriteRecord | undefined;
      let closed = false;
      return {
        async created(core, noteId) {
          if (closed) return;
          record ??= { instance: opts.instanceId, requestId, route, core, notes: [] };
          record.notes.push(noteId);
          await records.put(record).catch(failed("a note created could not be recorded"));
        },
        async close() {
          closed = true;
          if (record) await records.drop(record).catch(failed("a record stays behind"));
        },
      };
    },
    start(sweep) {
      records.schedule(async () => {
        const orphans = await records.orphans().catch((e) => {
          failed("cannot look for writes stopped instances left")(e);
          return [];
        });
        for (const record of orphans) {
          const outcome = await sweep(record).catch(() => "reported" as const);
          opts.log.log(
            outcome === "removed" ? "warn" : "error",
            outcome === "removed"
              ? "removed what a write cut off by a stopped instance had created"
              : "a write cut off by a stopped instance left notes in Core",
            { requestId: record.requestId, route: record.route, noteIds: record.notes },
          );
          await records.drop(record).catch(failed("a swept record stays behind"));
        }
      });
    },
    close: () => records.close(),
  };
}

/** Records as files of `dir`, one per request; at start every file is an earlier run's. */
function fileRecords(dir: string): Records {
  const path = (requestId: string) => join(dir, `${encodeURIComponent(requestId)}.json`);
  return {
    async put(record) {
      // the folder exists only while a record does: a drop may take it away between the two
      for (let attempt = 0;; attempt++) {
        await Deno.mkdir(dir, { recursive: true });
        try {
          const text = JSON.stringify(record);
          return await Deno.writeTextFile(path(record.requestId), text, { mode: 0o600 });
        } catch (e) {
          if (!(e instanceof Deno.errors.NotFound) || attempt > 0) throw e;
        }
      }
    },
    async drop({ requestId }) {
      await Deno.remove(path(requestId)).catch((e) => {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      });
      // the last record takes the folder with it (another's record keeps it)
      await Deno.remove(dir).catch(() => {});
    },
    async orphans() {
      const found: WriteRecord[] = [];
      try {
        for await (const entry of Deno.readDir(dir)) {
          if (!entry.isFile || !entry.name.endsWith(".json")) continue;
          const parsed = writeRecord.safeParse(
            JSON.parse(await Deno.readTextFile(join(dir, entry.name)).catch(() => "null")),
          );
          if (parsed.success) found.push(parsed.data);
          else await Deno.remove(join(dir, entry.name)).catch(() => {});
        }
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
      return found;
    },
    schedule: (run) => void run(),
    close() {},
  };
}

/**
 * Runs `run` now and then `ms` after each run ends, until the returned stop is called.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * let runs = 0;
 * let later = () => {};
 * const deadlines = { start: (_ms: number, run: () => void) => (later = run, () => {}) };
 * const stop = repeat(deadlines, 1000, () => Promise.resolve(runs++));
 * await new Promise((r) => setTimeout(r, 0));
 * later(); // the second run, `ms` after the first ended
 * stop();
 * assert.equal(runs, 2);
 * ```
 */
export function repeat(
  deadlines: Pick<Deadlines, "start">,
  ms: number,
  run: () => Promise<unknown>,
): () => void {
  let stopped = false;
  let cancel: CancelDeadline | undefined;
  const go = () => {
    if (stopped) return;
    void run().catch(() => {}).finally(() => {
      if (!stopped) cancel = deadlines.start(ms, go);
    });
  };
  go();
  return () => {
    stopped = true;
    cancel?.();
  };
}

/** Records in a shared store, swept by any instance once their own instance's heartbeat lapsed. */
function storeRecords(store: SharedStore, instanceId: string, deadlines: Deadlines): Records {
  const key = (instance: string, requestId: string) => `write:${instance}:${requestId}`;
  const alive = (instance: string) => `instance:${instance}`;
  const stops: (() => void)[] = [];
  let beating = false;
  return {
    async put(record) {
      if (!beating) {
        beating = true;
        stops.push(
          repeat(
            deadlines,
            HEARTBEAT_MS,
            () => store.set(alive(instanceId), "1", HEARTBEAT_MS * 3),
          ),
        );
      }
      await store.set(key(instanceId, record.requestId), JSON.stringify(record), 24 * 3600_000);
    },
    drop: (r) => store.delete(key(r.instance, r.requestId)),
    async orphans() {
      const found: WriteRecord[] = [];
      for (const k of await store.keys("write:")) {
        const text = await store.get(k);
        const parsed = writeRecord.safeParse(text === null ? null : JSON.parse(text));
        if (!parsed.success) continue;
        const r = parsed.data;
        // one instance sweeps a dead one's record: the others find it taken
        const mine = r.instance !== instanceId && (await store.get(alive(r.instance))) === null &&
          await store.set(`sweeping:${k}`, instanceId, SWEEP_EVERY_MS, true);
        if (mine) found.push(r);
      }
      return found;
    },
    schedule: (run) => void stops.push(repeat(deadlines, SWEEP_EVERY_MS, run)),
    close() {
      for (const stop of stops) stop();
    },
  };
}

/**
 * The sweep of this service: notes on the configured Core are deleted with the server's own
 * token (`CORE_TOKEN`, else `PUBLIC_CORE_TOKEN`; one already gone counts as deleted); notes on
 * another Core, or without a token, are reported in the log.
 */
export function removeFromCore(
  config: Pick<Config, "CORE_URL" | "CORE_TOKEN" | "PUBLIC_CORE_TOKEN" | "UPSTREAM_TIMEOUT_MS">,
  fetchFn: typeof fetch,
  deadlines?: Deadlines,
): Sweeper {
  const token = config.CORE_TOKEN ?? config.PUBLIC_CORE_TOKEN;
  return async (record) => {
    if (!config.CORE_URL || !token || record.core !== config.CORE_URL) return "reported";
    const core = createCoreClient({ baseUrl: config.CORE_URL, token }, {
      fetch: fetchFn,
      timeoutMs: config.UPSTREAM_TIMEOUT_MS,
      deadlines,
    });
    for (const noteId of record.notes) await core.deleteNote(noteId).catch(nullOn404);
    return "removed";
  };
}
