/**
 * Images inside public note content, finished for the page: their pixel size as `width` and
 * `height` (the browser reserves the space, nothing shifts), never larger than the image itself,
 * `loading="lazy"`, and an `alt` text for every image; and an image the page already shows
 * elsewhere (the portrait) taken out, so each image appears once. The content is the public
 * API's sanitized HTML, whose `<img>` tags point at `/api/public/images/<id>/<file>` and carry
 * escaped attribute values only.
 *
 * Core keeps one file per image, so there is one size of each to offer: no `srcset`. The
 * stylesheet caps every image at its column's width, and the `width` given here caps it at its
 * own.
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
 * The size to give an image whose natural size is `natural`, from the writer's `width` and
 * `height` attributes (either may be absent): the writer's size, with the missing side in the
 * image's proportions, scaled down where it would enlarge the image; the natural size when the
 * writer gave none. Null when a given value is not a number of pixels (left as written).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const natural = { width: 240, height: 320 };
 * assert.deepEqual(fittedSize(natural, undefined, undefined), natural);
 * assert.deepEqual(fittedSize(natural, "120", undefined), { width: 120, height: 160 });
 * assert.deepEqual(fittedSize(natural, "480", "640"), natural); // never enlarged
 * assert.equal(fittedSize(natural, "50%", undefined), null);
 * ```
 */
export function fittedSize(
  natural: PixelSize,
  width: string | undefined,
  height: string | undefined,
): PixelSize | null {
  const given = [width, height].map((v) => v === undefined ? undefined : Number(v));
  if (given.some((v) => v !== undefined && !(Number.isInteger(v) && v > 0))) return null;
  const ratio = natural.height / natural.width;
  let [w, h] = given;
  if (w === undefined && h === undefined) return natural;
  w ??= Math.round(h! / ratio);
  h ??= Math.round(w * ratio);
  const shrink = Math.min(1, natural.width / w, natural.height / h);
  return {
    width: Math.max(1, Math.round(w * shrink)),
    height: Math.max(1, Math.round(h * shrink)),
  };
}

const SIZE_ATTRS = /\s(?:width|height)="[^"]*"/g;

/**
 * Content with every public image sized (its natural size, or the writer's `width`/`height` in
 * its proportions and never beyond its natural size), lazy, and with an `alt` (from its file
 * name when the writer gave none).
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
    let kept = attrs;
    let extra = "";
    if (attrOf(attrs, "alt") === undefined) {
      extra += ` alt="${escapeHtml(altFromFileName(src[2]))}"`;
    }
    const natural = sizes.get(decodeURIComponent(src[1]));
    const size = natural && fittedSize(natural, attrOf(attrs, "width"), attrOf(attrs, "height"));
    if (size) {
      kept = ` ${attrs}`.replace(SIZE_ATTRS, "").trimStart();
      extra += ` width="${size.width}" height="${size.height}"`;
    }
    return `<img ${kept}${extra} loading="lazy">`;
  });
}

/** A paragraph or figure holding nothing but one image (in a link, with a caption, or not). */
const LONE_IMAGE = new RegExp(
  String.raw`<(p|figure)\b[^>]*>\s*(?:<a\s[^>]*>\s*)?(<img\s[^>]*?\s*\/?>)\s*(?:<\/a>\s*)?` +
    String.raw`(?:<figcaption\b[^>]*>[\s\S]*?<\/figcaption>\s*)?<\/\1>`,
  "g",
);

/**
 * Content without the public image `imageId` (shown elsewhere on the page, such as the
 * portrait): a paragraph or figure that held only it goes with it, caption included.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const html = '<p>Mira.</p><p><img src="/api/public/images/img1/mira.png" alt="Mira"></p>' +
 *   '<p>See <img src="/api/public/images/img1/mira.png"> and ' +
 *   '<img src="/api/public/images/img2/ship.png">.</p>';
 * assert.equal(
 *   withoutImage(html, "img1"),
 *   '<p>Mira.</p><p>See  and <img src="/api/public/images/img2/ship.png">.</p>',
 * );
 * ```
 */
export function withoutImage(contentHtml: string, imageId: string): string {
  const shows = (img: string) => {
    const src = PUBLIC_IMAGE.exec(attrOf(img, "src") ?? "");
    return src !== null && decodeURIComponent(src[1]) === imageId;
  };
  return contentHtml
    .replace(LONE_IMAGE, (block, _tag, img: string) => shows(img) ? "" : block)
    .replace(IMG_TAG, (img) => shows(img) ? "" : img);
}
