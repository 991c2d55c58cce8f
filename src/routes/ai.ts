/**
 * AI tools backed by the Parser: consistency scan, gap detection, relationship suggestions and
 * their application, the relationship graph and history, semantic (RAG) search, and a note's
 * relations from Core merged with the Parser's suggestions for it.
 *
 * Our API names a relationship's kind `type` (our API's word); the Parser calls it
 * `relationshipType` and stores it in Core as a relation named `rel<Pascal>` (`member_of` →
 * `relMemberOf`, see lore/relationship_types.ts). The renaming happens here, both ways.
 *
 * @module
 */
import { z } from "zod";
import { relayedTitle } from "../core/titles.ts";
import { ApiError, errorBodySchema, invalidRequest } from "../http/errors.ts";
import { json } from "../http/response.ts";
import { idSchema } from "../lore/ids.ts";
import { hasLabel, labelValue } from "../lore/note_view.ts";
import { notesByIds } from "../lore/notes_by_ids.ts";
import {
  relationName,
  RELATIONSHIP_TYPES,
  relationshipTypeOf,
} from "../lore/relationship_types.ts";
import { userRelations } from "../lore/user_relations.ts";
import { type Ctx, defineRoute, type Route } from "../api/router.ts";
import { loadHtmlEngine } from "../sanitize/html_engine.ts";
import { htmlToText } from "../sanitize/plain_text.ts";
import type { CoreClient, CoreNote } from "../upstream/core.ts";
import { type ParserClient, ragQueryAnswer } from "../upstream/parser.ts";
import { upstreamPath } from "../upstream/path.ts";
import { parserJson, parserRoute } from "./parser_proxy.ts";
import { resolveRelations } from "./lore.ts";
import { idParams } from "./schemas.ts";
import { RAG_DEFAULT_TOP_K, RAG_TOP_K, ragCall, ragResults } from "./search.ts";

/** Longest text sent for relationship suggestions (the Parser's brain-dump bound). */
export const MAX_SUGGEST_TEXT = 50_000;
/** Most note ids in one consistency scan. */
export const MAX_CONSISTENCY_NOTES = 50;
/** Most relations applied in one request. */
export const MAX_APPLY_RELATIONS = 50;
/** Longest semantic query text. */
export const MAX_RAG_TEXT = 4_000;

// ---------------------------------------------------------------------------------------------
// Our answers (relationships in our words: `type`)
// ---------------------------------------------------------------------------------------------

const level = z.enum(["high", "medium", "low"]);
const relationshipType = z.enum(RELATIONSHIP_TYPES);

/** A suggested relation, as `POST /api/ai/relationships` answers it. */
const suggestionSchema = z.object({
  targetNoteId: z.string(),
  targetTitle: z.string().nullable().describe("null when the Parser gave none"),
  type: relationshipType,
  description: z.string(),
  confidence: level.nullable(),
});

/**
 * A suggestion for a text, as `POST /api/ai/relationships` answers it: the relationship's kind
 * in both words, `type` (ours, what `PUT` takes) and `relationshipType` (the front end's).
 */
const textSuggestionSchema = suggestionSchema.extend({ relationshipType });

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

const appliedRelation = z.object({
  sourceNoteId: z.string(),
  targetNoteId: z.string(),
  type: z.string(),
  relationshipType: z.string().describe("`type` again, in the front end's word"),
});

/** What applying relationships did, relation by relation. */
const applyReportSchema = z.object({
  applied: z.array(appliedRelation.extend({ relationName: z.string() })),
  skipped: z.array(appliedRelation.extend({
    reason: z.enum(["ALREADY_EXISTS", "UNKNOWN_TYPE", "SKIPPED"]),
  })),
  failed: z.array(appliedRelation.extend({
    error: z.enum(["TARGET_NOT_FOUND", "APPLY_FAILED"]),
    message: z.string(),
  })),
});

const graphNode = z.object({
  noteId: z.string(),
  title: z.string(),
  loreType: z.string().nullable(),
  depth: z.number().int().min(0),
});
const graphEdge = z.object({
  sourceNoteId: z.string(),
  targetNoteId: z.string(),
  type: z.string(),
});

