/**
 * Image bytes proxied from Core: served only when Core declares an allow-listed raster type AND
 * the first bytes prove it, streamed without buffering more than the sniffed head. Shared by the
 * authenticated and the public image routes.
 *
 * @module
 */
import { ApiError } from "../http/errors.ts";
import { type Deadlines, sharedDeadlines } from "../util/deadlines.ts";
import { RASTER_MIMES, type RasterMime } from "./image_info.ts";
import { readImageHead } from "./image_stream.ts";

// Legacy spellings some uploaders stored; the bytes are sniffed anyway.
const MIME_ALIASES: Readonly<Record<string, RasterMime>> = {
  "image/jpg": "image/jpeg",
  "image/pjpeg": "image/jpeg",
  "image/x-png": "image/png",
};

/**
 * The raster type a `Content-Type` header declares (parameters and case ignored, legacy aliases
 * mapped), or null for anything else (SVG, HTML, octet-stream, …).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(declaredRasterMime("image/PNG; charset=binary"), "image/png");
 * assert.equal(declaredRasterMime("image/svg+xml"), null);
 * ```
 */
export function declaredRasterMime(header: string | null): RasterMime | null {
  const type = (header ?? "").split(";")[0].trim().toLowerCase();
  const mime = Object.hasOwn(MIME_ALIASES, type) ? MIME_ALIASES[type] : type;
  return (RASTER_MIMES as readonly string[]).includes(mime) ? mime as RasterMime : null;
}

/**
 * Checks an upstream image response: its declared type must be an allow-listed raster type and
 * its magic bytes must prove that same type. Null (body cancelled) when either fails; otherwise
 * the type and a stream of every byte. The head is read under `timeoutMs` (Core may send headers
 * and then stall), counted by `deadlines`: 504 when it runs out, 502 when the connection drops.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const gif = new Uint8Array([...new TextEncoder().encode("GIF89a"), 1, 0, 1, 0, 0, 0, 0]);
 * const upstream = new Response(gif, { headers: { "content-type": "image/gif" } });
 * const image = await verifiedRasterStream(upstream, 15_000);
 * assert.equal(image?.mime, "image/gif");
 * assert.deepEqual(await new Response(image?.stream).bytes(), gif);
 * // the bytes must prove the declared type
 * const svg = new Response("<svg/>", { headers: { "content-type": "image/png" } });
 * assert.equal(await verifiedRasterStream(svg, 15_000), null);
 * ```
 */
export async function verifiedRasterStream(
  upstream: Response,
  timeoutMs: number,
  deadlines: Deadlines = sharedDeadlines,
): Promise<{ mime: RasterMime; stream: ReadableStream<Uint8Array> } | null> {
  const declared = declaredRasterMime(upstream.headers.get("content-type"));
  if (!declared || !upstream.body) {
    await upstream.body?.cancel().catch(() => {}); // an ended body is gone already
    return null;
  }
  const deadline = new AbortController();
  const cancelDeadline = deadlines.start(timeoutMs, () => deadline.abort());
  let head;
  try {
    head = await readImageHead(upstream.body, deadline.signal);
  } catch {
    throw deadline.signal.aborted
      ? new ApiError(504, "UPSTREAM_TIMEOUT", "Core did not answer in time", { service: "core" })
      : new ApiError(502, "UPSTREAM_ERROR", "Core dropped the connection mid-response", {
        service: "core",
      });
  } finally {
    cancelDeadline();
  }
  if (head.mime !== declared) {
    await head.stream.cancel();
    return null;
  }
  return { mime: head.mime, stream: head.stream };
}
