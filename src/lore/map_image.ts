/**
 * Giving a map note a new image: the uploaded image becomes a child note of the map and its
 * `~mapImage`; `#mapWidth`/`#mapHeight` are added from the image's size unless the map has its
 * own. The previous `~mapImage` relation is removed last, so any earlier failure leaves the old
 * map in place; the old image note itself is kept. All steps of one {@linkcode writeSteps}.
 *
 * @module
 */
import { ApiError } from "../http/errors.ts";
import type { CoreClient } from "../upstream/core.ts";
import { discarding, type ImageUpload, type UploadedImage, uploadImage } from "./image_upload.ts";
import { ownAttributes } from "./note_view.ts";
import { writeSteps } from "./write_steps.ts";

/**
 * Replaces the map note's image with `upload` (see the module doc). A missing map note is 404,
 * with the upload discarded and nothing created.
 */
export async function replaceMapImage(
  core: CoreClient,
  upload: ImageUpload,
  mapNoteId: string,
): Promise<UploadedImage> {
  const id = mapNoteId;
  const map = await core.getNote(id).catch(discarding(upload));
  const own = ownAttributes(map);
  const w = writeSteps();
  const image = await uploadImage(core, w, upload, {
    parentNoteId: id,
    missingParent: new ApiError(404, "NOT_FOUND", "Note not found"),
  });
  // Core deletes relations pointing at a deleted note, so undoing the upload covers this.
  await w.step(
    "set the map image",
    () =>
      core.createAttribute({
        noteId: id,
        type: "relation",
        name: "mapImage",
        value: image.noteId,
      }),
    "covered",
  );
  for (const [name, value] of [["mapWidth", image.width], ["mapHeight", image.height]] as const) {
    if (own.some((a) => a.type === "label" && a.name === name)) continue;
    await w.step(
      `add the #${name} label`,
      () => core.createAttribute({ noteId: id, type: "label", name, value: String(value) }),
      (attribute) => core.deleteAttribute(attribute.attributeId),
    );
  }
  // Last, so any earlier failure leaves the old map in place; the old image note is kept.
  for (const old of own.filter((a) => a.type === "relation" && a.name === "mapImage")) {
    await w.step(
      "remove the previous map image",
      () => core.deleteAttribute(old.attributeId),
      () =>
        core.createAttribute({
          noteId: id,
          type: "relation",
          name: "mapImage",
          value: old.value,
        }),
    );
  }
  return image;
}
