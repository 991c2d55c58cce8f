/**
 * The Parser's lore-wide scans: the consistency check (contradictions, timeline slips, orphans
 * and the like across the given or most relevant notes) and gap detection (underdeveloped lore
 * areas). Both are plain calls whose answers pass on as the Parser sends them, so they share
 * nothing with the relationship routes but the severity level.
 *
 * @module
 */
import { z } from "zod";
import type { Route } from "../api/router.ts";
import { idSchema } from "../lore/ids.ts";
import { level } from "./ai_schemas.ts";
import { parserRoute } from "./parser_proxy.ts";

/** Most note ids in one consistency scan. */
export const MAX_CONSISTENCY_NOTES = 50;

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

/** The consistency and gap routes. */
export const aiScanRoutes: Route[] = [consistency, gapsGet, gapsPost];
