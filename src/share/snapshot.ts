/**
 * The share configuration as Core holds it: which note owns `#shareRoot`, whether Core serves it
 * (it sits in the `_share` tree), and a snapshot of its subtree with the public
 * filter applied. The share settings routes and the public routes both read it.
 *
 * @module
 */
import { compareByTitle } from "../lore/order.ts";
import { ownShareRootLabels, SHARE_NOTE_ID, SHARE_ROOT_LABEL } from "../lore/share_root.ts";
import type { CoreClient, CoreNote, CoreSearchOptions } from "../upstream/core.ts";
import { buildShareView, type ShareView } from "./tree_filter.ts";

/** Every note below the ancestor, the ancestor included (verified on a real Core). */
const WHOLE_SUBTREE = "note.noteId != ''";

/** The notes that own `#shareRoot`, as found by {@linkcode findShareRoots}. */
export interface ShareRoots {
  /**
   * The share root: the one note owning the label. Null when none does, and also when several do:
   * which one the GM meant is unknown (Core itself serves whichever label it loaded last), so
   * nothing is public until `PUT /api/share` names one.
   */
  root: CoreNote | null;
  /** Every owner, by title; more than one is a conflict. */
  owners: CoreNote[];
  /** Owners that lie in Core's `_share` tree, i.e. that Core actually serves. */
  publishedIds: ReadonlySet<string>;
}

/**
 * Finds every note owning `#shareRoot` with two searches run in parallel. Core's plain search
 * skips notes whose every path runs through `_hidden` — which includes notes placed only under
 * `_share` — so a second search inside `_share` finds those, and tells which
 * owners Core serves. Results that only inherit the label are dropped.
 *
 * @example
 * ```ts
 * import type { CoreClient } from "../upstream/core.ts";
 * // Declared, not run here: it searches a live Core.
 * async function shareRootTitle(core: CoreClient): Promise<string> {
 *   const { root, owners } = await findShareRoots(core);
 *   if (owners.length > 1) return "several share roots: nothing is public";
 *   return root?.title ?? "no share root";
 * }
 * ```
 */
export async function findShareRoots(core: CoreClient): Promise<ShareRoots> {
  const query = `#${SHARE_ROOT_LABEL}`;
  const [anywhere, shared] = await Promise.all([
    core.search(query),
    core.search(query, { ancestorNoteId: SHARE_NOTE_ID }),
  ]);
  const byId = new Map<string, CoreNote>();
  for (const note of [...anywhere, ...shared]) {
    if (!byId.has(note.noteId) && ownShareRootLabels(note).length > 0) {
      byId.set(note.noteId, note);
    }
  }
  const owners = [...byId.values()].sort(compareByTitle);
  const publishedIds = new Set(shared.map((n) => n.noteId).filter((id) => byId.has(id)));
  return { root: owners.length === 1 ? owners[0] : null, owners, publishedIds };
}

/** The share root and its whole subtree as Core holds them. */
export interface CoreShareNotes {
  root: CoreNote;
  /** The root and all its descendants, with effective (own + inherited) attributes. */
  notes: CoreNote[];
  /** Whether Core serves the root at all (it lies in the `_share` tree). */
  published: boolean;
}

/** A loaded share configuration: the root, its whole subtree and the public view of it. */
export interface CoreShareSnapshot extends CoreShareNotes {
  /** The public filter over `notes`; meaningful for visitors only when `published`. */
  view: ShareView;
}

/**
 * Loads the share's notes: the root (by {@linkcode findShareRoots}, or the `roots` a caller
 * already found) and its whole subtree in ONE search. Archived notes are included because Core's
 * share serves them too. Null when there is no single share root (no owner, or a conflict).
 */
export async function loadShareNotes(
  core: CoreClient,
  roots?: ShareRoots,
): Promise<CoreShareNotes | null> {
  const { root, publishedIds } = roots ?? await findShareRoots(core);
  if (!root) return null;
  const notes = await core.search(WHOLE_SUBTREE, subtreeOf(root));
  return { root, notes, published: publishedIds.has(root.noteId) };
}

/** The share's notes read again: {@linkcode reloadShareNotes}. */
export interface ReloadedShareNotes extends Omit<CoreShareNotes, "notes"> {
  /** Null when they are the ones read before (see {@linkcode reloadShareNotes}). */
  notes: CoreNote[] | null;
  /** SHA-256 of Core's answer for the subtree, for the next reload. */
  digest: string;
}

/**
 * {@linkcode loadShareNotes} for a share read before: `notes` is null when the root is
 * `before.rootId` again and Core answers the subtree search with the very bytes `before.digest`
 * names, which then go unparsed (at 3,000 notes, 13 MB a reload every few seconds). The same
 * root, published or not, and the same bytes make the same notes.
 */
export async function reloadShareNotes(
  core: CoreClient,
  before?: { rootId: string; digest?: string },
): Promise<ReloadedShareNotes | null> {
  const { root, publishedIds } = await findShareRoots(core);
  if (!root) return null;
  const same = root.noteId === before?.rootId ? before.digest : undefined;
  const { results, digest } = await core.searchUnlessSame(WHOLE_SUBTREE, subtreeOf(root), same);
  return { root, notes: results, published: publishedIds.has(root.noteId), digest };
}

/** The search options that reach the root's whole subtree; archived notes are shared too. */
function subtreeOf(root: CoreNote): CoreSearchOptions {
  return { ancestorNoteId: root.noteId, includeArchivedNotes: true };
}

/** {@linkcode loadShareNotes} with the public filter over them. */
export async function loadShareSnapshot(
  core: CoreClient,
  roots?: ShareRoots,
): Promise<CoreShareSnapshot | null> {
  const loaded = await loadShareNotes(core, roots);
  return loaded &&
    { ...loaded, view: buildShareView({ rootId: loaded.root.noteId, notes: loaded.notes }) };
}
