/**
 * The note tree: moving a note (never leaving it without a parent), the notes that link to a
 * note, and the ancestor path shown as breadcrumbs (lore/note_move.ts, lore/backlinks.ts,
 * lore/ancestor_path.ts).
 *
 * @module
 */
import { z } from "zod";
import { json } from "../http/response.ts";
import { ancestorPath, MAX_BREADCRUMB_DEPTH } from "../lore/ancestor_path.ts";
import { backlinkSchema, noteBacklinks } from "../lore/backlinks.ts";
import { idSchema } from "../lore/ids.ts";
import { noteMovedSchema, refuseImpossibleMove, relocateNote } from "../lore/note_move.ts";
import { defineRoute, type Route } from "../api/router.ts";
import { idParams } from "./schemas.ts";

const moveBody = z.strictObject({
  noteId: idSchema,
  newParentId: idSchema,
  index: z.int().min(0),
  oldParentId: idSchema.optional(),
});

/** `POST /api/lore/move` — reorder under the same parent, or move to another one. */
export const moveNote = defineRoute({
  method: "POST",
  path: "/api/lore/move",
  summary: "Move a note to another parent at an index, or reorder it under its parent",
  backend: "Core",
  access: "private",
  tag: "tree",
  body: { kind: "json", schema: moveBody },
  description: "System notes and a `_`-prefixed parent are refused, and so is a move into the " +
    "note's own subtree (Core has no cycle check). The note gets a new branch at `index` among " +
    "the new parent's children (siblings are renumbered only when no integer gap is left); the " +
    "old branch (the one under `oldParentId`, by default the first ordinary parent) is removed " +
    "last, so the note is never without a parent. Within the same parent only the position " +
    "changes.",
  responses: {
    200: {
      description: "`{ noteId, parentNoteId, branchId, notePosition, index, removedBranchId }`",
      schema: noteMovedSchema,
    },
    400: "Invalid body, a system note, a move into the note's own subtree, or an oldParentId " +
      "that is not a parent",
    404: "No such note or new parent",
    502: "PARTIAL_FAILURE: a step failed and could not be undone (the note keeps a parent)",
  },
  handler: async (ctx) => {
    refuseImpossibleMove(ctx.body);
    const core = await ctx.core({ detached: true });
    return json(await relocateNote(core, ctx.body, { concurrency: ctx.concurrency }));
  },
});

/** `GET /api/lore/:id/backlinks` — notes with a relation (or content link) to this note. */
export const getBacklinks = defineRoute({
  method: "GET",
  path: "/api/lore/:id/backlinks",
  summary: "Notes linking to this note through relations or content links (complete, by title)",
  backend: "Core",
  access: "private",
  tag: "tree",
  params: idParams,
  description: "Every note owning a relation to this note: its user relations by name, and " +
    "Core's content-link relations as `viaContentLink`; a note related only through Core " +
    "machinery (`~template`, `~inherit`…) is not a backlink. Found with one search for the id. " +
    "A bare array, as the front end reads it.",
  responses: {
    200: {
      description: "`[{ noteId, title, loreType, relations: string[], viaContentLink }]`, by title",
      schema: z.array(backlinkSchema),
    },
    404: "No such note",
  },
  handler: async (ctx) => {
    return json(await noteBacklinks(await ctx.core(), ctx.params.id));
  },
});

/** `GET /api/lore/:id/breadcrumbs` — the note's ancestors below `root`. */
export const getBreadcrumbs = defineRoute({
  method: "GET",
  path: "/api/lore/:id/breadcrumbs",
  summary: "Ancestor path of the note, top first, without root and the note itself",
  backend: "Core",
  access: "private",
  tag: "tree",
  params: idParams,
  description: "The note's ancestors from the one below `root` down to its parent, following " +
    "at each step the first parent that is not a hidden system note; at most " +
    `${MAX_BREADCRUMB_DEPTH} ancestors. \`root\` and the note itself are not listed (the front ` +
    "end shows its own first crumb and the note's title): a note right under `root` has none. " +
    "An ancestor deleted meanwhile ends the path there.",
  responses: {
    200: {
      description: "`[{ noteId, title }]`, the topmost ancestor first, the parent last",
      schema: z.array(z.object({ noteId: z.string(), title: z.string() })).max(
        MAX_BREADCRUMB_DEPTH,
      ),
    },
    404: "No such note",
  },
  handler: async (ctx) => {
    const path = await ancestorPath(await ctx.core(), ctx.params.id);
    const ancestors = path.slice(path[0].noteId === "root" ? 1 : 0, -1);
    return json(ancestors.map((n) => ({ noteId: n.noteId, title: n.title })));
  },
});

/** The tree routes. */
export const treeRoutes: Route[] = [moveNote, getBacklinks, getBreadcrumbs];
