/**
 * Reading lore conventions off Core notes: labels and relations the note owns or inherits,
 * lore type, display attributes. Pure functions over the ETAPI note shape.
 *
 * @module
 */
import type { CoreAttribute, CoreNote } from "../upstream/core_schemas.ts";

/**
 * Attributes the note owns (not inherited from parents or templates).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const label = (noteId: string, name: string, value = "") => ({
 *   attributeId: `${noteId}_${name}`,
 *   noteId,
 *   type: "label" as const,
 *   name,
 *   value,
 *   isInheritable: true,
 * });
 * // Mira inherits #gmOnly from `world`
 * const mira = {
 *   noteId: "mira",
 *   attributes: [label("mira", "loreType", "character"), label("world", "gmOnly")],
 * };
 * assert.deepEqual(ownAttributes(mira).map((a) => a.name), ["loreType"]);
 * ```
 */
export function ownAttributes(note: Pick<CoreNote, "noteId" | "attributes">): CoreAttribute[] {
  return note.attributes.filter((a) => a.noteId === note.noteId);
}

/**
 * Value of the first label `name` (own first, then inherited), or undefined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const attr = (noteId: string, name: string, value: string) => ({
 *   attributeId: `${noteId}_${name}`,
 *   noteId,
 *   type: "label" as const,
 *   name,
 *   value,
 *   isInheritable: true,
 * });
 * // an inherited loreType gives way to the note's own
 * const mira = {
 *   noteId: "mira",
 *   attributes: [attr("world", "loreType", "location"), attr("mira", "loreType", "character")],
 * };
 * assert.equal(labelValue(mira, "loreType"), "character");
 * assert.equal(labelValue(mira, "questStatus"), undefined);
 * ```
 */
export function labelValue(
  note: Pick<CoreNote, "noteId" | "attributes">,
  name: string,
): string | undefined {
  const labels = note.attributes.filter((a) => a.type === "label" && a.name === name);
  return (labels.find((a) => a.noteId === note.noteId) ?? labels[0])?.value;
}

/**
 * Whether a label is present, owned or inherited (any value counts, like Core's share renderer).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const inherited = {
 *   attributeId: "a1",
 *   noteId: "world",
 *   type: "label",
 *   name: "gmOnly",
 *   value: "",
 * } as const;
 * const mira = { attributes: [{ ...inherited, isInheritable: true }] };
 * assert.equal(hasLabel(mira, "gmOnly"), true);
 * assert.equal(hasLabel(mira, "draft"), false);
 * ```
 */
export function hasLabel(note: Pick<CoreNote, "attributes">, name: string): boolean {
  return note.attributes.some((a) => a.type === "label" && a.name === name);
}

/**
 * Target of the note's own relation `name`, or undefined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const portrait = {
 *   attributeId: "a1",
 *   noteId: "mira",
 *   type: "relation",
 *   name: "portraitImage",
 *   value: "img123",
 * } as const;
 * const mira = { noteId: "mira", attributes: [{ ...portrait, isInheritable: false }] };
 * assert.equal(relationTarget(mira, "portraitImage"), "img123");
 * ```
 */
export function relationTarget(
  note: Pick<CoreNote, "noteId" | "attributes">,
  name: string,
): string | undefined {
  return ownAttributes(note).find((a) => a.type === "relation" && a.name === name)?.value;
}

/**
 * Names of a note's portrait relation, preferred first: the portal's `~portraitImage`, and the
 * other names its pages read as a portrait.
 */
export const PORTRAIT_RELATIONS: readonly string[] = Object.freeze([
  "portraitImage",
  "coverImage",
  "portrait",
  "heroImage",
]);

/**
 * The note's portrait: the target of its own first {@linkcode PORTRAIT_RELATIONS} relation, in
 * that order of names, or undefined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const relation = (name: string, value: string) => ({
 *   attributeId: name,
 *   noteId: "mira",
 *   type: "relation" as const,
 *   name,
 *   value,
 *   isInheritable: false,
 * });
 * const mira = {
 *   noteId: "mira",
 *   attributes: [relation("heroImage", "banner1"), relation("portraitImage", "img123")],
 * };
 * assert.equal(portraitTarget(mira), "img123");
 * ```
 */
