/**
 * Linking a note to a template without losing its type. When a `~template` relation is created,
 * Core (services/handlers.ts) turns an empty note of type text, code, mermaid, canvas,
 * relationMap, mindMap or webView into the template's type and mime (and copies the template's
 * content, when it has any, and its child notes). A code note linked to `_template_spell` would
 * become a text note, a text note linked to `_template_timeline` a book. The same happens at
 * creation when the parent has a `~child:template`. So every template link the service makes is
 * two steps: the relation, then putting the type and mime back when Core changed them.
 *
 * @module
 */
import { rethrowMissingReference } from "./references.ts";
import type { Undo, WriteSteps } from "./write_steps.ts";
import type { CoreAttribute, CoreClient } from "../upstream/core.ts";

/** A note's type and mime. */
export interface TypeAndMime {
  type: string;
  mime: string;
}

/**
 * Puts a note's type and mime back to `keep` if Core changed them (one read, a PATCH only when
 * needed).
 */
export async function restoreTypeAndMime(
  core: CoreClient,
  noteId: string,
  keep: TypeAndMime,
): Promise<void> {
  const now = await core.getNote(noteId);
  if (now.type !== keep.type || now.mime !== keep.mime) {
    await core.patchNote(noteId, { type: keep.type, mime: keep.mime });
  }
}

/** What a template link needs. */
export interface TemplateLink {
  noteId: string;
  templateId: string;
  /** Passed on to the relation. */
  isInheritable?: boolean;
  /** Passed on to the relation. */
  position?: number;
  /** The type and mime the note must keep. */
  keep: TypeAndMime;
  /** The request field naming the template (a missing template is a 400 naming it). */
  field: string;
  /**
   * `"covered"` when an earlier step's undo removes the note anyway; `"remove"` to delete the
   * relation again (and put the type back) when a later step fails.
   */
  undo: "covered" | "remove";
}

/**
 * The name of the step that puts the type and mime back (reported as `details.failedStep`).
 */
export const KEEP_TYPE_STEP = "keep the note's type and mime";

/**
 * Adds `~template` to a note as two steps of `w` and keeps the note's type and mime.
 */
export async function linkTemplate(
  core: CoreClient,
  w: WriteSteps,
  link: TemplateLink,
): Promise<CoreAttribute> {
  const { noteId, templateId } = link;
  const keep = { type: link.keep.type, mime: link.keep.mime };
  // type first: if that fails, the whole link (relation and Core's change) is what is left
  const undo: Undo<CoreAttribute> = link.undo === "covered" ? "covered" : async (attr) => {
    await restoreTypeAndMime(core, noteId, keep);
    await core.deleteAttribute(attr.attributeId);
  };
  const attribute = await w.step(
    "link the template",
    () =>
      core.createAttribute({
        noteId,
        type: "relation",
        name: "template",
        value: templateId,
        isInheritable: link.isInheritable,
        position: link.position,
      }).catch(rethrowMissingReference(link.field)),
    undo,
  );
  // the template's content and children, if Core copied any, stay: that is what templates are for
  await w.step(KEEP_TYPE_STEP, () => restoreTypeAndMime(core, noteId, keep), "covered");
  return attribute;
}
