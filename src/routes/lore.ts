/**
 * Lore CRUD: list/search, create (with labels and template in one request), read (with resolved
 * relations), update and delete.
 *
 * @module
 */
import { z } from "zod";
import { nullOn404 } from "../http/errors.ts";
import { json, noContent } from "../http/response.ts";
import { idSchema } from "../lore/ids.ts";
import { httpUrlOrNull, labelValue, relationTarget } from "../lore/note_view.ts";
import { createLoreNote } from "../lore/new_lore_note.ts";
import { refuseSystemNote } from "../lore/system_notes.ts";
import { userRelations } from "../lore/user_relations.ts";
import { attributeNameSchema, NOTE_TYPES } from "../lore/vocabulary.ts";
import { writeSteps } from "../lore/write_steps.ts";
import { defineRoute, type Route } from "../router.ts";
import type { CoreClient, CoreNote } from "../upstream/core.ts";
import { mapLimit } from "../util/concurrency.ts";
import { callerQuerySchema, idParams } from "./schemas.ts";

const RESERVED_ATTRIBUTES = new Set(["lore", "loreType", "template"]);

const createBody = z.strictObject({
  title: z.string().trim().min(1).max(500),
  type: z.enum(NOTE_TYPES).default("text"),
  mime: z.string().regex(/^[\w.+-]+\/[\w.+-]+$/, "must be a media type").max(100).optional(),
  loreType: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be a simple word").optional(),
  templateId: idSchema.optional(),
  parentNoteId: idSchema.optional(),
  content: z.string().max(5 * 1024 * 1024).default(""),
  attributes: z.record(attributeNameSchema, z.string().max(10_000)).default({})
    .refine((a) => Object.keys(a).length <= 100, "at most 100 attributes")
    .refine(
      (a) => Object.keys(a).every((k) => !RESERVED_ATTRIBUTES.has(k)),
      "lore, loreType and template are set through loreType/templateId",
    ),
});

const patchBody = z.strictObject({
  title: z.string().trim().min(1).max(500).optional(),
  type: z.enum(NOTE_TYPES).optional(),
  mime: z.string().regex(/^[\w.+-]+\/[\w.+-]+$/, "must be a media type").max(100).optional(),
}).refine((b) => Object.keys(b).length > 0, "give at least one of title, type, mime");

const listQuery = z.object({
  q: callerQuerySchema.default("#lore"),
  ancestorNoteId: idSchema.optional(),
});

/** `GET /api/lore` — every note matching a Core search (default `#lore`), never truncated. */
export const listLore = defineRoute({
  method: "GET",
  path: "/api/lore",
  summary: "Search lore notes with Core's search syntax (`q`, default `#lore`); complete list",
  backend: "Core",
  access: "private",
  tag: "lore",
  query: listQuery,
  responses: {
    200: "`{ results: Note[], count }` (Core note objects)",
    400: "A query Core cannot run (e.g. an invalid regular expression after `%=`)",
  },
  handler: async (ctx) => {
    const core = await ctx.core();
    const results = await core.searchCallerQuery(ctx.query.q, {
      ancestorNoteId: ctx.query.ancestorNoteId,
    });
    return json({ results, count: results.length });
  },
});

/** `POST /api/lore` — create-note, then `#lore`, `#loreType`, `~template`, labels; all or nothing. */
export const createLore = defineRoute({
  method: "POST",
  path: "/api/lore",
  summary:
    "Create a lore note with its #lore/#loreType labels, template and attributes (all or nothing)",
  backend: "Core",
  access: "private",
  tag: "lore",
  body: { kind: "json", schema: createBody },
  responses: {
    201: "`{ note, branch }` with every attribute in place",
    400: "Invalid body, or a parent/template that does not exist (nothing created)",
    502: "PARTIAL_FAILURE: a step failed and the half-made note could not be removed",
  },
  handler: async (ctx) => {
    const b = ctx.body;
    const core = await ctx.core({ detached: true });
    const created = await createLoreNote(core, writeSteps(), {
      parentNoteId: b.parentNoteId ?? await ctx.loreRootId(),
      title: b.title,
      type: b.type,
      mime: b.mime,
      content: b.content,
      loreType: b.loreType,
      templateId: b.templateId,
      labels: b.attributes,
    });
    const noteId = created.note.noteId;
    const note = await core.getNote(noteId);
    return json({ note, branch: created.branch }, 201);
  },
});

