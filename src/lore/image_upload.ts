/**
 * Image bytes through the proxy without buffering them: the magic-byte check on the head of an
 * image stream (downloads and uploads), safe file names, and the one streamed upload both upload
 * routes use (create an image note, then stream the bytes into it under a byte limit).
 *
 * @module
 */
import { ApiError } from "../http/errors.ts";
import { type BodyReading, mediaType, pacedBody } from "../http/body.ts";
import { extensionFor, imageSize, type RasterMime, sniffImageMime } from "../media/image_info.ts";
import type { CoreClient } from "../upstream/core.ts";
import { readImageHead } from "../media/image_stream.ts";
import { isMissingReference } from "./references.ts";
import type { WriteSteps } from "./write_steps.ts";

/**
 * How much of an upload may be read, before anything goes upstream, to find the pixel size (JPEG
 * headers can sit behind EXIF); an image whose size is not known by then is refused.
 */
export const SIZE_PREFIX_BYTES = 256 * 1024;

/**
 * Longest file name (in characters, extension included) given to an image note.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   safeImageFilename("n".repeat(500), "image/png").length === MAX_FILENAME_CHARS,
 *   true,
 * );
 * ```
 */
export const MAX_FILENAME_CHARS = 128;

/**
 * The request headers an upload's file name is read from, first present wins: the API's own
 * `x-host-filename`, then `x-vercel-filename`, which the portal's editor and portrait upload send.
 */
export const FILENAME_HEADERS = ["x-host-filename", "x-vercel-filename"] as const;

/**
 * The upload's file name as sent ({@linkcode FILENAME_HEADERS}), or null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const headers = new Headers({ "x-vercel-filename": "mira.png" });
 * assert.equal(uploadFilename(headers), "mira.png");
 * headers.set("x-host-filename", "chart.png");
 * assert.equal(uploadFilename(headers), "chart.png");
 * assert.equal(uploadFilename(new Headers()), null);
 * ```
 */
export function uploadFilename(headers: Headers): string | null {
  for (const name of FILENAME_HEADERS) {
    const value = headers.get(name);
    if (value !== null && value.trim() !== "") return value;
  }
  return null;
}

/**
 * An upload whose header proved it a raster image of a known size; nothing has been sent
 * upstream yet.
 */
export interface ImageUpload {
  mime: RasterMime;
  /** Pixel size from the file header. */
  width: number;
  height: number;
  /** The safe note title ({@linkcode safeImageFilename}). */
  title: string;
  /**
   * All of the body, head first, at most the upload limit: errors with a 408 when the client
   * breaks the body limits, a 413 past the limit, and when {@linkcode ImageUpload.stop} is called.
   */
  stream: ReadableStream<Uint8Array>;
  /** The 408 or 413 once the body was cut off (the upstream call reading it fails too). */
  cutOff(): ApiError | undefined;
  /** Stops reading the client's body: `stream` fails, so no reader takes it for whole. */
  stop(): void;
}

/**
 * Checks an upload request before anything goes upstream: the declared type must be `image/*` or
 * `application/octet-stream` (else 415), and the first bytes must be a PNG, JPEG, GIF, WebP or
 * AVIF whose header is complete and gives its pixel size within {@linkcode SIZE_PREFIX_BYTES}
 * (else 415; an empty body is 400). Only that head is read; the rest stays in the stream. A
 * client that breaks the body limits of `reading` (stalls, trickles, takes too long) gets 408,
 * and a body over `maxBytes` 413, now or while the stream is read later.
 */
export async function readImageUpload(
  req: Request,
  maxBytes: number,
  reading: BodyReading,
): Promise<ImageUpload> {
  const type = mediaType(req);
  if (!(type === "application/octet-stream" || /^image\/[\w.+-]+$/.test(type))) {
    throw new ApiError(
      415,
      "UNSUPPORTED_MEDIA_TYPE",
      "Content-Type must be image/* or application/octet-stream",
      { expected: ["image/*", "application/octet-stream"], received: type || null },
    );
  }
  let cutOff: ApiError | undefined;
  const stopped = new AbortController();
  const body = pacedBody(req.body ?? emptyStream(), {
    ...reading,
    maxBytes,
    signal: stopped.signal,
    onCutOff: (cut) => {
      cutOff = cut.error;
      reading.onCutOff?.(cut);
    },
  });
  const decided = (head: Uint8Array) =>
    !sniffImageMime(head) || !!imageSize(head) || head.byteLength >= SIZE_PREFIX_BYTES;
  const { mime, head, stream } = await readImageHead(body, undefined, decided).catch((e) => {
    throw e instanceof ApiError
      ? e
      : new ApiError(400, "INVALID_REQUEST", "The request body could not be read");
  });
  if (!mime) {
    await stream.cancel();
    throw head.byteLength === 0
      ? new ApiError(400, "INVALID_REQUEST", "The request body is empty")
      : new ApiError(
        415,
        "UNSUPPORTED_MEDIA_TYPE",
        "The body is not a PNG, JPEG, GIF, WebP or AVIF image",
      );
  }
  const size = imageSize(head);
  if (!size) {
    await stream.cancel();
    throw new ApiError(
      415,
      "UNSUPPORTED_MEDIA_TYPE",
      "The image header is incomplete or does not give the image's size",
    );
  }
  const title = safeImageFilename(uploadFilename(req.headers), mime);
  return {
    mime,
    ...size,
    title,
    stream,
    cutOff: () => cutOff,
    stop: () => stopped.abort(new DOMException("The upload was abandoned", "AbortError")),
  };
}

