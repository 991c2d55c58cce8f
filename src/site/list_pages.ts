/**
 * Pages that list notes across the world: every note of one lore type (the timeline is
 * `timeline_page.ts`).
 *
 * @module
 */
import { loreHref, loreTypePlural } from "./format.ts";
import { html } from "./html.ts";
import type { PageParts } from "./layout.ts";
import { typeHref } from "./navigation.ts";
import type { NavLink, SiteFrame } from "./site_model.ts";

/** A listed note with a short description of it. */
export interface ListedNote extends NavLink {
  summary: string;
}

/**
 * Every visible note of one lore type, by title, each with its first paragraph.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const notes = [{ id: "mira", title: "Mira", summary: "A harbour pilot." }];
 * const page = typePage("character", notes);
 * assert.equal(page.title, "Characters");
 * assert.match(page.main.html, /<a href="\/public\/lore\/mira">Mira<\/a>/);
 * ```
 */
export function typePage(
  loreType: string,
  notes: readonly ListedNote[],
  site?: SiteFrame,
  noIndex = false,
): PageParts {
  const title = loreTypePlural(loreType);
  const main = html`<h1>${title}</h1>
<ul class="cards">${
    notes.map((n) =>
      html`<li><a href="${loreHref(n.id)}">${n.title}</a>${
        n.summary && html`<p class="meta">${n.summary}</p>`
      }</li>`
    )
  }</ul>`;
  return {
    title,
    main,
    noIndex,
    site,
    meta: { path: typeHref(loreType), description: `${title} of ${site?.title ?? "the world"}` },
  };
}
