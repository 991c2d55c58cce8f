/**
 * The picture a page's link preview shows (Open Graph, Twitter card): the page's own image when
 * it has one (a note's portrait, its map, the first picture of its content; a map page's map),
 * else the world's card: the image note the share root names with `~shareCard`, or else the
 * card the site draws from the world's name (`world_card.ts`). Every picture is offered with its
 * real size, and as a large card only when it is wide enough to be shown large.
 *
 * @module
 */
import type { PixelSize } from "../share/image_sizes.ts";
import type { VisitorView } from "../share/public_api.ts";
import { imageTitle } from "../sanitize/prose.ts";
import { imageHref } from "./format.ts";
import { contentImageIds } from "./images.ts";
import { CARD_SIZE, worldCard, worldCardPath } from "./world_card.ts";

/** An image a preview card may show. */
export interface PreviewImage {
  /** Site-relative URL of a public image. */
  path: string;
  alt: string;
  width?: number;
  height?: number;
}

/** The share root's relation to the image note that is the world's card. */
export const SHARE_CARD_RELATION = "shareCard";

/** Narrower pictures are offered as a small card: a large one would show them blown up. */
export const LARGE_CARD_MIN_WIDTH = 600;

/**
 * The Twitter card type for a preview picture: `summary_large_image` only for one known to be
 * at least {@linkcode LARGE_CARD_MIN_WIDTH} pixels wide.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(twitterCard({ path: "/p", alt: "", width: 240, height: 320 }), "summary");
 * assert.equal(twitterCard({ path: "/c", alt: "", width: 1200, height: 630 }), "summary_large_image");
 * ```
 */
export function twitterCard(image: PreviewImage): "summary" | "summary_large_image" {
  return (image.width ?? 0) >= LARGE_CARD_MIN_WIDTH ? "summary_large_image" : "summary";
}

/**
 * A visible image note as a preview picture, at the one URL every page uses for it.
 */
export function imagePreview(
  view: VisitorView,
  imageId: string,
  size: PixelSize | undefined,
  alt?: string,
): PreviewImage {
  const title = view.summary(imageId).title;
  return { path: imageHref(imageId, title), alt: alt ?? imageTitle(title), ...size };
}

/**
 * The world's card for this visitor: the share root's `~shareCard` when it names an image note
 * the visitor sees and whose size can be read, else the card drawn from `name` (the root's
 * title), 1200 × 630.
 */
export async function worldCardImage(view: VisitorView, name: string): Promise<PreviewImage> {
  const id = view.summary(view.rootId).controlRelation(SHARE_CARD_RELATION);
  if (id !== null && view.summary(id).isImage) {
    const size = await view.imageSize(id, view.rootId);
    if (size) return imagePreview(view, id, size);
  }
  return { path: worldCardPath(worldCard(name)), alt: name, ...CARD_SIZE };
}

/** What a note's page shows that a preview may use. */
export interface NotePictures {
  /** The note's title as shown. */
  title: string;
  portraitId: string | null;
  /** The note's map, when it has a public one. */
  map: { imageId: string; size: PixelSize } | null;
  /** The note's public content. */
  contentHtml: string;
  /** Sizes of the images the page shows, by image id. */
  sizes: ReadonlyMap<string, PixelSize>;
}

/**
 * A note's own preview picture: its portrait, else its map, else the first picture of its
 * content that is a visible image note; null when it has none (the world's card then).
 */
export function notePreview(view: VisitorView, note: NotePictures): PreviewImage | null {
  const { portraitId, map, sizes } = note;
  if (portraitId) {
    return imagePreview(view, portraitId, sizes.get(portraitId), `Portrait of ${note.title}`);
  }
  if (map) return imagePreview(view, map.imageId, map.size, `Map: ${note.title}`);
  const first = contentImageIds(note.contentHtml).find((id) =>
    view.canSee(id) && view.summary(id).isImage && sizes.has(id)
  );
  return first === undefined ? null : imagePreview(view, first, sizes.get(first));
}
