/**
 * Input schemas shared by many routes.
 *
 * @module
 */
import { z } from "zod";

/** Note, attribute, branch and revision ids: what Core generates, nothing that could be a path. */
export const idSchema = z.string().regex(
  /^[A-Za-z0-9_]{1,128}$/,
  "must be 1-128 letters, digits or _",
);

/** `/…/:id` */
export const idParams = z.object({ id: idSchema });

/** The 17 note types Core accepts (core-notes.md §2.0). */
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

/** The 21 lore types that have templates in Core (`_template_<type>`). */
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

/** Label/relation names Core stores unchanged (it rewrites anything else to `_`). */
export const attributeNameSchema = z.string().min(1).max(100).regex(
  /^[\p{L}\p{N}_:]+$/u,
  "may contain only letters, digits, _ and :",
);

/** A free-text search term with the seed's minimum length. */
export const searchTerm = (min: number) => z.string().trim().min(min).max(200);

/**
 * The Parser's plain acknowledgement `{ ok: true }` (subscribe, unsubscribe, budgets PUT…).
 *
 * @example
 * ```ts
 * await parserJson(parser, { method: "PUT", path: "/usage/budgets", body }, parserOk);
 * ```
 */
export const parserOk = z.object({ ok: z.literal(true) });
