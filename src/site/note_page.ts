/**
 * The public page of one lore note: type, title, last change, portrait, content, details,
 * relations as links, and the theme song.
 *
 * @module
 */
import type { PublicLoreNote } from "../share/public_types.ts";
import {
  displayTitle,
  externalHref,
  formatDate,
  humanizeName,
  imageHref,
  loreHref,
  loreTypeLabel,
} from "./format.ts";
import { html, trusted } from "./html.ts";
import type { PageParts } from "./layout.ts";

const PORTRAIT_RELATION = "portraitImage";

/**
 * Renders a public note. Its `contentHtml` is inserted as the public API produced it (already
 * player-sanitized, links and images pointing at public URLs); everything else is escaped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { layout } from "./layout.ts";
 * const note = {
 *   noteId: "abc123",
 *   title: "Ashford",
 *   loreType: "location",
 *   contentHtml: "<p>A harbor town.</p>",
 *   attributes: [{ name: "population", value: "<1200>" }],
 *   resolvedRelations: [],
 *   portraitImageNoteId: null,
 *   themeSongUrl: "javascript:alert(1)",
 *   dateModified: "2026-03-01T09:05:00.000Z",
 * };
 * const page = notePage(note, false);
 * assert.equal(page.title, "Ashford");
 * const document = layout(page).html;
 * assert.match(document, /<p>A harbor town.<\/p>/);
 * assert.match(document, /&lt;1200&gt;/); // everything but the content is escaped
 * assert.doesNotMatch(document, /javascript:/); // only http(s) theme songs are linked
 * ```
 */
export function notePage(note: PublicLoreNote, noIndex: boolean): PageParts {
  const title = displayTitle(note.title);
  const modified = formatDate(note.dateModified);
  const song = externalHref(note.themeSongUrl);
  const details = note.attributes.map((a) =>
    html`
      <dt>${humanizeName(a.name)}</dt>
      <dd>${a.value}</dd>
    `
  );
  // the portrait relation is already the picture at the top
  const relations = note.resolvedRelations.filter((r) =>
    !(r.name === PORTRAIT_RELATION && r.targetNoteId === note.portraitImageNoteId)
  ).map((r) =>
    html`<li>${humanizeName(r.name)}: <a href="${loreHref(r.targetNoteId)}">${
      displayTitle(r.targetTitle)
    }</a>${
      r.loreType && html`
        <span class="meta">(${r.loreType})</span>
      `
    }</li>`
  );
  const main = html`<article aria-labelledby="note-title">
${note.loreType && html`<p class="kicker">${loreTypeLabel(note.loreType)}</p>`}
<h1 id="note-title">${title}</h1>
${
    modified &&
    html`<p class="meta">Last modified <time datetime="${modified.iso}">${modified.text}</time></p>`
  }
${
    note.portraitImageNoteId &&
    html`<img class="portrait" src="${
      imageHref(note.portraitImageNoteId, "portrait")
    }" alt="Portrait of ${title}">`
  }
<div class="content">
${trusted(note.contentHtml)}
</div>
${
    details.length > 0 &&
    html`
      <section aria-labelledby="details-title">
        <h2 id="details-title">Details</h2>
        <dl class="details">${details}</dl>
      </section>
    `
  }
${
    relations.length > 0 &&
    html`
      <section aria-labelledby="relations-title">
        <h2 id="relations-title">Related</h2>
        <ul class="links">${relations}</ul>
      </section>
    `
  }
${
    song &&
    html`<p class="theme-song"><a href="${song}" rel="noopener noreferrer external">Theme song</a>
<span class="meta">(${new URL(song).host})</span></p>`
  }
</article>`;
  return { title, main, noIndex };
}
