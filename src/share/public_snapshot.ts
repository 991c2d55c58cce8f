/**
 * The share snapshot as the public routes see it: loaded with the server's public Core
 * credentials, cached for `PUBLIC_CACHE_MS` per Core identity with single-flight loading (a burst
 * of visitors causes one subtree search) and reloaded in the background from half that age on (a
 * share in steady use never makes a visitor wait), and versioned by a digest of the whole shared
 * subtree. The public answers rendered from a snapshot are kept beside it, keyed by its version;
 * the version never reaches a visitor (an answer's ETag is a digest of its own bytes, see
 * `rendered_answer.ts`), since hidden notes are part of it.
 *
 * @module
 */
import { createTtlCache, stringBytes, type TtlCache } from "../cache/ttl_cache.ts";
import type { Config } from "../config/service_config.ts";
import type { CoreClient, CoreNote } from "../upstream/core.ts";
import { buildPublicSnapshot, type PublicSnapshot } from "./snapshot_index.ts";
import { reloadShareNotes } from "./snapshot.ts";
import type { PixelSize } from "./image_sizes.ts";
import { answerBytes, type RenderedAnswer } from "./rendered_answer.ts";
import { z } from "zod";
import { createKeptStore, type KeptStore } from "./kept_store.ts";
import { type KeptSummary, type NoteReading, noteReadingSchema } from "./public_types.ts";
import { type ShareDisk, shareDisk } from "./share_disk.ts";
import { type ShareVersions, shareVersions } from "./share_version.ts";
import type { SharedStore } from "../store/shared_store.ts";

/**
 * Core for the public share: a client on the server's own public credentials (never a
 * visitor's), and the identity of those credentials, which partitions every public cache.
 * `detached` clients ignore the visitor's disconnect (shared work others may wait for).
 */
export type PublicCoreReader = (
  opts?: { detached?: boolean },
) => Promise<{ core: CoreClient; identity: string }>;

/** The snapshot and the Core client that loaded it (detached: shared work). */
export interface PublicSource {
  snapshot: PublicSnapshot | null;
  core: CoreClient;
  identity: string;
}

/** One app's caches of the public share (two apps in one process never share entries). */
export interface PublicCaches {
  snapshots: TtlCache<PublicSnapshot | null>;
  /** Raw note content by `${identity}:${blobId}` (content-addressed: never stale). */
  contents: TtlCache<string>;
  /**
   * What the site reads out of each note's content per visitor class, and each note's search
   * text, with the questions their renders asked of the share (note_readings.ts).
   */
  readings: KeptStore<NoteReading>;
  texts: KeptStore<string>;
  /** Player HTML of notes (memory only: a page renders it again cheaply after a restart). */
  html: KeptStore<string>;
  /**
   * What listings show of a note (visitor_view.ts), by the note's object: a snapshot reuses the
   * objects of unchanged notes, so an unchanged note is not summarised again.
   */
  summaries: WeakMap<CoreNote, KeptSummary>;
  /** Where contents and readings survive a restart (`DATA_DIR`), if anywhere. */
  disk: ShareDisk | null;
  /**
   * The share's version in the store instances share (share_version.ts): null without one
   * (`STATE_URL`), or when nothing is kept (`PUBLIC_CACHE_MS` 0).
   */
  versions: ShareVersions<PublicSnapshot | null> | null;
  /**
   * The published world's name (its share root's title) as last read; undefined while nothing is
   * published. Error pages, which have no frame, are titled with it.
   */
  worldName: string | undefined;
  /**
   * Writes what changed of the readings to `disk`; resolves when written. `many`: only where
   * many changed (see `KeptStore.flush`). Without `many` (at shutdown) it also removes the kept
   * blobs no note of the current share holds.
   */
  flush(opts?: { many?: boolean }): Promise<void>;
  /**
   * Rendered public answers (API JSON and pages) by identity, snapshot version, sanitizer
   * version, what the visitor may see, and the answer asked for; bounded in bytes.
   */
  rendered: TtlCache<RenderedAnswer>;
  /** Pixel sizes of images by `${identity}:${blobId}` (content-addressed: never stale). */
  imageSizes: TtlCache<PixelSize | null>;
  /**
   * Which visible notes link to each note (target → sources), by identity, snapshot version,
   * sanitizer version and what the visitor may see.
   */
  backlinks: TtlCache<ReadonlyMap<string, readonly string[]>>;
  /**
   * Where each anonymous request's answer is kept, by the request as it was asked (view and
   * subject): lets a repeat visit skip resolving the note. Only keys, never answers, so the
   * rendered answers' byte bound stays true; see {@linkcode keptAnswer}.
   */
  kept: Map<string, KeptAnswerRef>;
}