export function portraitTarget(note: Pick<CoreNote, "noteId" | "attributes">): string | undefined {
  for (const name of PORTRAIT_RELATIONS) {
    const target = relationTarget(note, name);
    if (target !== undefined) return target;
  }
  return undefined;
}

/**
 * The note's theme song as an absolute http(s) URL, or null: its `#themeSongUrl` (the label the
 * portal writes) or else its `#themeSong`, the first that holds such a URL.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const label = (name: string, value: string) => ({
 *   attributeId: name,
 *   noteId: "mira",
 *   type: "label" as const,
 *   name,
 *   value,
 *   isInheritable: false,
 * });
 * const mira = {
 *   noteId: "mira",
 *   attributes: [label("themeSong", "https://music.example/tides")],
 * };
 * assert.equal(themeSongUrl(mira), "https://music.example/tides");
 * ```
 */
export function themeSongUrl(note: Pick<CoreNote, "noteId" | "attributes">): string | null {
  return httpUrlOrNull(labelValue(note, "themeSongUrl")) ??
    httpUrlOrNull(labelValue(note, "themeSong"));
}

/**
 * A compact note summary for lists (search results, collections, pickers).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { coreNoteSchema } from "../upstream/core_schemas.ts";
 * const note = coreNoteSchema.parse({
 *   noteId: "mira",
 *   isProtected: false,
 *   title: "Mira",
 *   type: "text",
 *   mime: "text/html",
 *   utcDateModified: "2026-04-20 11:09:32.123Z",
 *   parentNoteIds: ["root"],
 *   childNoteIds: [],
 *   parentBranchIds: ["root_mira"],
 *   childBranchIds: [],
 *   attributes: [{
 *     attributeId: "a1",
 *     noteId: "mira",
 *     type: "label",
 *     name: "loreType",
 *     value: "character",
 *   }],
 * });
 * assert.deepEqual(noteSummary(note), {
 *   noteId: "mira",
 *   title: "Mira",
 *   type: "text",
 *   loreType: "character",
 *   isProtected: false,
 *   parentNoteIds: ["root"],
 *   dateModified: "2026-04-20T11:09:32.123Z",
 * });
 * ```
 */
export function noteSummary(note: CoreNote): NoteSummary {
  return {
    noteId: note.noteId,
    title: note.title,
    type: note.type,
    loreType: labelValue(note, "loreType") ?? null,
    isProtected: note.isProtected,
    parentNoteIds: note.parentNoteIds,
    dateModified: coreUtcToIso(note.utcDateModified),
  };
}

/** Shape of {@linkcode noteSummary}. */
export interface NoteSummary {
  noteId: string;
  title: string;
  type: string;
  loreType: string | null;
  isProtected: boolean;
  parentNoteIds: string[];
  dateModified: string | null;
}

/**
 * Core's UTC timestamps (`2026-04-20 11:09:32.123Z`) as ISO 8601 (`2026-04-20T11:09:32.123Z`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(coreUtcToIso("2026-04-20 11:09:32.123Z"), "2026-04-20T11:09:32.123Z");
 * ```
 */
export function coreUtcToIso(value: string | undefined): string | null {
  if (!value) return null;
  const iso = value.replace(" ", "T");
  return Number.isNaN(Date.parse(iso)) ? null : iso;
}

/**
 * A label value as an absolute http(s) URL (normalised), or null for anything else
 * (`javascript:`, relative paths, garbage): for values shown as links, such as `#themeSong`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(httpUrlOrNull(" https://music.example/song "), "https://music.example/song");
 * assert.equal(httpUrlOrNull("javascript:alert(1)"), null);
 * ```
 */
export function httpUrlOrNull(value: string | undefined): string | null {
  if (!value) return null;
  try {
    const u = new URL(value.trim());
    return u.protocol === "https:" || u.protocol === "http:" ? u.href : null;
  } catch {
    return null;
  }
}
