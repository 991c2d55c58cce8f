/**
 * A map note as the client draws it: its image (`~mapImage`), size (`#mapWidth`/`#mapHeight`)
 * and the pins of its child notes (`#geolocation="x, y"`).
 *
 * @module
 */
import { z } from "zod";
import type { CoreClient, CoreNote } from "../upstream/core.ts";
import { parseGeolocation } from "./geolocation.ts";
import { labelValue, ownAttributes, relationTarget } from "./note_view.ts";

/**
 * Reads the map note and its children in two parallel Core calls (every child in one search,
 * depth exactly 1 below the map, never one call per child). A missing map note is 404.
 */
export async function loadMapView(core: CoreClient, mapNoteId: string): Promise<MapView> {
  const [note, children] = await Promise.all([
    core.getNote(mapNoteId),
    core.search("note.noteId != ''", { ancestorNoteId: mapNoteId, ancestorDepth: "eq1" }),
  ]);
  return mapView(note, children);
}

/** A pixel size from the map's own label: a positive integer, null when it has none. */
const dimension = z.number().int().positive().nullable();

/**
 * The map as the client draws it (the answer of `GET /api/lore/:id/map`).
 */
export const mapViewSchema = z.object({
  noteId: z.string(),
  title: z.string(),
  image: z.object({ noteId: z.string(), url: z.string() }).nullable().describe(
    "The map's own `~mapImage`, with its image URL",
  ),
  width: dimension.describe("The map's own `#mapWidth`"),
  height: dimension.describe("The map's own `#mapHeight`"),
  pins: z.array(z.object({
    noteId: z.string(),
    title: z.string(),
    loreType: z.string().nullable(),
    x: z.number(),
    y: z.number(),
  })).describe('Direct children with their own `#geolocation="x, y"`, in child order'),
  invalidPins: z.array(z.object({ noteId: z.string(), title: z.string(), value: z.string() }))
    .describe("Direct children whose own `#geolocation` is not two numbers"),
});
/** The map as the client draws it. */
export type MapView = z.output<typeof mapViewSchema>;

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