/**
 * An anonymous request's answer: its rendered-cache key, the snapshot it was made from, and how
 * to make it again from a newer snapshot ({@linkcode remakeKeptAnswers}).
 */
export interface KeptAnswerRef {
  renderedKey: string;
  identity: string;
  version: string;
  remake?: RemakeAnswer;
}

/**
 * Renders a kept request's answer from `source` (a snapshot about to be served, or just served)
 * and keeps it; nothing when the note is no longer public there.
 */
export type RemakeAnswer = (source: PublicSource) => Promise<void>;

/**
 * Most answers made again for a new snapshot before it is served (or, after a write, before the
 * writer's answer): the requests visited most recently. A page costs about a millisecond at
 * 3,000 notes, so a change costs tens of milliseconds of rendering, not a visitor's wait.
 */
export const REMADE_MAX = 32;

/** Most requests {@linkcode PublicCaches.kept} remembers before it starts over. */
export const MAX_KEPT_ANSWERS = 4096;

/** Byte bound of the raw contents kept: a world of thousands of notes fits. */
export const CONTENT_MAX_BYTES = 64 * 1024 * 1024;

/** Default byte bound of the rendered answers: hot pages fit, a flood of searches cannot grow it. */
export const RENDERED_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Empty public caches: snapshots and rendered answers kept for `PUBLIC_CACHE_MS` (reloaded in
 * the background from half that age on), content for an hour, readings while they hold; with a
 * `DATA_DIR`, contents and readings are also kept there for the next start. `renderedMaxBytes`
 * bounds the rendered answers ({@linkcode RENDERED_MAX_BYTES} by default); `now` is their clock.
 * With a `store` other instances share, snapshots are checked against the share's version there
 * (share_version.ts).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const caches = createPublicCaches({ PUBLIC_CACHE_MS: 5_000 });
 * caches.contents.set("identity:blob", "<p>Harbor</p>");
 * assert.equal(caches.contents.get("identity:blob"), "<p>Harbor</p>");
 * ```
 */
export function createPublicCaches(
  config: Pick<Config, "PUBLIC_CACHE_MS"> & Partial<Pick<Config, "DATA_DIR">>,
  renderedMaxBytes = RENDERED_MAX_BYTES,
  now?: () => number,
  store?: SharedStore,
): PublicCaches {
  const ttlMs = config.PUBLIC_CACHE_MS;
  // Reloading ahead keeps visitors from waiting, yet nothing served is older than ttlMs.
  const refreshAfterMs = ttlMs / 2;
  const snapshots = createTtlCache<PublicSnapshot | null>({
    ttlMs,
    refreshAfterMs,
    maxEntries: 16,
    now,
  });
  const disk = config.DATA_DIR ? shareDisk(config.DATA_DIR) : null;
  // reused while every question still gets its answer, so time does not make them stale
  const readings = createKeptStore({
    kind: "readings",
    maxEntries: 40_000,
    disk,
    schema: noteReadingSchema,
  });
  const texts = createKeptStore({ kind: "texts", maxEntries: 40_000, disk, schema: z.string() });
  return {
    snapshots,
    contents: createTtlCache({
      ttlMs: 3600_000,
      maxEntries: 20_000,
      maxBytes: CONTENT_MAX_BYTES,
      sizeOf: stringBytes,
      now,
    }),
    readings,
    texts,
    html: createKeptStore({ kind: "html", maxEntries: 20_000, disk: null, schema: z.string() }),
    summaries: new WeakMap(),
    worldName: undefined,
    disk,
    versions: store?.shared && ttlMs > 0
      ? shareVersions({
        store,
        intervalMs: refreshAfterMs,
        now: now ?? Date.now,
        instanceId: crypto.randomUUID(),
      })
      : null,
    flush: async (opts) => {
      await Promise.all([readings.flush(opts), texts.flush(opts)]);
      if (opts?.many || !disk) return;
      await disk.pruneBlobs((identity) => {
        const snapshot = snapshots.get(identity);
        if (!snapshot) return undefined;
        return new Set([...snapshot.byId.values()].flatMap((n) => n.blobId ? [n.blobId] : []));
      });
    },
    imageSizes: createTtlCache({ ttlMs: 3600_000, maxEntries: 5_000, now }),
    backlinks: createTtlCache({ ttlMs, maxEntries: 64, now }),
    kept: new Map(),
    rendered: createTtlCache({
      ttlMs,
      refreshAfterMs,
      maxEntries: 10_000,
      maxBytes: renderedMaxBytes,
      sizeOf: answerBytes,
      now,
    }),
  };
}

/**
 * Brings the public share up to date after a write through this service, before the writer gets
 * its answer: the share is read again (three Core calls, whatever its size) while visitors keep
 * getting the last good snapshot, then replaces it; what was rendered from the old one goes
 * (some of what answers show, a note's attachments, is not part of the version), and the answers
 * visitors read most recently are rendered again from the new one, so their next visit is a kept
 * answer. Readings and contents stay: they are reused wherever nothing they depend on changed.
 * When nothing has been read yet there is nothing to refresh; when the read fails the share is
 * dropped, so the next visitor waits for Core rather than see what the write may have hidden. The
 * new snapshot is `prepare`d before it replaces the old one, and its version published to the
 * other instances (share_version.ts). Whether a new snapshot is in.
 */
export async function refreshPublicShare(
  caches: PublicCaches,
  publicCore: PublicCoreReader,
  prepare?: PrepareSnapshot,
): Promise<boolean> {
  let refreshed = false;
  try {
    const { core, identity } = await publicCore({ detached: true });
    caches.snapshots.deleteWhere((key) => key !== identity);
    const previous = caches.snapshots.get(identity);
    // what visitors read lately is rendered again once the old renders are gone (below)
    const recent = recentKeptAnswers(caches, identity);
    const reread = previous === undefined
      ? undefined
      : () =>
        caches.snapshots.reload(identity, () =>
          loadPublicSnapshot(core, identity, previous, prepare));
    // the other instances learn of the write from the store, before the writer's answer
    const snapshot = caches.versions
      ? await caches.versions.written(identity, reread)
      : await reread?.();
    if (reread) {
      caches.worldName = worldNameOf(snapshot);
      refreshed = true;
    }
    // (who links where is kept by snapshot version: the new one's is made by `prepare`)
    caches.rendered.clear();
    caches.kept.clear();
    if (snapshot) await remakeKeptAnswers(recent, { snapshot, core, identity });
  } catch {
    caches.snapshots.clear();
    caches.worldName = undefined;
    caches.rendered.clear();
    caches.kept.clear();
  }
  caches.flush({ many: true }).catch(() => {}); // for the next start; nobody waits for it
  return refreshed;
}

/**
 * Remembers where an anonymous request's answer is kept (see {@linkcode keptAnswer}); starts over
 * when {@linkcode MAX_KEPT_ANSWERS} requests are remembered.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const caches = createPublicCaches({ PUBLIC_CACHE_MS: 5_000 });
 * keepAnswer(caches, "api\nnote:harbor", { renderedKey: "k", identity: "i", version: "v" });
 * assert.equal(caches.kept.size, 1);
 * ```
 */
