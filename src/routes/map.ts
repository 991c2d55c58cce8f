/**
 * Maps: a map note's image, its size and the pins of its children (`#geolocation="x, y"`), and
 * uploading a new map image.
 *
 * @module
 */
import { ApiError } from "../http/errors.ts";
import { json } from "../http/response.ts";
import { parseGeolocation } from "../lore/geolocation.ts";
import { discarding, readImageUpload, uploadImage } from "../lore/image_upload.ts";
import { labelValue, ownAttributes, relationTarget } from "../lore/note_view.ts";
import { writeSteps } from "../lore/write_steps.ts";
import { defineRoute, type Route } from "../router.ts";
import type { CoreNote } from "../upstream/core.ts";
import { idParams } from "./schemas.ts";

/** `GET /api/lore/:id/map` — image, size and pins, in two parallel Core calls. */
export const getMap = defineRoute({
  method: "GET",
  path: "/api/lore/:id/map",
  summary: "Map data: image (`~mapImage`), size (`#mapWidth`/`#mapHeight`), pins of child notes",
  backend: "Core",
  access: "private",
  tag: "map",
  params: idParams,
  responses: {
    200: "`{ noteId, title, image: { noteId, url } | null, width, height, " +
      "pins: [{ noteId, title, loreType, x, y }], invalidPins: [{ noteId, title, value }] }`",
    404: "No such note",
  },
  handler: async (ctx) => {
    const { id } = ctx.params;
    const core = await ctx.core();
    // Every child in one search (depth exactly 1 below the map), never one call per child.
    const [note, children] = await Promise.all([
      core.getNote(id),
      core.search("note.noteId != ''", { ancestorNoteId: id, ancestorDepth: "eq1" }),
    ]);
    return json(mapView(note, children));
  },
});

/** `POST /api/lore/:id/map/upload` — a new map image under the map note, replacing the old one. */
export const uploadMap = defineRoute({
  method: "POST",
  path: "/api/lore/:id/map/upload",
  summary: "Upload a map image: new image note under the map, set as its `~mapImage`",
  backend: "Core",
  access: "private",
  tag: "map",
  params: idParams,
  body: {
    kind: "stream",
    description: "The image bytes, as for `POST /api/lore/upload-image`",
  },
  responses: {
    201: "`{ noteId, imageNoteId, url, width, height }` (pixel size from the file header)",
    404: "No such map note (nothing created)",
    408: "The client stopped sending for CLIENT_BODY_TIMEOUT_MS (the half-made note is removed)",
    413: "Over MAX_UPLOAD_BYTES (the half-made image note is removed)",
    415: "Not an image type, or not a PNG/JPEG/GIF/WebP/AVIF with a complete header giving its " +
      "size (nothing created)",
    502: "PARTIAL_FAILURE: a step failed and could not be undone",
  },
  handler: async (ctx) => {
    const { id } = ctx.params;
    const upload = await readImageUpload(
      ctx.req,
      ctx.config.MAX_UPLOAD_BYTES,
      ctx.config.CLIENT_BODY_TIMEOUT_MS,
    );
    const core = await ctx.core({ detached: true }).catch(discarding(upload));
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
    return json({
      noteId: id,
      imageNoteId: image.noteId,
      url: `/api/lore/${image.noteId}/image`,
      width: image.width,
      height: image.height,
    }, 201);
  },
});

/** The map as the client draws it. */
export interface MapView {
  noteId: string;
  title: string;
  image: { noteId: string; url: string } | null;
  width: number | null;
  height: number | null;
  pins: { noteId: string; title: string; loreType: string | null; x: number; y: number }[];
  invalidPins: { noteId: string; title: string; value: string }[];
}

/**
 * Builds the map view from the map note and the search results for its children. Only direct
 * children count (results are re-checked against `parentNoteIds`), each by its own
 * `#geolocation`; pins keep the map's child order.
 */
function mapView(note: CoreNote, results: CoreNote[]): MapView {
  const order = new Map(note.childNoteIds.map((childId, i) => [childId, i]));
  const children = results
    .filter((c) => c.noteId !== note.noteId && c.parentNoteIds.includes(note.noteId))
    .sort((a, b) =>
      (order.get(a.noteId) ?? order.size) - (order.get(b.noteId) ?? order.size) ||
      a.noteId.localeCompare(b.noteId)
    );
  const view: MapView = {
    noteId: note.noteId,
    title: note.title,
    image: null,
    width: ownDimension(note, "mapWidth"),
    height: ownDimension(note, "mapHeight"),
    pins: [],
    invalidPins: [],
  };
  const imageId = relationTarget(note, "mapImage");
  if (imageId) {
    view.image = { noteId: imageId, url: `/api/lore/${encodeURIComponent(imageId)}/image` };
  }
  for (const child of children) {
    const value = ownLabel(child, "geolocation");
    if (value === undefined) continue;
    const point = parseGeolocation(value);
    if (point) {
      view.pins.push({
        noteId: child.noteId,
        title: child.title,
        loreType: labelValue(child, "loreType") ?? null,
        ...point,
      });
    } else {
      view.invalidPins.push({ noteId: child.noteId, title: child.title, value });
    }
  }
  return view;
}

function ownLabel(note: CoreNote, name: string): string | undefined {
  return ownAttributes(note).find((a) => a.type === "label" && a.name === name)?.value;
}

/** A positive integer from the note's own label, else null. */
function ownDimension(note: CoreNote, name: string): number | null {
  const value = ownLabel(note, name)?.trim();
  if (!value || !/^\d{1,9}$/.test(value)) return null;
  const n = Number(value);
  return n > 0 ? n : null;
}

/** The map routes. */
export const mapRoutes: Route[] = [getMap, uploadMap];
