/**
 * Lore CRUD: list/search, create (with labels and template in one request), read (with resolved
 * relations), update and delete.
 *
 * @module
 */
import { z } from "zod";
import { json, jsonText, noContent } from "../http/response.ts";
import { idSchema } from "../lore/ids.ts";
import { labelValue, PORTRAIT_RELATIONS, portraitTarget, themeSongUrl } from "../lore/note_view.ts";
import { createLoreNote } from "../lore/new_lore_note.ts";
import { notesByIds } from "../lore/notes_by_ids.ts";
import { refuseSystemNote } from "../lore/system_notes.ts";
import { userRelations } from "../lore/user_relations.ts";
import { attributeNameSchema, NOTE_TYPES } from "../lore/vocabulary.ts";
import { writeSteps } from "../lore/write_steps.ts";
import { defineRoute, type Route } from "../api/router.ts";
import type { CoreClient, CoreNote } from "../upstream/core.ts";
import { coreBranchSchema } from "../upstream/core_schemas.ts";
import { loreTypeField, noteSchema } from "./lore_responses.ts";
import { callerQuerySchema, idParams } from "./schemas.ts";

const RESERVED_ATTRIBUTES = new Set(["lore", "loreType", "template"]);

// The portal's template forms key labels by field label ("Danger Level"); Core label names hold
// no spaces, so runs of whitespace become `_` (as the portal's editor reads them back).
const attributeKey = z.string().transform((k) => k.trim().replace(/\s+/g, "_"))
  .pipe(attributeNameSchema);

