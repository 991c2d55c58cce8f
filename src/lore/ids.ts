/**
 * The shapes of ids the service passes to its backends: Core's note, revision and attachment ids,
 * Core's attribute ids, and the Parser's own resource ids. Each admits only what cannot change
 * an upstream path.
 *
 * @module
 */
import { z } from "zod";

/**
 * Note, revision and attachment ids: Core's random ids, its built-in notes' `_…` ids (and
 * `root`); nothing that could be a path. Attribute ids need {@linkcode attributeIdSchema}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(idSchema.safeParse("_template_character").success, true);
 * assert.equal(idSchema.safeParse("a/b").success, false);
 * ```
 */
export const idSchema = z.string().regex(
  /^[A-Za-z0-9_]{1,128}$/,
  "must be 1-128 letters, digits or _",
);

/**
 * Ids of the Parser's own resources (brain-dump entries, batches, copilot sessions). Unlike
 * {@linkcode idSchema} no shape is assumed: the Parser promises none, and its ids differ per
 * resource (`crypto.randomUUID()` with hyphens, Prisma cuids, `batch_<ms>_<hex>`). Only safety is
 * checked: 1-128 URL-unreserved characters (letters, digits, `-`, `_`, `~`, `.`), never starting
 * with `.` nor holding `..`, so no `/`, `\`, `%`, `?`, `#`, whitespace or control character.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(parserIdSchema.safeParse("0b6f1c9e-3d2a-4f7b-9c1e-5a8d2e4f6b10").success, true);
 * assert.equal(parserIdSchema.safeParse("..").success, false);
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
 * import assert from "node:assert/strict";
 * assert.equal(attributeIdSchema.safeParse("_template_character_llabel:fullName").success, true);
 * assert.equal(attributeIdSchema.safeParse("../notes/x").success, false);
 * ```
 */
export const attributeIdSchema = z.string().regex(
  /^[A-Za-z0-9_:]{1,128}$/,
  "must be 1-128 letters, digits, _ or :",
);
