/**
 * Relationship suggestions for a text and their application. Our API names a relationship's kind
 * `type`; the Parser calls it `relationshipType` and stores it in Core as a relation named
 * `rel<Pascal>` (`member_of` → `relMemberOf`, see lore/relationship_types.ts). The renaming
 * happens here, both ways: suggestions carry both words so one goes back to `PUT` as it is, and
 * the Parser's apply report is read into our fixed reasons and messages.
 *
 * @module
 */
import { z } from "zod";
import type { Route } from "../api/router.ts";
import { ApiError, invalidRequest } from "../http/errors.ts";
import { idSchema } from "../lore/ids.ts";
import {
  MAX_SUGGEST_TEXT,
  type parserSuggestion,
  relationshipType,
  suggestionsAnswer,
  suggestionSchema,
} from "./ai_schemas.ts";
import { parserRoute } from "./parser_proxy.ts";

/** Most relations applied in one request. */
export const MAX_APPLY_RELATIONS = 50;

/**
 * A suggestion for a text, as `POST /api/ai/relationships` answers it: the relationship's kind
 * in both words, `type` (ours, what `PUT` takes) and `relationshipType` (the front end's).
 */
const textSuggestionSchema = suggestionSchema.extend({ relationshipType });

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

// the Parser's apply report
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

/** The routes that suggest relationships for a text and apply them. */
export const relationshipRoutes: Route[] = [suggestRelationships, applyRelationships];