export function keepAnswer(caches: PublicCaches, request: string, ref: KeptAnswerRef): void {
  if (caches.kept.size >= MAX_KEPT_ANSWERS) caches.kept.clear();
  caches.kept.delete(request); // the newest last (recentKeptAnswers)
  caches.kept.set(request, ref);
}

/**
 * The kept answers of `identity`'s share that can be made again, the most recently kept first,
 * at most `max`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const caches = createPublicCaches({ PUBLIC_CACHE_MS: 5_000 });
 * const remake = () => Promise.resolve();
 * for (const request of ["page\na", "page\nb", "page\nc"]) {
 *   keepAnswer(caches, request, { renderedKey: request, identity: "i", version: "v", remake });
 * }
 * keepAnswer(caches, "page\na", { renderedKey: "page\na", identity: "i", version: "v", remake });
 * const keys = (max: number) => recentKeptAnswers(caches, "i", max).map((r) => r.renderedKey);
 * assert.deepEqual(keys(2), ["page\na", "page\nc"]);
 * assert.deepEqual(recentKeptAnswers(caches, "another identity"), []);
 * ```
 */
export function recentKeptAnswers(
  caches: PublicCaches,
  identity: string,
  max: number = REMADE_MAX,
): KeptAnswerRef[] {
  const recent: KeptAnswerRef[] = [];
  const refs = [...caches.kept.values()];
  for (let i = refs.length - 1; i >= 0 && recent.length < max; i--) {
    if (refs[i].identity === identity && refs[i].remake) recent.push(refs[i]);
  }
  return recent;
}

