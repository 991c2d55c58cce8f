/**
 * Building Core search queries from client input. Client text only ever appears as one quoted,
 * escaped literal: it cannot add operators, close the quote, or change which
 * notes a query selects.
 *
 * @module
 */

/**
 * Quotes a value for Core's search language: wrapped in `"`, with `\` and `"` backslash-escaped
 * and control characters removed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(quoteSearchValue('say "hi"'), '"say \\"hi\\""');
 * ```
 */
export function quoteSearchValue(value: string): string {
  // deno-lint-ignore no-control-regex
  const clean = value.replace(/[\u0000-\u001f\u007f]/g, " ");
  return `"${clean.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * `#name="value"` for a label value match (whole-word semantics in Core).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(labelEquals("loreType", "character"), '#loreType="character"');
 * ```
 */
export function labelEquals(name: string, value: string): string {
  if (!/^[A-Za-z0-9_:]+$/.test(name)) throw new TypeError("invalid label name");
  return `#${name}=${quoteSearchValue(value)}`;
}

/**
 * `note.title *=* "text"`: titles containing the text (case-insensitive in Core).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(titleContains("ar"), 'note.title *=* "ar"');
 * ```
 */
export function titleContains(text: string): string {
  return `note.title *=* ${quoteSearchValue(text)}`;
}

/**
 * The ancestors of a note up to `levels` up, whatever the path: `note.children.noteId = "id"`
 * (its parents) `or note.children.children.noteId = "id"` (its grandparents) and so on.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   ancestorsUpTo("abc", 2),
 *   'note.children.noteId = "abc" or note.children.children.noteId = "abc"',
 * );
 * ```
 */
export function ancestorsUpTo(noteId: string, levels: number): string {
  const id = quoteSearchValue(noteId);
  return Array.from({ length: levels }, (_, i) => `note.${"children.".repeat(i + 1)}noteId = ${id}`)
    .join(" or ");
}
