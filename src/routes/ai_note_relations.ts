/**
 * A note's relations from Core merged with the Parser's suggestions for it
 * (`POST /api/lore/:id/relationships`). Unlike the text route's, these suggestions are checked
 * against Core, and the Parser is optional: when it cannot answer, Core's part still does, with
 * a marker saying why there are no suggestions. It reads notes and their content from Core, which
 * the other AI routes leave to the Parser.
 *
 * @module
 */
import { z } from "zod";
import { type Ctx, defineRoute, type Route } from "../api/router.ts";
import { ApiError, errorBodySchema } from "../http/errors.ts";
import { json } from "../http/response.ts";
import { hasLabel, labelValue } from "../lore/note_view.ts";
import { notesByIds } from "../lore/notes_by_ids.ts";
import { relationName, relationshipTypeOf } from "../lore/relationship_types.ts";
import { userRelations } from "../lore/user_relations.ts";
import { loadHtmlEngine } from "../sanitize/html_engine.ts";
import { htmlToText } from "../sanitize/plain_text.ts";
import type { CoreClient, CoreNote } from "../upstream/core.ts";
import type { ParserClient } from "../upstream/parser.ts";
import {
  MAX_SUGGEST_TEXT,
  type parserSuggestion,
  relationshipType,
  suggestionsAnswer,
  suggestionSchema,
} from "./ai_schemas.ts";
import { resolveRelations } from "./lore.ts";
import { parserJson } from "./parser_proxy.ts";
import { idParams } from "./schemas.ts";

/** A relation's target as Core has it. */
const relationTarget = {
  targetNoteId: z.string(),
  targetTitle: z.string(),
  loreType: z.string().nullable(),
};

/**
 * A note's relations and suggested connections (`POST /api/lore/:id/relationships`), in the
 * front end's names (`existing`, `relationshipType`) beside ours (`type`).
 */
const noteRelationsSchema = z.object({
  noteId: z.string(),
  existing: z.array(z.object({
    attributeId: z.string(),
    name: z.string(),
    type: relationshipType.nullable().describe("null for a relation that is none of the 17"),
    ...relationTarget,
  })),
  suggestions: z.array(
    suggestionSchema.extend({
      ...relationTarget,
      relationshipType: relationshipType.describe("the same as `type`"),
    }),
  ).describe("empty when the Parser could not suggest (see `suggestionsError`)"),
  suggestionsError: errorBodySchema.pick({ error: true, message: true }).nullable(),
});

/**
 * What the Parser reads to suggest relationships for a note: its title and plain text (for text
 * notes the HTML's visible text, gm-only parts included), bounded like the text route's input.
 */
async function suggestionText(core: CoreClient, note: CoreNote): Promise<string> {
  let body = "";
  if (note.type === "text") {
    const html = await core.contentText(note.noteId);
    await loadHtmlEngine();
    body = htmlToText(html);
  } else if (note.type === "code") {
    body = (await core.contentText(note.noteId)).replace(/\s+/g, " ").trim();
  }
  const text = `${note.title}\n\n${body}`;
  return text.slice(0, MAX_SUGGEST_TEXT);
}

/** The Parser's part of a merged answer: its suggestions, or why there are none. */
type SuggestionOutcome =
  | { ok: true; suggestions: z.output<typeof parserSuggestion>[] }
  | { ok: false; error: NonNullable<z.output<typeof noteRelationsSchema>["suggestionsError"]> };

/**
 * A Parser failure as a marker instead of an error: the Core part of the answer stands.
 * Programming errors are not swallowed.
 */
async function unavailable(ctx: Ctx, e: unknown): Promise<SuggestionOutcome> {
  if (!(e instanceof ApiError)) throw e;
  await ctx.credentials.onError(e).catch(() => {});
  const noCredentials = e.code === "NOT_CONFIGURED" || e.code === "UNAUTHORIZED";
  ctx.log.log(noCredentials ? "debug" : "warn", "relationship suggestions skipped", {
    requestId: ctx.requestId,
    reason: e.code,
  });
  return { ok: false, error: { error: e.code, message: e.message } };
}

