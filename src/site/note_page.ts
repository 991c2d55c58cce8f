/**
 * The public page of one lore note: breadcrumbs, type, title, last change and reading time, an
 * infobox (portrait thumbnail linking to the full image, public attributes), content with sized
 * images, relations grouped by kind (a character's or faction's also drawn as a diagram), the
 * theme song, children, backlinks and the neighbouring notes.
 *
 * @module
 */
import type { PixelSize } from "../share/image_sizes.ts";
import type { PublicLoreNote } from "../share/public_types.ts";
import { withContents } from "./contents.ts";
import {
  displayTitle,
  externalHref,
  formatDate,
  humanizeName,
  imageHref,
  loreHref,
  loreTypeLabel,
} from "./format.ts";
import { html, type SafeHtml, trusted } from "./html.ts";
import { sizedContentImages, withoutImage } from "./images.ts";
import type { PageParts } from "./layout.ts";
import { breadcrumbs, mapHref, surroundings, typeHref } from "./navigation.ts";
import type { PreviewImage } from "./preview_image.ts";
import { readingTime } from "./reading_time.ts";
import { RELATED_LIST_ID, relationDiagram } from "./relation_diagram.ts";
import { firstParagraph, type NotePlace, type SiteFrame } from "./site_model.ts";

const PORTRAIT_RELATION = "portraitImage";

/** What the site knows around a note besides the note itself. */
export interface NoteContext {
  site: SiteFrame;
  place: NotePlace;
  /** The id the note's URL uses (`#shareAlias` or noteId). */
  id: string;
  /** Pixel sizes of the images the page shows, by image id. */
  sizes: ReadonlyMap<string, PixelSize>;
  /** `#shareDescription` of the note. */
  description: string | null;
  /** Whether the note has a public map page. */
  hasMap: boolean;
  /**
   * The one public URL of each image the page shows outside its content (the portrait), by
   * image id: the URL the content uses for it, so the browser fetches it once.
   */
  imagePaths: ReadonlyMap<string, string>;
  /** The picture of the page's link preview; null for the world's card. */
  preview: PreviewImage | null;
}

/** Items grouped by the kind of relation `nameOf` gives ("Ally", "Enemy"), in first-seen order. */
function byKind<T>(items: readonly T[], nameOf: (item: T) => string): [string, T[]][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const kind = humanizeName(nameOf(item));
    groups.set(kind, [...(groups.get(kind) ?? []), item]);
  }
  return [...groups.entries()];
}

function portrait(note: PublicLoreNote, title: string, ctx?: NoteContext): SafeHtml | false {
  const id = note.portraitImageNoteId;
  if (!id) return false;
  const src = ctx?.imagePaths.get(id) ?? imageHref(id, "portrait");
  const size = ctx?.sizes.get(id);
  return html`
    <a class="portrait-link"
      href="${src}"><img class="portrait" src="${src}" alt="Portrait of ${title}"${size && html`
        width="${size.width}" height="${size.height}"
      `}></a>
  `;
}

/**
 * Renders a public note. Its `contentHtml` is inserted as the public API produced it (already
 * player-sanitized, links and images pointing at public URLs; images get their sizes); everything
 * else is escaped. Without a context (no site around it) the page stands alone.
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
/**
 * The note's "Related" section: its own relations and those other visible notes hold to it
 * ("Ally, from: Iselde Crane"), grouped by kind, with the diagram of a character or faction.
 */
