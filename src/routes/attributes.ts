/**
 * Attributes of a note: create a label or relation, delete one by id. Names are checked here
 * because Core would silently rewrite a bad name (`lore-type` → `lore_type`), a `~template` keeps
 * the note's type (Core would change an empty note's), and a delete only ever touches an
 * attribute the note in the URL owns.
 *
 * @module
 */
import { z } from "zod";
import { ApiError, invalidRequest, nullOn404, upstreamCode } from "../http/errors.ts";
import { json, noContent } from "../http/response.ts";
import { refuseSystemNote } from "../lore/system_notes.ts";
import { linkTemplate } from "../lore/template_link.ts";
import { writeSteps } from "../lore/write_steps.ts";
import { defineRoute, type Route } from "../router.ts";
import type { CoreAttribute, CoreClient } from "../upstream/core.ts";
import { attributeIdSchema, attributeNameSchema, idParams, idSchema } from "./schemas.ts";

/** A name as users write it (`#race`, `~relAlly`): the sigil of the attribute's type is dropped. */
const nameWithSigil = (sigil: "#" | "~") =>
  z.string().transform((n) => (n.startsWith(sigil) ? n.slice(1) : n)).pipe(attributeNameSchema);

const common = {
  isInheritable: z.boolean().optional(),
  position: z.int().min(0).max(1_000_000_000).optional(),
};

const createBody = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("label"),
    name: nameWithSigil("#"),
    value: z.string().max(10_000).default(""),
    ...common,
  }),
  z.strictObject({
    type: z.literal("relation"),
    name: nameWithSigil("~"),
    value: idSchema,
    ...common,
  }),
]);

const deleteQuery = z.object({ attrId: attributeIdSchema });

/** `POST /api/lore/:id/attributes` — one label or relation; 201 with Core's attribute. */
export const createAttribute = defineRoute({
  method: "POST",
  path: "/api/lore/:id/attributes",
  summary: "Create a label or relation on a note (name may carry its #/~ sigil)",
  backend: "Core",
  access: "private",
  tag: "attributes",
  params: idParams,
  body: { kind: "json", schema: createBody },
  responses: {
    201: "The created attribute (Core's attribute object); a `~template` leaves the note's " +
      "type and mime as they were",
    400: "Invalid body, a name Core would rewrite, a relation target that does not exist, " +
      "or a system note",
    404: "No such note",
  },
  handler: async (ctx) => {
    const noteId = ctx.params.id;
    refuseSystemNote(noteId, "changed");
    const core = await ctx.core({ detached: true });
    const { type, name, value, isInheritable, position } = ctx.body;
    if (type === "relation" && name === "template") {
      return json(await addTemplate(core, noteId, value, { isInheritable, position }), 201);
    }
    try {
      const attribute = await core.createAttribute({
        noteId,
        type,
        name,
        value,
        isInheritable,
        position,
      });
      return json(attribute, 201);
    } catch (e) {
      throw await explainCreateFailure(core, noteId, type, e);
    }
  },
});

/** `DELETE /api/lore/:id/attributes?attrId=` — 204; never another note's attribute. */
export const deleteAttribute = defineRoute({
  method: "DELETE",
  path: "/api/lore/:id/attributes",
  summary: "Delete one of the note's own attributes by `attrId`; 204 (also when already gone)",
  backend: "Core",
  access: "private",
  tag: "attributes",
  params: idParams,
  query: deleteQuery,
  responses: {
    204: "Deleted, or already absent",
    400: "Invalid attrId, or a system note",
    404: "The attribute belongs to another note (inherited ones included)",
  },
  handler: async (ctx) => {
    const noteId = ctx.params.id;
    refuseSystemNote(noteId, "changed");
    const core = await ctx.core({ detached: true });
    const attrId = ctx.query.attrId;
    const attribute = await core.getAttribute(attrId).catch(nullOn404);
    if (!attribute) return noContent(); // idempotent, like Core's own DELETE
    if (attribute.noteId !== noteId) {
      throw new ApiError(404, "NOT_FOUND", "Attribute not found", { field: "query.attrId" });
    }
    await core.deleteAttribute(attrId);
    return noContent();
  },
});

/**
 * `~template` keeps the note's type and mime ({@linkcode linkTemplate}); a missing note is 404,
 * a missing template 400 naming `value`.
 */
async function addTemplate(
  core: CoreClient,
  noteId: string,
  templateId: string,
  extra: { isInheritable?: boolean; position?: number },
): Promise<CoreAttribute> {
  const note = await core.getNote(noteId);
  return await linkTemplate(core, writeSteps(), {
    noteId,
    templateId,
    ...extra,
    keep: note,
    field: "value",
    undo: "remove",
  });
}

/**
 * Core reports a missing owner as 400 PROPERTY_VALIDATION_ERROR and a missing relation target as
 * 404 NOTE_NOT_FOUND (it checks the target first, so with both missing it says 404 too): the
 * owner is the URL's resource (404), the target is a body field (400).
 */
async function explainCreateFailure(
  core: CoreClient,
  noteId: string,
  type: "label" | "relation",
  e: unknown,
): Promise<unknown> {
  if (!(e instanceof ApiError)) return e;
  if (upstreamCode(e) === "PROPERTY_VALIDATION_ERROR") {
    return new ApiError(404, "NOT_FOUND", "Note not found", { service: "core" });
  }
  if (e.status !== 404 || type !== "relation") return e;
  const owner = await core.getNote(noteId).catch(nullOn404);
  if (!owner) return new ApiError(404, "NOT_FOUND", "Note not found", { service: "core" });
  return invalidRequest("value does not name an existing note", [
    { path: "body.value", message: "not found" },
  ]);
}

/** The attribute routes. */
export const attributeRoutes: Route[] = [createAttribute, deleteAttribute];
