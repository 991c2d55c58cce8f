/**
 * Adding and removing one attribute of a note. A `~template` keeps the note's type
 * (template_link.ts); a failed create is told apart (missing note or missing relation target);
 * a delete only ever touches an attribute the note itself owns.
 *
 * @module
 */
import { ApiError, invalidRequest, nullOn404, upstreamCode } from "../http/errors.ts";
import type { CoreAttribute, CoreClient } from "../upstream/core.ts";
import { linkTemplate } from "./template_link.ts";
import { writeSteps } from "./write_steps.ts";

/** One label or relation to add; names are already the ones Core stores unchanged. */
export interface NewAttribute {
  type: "label" | "relation";
  name: string;
  /** A label's text, or a relation's target note id. */
  value: string;
  isInheritable?: boolean;
  position?: number;
}

/**
 * Adds the attribute to the note. A missing note is 404; a relation to a missing note is 400
 * naming `body.value`. `~template` is two steps (the relation, then the note's type and mime
 * put back), all or nothing.
 */
export async function addAttribute(
  core: CoreClient,
  noteId: string,
  attribute: NewAttribute,
): Promise<CoreAttribute> {
  const { type, name, value, isInheritable, position } = attribute;
  if (type === "relation" && name === "template") {
    const note = await core.getNote(noteId);
    return await linkTemplate(core, writeSteps(), {
      noteId,
      templateId: value,
      isInheritable,
      position,
      keep: note,
      field: "value",
      undo: "remove",
    });
  }
  try {
    return await core.createAttribute({ noteId, type, name, value, isInheritable, position });
  } catch (e) {
    throw await explainCreateFailure(core, noteId, type, e);
  }
}

/**
 * Deletes one of the note's own attributes; nothing when it is already gone (like Core's own
 * DELETE). An attribute of another note, inherited ones included, is 404 naming `query.attrId`.
 */
export async function removeOwnAttribute(
  core: CoreClient,
  noteId: string,
  attributeId: string,
): Promise<void> {
  const attribute = await core.getAttribute(attributeId).catch(nullOn404);
  if (!attribute) return;
  if (attribute.noteId !== noteId) {
    throw new ApiError(404, "NOT_FOUND", "Attribute not found", { field: "query.attrId" });
  }
  await core.deleteAttribute(attributeId);
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
