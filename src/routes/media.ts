/**
 * Images: streaming an image note's or image attachment's bytes (verified raster types only), the
 * editor's legacy image URL, and uploading a new image note.
 *
 * @module
 */
import { z } from "zod";
import { bodyReading } from "../http/body.ts";
import { ApiError, invalidRequest } from "../http/errors.ts";
import { json } from "../http/response.ts";
import { guardedResponseBody } from "../http/stream_guard.ts";
import { idSchema } from "../lore/ids.ts";
import {
  discarding,
  MAX_FILENAME_CHARS,
  readImageUpload,
  SIZE_PREFIX_BYTES,
  uploadImage,
} from "../lore/image_upload.ts";
import { etagMatches } from "../lore/preview.ts";
import { writeSteps } from "../lore/write_steps.ts";
import { imageNotePath } from "../media/attachment_image.ts";
import { RASTER_MIMES } from "../media/image_info.ts";
import { declaredRasterMime, verifiedRasterStream } from "../media/image_response.ts";
import { defineRoute, type Route } from "../api/router.ts";
import { idParams } from "./schemas.ts";

/** Seed: images are cached 1 day; `private` because they come from an authenticated backend. */
const IMAGE_CACHE_CONTROL = "private, max-age=86400";

/** What both image routes decide where the API is silent. */
const IMAGE_NOTES = "Only PNG, JPEG, GIF, WebP and AVIF are served, checked against both " +
  "Core's declared type and the file's magic bytes; anything else, SVG included, is 404. The " +
  "bytes are streamed, never buffered; a backend that fails before the first bytes is still a " +
  "JSON error.";

/** An image answer: one of the raster types, never anything else. */
const imageAnswer = (description: string) => ({ description, mediaType: RASTER_MIMES });

/**
 * What the upload routes decide where the API is silent.
 */
export const UPLOAD_NOTES = "The body is the image's bytes (`image/*` or " +
  "`application/octet-stream`). Its type is decided by magic bytes before anything is " +
  "created, and only a complete header giving the pixel size makes it an image: up to " +
  `${SIZE_PREFIX_BYTES / 1024} KiB are read to find it, and anything else (a bare signature, ` +
  "a header cut short, another type) is 415 with nothing created. The bytes are then streamed " +
  "to Core under `MAX_UPLOAD_BYTES` (413) into a new image note; an upload that is too large, " +
  "or that stalls for `CLIENT_BODY_TIMEOUT_MS`, falls below `CLIENT_BODY_MIN_BYTES_PER_SECOND` " +
  "or takes longer than `CLIENT_BODY_TOTAL_TIMEOUT_MS` (408), removes the half-made note.";

/**
 * The pixel size read from an uploaded image's header.
 */
export const uploadSize = z.object({
  width: z.number().int().positive(),
  height: z.number().int().positive(),
});

/** `GET /api/lore/:id/image` — the image bytes, streamed, if they really are a raster image. */
export const getImage = defineRoute({
  method: "GET",
  path: "/api/lore/:id/image",
  summary: "Image note bytes, streamed; PNG/JPEG/GIF/WebP/AVIF only (declared and sniffed)",
  backend: "Core",
  access: "private",
  tag: "media",
  params: idParams,
  description: `${IMAGE_NOTES} \`Cache-Control: private, max-age=86400\`; Core's ETag and ` +
    "304 are passed through.",
  responses: {
    200: imageAnswer(
      "The image; `Cache-Control: private, max-age=86400`, nosniff, sandbox CSP, Core's ETag",
    ),
    304: { description: "`If-None-Match` matched Core's ETag" },
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
      await upstream.body?.cancel().catch(() => {});
      return new Response(null, { status: 304, headers });
    }
    const image = await verifiedRasterStream(
      upstream,
      ctx.config.UPSTREAM_TIMEOUT_MS,
      ctx.deadlines,
    );
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
  description: "Image attachments are how Core stores images pasted into its editor " +
    "(`api/attachments/<id>/image/<name>` in the HTML; previews point here). " +
    `${IMAGE_NOTES} Core's metadata is read first: role \`image\` and an allowed declared ` +
    'type are required before the bytes are fetched. The ETag is `"attachment-<blobId>"`, so ' +
    "`If-None-Match` gets a 304 without fetching the bytes. The file name is ignored. Any " +
    "attachment the caller's Core token can read is served, including one owned by another " +
    "note or a revision.",
  responses: {
    200: imageAnswer(
      "The image; `Cache-Control: private, max-age=86400`, nosniff, sandbox CSP, " +
        '`ETag: "attachment-<blobId>"`',
    ),
    304: { description: "`If-None-Match` matched (the bytes are not fetched)" },
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
    const image = await verifiedRasterStream(
      upstream,
      ctx.config.UPSTREAM_TIMEOUT_MS,
      ctx.deadlines,
    );
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
  description: "No backend call and no credentials: reachable from any site, but the private " +
    "image it names refuses other origins, so our images cannot be embedded on other sites.",
  responses: {
    301: {
      description: "`Location: /api/lore/<id>/image`, `Cache-Control: public, max-age=86400`",
    },
  },
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
  description: `${UPLOAD_NOTES} The note goes under \`parentNoteId\`, by default the lore ` +
    "root; its title is `x-host-filename` (or, without it, `x-vercel-filename`, which the " +
    "portal sends) percent-decoded and reduced to a safe base name of at most " +
    `${MAX_FILENAME_CHARS} characters, its extension set from the detected type. \`url\` is ` +
    "the image in the form lore HTML uses, `/api/images/<noteId>/<file>` (redirecting to `GET " +
    "/api/lore/:id/image`; the portal's sanitizer keeps only image sources of this form).",
  responses: {
    201: {
      description: "`{ url, noteId, mime, width, height }` (pixel size from the file header)",
      schema: uploadSize.extend({
        url: z.string().describe("`/api/images/<noteId>/<file>`"),
        noteId: z.string(),
        mime: z.enum(RASTER_MIMES),
      }),
    },
    400: "Empty body, or `parentNoteId` does not name a note (nothing created)",
    408: "The body broke a body limit: nothing for CLIENT_BODY_TIMEOUT_MS, below " +
      "CLIENT_BODY_MIN_BYTES_PER_SECOND, or over CLIENT_BODY_TOTAL_TIMEOUT_MS (the half-made " +
      "note is removed; `details.reason` says which)",
    413: "Over MAX_UPLOAD_BYTES (declared or while streaming; the half-made note is removed)",
    415: "Not an image type, or not a PNG/JPEG/GIF/WebP/AVIF with a complete header giving its " +
      "size (nothing created)",
    502: "PARTIAL_FAILURE: the upload failed and the half-made note could not be removed",
  },
  handler: async (ctx) => {
    const upload = await readImageUpload(ctx.req, ctx.config.MAX_UPLOAD_BYTES, bodyReading(ctx));
    const core = await ctx.core({ detached: true }).catch(discarding(upload));
    const image = await uploadImage(core, writeSteps(), upload, {
      parentNoteId: ctx.query.parentNoteId ?? await ctx.loreRootId(),
      missingParent: invalidRequest("parentNoteId does not name an existing note", [{
        path: "query.parentNoteId",
        message: "not found",
      }]),
    });
    return json({
      url: imageNotePath(image.noteId, image.title),
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
