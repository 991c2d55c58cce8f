/**
 * The share snapshot as the public routes see it: loaded with the server's public Core
 * credentials, cached for `PUBLIC_CACHE_MS` per Core identity with single-flight loading (a burst
 * of visitors causes one subtree search), and fingerprinted so every public ETag changes when
 * anything in the shared subtree changes.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { createTtlCache, type TtlCache } from "../cache/ttl_cache.ts";
import type { AppState } from "../app_state.ts";
import type { PublicCtx } from "../router.ts";
import type { CoreClient, CoreNote } from "../upstream/core.ts";
import { loadShareSnapshot } from "./snapshot.ts";
import { SANITIZER_VERSION } from "../sanitize/html.ts";
import { ownShareAlias, type ShareView } from "./tree_filter.ts";

/** A published share tree, ready for visitors. */
export interface PublicSnapshot {
  rootId: string;
  /** Every note of the subtree, public or not (callers ask `view` before using one). */
  byId: ReadonlyMap<string, CoreNote>;
  view: ShareView;
  /** Digest of the whole snapshot; part of every public ETag. */
  version: string;
  /** Whether any public note sits behind `#shareCredentials`. */
  hasCredentials: boolean;
  /**
   * Public ancestors from the root down to the note's parent along its shortest public path
   * (empty for the root itself).
   */
  ancestorsOf(noteId: string): string[];
  /** Any note of the subtree, public or not, by noteId or by its own `#shareAlias`. */
  lookup(idOrAlias: string): CoreNote | undefined;
}

/** The snapshot and the Core client that loaded it (detached: shared work). */
export interface PublicSource {
  snapshot: PublicSnapshot | null;
  core: CoreClient;
  identity: string;
}

/** Per-app caches of the public share, kept beside the app's state. */
export interface PublicCaches {
  snapshots: TtlCache<PublicSnapshot | null>;
  /** Raw note content by `${identity}:${blobId}` (content-addressed: never stale). */
  contents: TtlCache<string>;
  /** Searchable visible text by `${identity}:${blobId}`. */
  texts: TtlCache<string>;
}

// Keyed by the app's state so two apps in one process (tests) never share entries.
const cachesByApp = new WeakMap<AppState, PublicCaches>();

/**
 * The public caches of the app serving `ctx` (created on first use).
 *
 * @example
 * ```ts
 * const text = publicCaches(ctx).contents.get(`${identity}:${blobId}`);
 * ```
 */
export function publicCaches(ctx: Pick<PublicCtx, "state" | "config">): PublicCaches {
  let caches = cachesByApp.get(ctx.state);
  if (!caches) {
    caches = {
      snapshots: createTtlCache({ ttlMs: ctx.config.PUBLIC_CACHE_MS, maxEntries: 16 }),
      contents: createTtlCache({ ttlMs: 3600_000, maxEntries: 500 }),
      texts: createTtlCache({ ttlMs: 3600_000, maxEntries: 20_000 }),
    };
    cachesByApp.set(ctx.state, caches);
  }
  return caches;
}

/**
 * Forgets this app's public snapshots, for every public Core identity, after a write through this
 * service: the next public request loads the share as Core now holds it, and a load still in
 * flight is served to those already waiting but never cached. Content and search-text caches stay:
 * they are keyed by content-addressed blob ids, so they cannot be stale. Other instances still
 * serve their snapshots until `PUBLIC_CACHE_MS` runs out.
 *
 * @example
 * ```ts
 * await core.deleteAttribute(shareRootLabel.attributeId);
 * invalidatePublicShare(ctx);
 * ```
 */
export function invalidatePublicShare(ctx: Pick<PublicCtx, "state">): void {
  cachesByApp.get(ctx.state)?.snapshots.clear();
}

/**
 * The public snapshot for this app's public Core identity: cached, single-flight, loaded with a
 * detached client so one visitor leaving cannot fail the load others wait for. `snapshot` is
 * null when no note owns `#shareRoot`, several do, or Core does not serve it (it is not under
 * `_share`): then nothing is public.
 *
 * @example
 * ```ts
 * const { snapshot } = await publicSource(ctx);
 * if (!snapshot?.view.isPublic(id)) throw notFound();
 * ```
 */
export async function publicSource(ctx: PublicCtx): Promise<PublicSource> {
  const { core, identity } = await ctx.publicCore({ detached: true });
  const snapshot = await publicCaches(ctx).snapshots.getOrLoad(identity, async () => {
    const loaded = await loadShareSnapshot(core);
    return loaded?.published
      ? buildPublicSnapshot(loaded.root.noteId, loaded.notes, loaded.view)
      : null;
  });
  return { snapshot, core, identity };
}

/**
 * Wraps a loaded share snapshot: index by id, shortest public paths, and the version digest
 * (over the notes sorted by id, so Core's result order does not matter).
 *
 * @example
 * ```ts
 * const snap = buildPublicSnapshot(root.noteId, notes, buildShareView({ rootId, notes }));
 * ```
 */
export function buildPublicSnapshot(
  rootId: string,
  notes: readonly CoreNote[],
  view: ShareView,
): PublicSnapshot {
  const byId = new Map<string, CoreNote>();
  for (const n of notes) if (!byId.has(n.noteId)) byId.set(n.noteId, n);
  // publicIds() is BFS order, so the first public parent that reaches a note is on a shortest path.
  const parentOf = new Map<string, string>();
  for (const id of view.publicIds()) {
    for (const child of byId.get(id)?.childNoteIds ?? []) {
      if (child !== rootId && view.isPublic(child) && !parentOf.has(child)) {
        parentOf.set(child, id);
      }
    }
  }
  let aliases: Map<string, CoreNote> | undefined; // built on first lookup
  const sorted = [...byId.values()].sort((a, b) => (a.noteId < b.noteId ? -1 : 1));
  return {
    rootId,
    byId,
    view,
    version: digest(rootId, JSON.stringify(sorted)),
    hasCredentials: view.publicIds().some((id) => view.credentialGroups(id).length > 0),
    lookup(idOrAlias) {
      aliases ??= new Map(
        [...byId.values()].flatMap((n) => {
          const alias = ownShareAlias(n);
          return alias === null ? [] : [[alias, n] as const];
        }),
      );
      return aliases.get(idOrAlias) ?? byId.get(idOrAlias);
    },
    ancestorsOf(noteId) {
      const out: string[] = [];
      for (let p = parentOf.get(noteId); p !== undefined; p = parentOf.get(p)) out.push(p);
      return out.reverse();
    },
  };
}

/**
 * A short digest of the parts (SHA-256, base64url, 22 characters).
 *
 * @example
 * ```ts
 * digest("a", "b"); // "…22 chars…"
 * ```
 */
export function digest(...parts: string[]): string {
  const h = createHash("sha256");
  for (const part of parts) h.update(part).update("\n");
  return h.digest("base64url").slice(0, 22);
}

/**
 * A weak ETag over the parts.
 *
 * @example
 * ```ts
 * weakEtag(snapshot.version, "note", noteId); // 'W/"…"'
 * ```
 */
export function weakEtag(...parts: string[]): string {
  return `W/"${digest(SANITIZER_VERSION, ...parts)}"`;
}
