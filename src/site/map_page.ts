/**
 * A public map: the map image with its pins as links, drawn as an SVG laid over the image so
 * pins sit at their coordinates without script or inline styles (the CSP allows neither), and
 * the same pins as a list for readers who do not see the picture. The map fits the column, or is
 * zoomed (2×, 4× the column, or the image's own size) inside a region that scrolls; pins and
 * labels keep their screen size at every width and zoom (see `map_pins.ts`).
 *
 * @module
 */
import type { PixelSize } from "../share/image_sizes.ts";
import { loreHref } from "./format.ts";
import { html, type SafeHtml } from "./html.ts";
import type { PageParts } from "./layout.ts";
import {
  PHONE_MAP_WIDTH,
  PIN_DOT_RADIUS,
  PIN_LABEL_SIZE,
  PIN_TARGET_RADIUS,
  type PlacedPin,
  placePins,
} from "./map_pins.ts";
import { breadcrumbs, linkSection, mapHref } from "./navigation.ts";
import type { NavLink, SiteFrame } from "./site_model.ts";

/** A pin: a note at a point of the map image, in the image's pixels. */
export interface MapPin extends NavLink {
  x: number;
  y: number;
}

/** A map as the page draws it. */
export interface PublicMap {
  /** The map note's URL id and title. */
  note: NavLink;
  /** The public image note drawn. */
  imageId: string;
  /** The image's one public URL, the one the map note's content uses too. */
  imagePath: string;
  /** The map note's `#shareDescription` or first paragraph (empty when it has neither). */
  description: string;
  /** The image's size; pins are in its pixels. */
  size: PixelSize;
  pins: readonly MapPin[];
  trail: readonly NavLink[];
}

/** The `?zoom=` values of a map page: twice or four times the column, or the image's own size. */
export const MAP_ZOOMS = ["2", "4", "full"] as const;

/** How large a map page draws its map: `"1"` fits the column (the page without `?zoom=`). */
export type MapZoom = "1" | (typeof MAP_ZOOMS)[number];

/**
 * Whether a `?zoom=` value is one a map page takes (the page that fits the column has none).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(isMapZoom("full"), true);
 * assert.equal(isMapZoom("1"), false);
 * assert.equal(isMapZoom("toString"), false);
 * ```
 */
export function isMapZoom(value: string): value is (typeof MAP_ZOOMS)[number] {
  return (MAP_ZOOMS as readonly string[]).includes(value);
}

/** Each zoom's link text, in the order the page offers them. */
const ZOOM_NAMES: Readonly<Record<MapZoom, string>> = {
  "1": "Fit",
  "2": "2×",
  "4": "4×",
  full: "Full size",
};

/**
 * A map page's URL at a zoom.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(mapZoomHref("chart", "1"), "/public/maps/chart");
 * assert.equal(mapZoomHref("chart", "full"), "/public/maps/chart?zoom=full");
 * ```
 */
export function mapZoomHref(idOrAlias: string, zoom: MapZoom): string {
  return zoom === "1" ? mapHref(idOrAlias) : `${mapHref(idOrAlias)}?zoom=${zoom}`;
}

/** Marks the link to the zoom shown. */
const CURRENT = html`
  aria-current="page"
`;

/** The narrowest width (CSS px) the map is drawn at, at a zoom: what its labels are placed for. */
function narrowestWidth(zoom: MapZoom, size: PixelSize): number {
  return zoom === "full" ? size.width : PHONE_MAP_WIDTH * Number(zoom);
}

/**
 * One pin: a link named by its note's title (its label may be shortened), with a tap target, a
 * dot and a label, placed in percent of the image and sized in CSS px.
 */