/** `GET /api/lore/:id` — the note, its relations resolved to titles, portrait and theme song. */
export const getLore = defineRoute({
  method: "GET",
  path: "/api/lore/:id",
  summary: "Note metadata plus attributes, resolved relations, portrait image and theme song",
  backend: "Core",
  access: "private",
  tag: "lore",
  params: idParams,
  responses: {
    200: "Note with `loreType`, `resolvedRelations`, `portraitImageNoteId`, `themeSongUrl`",
  },
  handler: async (ctx) => {
    const core = await ctx.core();
    const note = await core.getNote(ctx.params.id);
    return json({
      ...note,
      loreType: labelValue(note, "loreType") ?? null,
      resolvedRelations: await resolveRelations(core, note, ctx.concurrency),
      portraitImageNoteId: relationTarget(note, "portraitImage") ?? null,
      themeSongUrl: httpUrlOrNull(labelValue(note, "themeSong")),
    });
  },
});

/** `PATCH /api/lore/:id` — title, type, mime. */
export const patchLore = defineRoute({
  method: "PATCH",
  path: "/api/lore/:id",
  summary: "Update title, type or mime",
  backend: "Core",
  access: "private",
  tag: "lore",
  params: idParams,
  body: { kind: "json", schema: patchBody },
  responses: { 200: "The updated note", 404: "No such note" },
  handler: async (ctx) => {
    refuseSystemNote(ctx.params.id, "changed");
    const core = await ctx.core({ detached: true });
    return json(await core.patchNote(ctx.params.id, ctx.body));
  },
});

/** `DELETE /api/lore/:id` — 204, also when already gone (Core deletes idempotently). */
export const deleteLore = defineRoute({
  method: "DELETE",
  path: "/api/lore/:id",
  summary: "Delete a note (and its subtree where it has no other parent); 204",
  backend: "Core",
  access: "private",
  tag: "lore",
  params: idParams,
  responses: { 204: "Deleted (or already absent)", 400: "System notes cannot be deleted" },
  handler: async (ctx) => {
    refuseSystemNote(ctx.params.id, "deleted");
    await (await ctx.core({ detached: true })).deleteNote(ctx.params.id);
    return noContent();
  },
});

/** The note's user relations (user_relations.ts) whose target still exists, with its title. */
export async function resolveRelations(
  core: CoreClient,
  note: CoreNote,
  concurrency: number,
): Promise<ResolvedRelation[]> {
  const relations = userRelations(note);
  const targetIds = [...new Set(relations.map((r) => r.value))];
  const targets = new Map<string, CoreNote | null>();
  await mapLimit(targetIds, concurrency, async (id) => {
    targets.set(
      id,
      await core.getNote(id).catch(nullOn404),
    );
  });
  return relations.flatMap((r) => {
    const t = targets.get(r.value);
    return t
      ? [{
        attributeId: r.attributeId,
        name: r.name,
        targetNoteId: t.noteId,
        targetTitle: t.title,
        loreType: labelValue(t, "loreType") ?? null,
      }]
      : [];
  });
}

/** A relation with its target's title and lore type. */
export interface ResolvedRelation {
  attributeId: string;
  name: string;
  targetNoteId: string;
  targetTitle: string;
  loreType: string | null;
}

/** The lore CRUD routes. */
export const loreRoutes: Route[] = [listLore, createLore, getLore, patchLore, deleteLore];