async function suggestionsForNote(
  ctx: Ctx,
  core: CoreClient,
  note: CoreNote,
): Promise<SuggestionOutcome> {
  if (note.isProtected) {
    return unavailable(
      ctx,
      new ApiError(403, "FORBIDDEN", "Protected notes are not sent to the Parser"),
    );
  }
  let parser: ParserClient;
  try {
    parser = await ctx.parser();
  } catch (e) {
    return unavailable(ctx, e);
  }
  const text = await suggestionText(core, note); // a Core failure fails the route
  try {
    const answer = await parserJson(
      parser,
      { method: "POST", path: "/suggest/relationships", body: { text, noteId: note.noteId } },
      suggestionsAnswer,
    );
    return { ok: true, suggestions: answer.suggestions };
  } catch (e) {
    return unavailable(ctx, e);
  }
}

/** `POST /api/lore/:id/relationships` */
export const noteRelationships = defineRoute({
  method: "POST",
  path: "/api/lore/:id/relationships",
  summary:
    "The note's relations (Core) plus suggested connections (Parser); Core's part still answers when the Parser cannot",
  backend: "Both",
  access: "private",
  tag: "ai",
  params: idParams,
  description: "`existing` are the note's own user relations whose target Core has, resolved " +
    "as `GET /api/lore/:id` resolves them (archived targets and those only under Core's " +
    "hidden notes included). The " +
    "Parser reads the note's title and plain text (gm-only parts included; a protected note " +
    "is never sent). Its suggestions are checked against Core in one search: the note " +
    "itself, relations it already has, repeats and notes that are not readable lore are " +
    "dropped, titles come from Core. When the Parser is not connected, fails or is slow the " +
    "answer is still 200, with no `suggestions` and `suggestionsError` saying why. A " +
    "suggestion's kind is both `relationshipType` (the front end's name) and `type`.",
  responses: {
    200: {
      description: "`{ noteId, existing: [{ attributeId, name, type, targetNoteId, " +
        "targetTitle, loreType }], suggestions: [{ targetNoteId, targetTitle, loreType, " +
        "relationshipType, type, description, confidence }], suggestionsError: { error, " +
        "message } | null }`",
      schema: noteRelationsSchema,
    },
    404: "No such note in Core",
  },
  handler: async (ctx) => {
    const core = await ctx.core();
    const note = await core.getNote(ctx.params.id);
    const relations = userRelations(note);
    const outcome = await suggestionsForNote(ctx, core, note);
    const existing = new Set(relations.map((r) => `${r.name}\n${r.value}`));
    const proposed = outcome.ok
      ? outcome.suggestions.filter((s) => {
        const key = `${relationName(s.relationshipType)}\n${s.targetNoteId}`;
        if (s.targetNoteId === note.noteId || existing.has(key)) return false;
        existing.add(key); // the Parser's duplicates too
        return true;
      })
      : [];
    // the relations' targets as a note read resolves them (archived and hidden ones included),
    // the suggestions' as the lore search finds them, side by side
    const [resolved, targets] = await Promise.all([
      resolveRelations(core, note, ctx.concurrency),
      notesByIds(core, proposed.map((s) => s.targetNoteId), {
        lore: false,
        concurrency: ctx.concurrency,
      }),
    ]);
    const view = (n: CoreNote) => ({
      targetNoteId: n.noteId,
      targetTitle: n.title,
      loreType: labelValue(n, "loreType") ?? null,
    });
    const answer: z.output<typeof noteRelationsSchema> = {
      noteId: note.noteId,
      existing: resolved.map((r) => ({
        attributeId: r.attributeId,
        name: r.name,
        type: relationshipTypeOf(r.name) ?? null,
        targetNoteId: r.targetNoteId,
        targetTitle: r.targetTitle,
        loreType: r.loreType,
      })),
      suggestions: outcome.ok
        ? proposed.flatMap((s) => {
          const target = targets.get(s.targetNoteId);
          return target && hasLabel(target, "lore") && !target.isProtected
            ? [{
              ...view(target),
              relationshipType: s.relationshipType,
              type: s.relationshipType,
              description: s.description,
              confidence: s.confidence ?? null,
            }]
            : [];
        })
        : [],
      suggestionsError: outcome.ok ? null : outcome.error,
    };
    return json(answer);
  },
});

/** The note-relations route. */
export const noteRelationRoutes: Route[] = [noteRelationships];
