/**
 * Ranking notes by how well their title matches what the user typed, shared by the mention and
 * note pickers: exact title first, then titles starting with the text, then titles with a word
 * starting with it, then any other occurrence. Comparison ignores case and diacritics, like Core's
 * own title matching, so the order agrees with what Core considered a match.
 *
 * @module
 */
import { naturalCompare } from "./order.ts";

/** How a title matches, best first. */
export const TitleMatch = {
  exact: 0,
  prefix: 1,
  wordStart: 2,
  substring: 3,
  none: 4,
} as const;
/** One of {@linkcode TitleMatch}'s values. */
export type TitleMatch = (typeof TitleMatch)[keyof typeof TitleMatch];

const WORD_CHAR = /[\p{L}\p{N}]/u;

/**
 * Case- and diacritic-insensitive form of a string (what Core compares titles on).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(foldTitle("Éowyn of ROHAN"), "eowyn of rohan");
 * ```
 */
export function foldTitle(s: string): string {
  return s.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
}

/**
 * How `title` matches `query` (both folded with {@linkcode foldTitle} first).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(titleMatch("Ashford Keep", "keep"), TitleMatch.wordStart);
 * assert.equal(titleMatch("Ashford", "ash"), TitleMatch.prefix);
 * ```
 */
export function titleMatch(title: string, query: string): TitleMatch {
  const t = foldTitle(title);
  const q = foldTitle(query.trim());
  if (!q) return TitleMatch.none;
  if (t === q) return TitleMatch.exact;
  let at = t.indexOf(q);
  if (at === -1) return TitleMatch.none;
  if (at === 0) return TitleMatch.prefix;
  for (; at !== -1; at = t.indexOf(q, at + 1)) {
    if (!WORD_CHAR.test(t[at - 1])) return TitleMatch.wordStart;
  }
  return TitleMatch.substring;
}

/**
 * Sorts items by {@linkcode titleMatch}, then shorter title, then alphabetically; equal items keep
 * their input order. Items whose title does not contain the query at all are left out: Core
 * matched its stored title, where `amp` is found inside `&amp;` and a tag's name inside `<b>`,
 * but the titles ranked are the typed ones. Returns at most `limit` items.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   rankByTitle([{ title: "Mara's Ash" }, { title: "Ash" }, { title: "Ashford" }], "ash", 2),
 *   [{ title: "Ash" }, { title: "Ashford" }],
 * );
 * assert.deepEqual(rankByTitle([{ title: "Salt & Smoke" }], "amp"), []);
 * ```
 */
export function rankByTitle<T extends { title: string }>(
  items: readonly T[],
  query: string,
  limit = Infinity,
): T[] {
  return items
    .map((item, i) => ({ item, i, match: titleMatch(item.title, query) }))
    .filter((r) => r.match !== TitleMatch.none)
    .sort((a, b) =>
      a.match - b.match ||
      a.item.title.length - b.item.title.length ||
      naturalCompare(a.item.title, b.item.title) ||
      a.i - b.i
    )
    .slice(0, limit)
    .map((r) => r.item);
}
