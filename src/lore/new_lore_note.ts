/**
 * Creating a lore note the one way the service does it: the note, then `#lore`, `#loreType`,
 * `~template` (keeping the note's type, see template_link.ts) and extra labels, each a step of a
 * {@linkcode WriteSteps} so a failure removes the half-made note. Used by `POST /api/lore` and by
 * the copilot's `create` targets.
 *
 * @module
 */
import { rethrowMissingReference } from "./references.ts";
import { KEEP_TYPE_STEP, linkTemplate } from "./template_link.ts";
import type { WriteSteps } from "./write_steps.ts";
import type { CoreBranch, CoreClient, CoreNote } from "../upstream/core.ts";
import { DEFAULT_MIMES, LORE_TYPES, type NoteType } from "./vocabulary.ts";

/** What a new lore note is made of. */
export interface NewLoreNote {
  parentNoteId: string;
  title: string;
  type: NoteType;
  /** Default: Core's default for the type. The note ends with this type and mime. */
  mime?: string;
  content: string;
  loreType?: string;
  /** Template note; default `_template_<loreType>` for Core's 21 lore types. */
  templateId?: string;
  /** Extra labels, name → value (never `lore`, `loreType` or `template`). */
  labels?: Record<string, string>;
}

/**
 * Runs the create steps on `w`; deleting the note (the first step's undo) removes everything
 * later steps added. A parent or template that does not exist is a 400 naming the field.
 */
export async function createLoreNote(
  core: CoreClient,
  w: WriteSteps,
  input: NewLoreNote,
): Promise<{ note: CoreNote; branch: CoreBranch }> {
  const templateId = input.templateId ??
    ((LORE_TYPES as readonly string[]).includes(input.loreType ?? "")
      ? `_template_${input.loreType}`
      : undefined);
  const keep = { type: input.type, mime: input.mime ?? DEFAULT_MIMES[input.type] };
  const created = await w.step(
    "create the note",
    () =>
      core.createNote({
        parentNoteId: input.parentNoteId,
        title: input.title,
        type: input.type,
        mime: input.mime ?? (input.type === "text" ? "text/html" : undefined),
        content: input.content,
      }).catch(rethrowMissingReference("parentNoteId")),
    (r) => core.deleteNote(r.note.noteId),
  );
  const noteId = created.note.noteId;
  const label = (name: string, value: string) => () =>
    core.createAttribute({ noteId, type: "label", name, value });
  await w.step("add the #lore label", label("lore", ""), "covered");
  if (input.loreType) {
    await w.step("add the #loreType label", label("loreType", input.loreType), "covered");
  }
  if (templateId) {
    await linkTemplate(core, w, { noteId, templateId, keep, field: "templateId", undo: "covered" });
  } else if (created.note.type !== keep.type || created.note.mime !== keep.mime) {
    // the parent's `~child:template` gave the note a template, and its type, at creation
    await w.step(KEEP_TYPE_STEP, () => core.patchNote(noteId, keep), "covered");
  }
  for (const [name, value] of Object.entries(input.labels ?? {})) {
    await w.step(`add the #${name} label`, label(name, value), "covered");
  }
  return created;
}