/**
 * Renders `refs`' answers again from `source` and keeps them, one after another (each is a few
 * milliseconds of work at most). A request whose note is gone from the share is left to its next
 * visit, which answers the 404.
 */
export async function remakeKeptAnswers(
  refs: readonly KeptAnswerRef[],
  source: PublicSource,
): Promise<void> {
  for (const ref of refs) await ref.remake?.(source).catch(() => {});
}

/**
 * The answer an earlier anonymous visit to the same request got, while it is certain to be the
 * answer now: the request is `anonymous` (no credentials of any kind), the snapshot it came from
 * is still the cached one and needs no reload yet or is being reloaded (nor a comparison with the
 * share's version in the shared store), and its rendered answer is still kept and likewise needs
 * no reload or is being rendered again. Anything else (a write through the service clears the
 * share's caches, a changed snapshot, a reload or comparison due that nobody started) is
 * undefined, and the caller takes the full path, which also starts any reload.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { renderedAnswer } from "./rendered_answer.ts";
 * import type { PublicSnapshot } from "./snapshot_index.ts";
 * const caches = createPublicCaches({ PUBLIC_CACHE_MS: 5_000 });
 * const answer = renderedAnswer("{}", []);
 * caches.snapshots.set("i", { version: "v1" } as PublicSnapshot);
 * caches.rendered.set("key", answer);
 * keepAnswer(caches, "api\nnote:harbor", { renderedKey: "key", identity: "i", version: "v1" });
 * assert.equal(keptAnswer(caches, "api\nnote:harbor", true), answer);
 * assert.equal(keptAnswer(caches, "api\nnote:harbor", false), undefined); // a password given
 * caches.snapshots.set("i", { version: "v2" } as PublicSnapshot); // the share changed
 * assert.equal(keptAnswer(caches, "api\nnote:harbor", true), undefined);
 * ```
 */
