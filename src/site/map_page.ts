/**
 * A public map: the map image with its pins as links, drawn as inline SVG so pins sit at their
 * coordinates without script or inline styles (the CSP allows neither), and the same pins as a
 * list for readers who do not see the picture.
 *
 * @module
 */
import type { PixelSize } from "../share/image_sizes.ts";
import { imageHref, loreHref } from "./format.ts";
import { html } from "./html.ts";
import type { PageParts } from "./layout.ts";
import { breadcrumbs, mapHref } from "./navigation.ts";
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
  /** The image's size; pins are in its pixels. */
  size: PixelSize;
  pins: readonly MapPin[];
  trail: readonly NavLink[];
}

/**
 * Renders a map page.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const page = mapPage({
 *   note: { id: "chart", title: "Chart" },
 *   imageId: "img1",
 *   size: { width: 960, height: 640 },
 *   pins: [
 *     { id: "harbor", title: "Harbor", x: 120, y: 300 },
 *     { id: "light", title: "Lighthouse", x: 900, y: 100 },
 *   ],
 *   trail: [],
 * });
 * assert.match(page.main.html, /<a href="\/public\/lore\/harbor"[^>]*>\s*<circle cx="120" cy="300"/);
 * // near the right edge the label sits left of its pin, inside the map
 * assert.match(page.main.html, /<text x="[\d.]+" y="[\d.]+" font-size="\d+"\s+text-anchor="end">Lighthouse</);
 * ```
 */
export function mapPage(map: PublicMap, site?: SiteFrame, noIndex = false): PageParts {
  const { width, height } = map.size;
  const r = Math.max(6, Math.round(Math.max(width, height) / 90));
  const font = Math.round(r * 2.2);
  const inside = map.pins.filter((p) => p.x >= 0 && p.y >= 0 && p.x <= width && p.y <= height);
  const title = `Map: ${map.note.title}`;
  const src = imageHref(map.imageId, "map");
  const main = html`
    ${breadcrumbs([...map.trail, map.note], title)}
    <h1>${title}</h1>
    <figure class="map">
      <svg viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="group"
        aria-label="${map.note.title}">
    <image href="${src}" x="0" y="0" width="${width}" height="${height}"></image>
    ${inside.map((p) =>
      html`
        <a href="${loreHref(p.id)}" class="pin">
          <circle cx="${p.x}" cy="${p.y}" r="${r}"></circle>
          ${// a pin in the right half is labelled on its left, so the label stays on the map
          p.x > width / 2
            ? html`
              <text x="${p.x - r * 1.5}" y="${p.y + r * 0.7}" font-size="${font}"
                text-anchor="end">${p.title}</text>
            `
            : html`<text x="${p.x + r * 1.5}" y="${
              p.y + r * 0.7
            }" font-size="${font}">${p.title}</text>`}
        </a>
      `
    )}
      </svg>
      <figcaption><a href="${src}">Full-size map image</a> · <a href="${loreHref(
        map.note.id,
      )}">About ${map.note.title}</a></figcaption>
    </figure>
    ${map.pins.length > 0 &&
      html`
        <section aria-labelledby="pins-title">
          <h2 id="pins-title">Places on this map</h2>
          <ul class="links">${map.pins.map((p) =>
            html`<li><a href="${loreHref(p.id)}">${p.title}</a></li>`
          )}</ul>
        </section>
      `}
  `;
  return {
    title,
    main,
    noIndex,
    site,
    meta: {
      path: mapHref(map.note.id),
      image: { path: src, alt: title, width, height },
    },
  };
}