/**
 * A `.catch` handler for steps between reading an upload and storing it: stops reading the
 * client's body, then rethrows.
 */
export function discarding(upload: ImageUpload): (e: unknown) => Promise<never> {
  return async (e) => {
    await upload.stream.cancel().catch(() => {});
    throw e;
  };
}

/** An image note made by {@linkcode uploadImage}. */
export interface UploadedImage {
  noteId: string;
  title: string;
  mime: RasterMime;
  /** Pixel size read from the file header. */
  width: number;
  height: number;
}

/**
 * Streams a checked upload into a new image note, as steps of the caller's write: create the
 * note (undo: delete it), then PUT the bytes as `application/octet-stream`, head first. Over the
 * byte limit or cut off by the body limits mid-stream, the PUT is aborted, the note is deleted
 * and the answer is 413 or 408. The upload's stream is always consumed or cancelled.
 */
export async function uploadImage(
  core: CoreClient,
  w: WriteSteps,
  upload: ImageUpload,
  target: { parentNoteId: string; missingParent: ApiError },
): Promise<UploadedImage> {
  const { mime, title } = upload;
  const created = await w.step(
    "create the image note",
    () =>
      core.createNote({
        parentNoteId: target.parentNoteId,
        title,
        type: "image",
        mime,
        content: "",
      })
        .catch((e) => {
          throw isMissingReference(e) ? target.missingParent : e;
        }),
    (r) => core.deleteNote(r.note.noteId),
  ).catch(discarding(upload));
  const noteId = created.note.noteId;

  await w.step(
    "upload the image bytes",
    () =>
      core.putContent(noteId, upload.stream, "application/octet-stream").catch((e) => {
        upload.stop(); // stop reading the client's body whatever happened upstream
        throw upload.cutOff() ?? e;
      }),
    "covered",
  );
  return { noteId, title, mime, width: upload.width, height: upload.height };
}

// Control characters (C0, DEL, C1) and bidi/invisible formatting that could disguise a name.
// deno-lint-ignore no-control-regex
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g;
// Path separators are handled first; these would be escaped by Core or break file systems.
const RESERVED = /[<>:"|?*&]/g;
// A trailing extension to replace: 1-5 ASCII letters/digits with at least one letter.
const EXTENSION = /\.(?=[A-Za-z0-9]{0,4}[A-Za-z])[A-Za-z0-9]{1,5}$/;

/**
 * A safe note title for an uploaded image: the header value percent-decoded (and UTF-8 decoded
 * when sent as raw bytes), reduced to its last path segment, without control or bidi characters,
 * with the extension of the sniffed type, at most {@linkcode MAX_FILENAME_CHARS} characters;
 * `image<ext>` when nothing usable remains.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(safeImageFilename("..%2F..%2Fetc%2Fpasswd", "image/png"), "passwd.png");
 * assert.equal(safeImageFilename("photo.jpeg", "image/jpeg"), "photo.jpg");
 * assert.equal(safeImageFilename(null, "image/webp"), "image.webp");
 * ```
 */
export function safeImageFilename(raw: string | null, mime: RasterMime): string {
  const ext = extensionFor(mime);
  const decoded = decodeHeaderText(raw ?? "").normalize("NFC").replace(INVISIBLE, "");
  const base = decoded.split(/[/\\]/).pop() ?? "";
  const name = base.replace(RESERVED, "_").trim().replace(EXTENSION, "").replace(/^[\s.]+/, "");
  const stem = Array.from(name).slice(0, MAX_FILENAME_CHARS - ext.length).join("")
    .replace(/[\s.]+$/, "");
  return `${stem || "image"}${ext}`;
}

/** Header values are byte strings: UTF-8 sent raw arrives one character per byte. */
function decodeHeaderText(raw: string): string {
  let text = raw;
  if (/[\u0080-\u00ff]/.test(text) && !/[\u0100-\uffff]/.test(text)) {
    try {
      text = new TextDecoder("utf-8", { fatal: true })
        .decode(Uint8Array.from(text, (c) => c.charCodeAt(0)));
    } catch { /* not UTF-8: keep the Latin-1 reading */ }
  }
  if (/%[0-9A-Fa-f]{2}/.test(text)) {
    try {
      text = decodeURIComponent(text);
    } catch { /* a literal % in the name, not percent-encoding */ }
  }
  return text;
}

function emptyStream(): ReadableStream<Uint8Array> {
  return new ReadableStream({ start: (c) => c.close() });
}