/** The relationship graph around a note. */
const graphSchema = z.object({
  centerNoteId: z.string(),
  nodes: z.array(graphNode),
  edges: z.array(graphEdge),
  maxDepthReached: z.number().int().min(0),
  truncated: z.boolean(),
});

const historyEntry = z.object({
  id: z.string(),
  sourceNoteId: z.string(),
  targetNoteId: z.string(),
  type: z.string(),
  relationName: z.string(),
  description: z.string().nullable(),
  createdAt: z.string(),
});

/** Relationships applied to or from a note. */
const relationshipHistorySchema = z.object({ entries: z.array(historyEntry) });

// ---------------------------------------------------------------------------------------------
// Parser answers as we accept them (`relayedTitle`: a Core title in Core's stored form, decoded)
// ---------------------------------------------------------------------------------------------

const parserSuggestion = z.object({
  targetNoteId: z.string(),
  // the model names the target as its context (the Parser's index) shows it: Core's stored title
  targetTitle: relayedTitle.optional(),
  relationshipType,
  description: z.string(),
  confidence: level.optional(),
});
const suggestionsAnswer = z.object({ suggestions: z.array(parserSuggestion) });

const applyItem = {
  sourceNoteId: z.string().optional(),
  targetNoteId: z.string(),
  relationshipType: z.string(),
  relationName: z.string().optional(),
};
const applyAnswer = z.object({
  applied: z.array(z.object({ ...applyItem, relationName: z.string() })),
  skipped: z.array(z.object({ ...applyItem, reason: z.string() })),
  failed: z.array(z.object({ ...applyItem, error: z.string() })),
});

/**
 * The consistency answer, as the Parser sends it and we pass it on.
 */
export const consistencyAnswer = z.object({
  issues: z.array(z.object({
    type: z.enum(["contradiction", "timeline", "orphan", "naming", "logic", "power"]),
    severity: level,
    description: z.string(),
    affectedNoteIds: z.array(z.string()),
  })),
  summary: z.string(),
});

/**
 * The gap-analysis answer, as the Parser sends it and we pass it on.
 */
export const gapsAnswer = z.object({
  gaps: z.array(z.object({
    area: z.string(),
    severity: z.string(),
    description: z.string(),
    suggestion: z.string(),
  })),
  summary: z.string(),
  typeCounts: z.record(z.string(), z.number().int().min(0)),
  totalNotes: z.number().int().min(0),
});

const graphAnswer = graphSchema.extend({
  // the Parser reads each node from Core
  nodes: z.array(graphNode.extend({ title: relayedTitle, loreType: z.string().nullish() })),
  edges: z.array(graphEdge.omit({ type: true }).extend({ relationshipType: z.string() })),
});

const historyAnswer = z.object({
  entries: z.array(historyEntry.extend({ description: z.string().nullish() })),
});

// ---------------------------------------------------------------------------------------------
// Consistency and gaps
// ---------------------------------------------------------------------------------------------

/** `POST /api/ai/consistency` */
export const consistency = parserRoute({
  method: "POST",
  path: "/api/ai/consistency",
  summary:
    "Consistency scan of the given lore notes (none or `[]`: the Parser samples the most relevant notes)",
  tag: "ai",
  body: z.strictObject({
    noteIds: z.array(idSchema).max(MAX_CONSISTENCY_NOTES).default([]),
  }),
  description: "`noteIds` (at most 50, repeats dropped) names the notes to check; none or `[]` " +
    "lets the Parser pick the most relevant ones from its semantic index. A plain call: the " +
    "Parser's stream of this work sends nothing between its first status and the result, so " +
    "the AI deadline is the total wait. The Parser looks given notes up as `#noteId` labels, " +
    "which notes do not carry: with `noteIds` it currently finds none and reports no issues.",
  responses: {
    200: {
      description: "`{ issues: [{ type, severity, description, affectedNoteIds }], summary }`; " +
        "no lore or an unusable model answer gives `issues: []` and a summary saying so",
      schema: consistencyAnswer,
    },
    400: "noteIds not an array of at most 50 note ids",
  },
  upstream: (ctx) => ({
    method: "POST",
    path: "/consistency/check",
    body: { noteIds: [...new Set(ctx.body.noteIds)] },
  }),
  answer: consistencyAnswer,
  ai: {}, // its stream has no heartbeat: nothing arrives before the answer either way
});

