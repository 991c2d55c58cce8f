/**
 * The public home page: the share root's own content and every published note, grouped by lore
 * type.
 *
 * @module
 */
import type { PublicLoreGroup } from "../share/public_api.ts";
import type { PublicLoreNote } from "../share/public_types.ts";
import { displayTitle, loreHref, loreTypeLabel, loreTypePlural } from "./format.ts";
import { html, trusted } from "./html.ts";
import type { PageParts } from "./layout.ts";
import { typeHref } from "./navigation.ts";
import type { SiteFrame } from "./site_model.ts";

/** A group's heading, plural as in the navigation ("Characters"); notes of no type are "Other". */
const groupName = (loreType: string) =>
  loreTypeLabel(loreType) === "Other" ? "Other" : loreTypePlural(loreType);

/**
 * Renders the home page; with the world's frame, the page is the world's front page (its title
 * is the world's name, each group heading links to the type's page).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { layout } from "./layout.ts";
 * const root = {
 *   noteId: "root1",
 *   title: "The Shattered Coast",
 *   loreType: null,
 *   contentHtml: "<p>Welcome, travellers.</p>",
 *   attributes: [],
 *   resolvedRelations: [],
 *   portraitImageNoteId: null,
 *   themeSongUrl: null,
 *   dateModified: null,
 * };
 * const groups = [{ loreType: "location", notes: [{ id: "ashford", title: "Ashford" }] }];
 * const document = layout(homePage(root, groups, false)).html;
 * assert.match(document, /<a href="\/public\/lore\/ashford">Ashford<\/a>/);
 * ```
 */
export function homePage(
  root: PublicLoreNote,
  groups: readonly PublicLoreGroup[],
  noIndex: boolean,
  site?: SiteFrame,
): PageParts {
  const sections = groups.filter((g) => g.notes.length > 0).map((g, i) =>
    html`
      <section class="group" aria-labelledby="group-${i}">
        <h3 id="group-${i}">${site && site.loreTypes.includes(g.loreType)
          ? html`<a href="${typeHref(g.loreType)}">${groupName(g.loreType)}</a>`
          : groupName(g.loreType)}</h3>
        <ul class="links">${g.notes.map((n) =>
          html`<li><a href="${loreHref(n.id)}">${displayTitle(n.title)}</a></li>`
        )}</ul>
      </section>
    `
  );
  const title = displayTitle(root.title);
  const main = html`<h1>${title}</h1>
<div class="content">
${trusted(root.contentHtml)}
</div>
<section aria-labelledby="browse-title">
<h2 id="browse-title">Browse the lore</h2>
${
    sections.length > 0
      ? html`<div class="groups">${sections}</div>`
      : html`<p>Nothing has been published yet.</p>`
  }
</section>`;
  if (!site) return { title, main, noIndex };
  return { title: null, main, noIndex, site, current: root.noteId, meta: { path: "/" } };
}