function pinMarkup({ pin, left, top, shiftX, shiftY, label, whole }: PlacedPin<MapPin>): SafeHtml {
  const cx = `${left}%`;
  const cy = `${top}%`;
  const text = label &&
    html`
      <text x="${cx}" y="${cy}" dx="${label.dx}" dy="${label.dy}" font-size="${PIN_LABEL_SIZE}"
        text-anchor="${label.anchor}">${label.text}</text>
    `;
  return html`
    <a href="${loreHref(pin.id)}" class="pin" aria-label="${pin.title}">
      ${!whole && html`<title>${pin.title}</title>`}
      <circle class="pin-target" cx="${cx}" cy="${cy}" r="${PIN_TARGET_RADIUS}"
        transform="translate(${shiftX} ${shiftY})"></circle>
      <circle class="pin-dot" cx="${cx}" cy="${cy}" r="${PIN_DOT_RADIUS}"></circle>
      ${text}
    </a>
  `;
}

/**
 * Renders a map page at a zoom (the column's width by default). Zoomed pages are `noindex`; their
 * canonical URL is the map page's own.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const map = {
 *   note: { id: "chart", title: "Chart" },
 *   imageId: "img1",
 *   imagePath: "/api/public/images/img1/chart.png",
 *   description: "The pilots' chart of the coast.",
 *   size: { width: 960, height: 640 },
 *   pins: [
 *     { id: "harbor", title: "Harbor", x: 120, y: 300 },
 *     { id: "light", title: "Lighthouse", x: 900, y: 100 },
 *   ],
 *   trail: [],
 * };
 * const page = mapPage(map);
 * assert.match(
 *   page.main.html,
 *   /<a href="\/public\/lore\/harbor" class="pin" aria-label="Harbor">\s*<circle class="pin-target" cx="12.5%" cy="46.875%" r="14"/,
 * );
 * // near the right edge the label sits left of its pin, inside the map
 * assert.match(page.main.html, /<text [^>]*text-anchor="end">Lighthouse</);
 * const full = mapPage(map, undefined, false, "full");
 * assert.equal(full.noIndex, true);
 * assert.match(full.main.html, /<div class="map-frame zoom-full" tabindex="0" role="region"/);
 * ```
 */
export function mapPage(
  map: PublicMap,
  site?: SiteFrame,
  noIndex = false,
  zoom: MapZoom = "1",
): PageParts {
  const { width, height } = map.size;
  const title = `Map: ${map.note.title}`;
  const src = map.imagePath;
  const pins = placePins(map.pins, map.size, narrowestWidth(zoom, map.size));
  const zoomLink = (z: MapZoom) =>
    html`
      <a href="${mapZoomHref(map.note.id, z)}" ${z === zoom && CURRENT}>${ZOOM_NAMES[z]}</a>
    `;
  // the image says nothing the pins and the list do not (alt=""); the SVG is a group, so its
  // links stay links to assistive technology
  const canvas = html`
    <div class="map-canvas">
      <img src="${src}" width="${width}" height="${height}" alt="">
      <svg class="map-pins" role="group" aria-label="${map.note.title}">${pins.map(pinMarkup)}</svg>
    </div>
  `;
  // zoomed, the map scrolls inside its frame: a region keyboard users can focus and scroll
  const frame = zoom === "1" ? html`<div class="map-frame">${canvas}</div>` : html`
    <div class="map-frame zoom-${zoom}" tabindex="0" role="region"
      aria-label="${`${map.note.title}, ${ZOOM_NAMES[zoom]} (scrolls)`}">${canvas}</div>
  `;
  const about = html`<a href="${loreHref(map.note.id)}">About ${map.note.title}</a>`;
  const main = html`
    ${breadcrumbs([...map.trail, map.note], title)}
    <h1>${title}</h1>
    <p class="map-zoom">Zoom: ${(Object.keys(ZOOM_NAMES) as MapZoom[]).map(zoomLink)}</p>
    <figure class="map">
      ${frame}
      <figcaption>${zoom !== "1" && "Scroll the map to see all of it. "}${about}</figcaption>
    </figure>
    ${linkSection("pins-title", "Places on this map", map.pins)}
  `;
  return {
    title: zoom === "1" ? title : `${title} (${ZOOM_NAMES[zoom]})`,
    main,
    noIndex: noIndex || zoom !== "1",
    site,
    meta: {
      path: mapHref(map.note.id),
      description: map.description || `Map of ${map.note.title}`,
      image: { path: src, alt: title, width, height },
    },
  };
}