const gapsSpec = {
  path: "/api/ai/gaps",
  summary: "Underdeveloped lore areas across all lore notes (never cached)",
  tag: "ai",
  description: "GET and POST do the same; POST is preferred, as nothing on the way caches it " +
    "(this service answers `no-store` to both). A plain call: the AI deadline is the total wait.",
  responses: {
    200: {
      description: "`{ gaps: [{ area, severity, description, suggestion }], summary, " +
        "typeCounts, totalNotes }`: `typeCounts` counts lore notes per lore type",
      schema: gapsAnswer,
    },
  },
  answer: gapsAnswer,
  ai: {},
} as const;

/** `GET /api/ai/gaps` (kept for old clients; POST is preferred). */
export const gapsGet = parserRoute({
  ...gapsSpec,
  summary: `${gapsSpec.summary}; POST is preferred`,
  method: "GET",
  upstream: () => ({ path: "/suggest/gaps" }),
});

/** `POST /api/ai/gaps` */
export const gapsPost = parserRoute({
  ...gapsSpec,
  method: "POST",
  upstream: () => ({ method: "POST", path: "/suggest/gaps" }),
});

// ---------------------------------------------------------------------------------------------
// Relationships
// ---------------------------------------------------------------------------------------------

/** A suggestion as `POST /api/ai/relationships` answers it (`type` and `relationshipType`). */
function toSuggestion(
  s: z.output<typeof parserSuggestion>,
): z.output<typeof textSuggestionSchema> {
  return {
    targetNoteId: s.targetNoteId,
    targetTitle: s.targetTitle ?? null,
    type: s.relationshipType,
    relationshipType: s.relationshipType,
    description: s.description,
    confidence: s.confidence ?? null,
  };
}

/** `POST /api/ai/relationships` */
export const suggestRelationships = parserRoute({
  method: "POST",
  path: "/api/ai/relationships",
  summary: "Relationship suggestions for a text (and the note it belongs to, if any)",
  tag: "ai",
  body: z.strictObject({
    text: z.string().trim().min(1).max(MAX_SUGGEST_TEXT),
    noteId: idSchema.optional(),
  }),
  description: "`text` (1-50 000 characters after trimming) is what the Parser reads; " +
    "`noteId` names the note it belongs to, which the Parser does not suggest. Its " +
    "suggestions are passed on as it makes them (the kind as both `type` and " +
    "`relationshipType`, so a suggestion goes back to `PUT` as it is; `targetTitle` as " +
    "typed), not checked against Core: `POST /api/lore/:id/relationships` gives a note's " +
    "suggestions confirmed.",
  responses: {
    200: {
      description: "`{ suggestions: [{ targetNoteId, targetTitle, type, relationshipType, " +
        "description, confidence }] }`; `targetTitle` and `confidence` are null when the " +
        "Parser gave none",
      schema: z.object({ suggestions: z.array(textSuggestionSchema) }),
    },
    400: "text empty or over 50000 characters, or a malformed noteId",
  },
  upstream: (ctx) => ({ method: "POST", path: "/suggest/relationships", body: ctx.body }),
  answer: suggestionsAnswer,
  reply: (data) => ({ suggestions: data.suggestions.map(toSuggestion) }),
  ai: {},
});

/**
 * One relation to apply. Its kind is `type` (the API's word) or `relationshipType` (the front
 * end's, as its suggestions carry it); both may come when they agree.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const parsed = applyRelation.parse({ targetNoteId: "abc123", relationshipType: "ally" });
 * assert.equal(parsed.type, "ally");
 * assert.equal(applyRelation.safeParse({ targetNoteId: "abc123" }).success, false);
 * ```
 */
export const applyRelation = z.strictObject({
  targetNoteId: idSchema,
  type: relationshipType.optional(),
  relationshipType: relationshipType.optional(),
  description: z.string().trim().max(1000).optional(),
}).refine((r) => r.type !== undefined || r.relationshipType !== undefined, {
  message: "give the relation's type",
  path: ["type"],
}).refine((r) => !r.type || !r.relationshipType || r.type === r.relationshipType, {
  message: "type and relationshipType differ",
  path: ["relationshipType"],
}).transform(({ targetNoteId, type, relationshipType, description }) => ({
  targetNoteId,
  type: (type ?? relationshipType)!,
  description,
}));

