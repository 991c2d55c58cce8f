/**
 * Pages that list notes across the world: every note of one lore type, and the timeline of
 * every note with an in-world date.
 *
 * @module
 */
import { loreHref, loreTypeLabel, loreTypePlural } from "./format.ts";
import { html } from "./html.ts";
import type { PageParts } from "./layout.ts";
import { TIMELINE_PATH, typeHref } from "./navigation.ts";
import type { NavLink, SiteFrame } from "./site_model.ts";

/** A listed note with a short description of it. */
export interface ListedNote extends NavLink {
  summary: string;
}

/** A note on the timeline. */
export interface TimelineEntry extends NavLink {
  /** The in-world date as written (`1187-03-14`, `Year of the Flood`). */
  date: string;
  loreType: string | null;
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

/**
 * The timeline: notes with an in-world date, in date order (as written, numbers compared as
 * numbers).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const page = timelinePage([
 *   { id: "flood", title: "The Brine Flood", date: "1187-03-14", loreType: "event" },
 * ]);
 * assert.match(page.main.html, /<time>1187-03-14<\/time>/);
 * ```
 */
export function timelinePage(
  entries: readonly TimelineEntry[],
  site?: SiteFrame,
  noIndex = false,
  chronicles: readonly { id: string; title: string }[] = [],
): PageParts {
  const main = html`<h1>Timeline</h1>
${
    chronicles.length > 0 &&
    html`<p class="meta">The world's own timelines: ${
      chronicles.map((c, i) => html`${i > 0 && ", "}<a href="${loreHref(c.id)}">${c.title}</a>`)
    }</p>`
  }
${
    entries.length > 0
      ? html`<ol class="timeline">${
        entries.map((e) =>
          html`<li><time>${e.date}</time> <a href="${loreHref(e.id)}">${e.title}</a>${
            e.loreType && html`
              <span class="meta">(${loreTypeLabel(e.loreType)})</span>
            `
          }</li>`
        )
      }</ol>`
      : html`<p>No dated events have been published yet.</p>`
  }`;
  return {
    title: "Timeline",
    main,
    noIndex,
    site,
    meta: { path: TIMELINE_PATH, description: `Timeline of ${site?.title ?? "the world"}` },
  };
}
