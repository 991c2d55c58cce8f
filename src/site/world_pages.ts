/**
 * Every page of the public site built from one visitor's view of the share: the frame (world
 * name, navigation) plus the page's own data. Route handlers pass these to the share, which
 * renders each page once per snapshot and visitor class.
 *
 * @module
 */
import { publicNotFound, type VisitorView } from "../share/public_api.ts";
import { groupByLoreType } from "../share/public_api.ts";
import type { PixelSize } from "../share/image_sizes.ts";
import { parseGeolocation } from "../lore/geolocation.ts";
import { PORTRAIT_RELATIONS } from "../lore/note_view.ts";
import { atomFeed, FEED_SIZE, type FeedEntry, sitemapXml } from "./feeds.ts";
import { displayTitle, imageHref } from "./format.ts";
import { imageTitle } from "../sanitize/prose.ts";
import { homePage } from "./home_page.ts";
import { contentImageIds } from "./images.ts";
import type { PageParts } from "./layout.ts";
import { type ListedNote, typePage } from "./list_pages.ts";
import { mapPage, type MapPin, type MapZoom } from "./map_page.ts";
import { mapHref, TIMELINE_PATH, typeHref } from "./navigation.ts";
import { notePage } from "./note_page.ts";
import { notePreview } from "./preview_image.ts";
import { type TimelineEntry, type TimelineNote, timelinePage } from "./timeline_page.ts";
import { type Excerpt, excerpt, searchPage } from "./search_page.ts";
import {
  DESCRIPTION_MAX,
  type NavLink,
  notePlace,
  shorten,
  siteFrame,
  tidyText,
} from "./site_model.ts";

/** A page ready to render (its ETag comes from the rendered bytes alone). */
export interface BuiltPage {
  parts: PageParts;
}

/** A machine-readable document (sitemap, feed), its ETag likewise. */
export interface BuiltDocument {
  body: string;
}

async function shareNoIndex(view: VisitorView): Promise<boolean> {
  return (await view.note(view.rootId)).noIndex;
}

/** Visible notes that have a page of their own (image notes are shown where they are used). */
function pageIds(view: VisitorView): string[] {
  return view.visibleIds().filter((id) => !view.summary(id).isImage);
}

async function summaryOf(view: VisitorView, noteId: string): Promise<string> {
  const own = view.summary(noteId).description;
  return own ? shorten(own, DESCRIPTION_MAX) : await view.lead(noteId);
}

/**
 * The home page: the share root's content and its lore by type.
 */
export async function buildHome(view: VisitorView, origin: string): Promise<BuiltPage> {
  const site = await siteFrame(view, origin);
  const root = await view.note(view.rootId);
  const groups = groupByLoreType(
    view.visibleIds().flatMap((id) => {
      const n = view.summary(id);
      if (id === view.rootId || !n.isLore) return [];
      return [{ noteId: id, id: view.idFor(id), title: n.title, loreType: n.loreType }];
    }),
  );
  return { parts: homePage(root.note, groups, root.noIndex, site) };
}

/**
 * A note's page with its surroundings, image sizes and preview metadata.
 */
export async function buildNote(
  view: VisitorView,
  noteId: string,
  origin: string,
): Promise<BuiltPage> {
  const [site, place, result] = await Promise.all([
    siteFrame(view, origin),
    notePlace(view, noteId),
    view.note(noteId),
  ]);
  // images are shown by the notes that use them (the map, the portrait): not listed as related,
  // and an image's own page is named for players, not by its file name
  const summary = view.summary(noteId);
  const note = {
    ...result.note,
    title: summary.isImage ? imageTitle(result.note.title) : result.note.title,
    resolvedRelations: result.note.resolvedRelations.filter((r) =>
      !view.summary(r.targetNoteId).isImage
    ),
  };
  const ids = [
    ...new Set([
      ...(note.portraitImageNoteId ? [note.portraitImageNoteId] : []),
      ...contentImageIds(note.contentHtml),
    ]),
  ];
  const sizes = new Map<string, PixelSize>();
  await Promise.all(ids.map(async (id) => {
    const size = await view.imageSize(id, noteId);
    if (size) sizes.set(id, size);
  }));
  const map = await publicMap(view, noteId);
  const portraitId = note.portraitImageNoteId;
  const parts = notePage(note, result.noIndex, {
    site,
    place,
    id: view.idFor(noteId),
    sizes,
    description: summary.description && shorten(summary.description, DESCRIPTION_MAX),
    hasMap: map !== null,
    imagePaths: new Map(
      portraitId ? [[portraitId, imageHref(portraitId, view.summary(portraitId).title)]] : [],
    ),
    preview: notePreview(view, {
      title: displayTitle(note.title),
      portraitId,
      map,
      contentHtml: note.contentHtml,
      sizes,
    }),
  });
  return { parts };
}

