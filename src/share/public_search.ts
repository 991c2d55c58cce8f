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
 * (3 when a title word starts with it), in the text 1. When no note holds them all, a word of
 * five letters or more also matches a visible word one edit away (a letter added, dropped,
 * changed, or two swapped: "lantren" finds "lantern"), at half the score: typos find what the
 * visitor may read, and nothing else, since only visible words are candidates.
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
  const titles = notes.map((n) => normalizeForSearch(n.title));
  const exact = scored(notes, titles, texts, words.map((w) => ({ forms: [w], weight: 1 })));
  if (exact.length > 0) return exact;
  const vocabulary = new Set([...titles, ...texts].flatMap((t) => t.split(/[^\p{L}\p{N}]+/u)));
  const fuzzy = words.map((w) => {
    const near = w.length >= MIN_FUZZY_LENGTH
      ? [...vocabulary].filter((v) => v !== w && oneEditApart(w, v))
      : [];
    return near.length ? { forms: [w, ...near], weight: 0.5 } : { forms: [w], weight: 1 };
  });
  return fuzzy.some((f) => f.weight < 1) ? scored(notes, titles, texts, fuzzy) : [];
}

/** Shortest query word that may match a word one edit away. */
const MIN_FUZZY_LENGTH = 5;

/** Scores of the notes that hold one form of every word, weighted per word. */
function scored(
  notes: CoreNote[],
  titles: string[],
  texts: string[],
  words: { forms: string[]; weight: number }[],
): { n: CoreNote; score: number }[] {
  return notes.flatMap((n, i) => {
    const title = titles[i];
    const titleWords = title.split(" ");
    let score = 0;
    for (const { forms, weight } of words) {
      const inTitle = forms.find((f) => title.includes(f));
      const inText = forms.some((f) => texts[i].includes(f));
      if (inTitle === undefined && !inText) return [];
      if (inTitle !== undefined) {
        score += weight * (titleWords.some((t) => t.startsWith(inTitle)) ? 3 : 2);
      }
      if (inText) score += weight;
    }
    return [{ n, score }];
  });
}

/**
 * Whether `b` is `a` with one letter added, dropped or changed, or two neighbours swapped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(oneEditApart("lantren", "lantern"), true); // swapped
 * assert.equal(oneEditApart("harbr", "harbor"), true); // dropped
 * assert.equal(oneEditApart("harbor", "arbour"), false); // two edits
 * ```
 */
export function oneEditApart(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1 || a === b) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (a.length === b.length) {
    if (a.slice(i + 1) === b.slice(i + 1)) return true; // one changed
    return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2); // swapped
  }
  const [short, long] = a.length < b.length ? [a, b] : [b, a];
  return short.slice(i) === long.slice(i + 1); // one added or dropped
}
