/**
 * Images: streaming an image note's or image attachment's bytes (verified raster types only), the
 * editor's legacy image URL, and uploading a new image note.
 *
 * @module
 */
import { z } from "zod";
import { ApiError, invalidRequest } from "../http/errors.ts";
import { json } from "../http/response.ts";
import { guardedResponseBody } from "../http/stream_guard.ts";
import { idSchema } from "../lore/ids.ts";
import { discarding, readImageUpload, uploadImage } from "../lore/image_upload.ts";
import { etagMatches } from "../lore/preview.ts";
import { writeSteps } from "../lore/write_steps.ts";
import { declaredRasterMime, verifiedRasterStream } from "../media/image_response.ts";
import { defineRoute, type Route } from "../router.ts";
import { idParams } from "./schemas.ts";

/** Seed: images are cached 1 day; `private` because they come from an authenticated backend. */
const IMAGE_CACHE_CONTROL = "private, max-age=86400";

/** `GET /api/lore/:id/image` — the image bytes, streamed, if they really are a raster image. */
export const getImage = defineRoute({
  method: "GET",
  path: "/api/lore/:id/image",
  summary: "Image note bytes, streamed; PNG/JPEG/GIF/WebP/AVIF only (declared and sniffed)",
  backend: "Core",
  access: "private",
  tag: "media",
  params: idParams,
  responses: {
    200: "The image; `Cache-Control: private, max-age=86400`, nosniff, sandbox CSP, Core's ETag",
    304: "`If-None-Match` matched Core's ETag",
    404: "No such note, or the note is not a raster image (SVG and HTML are never served)",
  },
  handler: async (ctx) => {
    const ifNoneMatch = ctx.req.headers.get("if-none-match") ?? undefined;
    const upstream = await (await ctx.core()).content(ctx.params.id, {
      ifNoneMatch: ifNoneMatch && ifNoneMatch.length <= 1024 ? ifNoneMatch : undefined,
    });
    const headers = imageHeaders();
    const etag = upstream.headers.get("etag");
    if (etag && /^(W\/)?"[\x21\x23-\x7e]{0,200}"$/.test(etag)) headers.set("etag", etag);
    if (upstream.status === 304) {
      await upstream.body?.cancel();
      return new Response(null, { status: 304, headers });
    }
    const image = await verifiedRasterStream(upstream, ctx.config.UPSTREAM_TIMEOUT_MS);
    if (!image) throw notRaster();
    headers.set("content-type", image.mime);
    return new Response(guardedResponseBody(ctx, image.stream, "Core"), { headers });
  },
});

/** `GET /api/attachments/:attachmentId/image/:filename` — an image attachment's bytes, streamed. */
export const getAttachmentImage = defineRoute({
  method: "GET",
  path: "/api/attachments/:attachmentId/image/:filename",
  summary:
    "Image attachment bytes (Core's pasted images), streamed; PNG/JPEG/GIF/WebP/AVIF only; " +
    "file name ignored",
  backend: "Core",
  access: "private",
  tag: "media",
  params: z.object({ attachmentId: idSchema, filename: z.string().min(1).max(255) }),
  responses: {
    200: "The image; `Cache-Control: private, max-age=86400`, nosniff, sandbox CSP, " +
      '`ETag: "attachment-<blobId>"`',
    304: "`If-None-Match` matched (the bytes are not fetched)",
    404: "No such attachment, or not a raster image (role other than `image`, SVG, or bytes " +
      "that are not the declared type)",
  },
  handler: async (ctx) => {
    const core = await ctx.core();
    const att = await core.getAttachment(ctx.params.attachmentId);
    // Core's metadata already rules out files and SVGs: their bytes are never fetched.
    if (att.role !== "image" || !declaredRasterMime(att.mime)) throw notRasterAttachment();
    const headers = imageHeaders();
    // Content-addressed: the bytes, and so the sniffed type, are fixed by the blob.
    const etag = att.blobId && /^[A-Za-z0-9_-]{1,64}$/.test(att.blobId)
      ? `"attachment-${att.blobId}"`
      : null;
    if (etag) {
      headers.set("etag", etag);
      if (etagMatches(ctx.req.headers.get("if-none-match"), etag)) {
        return new Response(null, { status: 304, headers });
      }
    }
    const upstream = await core.attachmentContent(att.attachmentId);
    const image = await verifiedRasterStream(upstream, ctx.config.UPSTREAM_TIMEOUT_MS);
    if (!image) throw notRasterAttachment();
    headers.set("content-type", image.mime);
    return new Response(guardedResponseBody(ctx, image.stream, "Core"), { headers });
  },
});

