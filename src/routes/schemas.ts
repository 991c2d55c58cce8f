/**
 * HTTP input shapes shared by many routes (path parameters, caller-written search queries, search
 * terms) and the Parser's plain acknowledgement. The lore vocabulary and id schemas they build on
 * live in lore/vocabulary.ts and lore/ids.ts.
 *
 * @module
 */
import { z } from "zod";
import { callerQueryProblem } from "../core/caller_query.ts";
import { idSchema } from "../lore/ids.ts";

/** `/…/:id` */
export const idParams = z.object({ id: idSchema });

/**
 * zod refinement for a search query in Core's own syntax, written by the caller: an issue at
 * `path` when Core would fail on it instead of answering (see {@linkcode callerQueryProblem}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 *
 * const query = z.object({ q: z.string() })
 *   .superRefine((v, ctx) => refineCallerQuery(v.q, ctx, ["q"]));
 * assert.equal(query.safeParse({ q: "note.content %= '['" }).success, false);
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
 * import assert from "node:assert/strict";
 * assert.equal(callerQuerySchema.default("#lore").parse(undefined), "#lore");
 * assert.equal(callerQuerySchema.safeParse("note.content %= '['").success, false);
 * ```
 */
export const callerQuerySchema = z.string().trim().min(1).max(2000).superRefine((q, ctx) =>
  refineCallerQuery(q, ctx)
);

/** A free-text search term with the API's minimum length. */
export const searchTerm = (min: number) => z.string().trim().min(min).max(200);

/**
 * The Parser's plain acknowledgement `{ ok: true }` (subscribe, unsubscribe, budgets PUT…).
 */
export const parserOk = z.object({ ok: z.literal(true) });
