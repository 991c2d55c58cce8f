/**
 * The public search results page (`/?q=…`).
 *
 * @module
 */
import type { PublicSearchResult } from "../share/public_types.ts";
import { displayTitle, loreHref } from "./format.ts";
import { html } from "./html.ts";
import type { PageParts } from "./layout.ts";

/**
 * Renders the hits of a public search, each with its path of public ancestors. Result pages are
 * never indexed.
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
export function searchPage(query: string, result: PublicSearchResult): PageParts {
  const count = result.results.length;
  const main = html`<h1>Search results</h1>
<p class="meta" role="status">${count === 1 ? "1 result" : `${count} results`} for “${query}”</p>
${
    count > 0
      ? html`<ol class="links">${
        result.results.map((hit) =>
          html`<li><a href="${loreHref(hit.id)}">${displayTitle(hit.title)}</a>${
            hit.path && html`<p class="path">${hit.path}</p>`
          }</li>`
        )
      }</ol>`
      : html`<p>No published lore matches your search. <a href="/">Browse everything</a>.</p>`
  }`;
  return { title: `Search: ${query}`, main, noIndex: true, query };
}
