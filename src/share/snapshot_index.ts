/**
 * The public snapshot itself: one copy of every note of the shared subtree by id, the public
 * filter over them, shortest public paths, aliases, what is derived from it, and its version (a
 * digest of the whole subtree, hidden notes included). Built from Core's answer, reusing the
 * previous snapshot's objects wherever a note did not change.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { CoreNote } from "../upstream/core.ts";
import { repeatPool, shareRepeats } from "./repeat_pool.ts";
import { buildShareView, ownShareAlias, type ShareView } from "./tree_filter.ts";

/** A published share tree, ready for visitors. */
export interface PublicSnapshot {
  rootId: string;
  /** Every note of the subtree, public or not (callers ask `view` before using one). */
  byId: ReadonlyMap<string, CoreNote>;
  /**
   * A digest of each note as Core gave it (its JSON): tells the next snapshot which notes are
   * unchanged.
   */
  signatures: ReadonlyMap<string, string>;
  view: ShareView;
  /**
   * Digest of the whole snapshot, hidden notes included: keys what is rendered from it, and is
   * never part of an answer (it changes when a draft does).
   */
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
  /**
   * A value made from this snapshot alone, made once under `key` (which names everything else
   * it depends on, e.g. what the visitor may see) and dropped with the snapshot.
   */
  derived<T>(key: string, make: () => T): T;
}

/**
 * Wraps the share's notes as Core gave them: index by id, the public filter, shortest public
 * paths, and the version digest (over the notes sorted by id, so Core's result order does not
 * matter); `previous` itself when the version is its. A note that reads exactly as in `previous`
 * is that snapshot's very object, so what was derived from it (by object) still holds; the others
 * share what Core repeats (repeat_pool.ts). Nothing holds the notes as given: a snapshot keeps
 * one copy of each note.
 */
export function buildPublicSnapshot(
  rootId: string,
  notes: readonly CoreNote[],
  previous?: PublicSnapshot | null,
): PublicSnapshot {
  const byId = new Map<string, CoreNote>();
  const signatures = new Map<string, string>();
  const pool = repeatPool();
  for (const n of notes) {
    if (byId.has(n.noteId)) continue;
    const signature = digest(JSON.stringify(n));
    const same = previous?.signatures.get(n.noteId) === signature;
    if (!same) shareRepeats(n, pool);
    byId.set(n.noteId, same ? previous!.byId.get(n.noteId)! : n);
    signatures.set(n.noteId, signature);
  }
  const sorted = [...signatures.keys()].sort();
  const version = digest(rootId, ...sorted.map((id) => signatures.get(id)!));
  if (previous && previous.version === version) return previous;
  const view = buildShareView({ rootId, notes: [...byId.values()] });
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
  const made = new Map<string, unknown>();
  return {
    rootId,
    byId,
    signatures,
    view,
    version,
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
    derived<T>(key: string, make: () => T): T {
      if (!made.has(key)) made.set(key, make());
      return made.get(key) as T;
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
 * import assert from "node:assert/strict";
 * assert.match(digest("a", "b"), /^[\w-]{22}$/);
 * assert.notEqual(digest("a", "b"), digest("ab"));
 * ```
 */
export function digest(...parts: string[]): string {
  const h = createHash("sha256");
  for (const part of parts) h.update(part).update("\n");
  return h.digest("base64url").slice(0, 22);
}
