/**
 * Public images: the bytes of a public image note or of an image attachment of a public note,
 * streamed only after the share filter and the raster check pass, and their pixel sizes for the
 * site's pages. An image is exactly as visible as the note it belongs to.
 *
 * @module
 */
import { guardedResponseBody } from "../http/stream_guard.ts";
import { etagMatches } from "../lore/preview.ts";
import { verifiedRasterStream } from "../media/image_response.ts";
import type { CoreAttachment, CoreClient, CoreNote } from "../upstream/core.ts";
import { cachedImageSize, type PixelSize } from "./image_sizes.ts";
import { hasHtmlContent } from "./public_content.ts";
import type { PublicRequest } from "./public_request.ts";
import { digest, type PublicSnapshot } from "./snapshot_index.ts";
import { credentialsNeeded, publicNotFound } from "./visitor_access.ts";

/** Images are public for a day (seed limit); credentialed ones only in the visitor's cache. */
const IMAGE_MAX_AGE = 86400;

type ImageTarget =
  | { kind: "note"; blobId?: string }
  | { kind: "attachment"; ownerId: string; blobId?: string };

/**
 * A public image note, or else an image attachment of a public note (one Core call). A hidden
 * note's id takes the attachment path and ends in the same 404 as an unknown id.
 */
async function imageTarget(
  core: CoreClient,
  snap: PublicSnapshot,
  id: string,
): Promise<ImageTarget | null> {
  if (snap.view.isPublic(id)) {
    const note = snap.byId.get(id)!;
    return note.type === "image" ? { kind: "note", blobId: note.blobId } : null;
  }
  const att = await core.getAttachment(id);
  if (att.role !== "image" || !snap.view.isPublic(att.ownerId)) return null;
  return { kind: "attachment", ownerId: att.ownerId, blobId: att.blobId };
}

/**
 * Image bytes of a public image note / image attachment, streamed; 404 otherwise, 401 when the
 * owning note needs credentials. With a matching `ifNoneMatch`, a 304 without touching the bytes.
 */
export async function publicImage(
  req: PublicRequest,
  id: string,
  ifNoneMatch: string | null,
): Promise<Response> {
  const { deps, snap } = req;
  // not the snapshot's detached Core: these bytes stream to this visitor and stop when they leave
  const { core } = await deps.publicCore();
  const target = await imageTarget(core, snap, id);
  if (!target) throw publicNotFound();
  const ownerId = target.kind === "note" ? id : target.ownerId;
  if (!req.access.canSee(ownerId)) throw credentialsNeeded();
  const guardedImage = snap.view.credentialGroups(ownerId).length > 0;
  const headers = new Headers({
    "cache-control": `${guardedImage ? "private" : "public"}, max-age=${IMAGE_MAX_AGE}`,
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; sandbox",
  });
  if (guardedImage) headers.set("vary", "Authorization");
  const blob = target.blobId && /^[A-Za-z0-9_-]{1,64}$/.test(target.blobId) ? target.blobId : null;
  // the bytes' own identity: another snapshot (a draft edited) never changes it
  const etag = blob && `W/"${digest("image", blob)}"`;
  if (etag) {
    headers.set("etag", etag);
    if (etagMatches(ifNoneMatch, etag)) return new Response(null, { status: 304, headers });
  }
  const upstream = target.kind === "note"
    ? await core.content(id)
    : await core.attachmentContent(id);
  const image = await verifiedRasterStream(
    upstream,
    deps.config.UPSTREAM_TIMEOUT_MS,
    deps.deadlines,
  );
  if (!image) throw publicNotFound();
  headers.set("content-type", image.mime);
  return new Response(guardedResponseBody(deps, image.stream, "Core"), { headers });
}

/**
 * Pixel sizes for one request's pages: of a visible image note, or of an image attachment of the
 * visible note `ownerId`; null for anything else or when it cannot be read. `seen` is the page's
 * own visibility check (it throws for a note the visitor may not see); each owner's attachment
 * list is read once.
 */
export function imageSizes(
  req: PublicRequest,
  seen: (noteId: string) => CoreNote,
): (imageId: string, ownerId: string) => Promise<PixelSize | null> {
  const { snap, core, identity } = req;
  const cache = req.deps.caches.imageSizes;
  const attachmentsOf = new Map<string, Promise<CoreAttachment[]>>();
  return async (imageId, ownerId) => {
    if (snap.view.isPublic(imageId)) {
      const image = seen(imageId);
      if (image.type !== "image") return null;
      return await cachedImageSize(cache, identity, image.blobId, () => core.content(imageId));
    }
    if (!hasHtmlContent(seen(ownerId))) return null;
    attachmentsOf.set(ownerId, attachmentsOf.get(ownerId) ?? core.attachments(ownerId));
    const att = (await attachmentsOf.get(ownerId)!).find((a) => a.attachmentId === imageId);
    if (att?.role !== "image") return null;
    return await cachedImageSize(
      cache,
      identity,
      att.blobId,
      () => core.attachmentContent(imageId),
    );
  };
}