const createBody = z.strictObject({
  title: z.string().trim().min(1).max(500),
  type: z.enum(NOTE_TYPES).default("text"),
  mime: z.string().regex(/^[\w.+-]+\/[\w.+-]+$/, "must be a media type").max(100).optional(),
  loreType: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be a simple word").optional(),
  templateId: idSchema.optional(),
  parentNoteId: idSchema.optional(),
  content: z.string().max(5 * 1024 * 1024).default(""),
  attributes: z.record(attributeKey, z.string().max(10_000)).default({})
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
  description: "`q` goes to Core as written (Core's full search syntax: it is the caller's own " +
    "lore), default `#lore`; `ancestorNoteId` keeps the notes below that note. The answer is " +
    "a bare array of Core's notes, as the front end reads it: complete, never truncated, so " +
    "its length is the count. A query Core would fail on with a 500 is a 400 naming `query.q`, " +
    "and nothing is sent: a `%=` operand JavaScript's `RegExp` cannot compile (read as Core's " +
    "lexer reads it: lowercased, backslash escapes, unquoted words split at operator " +
    'characters), an empty quoted full-text term (`""`), a parenthesis left open, or a quoted ' +
    "`(` (or a quoted `)` inside a group): Core groups by a word's text even when it is quoted, " +
    "and drops the whole condition of an unclosed group, answering with every note. Should Core " +
    "still fail so, that is a 400 too (Core's text is never shown); any other Core failure stays " +
    "502.",
  responses: {
    200: {
      description: "`Note[]`: Core's note objects, every match",
      schema: z.array(noteSchema),
    },
    400: "A query Core cannot run (e.g. an invalid regular expression after `%=`)",
  },
  handler: async (ctx) => {
    const core = await ctx.core();
    const { results, resultsJson } = await core.listCallerQuery(ctx.query.q, {
      ancestorNoteId: ctx.query.ancestorNoteId,
    });
    // a list Core sent exactly as validated goes on as Core's own text, not serialized again
    return jsonText(resultsJson ?? JSON.stringify(results));
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
  description: "`type` defaults to `text`, `mime` to Core's default for the type (`text/html` " +
    "for text), `parentNoteId` to the lore root (`GET /api/config/portal`). Steps: create the " +
    "note, then `#lore`, `#loreType`, `~template` (`templateId`, or `_template_<loreType>` for " +
    "Core's 21 lore types), then one label per `attributes` entry (`lore`, `loreType` and " +
    "`template` are refused there; whitespace in a name becomes `_`, so the portal's " +
    '`{"Danger Level": "high"}` is `#Danger_Level=high`). A failing step deletes the half-made note and the error ' +
    "names the step (`details.failedStep`, `details.rolledBack`); a parent or template that does " +
    "not exist is a 400 naming the field. The note keeps the requested type and mime where Core " +
    "would give an empty note its template's (on `~template`, or at creation through a parent's " +
    "`~child:template`); Core's copy of the template's content and child notes is kept.",
  responses: {
    201: {
      description: "`{ note, branch }`: the note read back with every attribute in place, and " +
        "its branch under the parent",
      schema: z.object({ note: noteSchema, branch: coreBranchSchema }),
    },
    400: "Invalid body, or a parent/template that does not exist (nothing created)",
    502: "`PARTIAL_FAILURE`: a step failed and the half-made note could not be removed",
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

/**
 * A relation with its target's title and lore type.
 */
export const resolvedRelationSchema = z.object({
  attributeId: z.string(),
  name: z.string(),
  targetNoteId: z.string(),
  targetTitle: z.string(),
  loreType: loreTypeField,
});
/** A relation with its target's title and lore type. */
export type ResolvedRelation = z.output<typeof resolvedRelationSchema>;

/** `GET /api/lore/:id` — the note, its relations resolved to titles, portrait and theme song. */
export const getLore = defineRoute({
  method: "GET",
  path: "/api/lore/:id",
  summary: "Note metadata plus attributes, resolved relations, portrait image and theme song",
  backend: "Core",
  access: "private",
  tag: "lore",
  params: idParams,
  description: "`resolvedRelations` are the note's user relations whose target still exists " +
    "(all targets read in one Core search; a target the search cannot see, e.g. one only under " +
    "Core's hidden notes, is read on its own), each with the target's title and lore type, " +
    "except its portrait relations (`~portraitImage`, `~coverImage`, `~portrait`, " +
    "`~heroImage`), which the portal shows as the portrait instead. `portraitImageNoteId` is " +
    "the target of the note's own first portrait relation in that order of names, " +
    "`themeSongUrl` its `#themeSongUrl` (the label the portal writes) or else `#themeSong`, the " +
    "first that is an http(s) URL.",
  responses: {
    200: {
      description: "Core's note plus `loreType`, `resolvedRelations`, `portraitImageNoteId`, " +
        "`themeSongUrl`",
      schema: noteSchema.extend({
        loreType: loreTypeField,
        resolvedRelations: z.array(resolvedRelationSchema),
        portraitImageNoteId: z.string().nullable(),
        themeSongUrl: z.string().nullable(),
      }),
    },
  },
  handler: async (ctx) => {
    const core = await ctx.core();
    const note = await core.getNote(ctx.params.id);
    return json({
      ...note,
      loreType: labelValue(note, "loreType") ?? null,
      resolvedRelations: (await resolveRelations(core, note, ctx.concurrency))
        .filter((r) => !PORTRAIT_RELATIONS.includes(r.name)),
      portraitImageNoteId: portraitTarget(note) ?? null,
      themeSongUrl: themeSongUrl(note),
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
  responses: {
    200: { description: "The updated note (Core's note object)", schema: noteSchema },
    400: "Invalid body, or a system note",
    404: "No such note",
  },
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
  responses: {
    204: { description: "Deleted, or already absent (Core deletes idempotently)" },
    400: "System notes cannot be deleted",
  },
  handler: async (ctx) => {
    refuseSystemNote(ctx.params.id, "deleted");
    await (await ctx.core({ detached: true })).deleteNote(ctx.params.id);
    return noContent();
  },
});

/**
 * The note's user relations (user_relations.ts) whose target still exists, with its title: every
 * target in one Core round trip (two when one only lives under Core's hidden notes).
 */
export async function resolveRelations(
  core: CoreClient,
  note: CoreNote,
  concurrency: number,
): Promise<ResolvedRelation[]> {
  const relations = userRelations(note);
  const targets = await notesByIds(core, relations.map((r) => r.value), {
    lore: false,
    concurrency,
    complete: true,
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

/** The lore CRUD routes. */
export const loreRoutes: Route[] = [listLore, createLore, getLore, patchLore, deleteLore];
