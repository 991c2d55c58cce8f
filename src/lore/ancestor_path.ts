/**
 * The path from `root` to a note, as breadcrumbs show it.
 *
 * @module
 */
import { ancestorsUpTo } from "../core/search_query.ts";
import { nullOn404 } from "../http/errors.ts";
import type { CoreClient, CoreNote } from "../upstream/core.ts";
import { inOrder } from "../util/in_order.ts";

/** Breadcrumbs stop after this many ancestors (Core has no cycle check on clones). */
export const MAX_BREADCRUMB_DEPTH = 64;

/** Ancestor levels read in the one search; a deeper path goes on one note at a time. */
export const ANCESTOR_SEARCH_LEVELS = 8;

/**
 * The note and its ancestors, root first, following at each step the first parent that is not
 * a hidden system note (`_share`, `_hidden`… come last in `parentNoteIds`). The note and its
 * ancestors up to {@linkcode ANCESTOR_SEARCH_LEVELS} levels are read at once (one search); an
 * ancestor the search did not return (deeper, or one Core's search leaves out as hidden) is read
 * the same way, with the levels above it.
 */
export async function ancestorPath(core: CoreClient, noteId: string): Promise<CoreNote[]> {
  const known = new Map<string, CoreNote>();
  /** The note and, in the same round trip, the ancestors the search finds above it. */
  const readWithAncestors = async (id: string) => {
    const [note, ancestors] = await inOrder(
      core.getNote(id),
      core.search(ancestorsUpTo(id, ANCESTOR_SEARCH_LEVELS), {
        fastSearch: true,
        includeArchivedNotes: true,
      }),
    );
    for (const a of ancestors) known.set(a.noteId, a);
    return note;
  };
  const path = [await readWithAncestors(noteId)];
  const seen = new Set([noteId]);
  for (let depth = 0; depth < MAX_BREADCRUMB_DEPTH; depth++) {
    const parentId = visibleParent(path[0]);
    if (!parentId || seen.has(parentId)) break;
    seen.add(parentId);
    // an ancestor deleted meanwhile ends the path where it is
    const parent = known.get(parentId) ?? await readWithAncestors(parentId).catch(nullOn404);
    if (!parent) break;
    path.unshift(parent);
  }
  return path;
}

function visibleParent(note: CoreNote): string | undefined {
  if (note.noteId === "root") return undefined;
  return note.parentNoteIds.find((p) => !p.startsWith("_")) ?? note.parentNoteIds[0];
}
