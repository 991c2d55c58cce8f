/**
 * The path from `root` to a note, as breadcrumbs show it.
 *
 * @module
 */
import { nullOn404 } from "../http/errors.ts";
import type { CoreClient, CoreNote } from "../upstream/core.ts";

/** Breadcrumbs stop after this many ancestors (Core has no cycle check on clones). */
export const MAX_BREADCRUMB_DEPTH = 64;

/**
 * The note and its ancestors, root first, following at each step the first parent that is not
 * a hidden system note (`_share`, `_hidden`… come last in `parentNoteIds`). The walk is
 * inherently sequential: each parent is only known once its child has been read.
 *
 * @example
 * ```ts
 * import type { CoreClient } from "../upstream/core.ts";
 *
 * async function crumbs(core: CoreClient) {
 *   return (await ancestorPath(core, "abc123")).map((n) => n.title); // ["root", "Lore", "Ashford"]
 * }
 * ```
 */
export async function ancestorPath(core: CoreClient, noteId: string): Promise<CoreNote[]> {
  const path = [await core.getNote(noteId)];
  const seen = new Set([noteId]);
  for (let depth = 0; depth < MAX_BREADCRUMB_DEPTH; depth++) {
    const parentId = visibleParent(path[0]);
    if (!parentId || seen.has(parentId)) break;
    seen.add(parentId);
    // an ancestor deleted meanwhile ends the path where it is
    const parent = await core.getNote(parentId).catch(nullOn404);
    if (!parent) break;
    path.unshift(parent);
  }
  return path;
}

function visibleParent(note: CoreNote): string | undefined {
  if (note.noteId === "root") return undefined;
  return note.parentNoteIds.find((p) => !p.startsWith("_")) ?? note.parentNoteIds[0];
}
