/**
 * The relationships already applied, as the Parser walks them: the `rel*` graph around a note
 * (breadth-first, bounded by depth and node count) and the history of relationships applied to
 * or from it. Both are reads passed through with the Parser's `relationshipType` renamed to our
 * `type`; what suggests and applies relationships is in ai_relationships.ts.
 *
 * @module
 */
import { z } from "zod";
import type { Route } from "../api/router.ts";
import { relayedTitle } from "../core/titles.ts";
import { ApiError } from "../http/errors.ts";
import { upstreamPath } from "../upstream/path.ts";
import { parserRoute } from "./parser_proxy.ts";
import { idParams } from "./schemas.ts";

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

// the Parser's answers (`relayedTitle`: a Core title in Core's stored form, decoded)
const graphAnswer = graphSchema.extend({
  // the Parser reads each node from Core
  nodes: z.array(graphNode.extend({ title: relayedTitle, loreType: z.string().nullish() })),
  edges: z.array(graphEdge.omit({ type: true }).extend({ relationshipType: z.string() })),
});

const historyAnswer = z.object({
  entries: z.array(historyEntry.extend({ description: z.string().nullish() })),
});

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

/** The relationship graph and history routes. */
export const relationshipGraphRoutes: Route[] = [graph, relationshipHistory];
