/**
 * Images inside public note content, finished for the page: their pixel size as `width` and
 * `height` (the browser reserves the space, nothing shifts), `loading="lazy"`, and an `alt` text
 * for every image. The content is the public API's sanitized HTML, whose `<img>` tags point at
 * `/api/public/images/<id>/<file>` and carry escaped attribute values only.
 *
 * @module
 */
import { altFromFileName } from "../sanitize/prose.ts";
import type { PixelSize } from "../share/image_sizes.ts";
import { escapeHtml } from "../lore/preview.ts";

const PUBLIC_IMAGE = /^\/api\/public\/images\/([^/"]+)\/([^/"]*)$/;
const IMG_TAG = /<img\s([^>]*?)\s*\/?>/g;

function attrOf(attrs: string, name: string): string | undefined {
  return new RegExp(`(?:^|\\s)${name}="([^"]*)"`).exec(attrs)?.[1];
}

/**
 * The public image ids that content shows, in order, each once.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const html = '<p><img src="/api/public/images/img1/chart.png"></p>';
 * assert.deepEqual(contentImageIds(html), ["img1"]);
 * ```
 */
export function contentImageIds(contentHtml: string): string[] {
  const ids = new Set<string>();
  for (const m of contentHtml.matchAll(IMG_TAG)) {
    const src = PUBLIC_IMAGE.exec(attrOf(m[1], "src") ?? "");
    if (src) ids.add(decodeURIComponent(src[1]));
  }
  return [...ids];
}

/**
 * Content with every public image sized (when its size is known and the writer set neither
 * `width` nor `height`), lazy, and with an `alt` (from its file name when the writer gave none).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const html = '<p><img src="/api/public/images/img1/coast-chart.png"></p>';
 * const sizes = new Map([["img1", { width: 960, height: 640 }]]);
 * assert.equal(
 *   sizedContentImages(html, sizes),
 *   '<p><img src="/api/public/images/img1/coast-chart.png" alt="coast chart" ' +
 *     'width="960" height="640" loading="lazy"></p>',
 * );
 * ```
 */
export function sizedContentImages(
  contentHtml: string,
  sizes: ReadonlyMap<string, PixelSize>,
): string {
  return contentHtml.replace(IMG_TAG, (tag, attrs: string) => {
    const src = PUBLIC_IMAGE.exec(attrOf(attrs, "src") ?? "");
    if (!src) return tag;
    let extra = "";
    if (attrOf(attrs, "alt") === undefined) {
      extra += ` alt="${escapeHtml(altFromFileName(src[2]))}"`;
    }
    const size = sizes.get(decodeURIComponent(src[1]));
    if (size && attrOf(attrs, "width") === undefined && attrOf(attrs, "height") === undefined) {
      extra += ` width="${size.width}" height="${size.height}"`;
    }
    return `<img ${attrs}${extra} loading="lazy">`;
  });
}
