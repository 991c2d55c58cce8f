/**
 * What the brain-dump route modules share: the raw text they take, HTML that is sanitized as it
 * is read (and `sanitizing`, which loads the engine that needs), a proposed entity (a review's
 * proposal, and what a history entry records of it), the Parser's duplicate notice, and the
 * routes' tag and kept-reads group. Runs, history and batches each use several of these, so
 * they live here once.
 *
 * @module
 */
import { z } from "zod";
import type { Ctx, Route, RouteOf } from "../api/router.ts";
import { sanitizeLoreHtml } from "../sanitize/html.ts";
import { loadHtmlEngine } from "../sanitize/html_engine.ts";

/** The text of one brain dump: 10-50 000 characters. */
export const rawText = z.string().min(10).max(50_000);

/**
 * HTML, sanitized as it is read. Synchronous, like every zod check: a route whose schemas or
 * Parser call use it is declared `sanitizing(…)`, which loads the HTML engine before the handler
 * runs.
 */
export const html = z.string().overwrite((s) => sanitizeLoreHtml(s)).describe("sanitized HTML");
/** Sanitized HTML, or null. */
export const htmlOrNull = html.nullable();

/** The route with the HTML engine loaded before its handler runs (see `html`). */
export function sanitizing(route: Route): Route {
  const { handler } = route as RouteOf<"private">;
  return {
    ...route,
    handler: async (ctx: Ctx) => {
      await loadHtmlEngine();
      return await handler(ctx);
    },
  } as Route;
}

/**
 * Label values as the Parser writes them: lists joined with ", ", empty values left out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(labelValues({ age: 30, aliases: ["Wren", "W."], note: "" }), {
 *   age: "30",
 *   aliases: "Wren, W.",
 * });
 * ```
 */
export function labelValues(attributes: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === "") continue;
    out[name] = Array.isArray(value)
      ? value.join(", ")
      : typeof value === "object"
      ? JSON.stringify(value)
      : String(value);
  }
  return out;
}

const attributes = z.record(z.string(), z.unknown()).transform(labelValues)
  .pipe(z.record(z.string(), z.string()));

/** An entity the Parser proposes (a review) or recorded (a history entry), its HTML sanitized. */
export const proposal = z.object({
  title: z.string(),
  type: z.string(),
  action: z.enum(["create", "update"]),
  content: html.optional(),
  existingNoteId: z.string().optional(),
  attributes: attributes.optional(),
  tags: z.array(z.string()).optional(),
});

/** The Parser's duplicate notice: the existing note's title as Core stores it, and a score. */
const DUPLICATE_NOTICE = /^Possible duplicate of "(.*)" \((\d{1,3})% match\)$/s;

/**
 * The Parser's duplicate notice with the Core title in it as `typed` gives it; null for any
 * other text.
 */
export function duplicateNotice(reason: string, typed: (stored: string) => string): string | null {
  const notice = reason.length <= 600 ? DUPLICATE_NOTICE.exec(reason) : null;
  return notice ? `Possible duplicate of "${typed(notice[1])}" (${notice[2]}% match)` : null;
}

/** The tag of every brain-dump route. */
export const TAG = "brain-dump";

/**
 * The Parser counts history reads with brain dumps (10 a minute for everyone behind this
 * service): reads are kept per caller, and this caller's brain-dump writes drop them.
 */
export const READS = "brain-dump";
/** A read kept per caller in the brain-dump group. */
export const KEPT_READ = { group: READS, role: "read" } as const;
/** A write that drops this caller's kept brain-dump reads. */
export const CHANGES_READS = { group: READS, role: "write" } as const;
/** What a kept read's description adds about it. */
export const KEPT_NOTE =
  " Kept per caller for `PARSER_READ_CACHE_MS` (30 s): the Parser counts these " +
  "reads with brain dumps, 10 a minute for everyone behind this service; the caller's own " +
  "brain dumps, commits and batches through this instance drop them at once.";
