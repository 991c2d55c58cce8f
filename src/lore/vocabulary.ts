/**
 * The words the service and Core agree on: note types with the mime Core gives each, the lore
 * types that have templates, and which attribute names Core stores as written.
 *
 * @module
 */
import { z } from "zod";

/**
 * The 17 note types Core accepts.
 */
export const NOTE_TYPES = [
  "text",
  "code",
  "render",
  "file",
  "image",
  "search",
  "relationMap",
  "book",
  "noteMap",
  "mermaid",
  "canvas",
  "webView",
  "launcher",
  "doc",
  "contentWidget",
  "mindMap",
  "aiChat",
] as const;

/** One of {@linkcode NOTE_TYPES}. */
export type NoteType = (typeof NOTE_TYPES)[number];

/**
 * Whether a word is one of Core's note types (as written: Core's types are case-sensitive).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(isNoteType("image"), true);
 * assert.equal(isNoteType("character"), false); // a lore type
 * ```
 */
export function isNoteType(word: string): word is NoteType {
  return (NOTE_TYPES as readonly string[]).includes(word);
}

/**
 * The mime Core gives a new note of each type when none is sent.
 */
export const DEFAULT_MIMES: Readonly<Record<NoteType, string>> = {
  text: "text/html",
  code: "text/plain",
  render: "",
  file: "application/octet-stream",
  image: "",
  search: "",
  relationMap: "application/json",
  book: "",
  noteMap: "",
  mermaid: "text/vnd.mermaid",
  canvas: "application/json",
  webView: "",
  launcher: "",
  doc: "",
  contentWidget: "",
  mindMap: "application/json",
  aiChat: "application/json",
};

/**
 * The 21 lore types that have templates in Core (`_template_<type>`).
 */
export const LORE_TYPES = [
  "character",
  "location",
  "faction",
  "creature",
  "event",
  "timeline",
  "manuscript",
  "statblock",
  "item",
  "spell",
  "building",
  "language",
  "session",
  "quest",
  "scene",
  "organization",
  "race",
  "myth",
  "cosmology",
  "deity",
  "religion",
] as const;

/** One of {@linkcode LORE_TYPES}. */
export type LoreType = (typeof LORE_TYPES)[number];

/**
 * Label/relation names Core stores unchanged (it rewrites anything else to `_`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(attributeNameSchema.safeParse("loreType").success, true);
 * assert.equal(attributeNameSchema.safeParse("lore-type").success, false); // Core would store lore_type
 * ```
 */
export const attributeNameSchema = z.string().min(1).max(100).regex(
  /^[\p{L}\p{N}_:]+$/u,
  "may contain only letters, digits, _ and :",
);