const applyBody = z.strictObject({
  sourceNoteId: idSchema,
  relations: z.array(applyRelation).min(1).max(MAX_APPLY_RELATIONS),
  bidirectional: z.boolean().optional(),
}).refine(
  (b) => b.relations.every((r) => r.targetNoteId !== b.sourceNoteId),
  { message: "a note cannot be related to itself", path: ["relations"] },
);

/** The HTTP status inside the Parser's ETAPI error text (`ETAPI POST /x → 404: …`), if any. */
function etapiStatus(text: string): number | null {
  const m = /→ (\d{3})\b/.exec(text);
  return m ? Number(m[1]) : null;
}

/** `PUT /api/ai/relationships` */
export const applyRelationships = parserRoute({
  method: "PUT",
  path: "/api/ai/relationships",
  summary: "Apply relationships: Core relations `rel<Type>` (plus the inverse on the target)",
  tag: "ai",
  body: applyBody,
  description: "1-50 relations of the 17 known types, each `type` or (the front end's word) " +
    "`relationshipType`, none from the note to itself, " +
    "`description` at most 1000 characters. Each becomes the Core relation `rel<Type>` on the " +
    "source (`member_of` → `relMemberOf`) and, unless `bidirectional` is false, the same " +
    "relation back from the target. " +
    "The Parser writes one after another and reports each; its texts are not passed on: a " +
    "skip is `ALREADY_EXISTS`, `UNKNOWN_TYPE` or `SKIPPED`, a failure `TARGET_NOT_FOUND` or " +
    "`APPLY_FAILED` with our own message. A source note Core does not have is a 400 on " +
    "`body.sourceNoteId`, with nothing written.",
  responses: {
    200: {
      description: "`{ applied: [{ sourceNoteId, targetNoteId, type, relationshipType, " +
        "relationName }], skipped: [{ …, reason }], failed: [{ …, error, message }] }`, also " +
        "when some relations failed; `relationshipType` repeats `type` (the front end's word)",
      schema: applyReportSchema,
    },
    400: "An unknown type, a self relation, more than 50 relations, or a `sourceNoteId` Core " +
      "does not have (nothing written)",
    502: "The Parser could not read the source note from Core",
  },
  upstream: (ctx) => ({
    method: "POST",
    path: "/suggest/relationships/apply",
    body: {
      sourceNoteId: ctx.body.sourceNoteId,
      relations: ctx.body.relations.map((r) => ({
        targetNoteId: r.targetNoteId,
        relationshipType: r.type,
        ...(r.description ? { description: r.description } : {}),
      })),
      ...(ctx.body.bidirectional === undefined ? {} : { bidirectional: ctx.body.bidirectional }),
    },
  }),
  answer: applyAnswer,
  ai: {}, // one Core write after another in the Parser; a repeat would find them "already exists"
  reply: (data, ctx): z.output<typeof applyReportSchema> => {
    // the Parser reports an unreadable source note as one `N/A` failure (with Core's words)
    const source = data.failed.find((f) => f.targetNoteId === "N/A");
    if (source) {
      if (etapiStatus(source.error) === 404) {
        throw invalidRequest("sourceNoteId does not name an existing note", [{
          path: "body.sourceNoteId",
          message: "not found",
        }]);
      }
      throw new ApiError(502, "UPSTREAM_ERROR", "The Parser could not read the source note", {
        service: "parser",
        reason: "source-note-unavailable",
      });
    }
    const base = (
      r: { sourceNoteId?: string; targetNoteId: string; relationshipType: string },
    ) => ({
      sourceNoteId: r.sourceNoteId ?? ctx.body.sourceNoteId,
      targetNoteId: r.targetNoteId,
      type: r.relationshipType,
      relationshipType: r.relationshipType,
    });
    return {
      applied: data.applied.map((r) => ({ ...base(r), relationName: r.relationName })),
      skipped: data.skipped.map((r) => ({
        ...base(r),
        reason: r.reason === "Relation already exists."
          ? "ALREADY_EXISTS"
          : r.reason.startsWith("Unknown relationship type")
          ? "UNKNOWN_TYPE"
          : "SKIPPED",
      })),
      failed: data.failed.map((r) =>
        etapiStatus(r.error) === 404
          ? { ...base(r), error: "TARGET_NOT_FOUND", message: "The target note does not exist" }
          : { ...base(r), error: "APPLY_FAILED", message: "Core did not store the relation" }
      ),
    };
  },
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

// ---------------------------------------------------------------------------------------------
// Graph and history
// ---------------------------------------------------------------------------------------------

/** `GET /api/lore/:id/graph?depth=&maxNodes=` */
export const graph = parserRoute({
  method: "GET",
  path: "/api/lore/:id/graph",
  summary: "Relationship graph around a note: `rel*` relations followed breadth-first",
  tag: "ai",
  params: idParams,
  query: z.object({
    depth: z.coerce.number().int().min(1).max(3).default(2),
    maxNodes: z.coerce.number().int().min(5).max(100).default(50),
  }),
  description: "`depth` 1-3 (default 2), `maxNodes` 5-100 (default 50); `truncated` says " +
    "`maxNodes` stopped the walk. A node's `loreType` is null when it has none.",
  responses: {
    200: {
      description: "`{ centerNoteId, nodes: [{ noteId, title, loreType, depth }], edges: " +
        "[{ sourceNoteId, targetNoteId, type }], maxDepthReached, truncated }`",
      schema: graphSchema,
    },
    400: "depth or maxNodes not an integer in range",
    404: "The Parser could not read the note from Core (an empty graph)",
  },
  upstream: (ctx) => ({
    path: upstreamPath`/suggest/graph/${ctx.params.id}`,
    query: { depth: ctx.query.depth, maxNodes: ctx.query.maxNodes },
  }),
  answer: graphAnswer,
  reply: (g): z.output<typeof graphSchema> => {
    // the center is always a node once the Parser could read it
    if (g.nodes.length === 0) {
      throw new ApiError(404, "NOT_FOUND", "Note not found", { service: "parser" });
    }
    return {
      centerNoteId: g.centerNoteId,
      nodes: g.nodes.map((n) => ({
        noteId: n.noteId,
        title: n.title,
        loreType: !n.loreType || n.loreType === "unknown" ? null : n.loreType,
        depth: n.depth,
      })),
      edges: g.edges.map((e) => ({
        sourceNoteId: e.sourceNoteId,
        targetNoteId: e.targetNoteId,
        type: e.relationshipType,
      })),
      maxDepthReached: g.maxDepthReached,
      truncated: g.truncated,
    };
  },
});

/** `GET /api/lore/:id/relationship-history?limit=` */
export const relationshipHistory = parserRoute({
  method: "GET",
  path: "/api/lore/:id/relationship-history",
  summary: "Relationships applied to or from a note, newest first (limit 1-50, default 20)",
  tag: "ai",
  params: idParams,
  query: z.object({ limit: z.coerce.number().int().min(1).max(50).default(20) }),
  description: "The Parser records applied relationships without their user, so for a " +
    "signed-in user this list is currently always empty.",
  responses: {
    200: {
      description: "`{ entries: [{ id, sourceNoteId, targetNoteId, type, relationName, " +
        "description, createdAt }] }`; `description` null when the relation had none",
      schema: relationshipHistorySchema,
    },
    400: "limit not an integer from 1 to 50",
  },
  upstream: (ctx) => ({
    path: upstreamPath`/suggest/history/${ctx.params.id}`,
    query: { limit: ctx.query.limit },
  }),
  answer: historyAnswer,
  reply: (h): z.output<typeof relationshipHistorySchema> => ({
    entries: h.entries.map((e) => ({ ...e, description: e.description ?? null })),
  }),
});

// ---------------------------------------------------------------------------------------------
// RAG
// ---------------------------------------------------------------------------------------------

const ragText = z.string().trim().min(1).max(MAX_RAG_TEXT);

/** Semantic hits as we answer them: the Parser's, the title also as `title` (the front end's). */
const ragHits = z.object({
  results: z.array(ragResults.shape.results.element.extend({
    title: z.string().describe("`noteTitle` again, in the front end's word"),
  })),
});

/** The hits of a semantic query, each with `title` beside the Parser's `noteTitle`. */
function toHits(answer: z.output<typeof ragQueryAnswer>): z.output<typeof ragHits> {
  return { results: answer.results.map((r) => ({ ...r, title: r.noteTitle })) };
}

/** The Parser's `GET /rag/status`: its keys are missing while the index is empty. */
const ragStatusAnswer = z.object({
  indexedNotes: z.number().int().min(0),
  lastIndexed: z.string().nullish(),
  model: z.string().nullish(),
});

/** The index status as we answer it (`GET /api/rag` without `text`). */
const ragStatus = z.object({
  indexedNotes: z.number().int().min(0),
  lastIndexed: z.string().nullable().describe("when a note was last indexed, null if never"),
  model: z.string().nullable().describe("the embedding model, null if nothing is indexed"),
});

const RAG_SEARCH = "`text` 1-4000 characters, `topK` 1-50 (default 10). The Parser's hits are " +
  "passed on as it sends them, the title as typed, as `noteTitle` and as `title` " +
  "(`GET /api/search?mode=rag` gives them as note summaries confirmed by Core). Only notes " +
  "the Parser has indexed for this user are found: what a brain dump writes is indexed " +
  "before its answer completes.";
const RAG_HITS = {
  description: "`{ results: [{ noteId, noteTitle, title, content, score }] }`, best first: " +
    "`content` is the note's best-matching chunk",
  schema: ragHits,
};
const RAG_INVALID = "text empty or over 4000 characters, or topK not an integer from 1 to 50";

/** `GET /api/rag?text=&topK=`, or without `text` the index status. */
export const ragGet = parserRoute({
  method: "GET",
  path: "/api/rag",
  summary: "Semantic search of the lore index (`text`, `topK`); without `text` the index status",
  tag: "rag",
  query: z.object({
    text: ragText.optional(),
    topK: z.coerce.number().int().min(RAG_TOP_K.min).max(RAG_TOP_K.max).optional(),
  }).refine((q) => q.text !== undefined || q.topK === undefined, {
    message: "topK needs text",
    path: ["topK"],
  }),
  description: `${RAG_SEARCH} Without \`text\` (and \`topK\`) the answer is the index ` +
    "status: how many notes the Parser has indexed, when it last indexed one and with which " +
    "embedding model. The Parser counts every note it has indexed, for any of its users.",
  responses: {
    200: {
      description: `${RAG_HITS.description}; without \`text\`: \`{ indexedNotes, ` +
        "lastIndexed, model }`",
      schema: z.union([ragHits, ragStatus]),
    },
    400: `${RAG_INVALID}, or topK without text`,
  },
  upstream: (ctx) =>
    ctx.query.text === undefined
      ? { path: "/rag/status" }
      : ragCall(ctx.query.text, ctx.query.topK ?? RAG_DEFAULT_TOP_K),
  answer: z.union([ragQueryAnswer, ragStatusAnswer]),
  reply: (data): z.output<typeof ragHits> | z.output<typeof ragStatus> =>
    "results" in data ? toHits(data) : {
      indexedNotes: data.indexedNotes,
      lastIndexed: data.lastIndexed ?? null,
      model: data.model ?? null,
    },
});

/** `POST /api/rag` */
export const ragPost = parserRoute({
  method: "POST",
  path: "/api/rag",
  summary: "Semantic search of the lore index: the best chunk of each of the topK closest notes",
  tag: "rag",
  body: z.strictObject({
    text: ragText,
    topK: z.number().int().min(RAG_TOP_K.min).max(RAG_TOP_K.max).default(RAG_DEFAULT_TOP_K),
  }),
  description: RAG_SEARCH,
  responses: { 200: RAG_HITS, 400: RAG_INVALID },
  upstream: (ctx) => ragCall(ctx.body.text, ctx.body.topK),
  answer: ragQueryAnswer,
  reply: toHits,
});

/** The AI, relationship and RAG routes. */
export const aiRoutes: Route[] = [
  consistency,
  gapsGet,
  gapsPost,
  suggestRelationships,
  applyRelationships,
  noteRelationships,
  graph,
  relationshipHistory,
  ragGet,
  ragPost,
];
