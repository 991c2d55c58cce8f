/**
 * The notes that link to a note: every note owning a relation to it, named by its user relations
 * (user_relations.ts) and flagged when the link is in its content (Core's automatic link
 * relations). A note whose only relation to it is Core machinery (`~template`, `~inherit`, …)
 * does not link to it: a template's instances are not its backlinks.
 *
 * @module
 */
import { z } from "zod";
import type { CoreClient, CoreNote } from "../upstream/core.ts";
import { inOrder } from "../util/in_order.ts";
import { labelValue, ownAttributes } from "./note_view.ts";
import { compareByTitle } from "./order.ts";
import { AUTOMATIC_RELATIONS, isUserRelationName } from "./user_relations.ts";

/**
 * One entry of a note's backlinks.
 */
export const backlinkSchema = z.object({
  noteId: z.string(),
  title: z.string(),
  loreType: z.string().nullable(),
  relations: z.array(z.string()).describe("Names of the user relations pointing here, sorted"),
  viaContentLink: z.boolean().describe(
    "Whether the note's content links here (`internalLink`, `imageLink`, `includeNoteLink`…)",
  ),
});
/** One entry of a note's backlinks. */
export type Backlink = z.output<typeof backlinkSchema>;

/**
 * The search that finds backlink candidates: the bare note id as a full-text term, which matches
 * every note whose flat text holds a relation `~name=<id>` (verified on a real Core). Only a
 * plain id may be used: anything else could add search syntax.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(backlinkSearchQuery("abc123"), "abc123");
 * ```
 */
export function backlinkSearchQuery(noteId: string): string {
  if (!/^[A-Za-z0-9_]{1,128}$/.test(noteId)) throw new TypeError("invalid note id");
  return noteId;
}

/**
 * Keeps the search results that own a user relation or a content link to `noteId` (inherited
 * relations belong to their owner, which is listed on its own), sorted by title.
 */
export function backlinksFrom(results: readonly CoreNote[], noteId: string): Backlink[] {
  // sorted as notes, so protected ones (their title a placeholder) go last
  return [...results].sort(compareByTitle).flatMap((n): Backlink[] => {
    if (n.noteId === noteId) return [];
    const links = ownAttributes(n).filter((a) => a.type === "relation" && a.value === noteId);
    const names = links.map((a) => a.name).filter(isUserRelationName);
    const viaContentLink = links.some((a) => AUTOMATIC_RELATIONS.has(a.name));
    if (!names.length && !viaContentLink) return [];
    return [{
      noteId: n.noteId,
      title: n.title,
      loreType: labelValue(n, "loreType") ?? null,
      relations: [...new Set(names)].sort(),
      viaContentLink,
    }];
  });
}

/**
 * The note's backlinks, complete, by title: one search, run together with reading the note
 * (a missing note is its 404).
 */
export async function noteBacklinks(core: CoreClient, noteId: string): Promise<Backlink[]> {
  const [, results] = await inOrder(
    core.getNote(noteId),
    core.search(backlinkSearchQuery(noteId), { fastSearch: true, includeArchivedNotes: true }),
  );
  return backlinksFrom(results, noteId);
}
