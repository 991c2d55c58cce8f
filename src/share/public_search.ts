/**
 * The share's public search (`/api/public/search` and the site's search page): titles and the
 * visible text of the notes this visitor may see, so a hit never names or reveals anything else.
 *
 * @module
 */
import { hasLabel } from "../lore/note_view.ts";
import { compareByTitle } from "../lore/order.ts";
import type { CoreNote } from "../upstream/core.ts";
import { mapLimit } from "../util/concurrency.ts";
import { searchText } from "./note_readings.ts";
import { normalizeForSearch } from "./public_content.ts";
import { idFor, type PublicRequest } from "./public_request.ts";
import type { PublicSearchHit, PublicSearchResult } from "./public_types.ts";

/** A public search as a visitor sees it. */
export interface PublicSearchOutcome {
  result: PublicSearchResult;
}

/** `q` that lists every published lore note. */
export const LORE_QUERY = "#lore";

const MAX_SEARCH_WORDS = 16;

/**
 * The notes this visitor may see that match the trimmed `query`, best first; none while nothing
 * is published (`req` undefined), where search answers rather than 404s.
 */
export async function searchNotes(
  req: PublicRequest | undefined,
  query: string,
): Promise<PublicSearchOutcome> {
  if (!req) return { result: { results: [] } };
  const { snap, access, deps } = req;
  const visible = snap.view.publicIds().filter((id) => access.canSee(id))
    .map((id) => snap.byId.get(id)!);
  const scored = query.toLowerCase() === LORE_QUERY
    ? visible.filter((n) => hasLabel(n, "lore")).map((n) => ({ n, score: 1 }))
    : await textMatches(
      // images are shown by the notes that use them: a file name is no search hit
      visible.filter((n) => n.type !== "image"),
      query,
      (n) => searchText(req, n),
      deps.concurrency,
      () => deps.caches.flush({ many: true }).catch(() => {}), // every text was read: keep them for a restart
    );
  const results: PublicSearchHit[] = scored
    .sort((a, b) => b.score - a.score || compareByTitle(a.n, b.n))
    .map(({ n, score }) => ({
      id: idFor(snap, n.noteId),
      title: n.title,
      score,
      path: snap.ancestorsOf(n.noteId).map((id) => snap.byId.get(id)!.title).join(" / "),
    }));
  return { result: { results } };
}

/**
 * Notes whose title or visible text holds every word of the query. Per word: in the title 2
 * (3 when a title word starts with it), in the text 1.
 */
async function textMatches(
  notes: CoreNote[],
  query: string,
  textOf: (note: CoreNote) => Promise<string>,
  concurrency: number,
  flush: () => void,
): Promise<{ n: CoreNote; score: number }[]> {
  const words = [...new Set(normalizeForSearch(query).split(" ").filter(Boolean))]
    .slice(0, MAX_SEARCH_WORDS);
  if (words.length === 0) return [];
  const texts = await mapLimit(notes, concurrency, textOf);
  flush();
  return notes.flatMap((n, i) => {
    const title = normalizeForSearch(n.title);
    const titleWords = title.split(" ");
    let score = 0;
    for (const w of words) {
      const inTitle = title.includes(w);
      const inText = texts[i].includes(w);
      if (!inTitle && !inText) return [];
      if (inTitle) score += titleWords.some((t) => t.startsWith(w)) ? 3 : 2;
      if (inText) score += 1;
    }
    return [{ n, score }];
  });
}
