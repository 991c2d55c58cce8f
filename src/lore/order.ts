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
 * import assert from "node:assert/strict";
 * assert.deepEqual(["Year 10", "year 9"].sort(naturalCompare), ["year 9", "Year 10"]);
 * ```
 */
export function naturalCompare(a: string, b: string): number {
  return collator.compare(a, b);
}

/** What {@linkcode compareByTitle} orders. */
export interface Titled {
  title: string;
  noteId: string;
  /** A protected note's title is unknown (Core sends ciphertext; we show a placeholder). */
  isProtected?: boolean;
}

/**
 * Orders by title, then by noteId so equal titles still have one stable order. Protected notes
 * come last, by noteId: their shown title is a placeholder, not a title to sort by.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const notes = [
 *   { noteId: "n1", title: "b" },
 *   { noteId: "n2", title: "[protected]", isProtected: true },
 *   { noteId: "n3", title: "A" },
 * ];
 * assert.deepEqual(notes.sort(compareByTitle).map((n) => n.noteId), ["n3", "n1", "n2"]);
 * ```
 */
export function compareByTitle(a: Titled, b: Titled): number {
  const hiddenA = a.isProtected === true;
  const hiddenB = b.isProtected === true;
  if (hiddenA !== hiddenB) return hiddenA ? 1 : -1;
  return (hiddenA ? 0 : collator.compare(a.title, b.title)) ||
    (a.noteId < b.noteId ? -1 : a.noteId > b.noteId ? 1 : 0);
}
