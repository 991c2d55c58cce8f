/**
 * The public search results page (`/?q=…`): each hit with its path of public ancestors and the
 * passage of its visible text that matches.
 *
 * @module
 */
import type { PublicSearchResult } from "../share/public_types.ts";
import { displayTitle, loreHref } from "./format.ts";
import { html } from "./html.ts";
import type { PageParts } from "./layout.ts";
import type { SiteFrame } from "./site_model.ts";

/** A passage of a note's text around the first word of the search it contains. */
export interface Excerpt {
  before: string;
  match: string;
  after: string;
}

/** Characters of context on each side of the match. */
const EXCERPT_RADIUS = 90;

/**
 * The passage of `text` around the first word of `query` it contains (case ignored), the whole
 * word it falls in marked, cut at word boundaries; the text's start when no word occurs (the
 * title matched), null for no text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   excerpt("Most ships put in at Saltmarrow Harbor.", "harb"),
 *   { before: "Most ships put in at Saltmarrow ", match: "Harbor", after: "." },
 * );
 * ```
 */
export function excerpt(text: string, query: string): Excerpt | null {
  if (!text) return null;
  const lower = text.toLowerCase();
  const words = query.toLowerCase().split(/\s+/).filter((w) => w.length > 0);
  let at = -1;
  let end = -1;
  for (const w of words) {
    const i = lower.indexOf(w);
    if (i >= 0 && (at < 0 || i < at)) [at, end] = [i, i + w.length];
  }
  if (at < 0) return { before: "", match: "", after: clip(text, 2 * EXCERPT_RADIUS, "end") };
  // the whole word the hit falls in
  while (at > 0 && WORD_CHAR.test(text[at - 1])) at--;
  while (end < text.length && WORD_CHAR.test(text[end])) end++;
  return {
    before: clip(text.slice(0, at), EXCERPT_RADIUS, "start"),
    match: text.slice(at, end),
    after: clip(text.slice(end), EXCERPT_RADIUS, "end"),
  };
}

const WORD_CHAR = /[\p{L}\p{N}]/u;

/**
 * Keeps `max` characters at one end, cut at a word boundary (inside a word only when the kept
 * part holds no space at all), marking the cut with "…".
 */
function clip(text: string, max: number, keep: "start" | "end"): string {
  if (text.length <= max) return text;
  if (keep === "end") {
    const cut = text.slice(0, max);
    const space = cut.lastIndexOf(" ");
    return `${space > 0 ? cut.slice(0, space) : cut}…`;
  }
  const cut = text.slice(text.length - max);
  const space = cut.indexOf(" ");
  return `…${space >= 0 ? cut.slice(space + 1) : cut}`;
}

/**
 * Renders the hits of a public search, each with its path of public ancestors and, when given,
 * its matching passage. Result pages are never indexed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const result = {
 *   results: [{ id: "ashford", title: "Ashford", score: 3, path: "The Shattered Coast" }],
 * };
 * const page = searchPage("harbor", result);
 * assert.equal(page.noIndex, true);
 * assert.match(page.main.html, /1 result for “harbor”/);
 * ```
 */
export function searchPage(
  query: string,
  result: PublicSearchResult,
  site?: SiteFrame,
  excerpts?: ReadonlyMap<string, Excerpt | null>,
): PageParts {
  const count = result.results.length;
  const main = html`<h1>Search results</h1>
<p class="meta" role="status">${count === 1 ? "1 result" : `${count} results`} for “${query}”</p>
${
    count > 0
      ? html`<ol class="links hits">${
        result.results.map((hit) => {
          const passage = excerpts?.get(hit.id);
          return html`<li><a href="${loreHref(hit.id)}">${displayTitle(hit.title)}</a>${
            hit.path && html`<p class="path">${hit.path}</p>`
          }${
            passage &&
            html`<p class="excerpt">${passage.before}${
              passage.match && html`<mark>${passage.match}</mark>`
            }${passage.after}</p>`
          }</li>`;
        })
      }</ol>`
      : html`<p>No published lore matches your search. <a href="/">Browse everything</a>.</p>`
  }`;
  const meta = site && {
    path: `/?q=${encodeURIComponent(query)}`,
    description: `Search results for “${query}” in ${site.title}`,
  };
  return { title: `Search: ${query}`, main, noIndex: true, query, site, meta };
}
