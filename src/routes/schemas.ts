/**
 * Input schemas shared by many routes.
 *
 * @module
 */
import { z } from "zod";
import { callerQueryProblem } from "../core/caller_query.ts";

/**
 * Note, revision and attachment ids: Core's random ids, its built-in notes' `_…` ids (and
 * `root`); nothing that could be a path. Attribute ids need {@linkcode attributeIdSchema}.
 */
export const idSchema = z.string().regex(
  /^[A-Za-z0-9_]{1,128}$/,
  "must be 1-128 letters, digits or _",
);

/** `/…/:id` */
export const idParams = z.object({ id: idSchema });

/**
 * Ids of the Parser's own resources (brain-dump entries, batches, copilot sessions). Unlike
 * {@linkcode idSchema} no shape is assumed: the Parser promises none, and its ids differ per
 * resource (`crypto.randomUUID()` with hyphens, Prisma cuids, `batch_<ms>_<hex>`). Only safety is
 * checked: 1-128 URL-unreserved characters (letters, digits, `-`, `_`, `~`, `.`), never starting
 * with `.` nor holding `..`, so no `/`, `\`, `%`, `?`, `#`, whitespace or control character.
 *
 * @example
 * ```ts
 * parserIdSchema.parse("0b6f1c9e-3d2a-4f7b-9c1e-5a8d2e4f6b10"); // ok
 * parserIdSchema.safeParse("..").success; // false
 * ```
 */
export const parserIdSchema = z.string().regex(
  /^(?!.*\.\.)[A-Za-z0-9_~-][A-Za-z0-9_~.-]{0,127}$/,
  "must be 1-128 letters, digits, -, _, ~ or . (not first, never ..)",
);

/**
 * Attribute ids: Core's random ids, and the fixed ids of its built-in notes' attributes,
 * `<noteId>_<l|r><name>` (`_template_character_llabel:fullName`), which add `:`. Nothing that
 * could change an upstream path.
 *
 * @example
 * ```ts
 * attributeIdSchema.parse("_template_character_llabel:fullName"); // ok
 * attributeIdSchema.safeParse("../notes/x").success; // false
 * ```
 */
export const attributeIdSchema = z.string().regex(
  /^[A-Za-z0-9_:]{1,128}$/,
  "must be 1-128 letters, digits, _ or :",
);

/**
 * zod refinement for a search query in Core's own syntax, written by the caller: an issue at
 * `path` when Core would fail on it instead of answering (see {@linkcode callerQueryProblem}).
 *
 * @example
 * ```ts
 * z.object({ q: z.string() }).superRefine((v, ctx) => refineCallerQuery(v.q, ctx, ["q"]));
 * ```
 */
export function refineCallerQuery(q: string, ctx: z.RefinementCtx, path: string[] = []): void {
  const problem = callerQueryProblem(q);
  if (problem) ctx.addIssue({ code: "custom", path, message: problem });
}

/**
 * A caller's Core search query: 1-2000 characters, refused when Core would fail on it.
 *
 * @example
 * ```ts
 * const listQuery = z.object({ q: callerQuerySchema.default("#lore") });
 * callerQuerySchema.safeParse("note.content %= '['").success; // false
 * ```
 */
export const callerQuerySchema = z.string().trim().min(1).max(2000).superRefine((q, ctx) =>
  refineCallerQuery(q, ctx)
);

/** The 17 note types Core accepts. */
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

/**
 * The mime Core gives a new note of each type when none is sent (services/note_types.ts).
 *
 * @example
 * ```ts
 * DEFAULT_MIMES.code; // "text/plain"
 * ```
 */
export const DEFAULT_MIMES: Readonly<Record<(typeof NOTE_TYPES)[number], string>> = {
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

/** A free-text search term with the API's minimum length. */
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
