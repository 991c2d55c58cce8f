/**
 * Building Core search queries from client input. Client text only ever appears inside quoted,
 * escaped literals: it cannot add operators, close the quote, or change which
 * notes a query selects.
 *
 * @module
 */
import { titleForCore } from "./titles.ts";

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
 * A whole query: notes meeting every one of `conditions` whose title contains `text`
 * (`note.title *=* "text"`, case-insensitive in Core). Core compares the title as stored, where
 * `&`, `<` and `>` are escaped when create-note or this service wrote it ({@linkcode titleForCore})
 * and as typed when another writer PATCHed it, so text holding them is looked for in both forms,
 * grouped in parentheses after the other conditions (alone, a leading parenthesis would make Core
 * read the query as full text). Core's match is a superset (`amp` is inside `&amp;`): the caller
 * ranks the typed titles and drops those that do not contain the text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(titleSearch("ar", ["#lore"]), '#lore note.title *=* "ar"');
 * assert.equal(
 *   titleSearch("Salt & Smoke", ["#lore"]),
 *   '#lore (note.title *=* "Salt &amp; Smoke" or note.title *=* "Salt & Smoke")',
 * );
 * assert.equal(titleSearch("a<b"), 'note.title *=* "a&lt;b" or note.title *=* "a<b"');
 * ```
 */
export function titleSearch(text: string, conditions: readonly string[] = []): string {
  const stored = titleForCore(text);
  const contains = (form: string) => `note.title *=* ${quoteSearchValue(form)}`;
  if (stored === text) return [...conditions, contains(text)].join(" ");
  const either = `${contains(stored)} or ${contains(text)}`;
  return conditions.length ? `${conditions.join(" ")} (${either})` : either;
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
