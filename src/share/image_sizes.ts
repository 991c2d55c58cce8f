/**
 * Pixel sizes of public images, so pages can give every `<img>` its `width` and `height` (no
 * layout shift while it loads). Only the head of the image is read from Core, and sizes are
 * cached by Core's content-addressed `blobId`, so an image is measured once.
 *
 * @module
 */
import { imageSize } from "../media/image_info.ts";
import { readImageHead } from "../media/image_stream.ts";
import type { TtlCache } from "../cache/ttl_cache.ts";

/** An image's size in pixels. */
export interface PixelSize {
  width: number;
  height: number;
}

/** The most of an image read to find its size (a JPEG's frame header can follow its metadata). */
export const SIZE_HEAD_BYTES = 256 * 1024;

const BLOB_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The size an image's first bytes declare; the rest of the body is never read.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const gif = new Uint8Array([...new TextEncoder().encode("GIF89a"), 0x40, 1, 0xf0, 0, 0, 0, 0]);
 * assert.deepEqual(await measureImage(new Response(gif)), { width: 320, height: 240 });
 * ```
 */
export async function measureImage(res: Response): Promise<PixelSize | null> {
  if (!res.body) return null;
  const { head, stream } = await readImageHead(
    res.body,
    undefined,
    (bytes) => imageSize(bytes) !== null || bytes.byteLength >= SIZE_HEAD_BYTES,
  );
  await stream.cancel().catch(() => {});
  return imageSize(head);
}

/**
 * An image's size, measured once per `blobId` (without a valid one, measured every time).
 * Failures are "no size": a page without `width`/`height` is still a page.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createTtlCache } from "../cache/ttl_cache.ts";
 * const cache = createTtlCache<PixelSize | null>({ ttlMs: 60_000, maxEntries: 10 });
 * let reads = 0;
 * const gif = new Uint8Array([...new TextEncoder().encode("GIF89a"), 16, 0, 16, 0, 0, 0, 0]);
 * const fetchImage = () => Promise.resolve(new Response(gif, { headers: { n: `${++reads}` } }));
 * const size = await cachedImageSize(cache, "identity", "blob1", fetchImage);
 * assert.deepEqual(size, { width: 16, height: 16 });
 * await cachedImageSize(cache, "identity", "blob1", fetchImage);
 * assert.equal(reads, 1);
 * ```
 */
export async function cachedImageSize(
  cache: TtlCache<PixelSize | null>,
  identity: string,
  blobId: string | undefined,
  fetchImage: () => Promise<Response>,
): Promise<PixelSize | null> {
  const measure = () => fetchImage().then(measureImage).catch(() => null);
  if (!blobId || !BLOB_ID.test(blobId)) return await measure();
  return await cache.getOrLoad(`${identity}:${blobId}`, measure);
}
