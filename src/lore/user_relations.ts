/**
 * Which of a note's relations are the user's lore: the relations shown as a note's relations
 * (`GET /api/lore/:id`, a note's relationships, the public note), told to the copilot, and named
 * in backlinks. The one definition all of them use.
 *
 * A user relation is one the note owns (an inherited one belongs to the note it is inherited
 * from) whose name is not Core machinery. Core machinery is:
 *
 * - the relations Core adds by itself for links in a note's content
 *   ({@linkcode AUTOMATIC_RELATIONS}: `internalLink`, `imageLink`, `includeNoteLink`,
 *   `relationMapLink`);
 * - the relations through which Core itself behaves: `template` and `inherit` (what a note is
 *   built from), `renderNote`, `widget`, `searchScript`, the `runOn…` script hooks and the share
 *   styling relations (`shareCss`, `shareJs`, `shareHtml`, `shareTemplate`, `shareFavicon`);
 * - `child:…` relations, which are rules Core copies onto new child notes, not relations of the
 *   note itself.
 *
 * Everything else is the user's, including the portal's own conventions such as `~portraitImage`
 * and `~mapImage` and the `rel<Type>` relations the Parser writes.
 *
 * @module
 */
import type { CoreAttribute, CoreNote } from "../upstream/core_schemas.ts";
import { ownAttributes } from "./note_view.ts";

/**
 * Relations Core creates by itself from links in a note's content; not user relationships.
 */
export const AUTOMATIC_RELATIONS: ReadonlySet<string> = new Set([
  "internalLink",
  "imageLink",
  "includeNoteLink",
  "relationMapLink",
]);

// Relations Core acts on: how a note is built, rendered, scripted and shared.
const CORE_BEHAVIOUR_RELATIONS: ReadonlySet<string> = new Set([
  "template",
  "inherit",
  "renderNote",
  "widget",
  "searchScript",
  "shareCss",
  "shareJs",
  "shareHtml",
  "shareTemplate",
  "shareFavicon",
]);

/**
 * Whether a relation name is the user's rather than Core machinery (see the module doc).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(isUserRelationName("relAlly"), true);
 * assert.equal(isUserRelationName("template"), false);
 * assert.equal(isUserRelationName("runOnNoteCreation"), false);
 * ```
 */
export function isUserRelationName(name: string): boolean {
  return !AUTOMATIC_RELATIONS.has(name) && !CORE_BEHAVIOUR_RELATIONS.has(name) &&
    !/^runOn[A-Z]/.test(name) && !name.startsWith("child:");
}

/**
 * Whether an attribute is a relation with a user relation name. Ownership is not checked: see
 * {@linkcode userRelations} for a note's own.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(isUserRelation({ type: "relation", name: "relAlly" }), true);
 * assert.equal(isUserRelation({ type: "label", name: "relAlly" }), false);
 * ```
 */
export function isUserRelation(attribute: Pick<CoreAttribute, "type" | "name">): boolean {
  return attribute.type === "relation" && isUserRelationName(attribute.name);
}

/**
 * The note's own user relations, in Core's attribute order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { CoreAttribute } from "../upstream/core.ts";
 *
 * const relation = (name: string, value: string): CoreAttribute => ({
 *   attributeId: name,
 *   noteId: "mira",
 *   type: "relation",
 *   name,
 *   value,
 *   isInheritable: false,
 * });
 * const attributes = [relation("relAlly", "oskar"), relation("template", "t")];
 * const note = { noteId: "mira", attributes };
 * assert.deepEqual(userRelations(note).map((a) => a.value), ["oskar"]);
 * ```
 */
export function userRelations(note: Pick<CoreNote, "noteId" | "attributes">): CoreAttribute[] {
  return ownAttributes(note).filter(isUserRelation);
}
