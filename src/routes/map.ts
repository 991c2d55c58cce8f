/**
 * Maps: a map note's image, its size and the pins of its children (`#geolocation="x, y"`), and
 * uploading a new map image (lore/map_view.ts, lore/map_image.ts).
 *
 * @module
 */
import { z } from "zod";
import { bodyReading } from "../http/body.ts";
import { json } from "../http/response.ts";
import { discarding, readImageUpload } from "../lore/image_upload.ts";
import { replaceMapImage } from "../lore/map_image.ts";
import { loadMapView, mapViewSchema } from "../lore/map_view.ts";
import { defineRoute, type Route } from "../api/router.ts";
import { UPLOAD_NOTES, uploadSize } from "./media.ts";
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
  description: "The image is the note's own `~mapImage` relation, the size its own " +
    "`#mapWidth`/`#mapHeight` labels (positive integers), the pins its direct children's own " +
    '`#geolocation="x, y"` labels (two numbers; any other value is listed in `invalidPins`), ' +
    "in child order: one call for the note and one search for its children.",
  responses: {
    200: {
      description: "`{ noteId, title, image: { noteId, url } | null, width, height, " +
        "pins: [{ noteId, title, loreType, x, y }], invalidPins: [{ noteId, title, value }] }`",
      schema: mapViewSchema,
    },
    404: "No such note",
  },
  handler: async (ctx) => json(await loadMapView(await ctx.core(), ctx.params.id)),
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
  description: `${UPLOAD_NOTES} The image note goes under the map note and becomes its ` +
    "`~mapImage`, replacing the previous relation last (the old image note is kept); " +
    "`#mapWidth`/`#mapHeight` are set from the image header when the map has none of its own.",
  responses: {
    201: {
      description: "`{ noteId, imageNoteId, url, width, height }` (pixel size from the file " +
        "header)",
      schema: uploadSize.extend({
        noteId: z.string().describe("The map note"),
        imageNoteId: z.string(),
        url: z.string().describe("`/api/lore/<imageNoteId>/image`"),
      }),
    },
    404: "No such map note (nothing created)",
    408: "The body broke a body limit: nothing for CLIENT_BODY_TIMEOUT_MS, below " +
      "CLIENT_BODY_MIN_BYTES_PER_SECOND, or over CLIENT_BODY_TOTAL_TIMEOUT_MS (the half-made " +
      "note is removed; `details.reason` says which)",
    413: "Over MAX_UPLOAD_BYTES (the half-made image note is removed)",
    415: "Not an image type, or not a PNG/JPEG/GIF/WebP/AVIF with a complete header giving its " +
      "size (nothing created)",
    502: "PARTIAL_FAILURE: a step failed and could not be undone",
  },
  handler: async (ctx) => {
    const { id } = ctx.params;
    const upload = await readImageUpload(ctx.req, ctx.config.MAX_UPLOAD_BYTES, bodyReading(ctx));
    const core = await ctx.core({ detached: true }).catch(discarding(upload));
    const image = await replaceMapImage(core, upload, id);
    return json({
      noteId: id,
      imageNoteId: image.noteId,
      url: `/api/lore/${image.noteId}/image`,
      width: image.width,
      height: image.height,
    }, 201);
  },
});

/** The map routes. */
export const mapRoutes: Route[] = [getMap, uploadMap];