/** `GET /api/images/:id/:filename` — the editor's old image URL, answered without a backend. */
export const redirectImage = defineRoute({
  method: "GET",
  path: "/api/images/:id/:filename",
  summary: "Editor image URL compatibility: 301 to `/api/lore/:id/image` (file name ignored)",
  backend: "None",
  access: "public",
  tag: "media",
  params: z.object({ id: idSchema, filename: z.string().min(1).max(255) }),
  responses: { 301: "`Location: /api/lore/<id>/image`, `Cache-Control: public, max-age=86400`" },
  handler: (ctx) =>
    new Response(null, {
      status: 301,
      headers: {
        location: `/api/lore/${ctx.params.id}/image`,
        "cache-control": "public, max-age=86400",
      },
    }),
});

/** `POST /api/lore/upload-image` — stream a new image note into Core. */
export const uploadImageRoute = defineRoute({
  method: "POST",
  path: "/api/lore/upload-image",
  summary: "Upload an image (binary body, file name in `x-host-filename`) as a new image note",
  backend: "Core",
  access: "private",
  tag: "media",
  query: z.object({ parentNoteId: idSchema.optional() }),
  body: {
    kind: "stream",
    description: "The image bytes (`image/*` or `application/octet-stream`; PNG, JPEG, GIF, " +
      "WebP or AVIF by content), at most MAX_UPLOAD_BYTES",
  },
  responses: {
    201: "`{ url, noteId, mime, width, height }` (pixel size from the file header)",
    400: "Empty body, or `parentNoteId` does not name a note (nothing created)",
    408: "The client stopped sending for CLIENT_BODY_TIMEOUT_MS (the half-made note is removed)",
    413: "Over MAX_UPLOAD_BYTES (declared or while streaming; the half-made note is removed)",
    415: "Not an image type, or not a PNG/JPEG/GIF/WebP/AVIF with a complete header giving its " +
      "size (nothing created)",
    502: "PARTIAL_FAILURE: the upload failed and the half-made note could not be removed",
  },
  handler: async (ctx) => {
    const upload = await readImageUpload(
      ctx.req,
      ctx.config.MAX_UPLOAD_BYTES,
      ctx.config.CLIENT_BODY_TIMEOUT_MS,
    );
    const core = await ctx.core({ detached: true }).catch(discarding(upload));
    const image = await uploadImage(core, writeSteps(), upload, {
      parentNoteId: ctx.query.parentNoteId ?? await ctx.loreRootId(),
      missingParent: invalidRequest("parentNoteId does not name an existing note", [{
        path: "query.parentNoteId",
        message: "not found",
      }]),
    });
    return json({
      url: `/api/lore/${image.noteId}/image`,
      noteId: image.noteId,
      mime: image.mime,
      width: image.width,
      height: image.height,
    }, 201);
  },
});

/** Headers of every private image answer (200 and 304). */
function imageHeaders(): Headers {
  return new Headers({
    "cache-control": IMAGE_CACHE_CONTROL,
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; sandbox",
  });
}

function notRaster(): ApiError {
  return new ApiError(404, "NOT_FOUND", "Note is not a raster image");
}

function notRasterAttachment(): ApiError {
  return new ApiError(404, "NOT_FOUND", "Attachment is not a raster image");
}

/** The image routes. */
export const mediaRoutes: Route[] = [
  getImage,
  getAttachmentImage,
  redirectImage,
  uploadImageRoute,
];