export function keptAnswer(
  caches: PublicCaches,
  request: string,
  anonymous: boolean,
): RenderedAnswer | undefined {
  if (!anonymous) return undefined;
  const ref = caches.kept.get(request);
  if (ref === undefined) return undefined;
  // a reload under way serves the entry it replaces, on the full path too: only a visit that
  // must start one takes that path
  const snapshot = caches.snapshots.serving(ref.identity);
  // (a snapshot due for comparing with the other instances' version takes the full path)
  const current = snapshot?.version === ref.version &&
    !caches.versions?.due(ref.identity, snapshot);
  const answer = current ? caches.rendered.serving(ref.renderedKey) : undefined;
  if (answer === undefined) caches.kept.delete(request);
  return answer;
}

/**
 * The public snapshot for the public Core identity: cached in `caches`, single-flight, loaded
 * with a detached client so one visitor leaving cannot fail the load others wait for. With a
 * shared store, a snapshot the other instances' version does not name is read again first.
 * `snapshot` is null when no note owns `#shareRoot`, several do, or Core does not serve it (it
 * is not under `_share`): then nothing is public.
 */
export async function publicSource(
  publicCore: PublicCoreReader,
  caches: PublicCaches,
  prepare?: PrepareSnapshot,
): Promise<PublicSource> {
  const { core, identity } = await publicCore({ detached: true });
  const read = () =>
    loadPublicSnapshot(
      core,
      identity,
      caches.snapshots.get(identity),
      prepare,
      () => recentKeptAnswers(caches, identity),
    );
  const { versions } = caches;
  let snapshot = await caches.snapshots.getOrLoad(
    identity,
    versions ? () => versions.load(identity, caches.snapshots.get(identity), read) : read,
  );
  if (versions?.due(identity, snapshot)) {
    const reread = () => caches.snapshots.reload(identity, read);
    snapshot = await versions.current(identity, snapshot, reread).catch((e) => {
      caches.snapshots.delete(identity); // the store says it is stale: never served again
      throw e;
    });
  }
  caches.worldName = worldNameOf(snapshot);
  return { snapshot, core, identity };
}

function worldNameOf(snapshot: PublicSnapshot | null | undefined): string | undefined {
  return snapshot ? snapshot.byId.get(snapshot.rootId)?.title.trim() || undefined : undefined;
}

/**
 * Makes, from a snapshot that is about to replace another, what the next visitor's pages share
 * (public_api.ts warms the site with it), so that the visitor does not wait for it.
 */
export type PrepareSnapshot = (
  snapshot: PublicSnapshot,
  core: CoreClient,
  identity: string,
) => Promise<void>;

/**
 * The SHA-256 of the Core answer each snapshot was last found in (by a load, or a reload that
 * found the same version): a reload that gets the same bytes keeps the snapshot unparsed.
 */
const answerDigests = new WeakMap<PublicSnapshot, string>();

/**
 * The published share as Core holds it now; null while nothing is published. The `previous`
 * snapshot itself when nothing changed (what was derived from it stays); a changed one is
 * `prepare`d before it replaces `previous` (a first load is not: its visitor is waiting), and
 * the answers `remade` names are rendered from it, so their visitors find them kept.
 */
async function loadPublicSnapshot(
  core: CoreClient,
  identity: string,
  previous: PublicSnapshot | null | undefined,
  prepare?: PrepareSnapshot,
  remade?: () => readonly KeptAnswerRef[],
): Promise<PublicSnapshot | null> {
  const digest = previous ? answerDigests.get(previous) : undefined;
  const loaded = await reloadShareNotes(
    core,
    previous ? { rootId: previous.rootId, digest } : undefined,
  );
  if (!loaded?.published) return null;
  if (loaded.notes === null) return previous ?? null; // Core's very answer of last time
  const snapshot = buildPublicSnapshot(loaded.root.noteId, loaded.notes, previous);
  answerDigests.set(snapshot, loaded.digest);
  if (snapshot === previous) return previous;
  if (!previous) return snapshot;
  // a preparation that fails only leaves its work to the next visitor
  await prepare?.(snapshot, core, identity).catch(() => {});
  if (remade) await remakeKeptAnswers(remade(), { snapshot, core, identity });
  return snapshot;
}
