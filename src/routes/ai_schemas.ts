/**
 * What the AI route modules share: the `high`/`medium`/`low` level, the relationship kinds, and
 * the Parser's relationship suggestions as we read them and answer them. Suggestions appear in
 * two routes (`POST /api/ai/relationships` for a text, `POST /api/lore/:id/relationships` for a
 * note), so their schemas live here once rather than in either.
 *
 * @module
 */
import { z } from "zod";
import { relayedTitle } from "../core/titles.ts";
import { RELATIONSHIP_TYPES } from "../lore/relationship_types.ts";

/** Longest text sent for relationship suggestions (the Parser's brain-dump bound). */
export const MAX_SUGGEST_TEXT = 50_000;

/** A severity or confidence, as the Parser grades them. */
export const level = z.enum(["high", "medium", "low"]);
/** A relationship kind: one of the 17 known types (our API calls it `type`). */
export const relationshipType = z.enum(RELATIONSHIP_TYPES);

/** A suggested relation, as `POST /api/ai/relationships` answers it. */
export const suggestionSchema = z.object({
  targetNoteId: z.string(),
  targetTitle: z.string().nullable().describe("null when the Parser gave none"),
  type: relationshipType,
  description: z.string(),
  confidence: level.nullable(),
});

/** A suggestion as the Parser sends it (`relayedTitle`: a Core title as stored, decoded). */
export const parserSuggestion = z.object({
  targetNoteId: z.string(),
  // the model names the target as its context (the Parser's index) shows it: Core's stored title
  targetTitle: relayedTitle.optional(),
  relationshipType,
  description: z.string(),
  confidence: level.optional(),
});
/** The Parser's answer to `POST /suggest/relationships`. */
export const suggestionsAnswer = z.object({ suggestions: z.array(parserSuggestion) });
