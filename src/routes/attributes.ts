/**
 * Attributes of a note: create a label or relation, delete one by id. Names are checked here
 * because Core would silently rewrite a bad name (`lore-type` → `lore_type`), a `~template` keeps
 * the note's type (Core would change an empty note's), and a delete only ever touches an
 * attribute the note in the URL owns (lore/attribute_writes.ts).
 *
 * @module
 */
import { z } from "zod";
import { json, noContent } from "../http/response.ts";
import { addAttribute, removeOwnAttribute } from "../lore/attribute_writes.ts";
import { attributeIdSchema, idSchema } from "../lore/ids.ts";
import { refuseSystemNote } from "../lore/system_notes.ts";
import { attributeNameSchema } from "../lore/vocabulary.ts";
import { defineRoute, type Route } from "../api/router.ts";
import { coreAttributeSchema } from "../upstream/core_schemas.ts";
import { idParams } from "./schemas.ts";

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
  description: "A leading `#` (labels) or `~` (relations) is stripped from `name`; names must " +
    "be letters, digits, `_` and `:` (Core would silently rewrite anything else). A missing note " +
    "is 404; a relation to a missing target is 400 naming `value`. A `~template` keeps the " +
    "note's type and mime as `POST /api/lore` does (the relation, then the type put back; all " +
    "or nothing).",
  responses: {
    201: {
      description: "The created attribute (Core's attribute object); a `~template` leaves the " +
        "note's type and mime as they were",
      schema: coreAttributeSchema,
    },
    400: "Invalid body, a name Core would rewrite, a relation target that does not exist, " +
      "or a system note",
    404: "No such note",
  },
  handler: async (ctx) => {
    const noteId = ctx.params.id;
    refuseSystemNote(noteId, "changed");
    const core = await ctx.core({ detached: true });
    return json(await addAttribute(core, noteId, ctx.body), 201);
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
  description: "Only an attribute the note in the URL owns is deleted: one it inherits, or " +
    "another note's, is 404. `attrId` may contain `:`, as the ids of Core's built-in attributes " +
    "do (`<noteId>_<l|r><name>`, e.g. `_template_character_llabel:fullName`).",
  responses: {
    204: { description: "Deleted, or already absent" },
    400: "Invalid attrId, or a system note",
    404: "The attribute belongs to another note (inherited ones included)",
  },
  handler: async (ctx) => {
    const noteId = ctx.params.id;
    refuseSystemNote(noteId, "changed");
    const core = await ctx.core({ detached: true });
    await removeOwnAttribute(core, noteId, ctx.query.attrId);
    return noContent();
  },
});

/** The attribute routes. */
export const attributeRoutes: Route[] = [createAttribute, deleteAttribute];