/**
 * The search results page: hits with their path and matching passage.
 */
export async function buildSearch(
  view: VisitorView,
  query: string,
  origin: string,
): Promise<BuiltPage> {
  const [site, result] = await Promise.all([siteFrame(view, origin), view.search(query)]);
  const byUrlId = new Map(view.visibleIds().map((id) => [view.idFor(id), id]));
  const excerpts = new Map<string, Excerpt | null>();
  await Promise.all(result.results.map(async (hit) => {
    const noteId = byUrlId.get(hit.id);
    if (noteId !== undefined) {
      excerpts.set(hit.id, excerpt(tidyText(await view.text(noteId)), query));
    }
  }));
  return { parts: searchPage(query, result, site, excerpts) };
}

/**
 * The page of one lore type; 404 when the visitor sees no note of that type.
 */
export async function buildType(
  view: VisitorView,
  loreType: string,
  origin: string,
): Promise<BuiltPage> {
  const group = groupByLoreType(
    pageIds(view).flatMap((id) => {
      const n = view.summary(id);
      return n.isLore && n.loreType === loreType
        ? [{ noteId: id, id: view.idFor(id), title: n.title, loreType }]
        : [];
    }),
  )[0];
  if (!group) throw publicNotFound();
  const byUrlId = new Map(view.visibleIds().map((id) => [view.idFor(id), id]));
  const notes: ListedNote[] = await Promise.all(group.notes.map(async (n) => ({
    id: n.id,
    title: displayTitle(n.title),
    summary: await summaryOf(view, byUrlId.get(n.id)!),
  })));
  const site = await siteFrame(view, origin);
  return { parts: typePage(loreType, notes, site, await shareNoIndex(view)) };
}

/** Relations that name a picture of a note, not a place it is at. */
const IMAGE_RELATIONS: ReadonlySet<string> = new Set([...PORTRAIT_RELATIONS, "mapImage"]);

/**
 * Visible location notes each visible note is related to (by relations the GM keeps public,
 * other than its pictures).
 */
function placesOf(view: VisitorView): Map<string, NavLink[]> {
  const out = new Map<string, NavLink[]>();
  for (const placeId of pageIds(view)) {
    if (view.summary(placeId).loreType !== "location") continue;
    const place = { id: view.idFor(placeId), title: displayTitle(view.summary(placeId).title) };
    for (const { name, sourceId } of view.relatedFrom(placeId)) {
      if (IMAGE_RELATIONS.has(name)) continue;
      const known = out.get(sourceId) ?? [];
      if (!known.includes(place)) out.set(sourceId, [...known, place]);
    }
  }
  return out;
}

async function timelineNote(view: VisitorView, noteId: string): Promise<TimelineNote> {
  const n = view.summary(noteId);
  return {
    id: view.idFor(noteId),
    title: displayTitle(n.title),
    calendar: n.label("calendarSystem")?.trim() || null,
    summary: await summaryOf(view, noteId),
  };
}

/**
 * The timeline: every visible note with an in-world date (`#inWorldDate`, promoted), with its
 * `#shareDateLabel`, summary, places (relations to visible locations) and era (its nearest
 * visible timeline note), and the world's timeline notes.
 */
