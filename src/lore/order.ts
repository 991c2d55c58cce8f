/**
 * The one title order every list uses: natural (digit runs compare as numbers, "Act 2" before
 * "Act 10"), ignoring case and accents, in a fixed locale so every host sorts alike.
 *
 * @module
 */

const collator = new Intl.Collator("en", { sensitivity: "base", numeric: true });

/**
 * Natural, case- and accent-insensitive string order.
 *
 * @example
 * ```ts
 * ["Year 10", "year 9"].sort(naturalCompare); // ["year 9", "Year 10"]
 * ```
 */
export function naturalCompare(a: string, b: string): number {
  return collator.compare(a, b);
}

/**
 * Orders by title, then by noteId so equal titles still have one stable order.
 *
 * @example
 * ```ts
 * notes.sort(compareByTitle);
 * ```
 */
export function compareByTitle(
  a: { title: string; noteId: string },
  b: { title: string; noteId: string },
): number {
  return collator.compare(a.title, b.title) ||
    (a.noteId < b.noteId ? -1 : a.noteId > b.noteId ? 1 : 0);
}
