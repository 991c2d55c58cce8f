/**
 * The note tree: moving a note (never leaving it without a parent), the notes that link to a
 * note, and the ancestor path shown as breadcrumbs (lore/note_move.ts, lore/backlinks.ts,
 * lore/ancestor_path.ts).
 *
 * @module
 */
import { z } from "zod";
import { json } from "../http/response.ts";
import { ancestorPath } from "../lore/ancestor_path.ts";
import { noteBacklinks } from "../lore/backlinks.ts";
import { idSchema } from "../lore/ids.ts";
import { refuseImpossibleMove, relocateNote } from "../lore/note_move.ts";
import { defineRoute, type Route } from "../router.ts";
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
  responses: {
    200: "`{ noteId, parentNoteId, branchId, notePosition, index, removedBranchId | null }`",
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
  responses: {
    200: "`{ backlinks: [{ noteId, title, loreType, relations: string[], viaContentLink }] }`",
    404: "No such note",
  },
  handler: async (ctx) => {
    return json({ backlinks: await noteBacklinks(await ctx.core(), ctx.params.id) });
  },
});

/** `GET /api/lore/:id/breadcrumbs` — the path from `root` to the note. */
export const getBreadcrumbs = defineRoute({
  method: "GET",
  path: "/api/lore/:id/breadcrumbs",
  summary: "Ancestor path from root to the note (first visible parent at each step)",
  backend: "Core",
  access: "private",
  tag: "tree",
  params: idParams,
  responses: { 200: "`{ breadcrumbs: [{ noteId, title }] }`, root first", 404: "No such note" },
  handler: async (ctx) => {
    const path = await ancestorPath(await ctx.core(), ctx.params.id);
    return json({ breadcrumbs: path.map((n) => ({ noteId: n.noteId, title: n.title })) });
  },
});

/** The tree routes. */
export const treeRoutes: Route[] = [moveNote, getBacklinks, getBreadcrumbs];