export async function buildTimeline(view: VisitorView, origin: string): Promise<BuiltPage> {
  const timelineIds = pageIds(view).filter((id) => view.summary(id).loreType === "timeline");
  const timelines = new Map(
    await Promise.all(timelineIds.map(async (id) => [id, await timelineNote(view, id)] as const)),
  );
  const places = placesOf(view);
  const dated = pageIds(view).flatMap((id) => {
    const date = view.summary(id).label("inWorldDate")?.trim();
    return date ? [{ noteId: id, date }] : [];
  });
  const entries: TimelineEntry[] = await Promise.all(dated.map(async ({ noteId, date }) => {
    const n = view.summary(noteId);
    // ancestors along the shortest public path: an era is never a note the visitor cannot see
    const era = view.ancestorsOf(noteId).filter((id) => timelines.has(id)).at(-1);
    return {
      id: view.idFor(noteId),
      title: displayTitle(n.title),
      date,
      dateLabel: n.dateLabel ?? date,
      loreType: n.loreType,
      summary: await summaryOf(view, noteId),
      places: places.get(noteId) ?? [],
      era: era === undefined ? null : timelines.get(era)!,
    };
  }));
  const site = await siteFrame(view, origin);
  return {
    parts: timelinePage(entries, site, await shareNoIndex(view), [...timelines.values()]),
  };
}

/**
 * A note's public map: its `~mapImage` (a visible image note) with the pins of its visible
 * children (`#geolocation="x, y"`, promoted, in the image's pixels); null without one.
 */
async function publicMap(view: VisitorView, noteId: string) {
  const imageId = view.summary(noteId).relation("mapImage");
  if (imageId === null || !view.summary(imageId).isImage) return null;
  const size = await view.imageSize(imageId, noteId);
  if (!size) return null;
  const pins: MapPin[] = view.childrenOf(noteId).flatMap((id) => {
    const n = view.summary(id);
    const point = parseGeolocation(n.label("geolocation") ?? "");
    return point && !n.isImage
      ? [{ id: view.idFor(id), title: displayTitle(n.title), ...point }]
      : [];
  });
  return { imageId, imagePath: imageHref(imageId, view.summary(imageId).title), size, pins };
}

/**
 * The map page of a note at a zoom; 404 when the note has no public map.
 */
export async function buildMap(
  view: VisitorView,
  noteId: string,
  origin: string,
  zoom: MapZoom = "1",
): Promise<BuiltPage> {
  const map = await publicMap(view, noteId);
  if (!map) throw publicNotFound();
  const [site, place, result] = await Promise.all([
    siteFrame(view, origin),
    notePlace(view, noteId),
    view.note(noteId),
  ]);
  const note = { id: view.idFor(noteId), title: displayTitle(result.note.title) };
  const description = await summaryOf(view, noteId);
  const parts = mapPage(
    { note, ...map, description, trail: place.breadcrumbs },
    site,
    result.noIndex,
    zoom,
  );
  return { parts };
}

/**
 * `sitemap.xml`: the home page, every visible page not opted out of indexing, lore types, maps
 * and the timeline; 404 when the share opts out of indexing.
 */
export async function buildSitemap(view: VisitorView, origin: string): Promise<BuiltDocument> {
  if (await shareNoIndex(view)) throw publicNotFound();
  const site = await siteFrame(view, origin);
  const notes = pageIds(view).filter((id) => id !== view.rootId && !view.summary(id).noIndex);
  const body = sitemapXml(origin, [
    { path: "/", lastModified: view.summary(view.rootId).dateModified },
    ...notes.map((id) => ({
      path: `/public/lore/${encodeURIComponent(view.idFor(id))}`,
      lastModified: view.summary(id).dateModified,
    })),
    ...site.loreTypes.map((t) => ({ path: typeHref(t) })),
    ...site.maps.map((m) => ({ path: mapHref(m.id) })),
    ...(site.hasTimeline ? [{ path: TIMELINE_PATH }] : []),
  ]);
  return { body };
}

/**
 * The Atom feed of the most recently changed visible notes; 404 when the share opts out of
 * indexing.
 */
export async function buildFeed(view: VisitorView, origin: string): Promise<BuiltDocument> {
  if (await shareNoIndex(view)) throw publicNotFound();
  const site = await siteFrame(view, origin);
  const recent = pageIds(view)
    .map((id) => view.summary(id))
    .filter((n) => n.dateModified !== null && !n.noIndex)
    .sort((
      a,
      b,
    ) => (a.dateModified! < b.dateModified! ? 1 : a.dateModified! > b.dateModified! ? -1 : 0))
    .slice(0, FEED_SIZE);
  const entries: FeedEntry[] = await Promise.all(recent.map(async (n) => ({
    id: view.idFor(n.noteId),
    title: displayTitle(n.title),
    updated: n.dateModified!,
    summary: await summaryOf(view, n.noteId),
  })));
  return { body: atomFeed(site, entries) };
}