function relatedSection(
  note: PublicLoreNote,
  title: string,
  ctx: NoteContext | undefined,
): SafeHtml | false {
  // the portrait relation is already the picture in the infobox
  const outgoing = byKind(
    note.resolvedRelations.filter((r) =>
      !(r.name === PORTRAIT_RELATION && r.targetNoteId === note.portraitImageNoteId)
    ),
    (r) => r.name,
  );
  const incoming = byKind(ctx?.place.relatedFrom ?? [], (r) => r.name);
  if (outgoing.length === 0 && incoming.length === 0) return false;
  const relations = outgoing.map(([kind, targets]) =>
    html`<li>${kind}: ${
      targets.map((r, i) =>
        html`${i > 0 && ", "}<a href="${loreHref(r.targetNoteId)}">${
          displayTitle(r.targetTitle)
        }</a>${
          r.loreType && html`
            <span class="meta">(${r.loreType})</span>
          `
        }`
      )
    }</li>`
  );
  const relatedFrom = incoming.map(([kind, sources]) =>
    html`<li>${kind}, from: ${
      sources.map(({ from }, i) =>
        html`${i > 0 && ", "}<a href="${loreHref(from.id)}">${from.title}</a>`
      )
    }</li>`
  );
  return html`
    <section aria-labelledby="relations-title">
      <h2 id="relations-title">Related</h2>
      ${relationDiagram(
        { noteId: note.noteId, title, loreType: note.loreType },
        outgoing,
        incoming,
      )}
      <ul class="links" id="${RELATED_LIST_ID}">${relations}${relatedFrom}</ul>
    </section>
  `;
}

export function notePage(note: PublicLoreNote, noIndex: boolean, ctx?: NoteContext): PageParts {
  const title = displayTitle(note.title);
  const modified = formatDate(note.dateModified);
  const reading = readingTime(note.contentHtml);
  const song = externalHref(note.themeSongUrl);
  const picture = portrait(note, title, ctx);
  const details = note.attributes.map((a) =>
    html`
      <dt>${humanizeName(a.name)}</dt>
      <dd>${a.value}</dd>
    `
  );
  // the portrait is in the infobox: not again in the content
  const shown = picture
    ? withoutImage(note.contentHtml, note.portraitImageNoteId!)
    : note.contentHtml;
  const contents = withContents(ctx ? sizedContentImages(shown, ctx.sizes) : shown);
  const main = html`${
    ctx && breadcrumbs(ctx.place.breadcrumbs, title)
  }<article aria-labelledby="note-title">
${
    note.loreType &&
    html`<p class="kicker">${
      ctx
        ? html`<a href="${typeHref(note.loreType)}">${loreTypeLabel(note.loreType)}</a>`
        : loreTypeLabel(note.loreType)
    }</p>`
  }
<h1 id="note-title">${title}</h1>
${
    (modified || reading) &&
    html`<p class="meta">${
      modified && html`Last modified <time datetime="${modified.iso}">${modified.text}</time>`
    }${modified && reading && " · "}${reading}</p>`
  }
${
    (picture || details.length > 0) &&
    html`<aside class="infobox" aria-label="At a glance">
${picture}
${details.length > 0 && html`<dl class="details">${details}</dl>`}
</aside>`
  }
${ctx?.hasMap && html`<p><a class="map-link" href="${mapHref(ctx.id)}">Open the map</a></p>`}
${
    contents.entries.length > 0 &&
    html`
      <nav class="toc" aria-labelledby="toc-title">
        <h2 id="toc-title">On this page</h2>
        <ol>${contents.entries.map((e) =>
          html`<li class="l${String(e.level)}"><a href="#${e.id}">${e.text}</a></li>`
        )}</ol>
      </nav>
    `
  }
<div class="content">
${trusted(contents.html)}
</div>
${relatedSection(note, title, ctx)}
${
    song &&
    html`<p class="theme-song"><a href="${song}" rel="noopener noreferrer external">Theme song</a>
<span class="meta">(${new URL(song).host})</span></p>`
  }
</article>
${ctx && surroundings(ctx.place)}`;
  return {
    title,
    main,
    noIndex,
    site: ctx?.site,
    current: note.noteId,
    meta: ctx && {
      path: loreHref(ctx.id),
      type: "article",
      // a note without words of its own (a picture) is still described as itself
      description: ctx.description ?? (firstParagraph(note.contentHtml) ||
        `${title}, in ${ctx.site.title}`),
      image: ctx.preview,
    },
  };
}
