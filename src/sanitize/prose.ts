/**
 * Prose out of player HTML for previews and listings: a note's first paragraph as a
 * description, text read as prose, and text shortened at a word.
 *
 * @module
 */
import { htmlToText } from "./plain_text.ts";

/** Longest description in metadata (search engines and chat previews cut there anyway). */
export const DESCRIPTION_MAX = 200;

/**
 * Text of the first paragraph of player HTML, shortened to `max` characters on a word boundary.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadHtmlEngine } from "./html_engine.ts";
 * await loadHtmlEngine();
 * assert.equal(firstParagraph("<h2>Intro</h2><p>Salt &amp; <b>tar</b>.</p><p>More.</p>"), "Salt & tar.");
 * assert.equal(firstParagraph("<p>one two three</p>", 9), "one two…");
 * ```
 */
export function firstParagraph(contentHtml: string, max = DESCRIPTION_MAX): string {
  const m = /<p(?:\s[^>]*)?>([\s\S]*?)<\/p>/.exec(contentHtml);
  return shorten(m ? tidyText(htmlToText(m[1], (h) => h)) : "", max);
}

/**
 * Text taken out of markup, read as prose: no space before punctuation (inline elements are
 * separate chunks of text).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(tidyText("Most ships put in at Saltmarrow Harbor . Beware ( soon ) !"),
 *   "Most ships put in at Saltmarrow Harbor. Beware (soon)!");
 * ```
 */
export function tidyText(text: string): string {
  return text.replace(/\s+/g, " ").replace(/\s+([.,;:!?)\]])/g, "$1").replace(/([(\[])\s+/g, "$1")
    .trim();
}

/**
 * Text cut to at most `max` characters, at a word boundary when there is one, with an ellipsis.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(shorten("The salt road winds", 12), "The salt…");
 * assert.equal(shorten("Short", 12), "Short");
 * ```
 */
export function shorten(text: string, max: number): string {
  const t = text.replace(/\s+/g, " ").trim();
  if (t.length <= max) return t;
  const cut = t.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,.;:]+$/, "")}…`;
}

/**
 * The name players see for an image note, whose title is most often its file name:
 * `coast-chart.png` → `Coast chart`; a title that is no file name stays as it is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(imageTitle("mira-portrait.png"), "Mira portrait");
 * assert.equal(imageTitle("The Coast Chart"), "The Coast Chart");
 * ```
 */
export function imageTitle(title: string): string {
  const t = title.trim() || "Image";
  if (!FILE_EXTENSION.test(t)) return t;
  const words = altFromFileName(t);
  return words[0].toUpperCase() + words.slice(1);
}

const FILE_EXTENSION = /\.[A-Za-z0-9]{2,5}$/;

/**
 * A file name as alt text: `coast-chart.png` → `coast chart`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(altFromFileName("coast-chart.png"), "coast chart");
 * ```
 */
export function altFromFileName(file: string): string {
  let name = file;
  try {
    name = decodeURIComponent(file);
  } catch {
    // kept as written
  }
  return name.replace(FILE_EXTENSION, "").replace(/[-_.]+/g, " ").trim() || "Image";
}
