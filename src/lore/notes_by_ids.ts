/**
 * Many notes by id in as few Core round trips as possible: one search for all of them instead of
 * one `GET /etapi/notes/:id` per note.
 *
 * @module
 */
import { quoteSearchValue } from "../core/search_query.ts";
import { nullOn404 } from "../http/errors.ts";
import type { CoreClient, CoreNote } from "../upstream/core.ts";
import { mapLimit } from "../util/concurrency.ts";
import { idSchema } from "./ids.ts";
import { hasLabel } from "./note_view.ts";

/** Ids per Core search in {@linkcode notesByIds}: a long `or` list stays one modest URL. */
export const IDS_PER_SEARCH = 50;

/** How {@linkcode notesByIds} reads. */
export interface NotesByIdsOptions {
  /** Only `#lore` notes count. */
  lore: boolean;
  /** Most Core calls in flight at once. */
  concurrency: number;
  /**
   * Every id `GET /etapi/notes/:id` would answer: archived notes are searched too, and the ids
   * the search cannot return (notes that live only under Core's hidden system notes, which its
   * search leaves out) are read one by one in one more parallel round; an id Core does not have
   * is left out.
   */
  complete?: boolean;
}

/**
 * The notes among `ids` that Core has, by id, in one fast search per {@linkcode IDS_PER_SEARCH}
 * ids (the searches run in parallel). With `lore`, only `#lore` notes count. Ids that are not
 * note-id shaped are never put in a query, so untrusted ids (the Parser's) may be passed as they
 * are; Core compares ids case-insensitively, so only exact matches are kept.
 */
export async function notesByIds(
  core: CoreClient,
  ids: Iterable<string>,
  opts: NotesByIdsOptions,
): Promise<Map<string, CoreNote>> {
  const distinct = [...new Set(ids)];
  const wanted = distinct.filter((id) => idSchema.safeParse(id).success);
  const chunks: string[][] = [];
  for (let i = 0; i < wanted.length; i += IDS_PER_SEARCH) {
    chunks.push(wanted.slice(i, i + IDS_PER_SEARCH));
  }
  const found = new Map<string, CoreNote>();
  const exact = new Set(wanted);
  const counts = (note: CoreNote) => !opts.lore || hasLabel(note, "lore");
  await mapLimit(chunks, opts.concurrency, async (chunk) => {
    const anyOf = chunk.map((id) => `note.noteId = ${quoteSearchValue(id)}`).join(" or ");
    // a leading `(` would be read as full text: the bare `or` list only works on its own
    const query = opts.lore ? `#lore and (${anyOf})` : anyOf;
    const notes = await core.search(query, {
      fastSearch: true,
      ...(opts.complete ? { includeArchivedNotes: true } : {}),
    });
    for (const note of notes) {
      if (exact.has(note.noteId) && counts(note)) found.set(note.noteId, note);
    }
  });
  if (opts.complete) {
    // what the search did not return is hidden, not id-shaped or gone: only that is read again
    const rest = distinct.filter((id) => !found.has(id));
    await mapLimit(rest, opts.concurrency, async (id) => {
      const note = await core.getNote(id).catch(nullOn404);
      if (note && counts(note)) found.set(id, note);
    });
  }
  return found;
}
