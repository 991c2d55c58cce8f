/**
 * A public note as a visitor may read it — the JSON of `/api/public/lore/:id` and of the share's
 * home: sanitized content, the promoted labels and relations the GM did not keep private, and
 * only relations to notes this visitor may see.
 *
 * @module
 */
import {
  coreUtcToIso,
  hasLabel,
  httpUrlOrNull,
  labelValue,
  relationTarget,
} from "../lore/note_view.ts";
import { compareByTitle } from "../lore/order.ts";
import { userRelations } from "../lore/user_relations.ts";
import type { CoreAttachment, CoreNote } from "../upstream/core.ts";
import {
  hasHtmlContent,
  publicContent,
  publicRewriter,
  referencesAttachments,
  renderPublicContent,
} from "./public_content.ts";
import { publicHtml } from "./note_readings.ts";
import { isPrivateField, publicFields } from "./public_fields.ts";
import { idFor, type PublicRequest } from "./public_request.ts";
import type { PublicSnapshot } from "./snapshot_index.ts";
import type { PublicAttribute, PublicLoreNote, PublicRelation } from "./public_types.ts";

/** One public lore type with its notes, for the home page. */
export interface PublicLoreGroup {
  loreType: string;
  notes: { id: string; title: string }[];
}

/** One public note as a visitor sees it. */
export interface PublicNoteResult {
  note: PublicLoreNote;
  noIndex: boolean;
}

/** The share root's own note plus every public lore note grouped by loreType (for `/`). */
export interface PublicHomeResult {
  root: PublicLoreNote;
  groups: PublicLoreGroup[];
  noIndex: boolean;
}

/** Group of public lore notes without a `#loreType`. */
const NO_LORE_TYPE = "other";

/**
 * Lore notes grouped by lore type (`other` for none), types by name, notes by title.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const groups = groupByLoreType([
 *   { noteId: "n1", id: "mira", title: "Mira", loreType: "character" },
 *   { noteId: "n2", id: "ashford", title: "Ashford", loreType: "location" },
 *   { noteId: "n3", id: "iselde", title: "Iselde", loreType: " character " },
 * ]);
 * assert.deepEqual(groups.map((g) => [g.loreType, g.notes.length]), [["character", 2], ["location", 1]]);
 * ```
 */
export function groupByLoreType(
  notes: readonly { noteId: string; id: string; title: string; loreType?: string | null }[],
): PublicLoreGroup[] {
  const byType = new Map<string, typeof notes[number][]>();
  for (const n of notes) {
    const type = n.loreType?.trim() || NO_LORE_TYPE;
    byType.set(type, [...(byType.get(type) ?? []), n]);
  }
  return [...byType.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([loreType, group]) => ({
      loreType,
      notes: group.sort(compareByTitle).map((n) => ({ id: n.id, title: n.title })),
    }));
}

function isTruthyLabel(note: CoreNote, name: string): boolean {
  return note.attributes.some((a) =>
    a.type === "label" && a.name === name && a.value.trim().toLowerCase() !== "false"
  );
}

/** `#shareDisallowRobotIndexing` on the note or the share root. */
export function noIndexOf(snap: PublicSnapshot, note: CoreNote): boolean {
  const root = snap.byId.get(snap.rootId);
  return isTruthyLabel(note, "shareDisallowRobotIndexing") ||
    (root !== undefined && isTruthyLabel(root, "shareDisallowRobotIndexing"));
}

/** Display attributes: the promoted labels the public may see, under their promoted alias. */
function displayAttributes(snap: PublicSnapshot, note: CoreNote): PublicAttribute[] {
  return publicFields(note, snap.byId.get(snap.rootId)).map(({ alias, value }) => ({
    name: alias,
    value,
  }));
}

/** The first value of each promoted label the public may see, by the label's own name. */
export function displayLabels(snap: PublicSnapshot, note: CoreNote): Map<string, string> {
  const out = new Map<string, string>();
  for (const { name, value } of publicFields(note, snap.byId.get(snap.rootId))) {
    if (!out.has(name)) out.set(name, value);
  }
  return out;
}

/** A relation or a field read by name that the GM keeps from visitors. */
export function isPrivate(snap: PublicSnapshot, note: CoreNote, name: string): boolean {
  return isPrivateField(note, snap.byId.get(snap.rootId), name);
}

/** The note's user relations to notes this visitor may see, unless the GM keeps them private. */
function relationsOf(req: PublicRequest, note: CoreNote): PublicRelation[] {
  const { snap, access } = req;
  return userRelations(note).flatMap((a) => {
    if (!access.canSee(a.value) || isPrivate(snap, note, a.name)) return [];
    const target = snap.byId.get(a.value)!;
    return [{
      name: a.name,
      targetNoteId: target.noteId,
      targetTitle: target.title,
      loreType: labelValue(target, "loreType") ?? null,
    }];
  });
}

/** The note as `/api/public/lore/:id` shows it to this visitor (the note was opened). */
export async function renderNote(req: PublicRequest, note: CoreNote): Promise<PublicLoreNote> {
  const { snap, core, identity, access } = req;
  const needsContent = hasHtmlContent(note) || note.type === "code";
  const raw = needsContent ? await publicContent(req.deps.caches, core, identity, note) : "";
  // Only the note's own image attachments may be shown; the list is read only when needed.
  const attachments = new Map<string, CoreAttachment>();
  if (hasHtmlContent(note) && referencesAttachments(raw)) {
    for (const a of await core.attachments(note.noteId)) attachments.set(a.attachmentId, a);
  }
  const portrait = isPrivate(snap, note, "portraitImage")
    ? undefined
    : relationTarget(note, "portraitImage");
  return {
    noteId: note.noteId,
    title: note.title,
    loreType: labelValue(note, "loreType") ?? null,
    contentHtml: attachments.size === 0
      ? await publicHtml(req, note, raw)
      : await renderPublicContent(note, raw, publicRewriter(req.policy(), attachments)),
    attributes: displayAttributes(snap, note),
    resolvedRelations: relationsOf(req, note),
    portraitImageNoteId: portrait !== undefined && access.canSee(portrait) &&
        snap.byId.get(portrait)?.type === "image"
      ? portrait
      : null,
    themeSongUrl: isPrivate(snap, note, "themeSong")
      ? null
      : httpUrlOrNull(labelValue(note, "themeSong")),
    dateModified: coreUtcToIso(note.utcDateModified),
  };
}

/** An opened note as a visitor sees it. */
export async function noteResult(req: PublicRequest, note: CoreNote): Promise<PublicNoteResult> {
  return { note: await renderNote(req, note), noIndex: noIndexOf(req.snap, note) };
}

/** The opened share root plus every lore note this visitor may see, by lore type. */
export async function homeResult(
  req: PublicRequest,
  rootNote: CoreNote,
): Promise<PublicHomeResult> {
  const { snap, access } = req;
  const root = await renderNote(req, rootNote);
  const groups = groupByLoreType(
    snap.view.publicIds().flatMap((id) => {
      const n = snap.byId.get(id)!;
      if (id === snap.rootId || !hasLabel(n, "lore") || !access.canSee(id)) return [];
      const loreType = labelValue(n, "loreType");
      return [{ noteId: id, id: idFor(snap, id), title: n.title, loreType }];
    }),
  );
  return { root, groups, noIndex: noIndexOf(snap, rootNote) };
}
