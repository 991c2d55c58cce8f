/**
 * The plain text of lore HTML, for the places that read prose rather than show markup (text sent
 * to the Parser, the public search index). The HTML is sanitized first, so text a browser would
 * never show (scripts, styles, and with the player sanitizer gm-only parts) never counts, and the
 * text is read off the tree a browser builds, so character references come out decoded and
 * attribute values never leak in. Text that is not HTML but may hold character references is
 * decoded with {@linkcode decodeHtmlEntities}, which needs no HTML engine; {@linkcode htmlToText}
 * and {@linkcode htmlTextContent} throw until it is loaded (html_engine.ts).
 *
 * @module
 */
import { parseLikeBrowser, textChunks } from "./browser_tree.ts";
import { sanitizeLoreHtml } from "./html.ts";

/**
 * The visible text of `html` after `sanitize` (default: the lore sanitizer, gm-only parts kept):
 * element boundaries are word breaks, whitespace runs become one space, ends trimmed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sanitizePlayerHtml } from "./html.ts";
 * import { loadHtmlEngine } from "./html_engine.ts";
 *
 * await loadHtmlEngine();
 * assert.equal(
 *   htmlToText("<p>Salt &amp; tar</p><p>Harbor<script>x()</script></p>"),
 *   "Salt & tar Harbor",
 * );
 * assert.equal(
 *   htmlToText('<p>Town<span class="gm-only"> cult</span></p>', sanitizePlayerHtml),
 *   "Town",
 * );
 * ```
 */
export function htmlToText(
  html: string,
  sanitize: (html: string) => string = sanitizeLoreHtml,
): string {
  return visibleChunks(html, sanitize).join(" ").replace(/\s+/g, " ").trim();
}

/**
 * The text content of `html` after `sanitize` (default: the lore sanitizer): its text nodes
 * joined as written, character references decoded, whitespace left alone — what a browser shows
 * for a line of inline markup such as a title holding `<b>`, where an element boundary is no
 * word break.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadHtmlEngine } from "./html_engine.ts";
 *
 * await loadHtmlEngine();
 * assert.equal(htmlTextContent("<b>Salt</b>y &amp; <i>dry</i><script>x()</script>"), "Salty & dry");
 * ```
 */
export function htmlTextContent(
  html: string,
  sanitize: (html: string) => string = sanitizeLoreHtml,
): string {
  return visibleChunks(html, sanitize).join("");
}

function visibleChunks(html: string, sanitize: (html: string) => string): string[] {
  return textChunks(parseLikeBrowser(sanitize(html)));
}

const ENTITY = /&(?:#(\d{1,7})|#x([0-9a-f]{1,6})|(amp|lt|gt|quot|apos|nbsp));/gi;
const NAMED: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
};

/**
 * Decodes numeric character references and the named ones escaping produces (`&amp;`, `&lt;`,
 * `&gt;`, `&quot;`, `&apos;`, `&nbsp;` as a space), in one pass; an invalid code point becomes a
 * space, any other named reference stays as written.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(decodeHtmlEntities("Tom &amp; Jerry &#x2014; &#39;74"), "Tom & Jerry — '74");
 * ```
 */
export function decodeHtmlEntities(text: string): string {
  return text.replace(ENTITY, (_, dec: string, hex: string, name: string) => {
    if (name) return NAMED[name.toLowerCase()] ?? " ";
    const code = dec ? Number(dec) : parseInt(hex, 16);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : " ";
  });
}
