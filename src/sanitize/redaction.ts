/**
 * The redaction mark: what stands in a sentence where a link went together with its text
 * because that text may name a note the reader may not see ("She trusts — more than she
 * should."). It is the same whatever went (no length, no wording of its own), an em dash, the
 * typographer's mark for a withheld name, so an excerpt or a search hit reads it as prose too;
 * the page styles it by its class, and screen readers get its label. The allow-list gives every
 * `span` of this class exactly these attributes (allow_list.ts), so the mark is canonical.
 *
 * @module
 */

/** The mark's class (the site's stylesheet styles it). */
export const REDACTION_CLASS = "redacted";

/** What the mark says to screen readers and, as a tooltip, to everyone. */
export const REDACTION_LABEL = "Not yet published";

/** The mark's visible text, the same wherever its HTML is read as text. */
export const REDACTION_TEXT = "—";

/** The mark's attributes, in the order the allow-list writes them. */
export const REDACTION_ATTRIBUTES: Readonly<Record<string, string>> = Object.freeze({
  class: REDACTION_CLASS,
  role: "img",
  "aria-label": REDACTION_LABEL,
  title: REDACTION_LABEL,
});

/**
 * The mark exactly as sanitized HTML carries it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   REDACTION_HTML,
 *   '<span class="redacted" role="img" aria-label="Not yet published" ' +
 *     'title="Not yet published">—</span>',
 * );
 * ```
 */
export const REDACTION_HTML = `<span ${
  Object.entries(REDACTION_ATTRIBUTES).map(([name, value]) => `${name}="${value}"`).join(" ")
}>${REDACTION_TEXT}</span>`;

/**
 * Whether a cleaned `class` value makes a `span` the mark.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(isRedactionClass("redacted"), true);
 * assert.equal(isRedactionClass("redacted loud"), false);
 * ```
 */
export function isRedactionClass(value: string | undefined): boolean {
  return value === REDACTION_CLASS;
}
