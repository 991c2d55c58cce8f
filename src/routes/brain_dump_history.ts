/**
 * Brain-dump history (Parser): the runs that wrote lore, a page at a time, one entry in full,
 * and the content of each note a run touched before and after it. All are reads the Parser
 * counts with brain dumps, so each is kept per caller (`kept: KEPT_READ`) and dropped by the
 * caller's own runs, commits and batches. HTML in entries and diffs is sanitized because
 * clients render it.
 *
 * @module
 */
import { z } from "zod";
import type { Route } from "../api/router.ts";
import { parserIdSchema } from "../lore/ids.ts";
import { upstreamPath } from "../upstream/path.ts";
import {
  htmlOrNull,
  KEPT_NOTE,
  KEPT_READ,
  proposal,
  sanitizing,
  TAG,
} from "./brain_dump_schemas.ts";
import { parserRoute } from "./parser_proxy.ts";

/** Seed limit: the history shows the 20 most recent brain dumps (one page; `cursor` pages on). */
export const HISTORY_PAGE_SIZE = 20;
/** Largest history page a client may ask for with `limit` (the Parser's own bound). */
export const HISTORY_MAX_PAGE_SIZE = 100;

const historyItem = z.object({
  id: parserIdSchema,
  rawText: z.string(),
  notesCreated: z.array(z.string()),
  notesUpdated: z.array(z.string()),
  model: z.string().nullable(),
  tokensUsed: z.number().nullable(),
  createdAt: z.string(),
});

const historyEntry = historyItem.extend({
  summary: z.string().nullable(),
  parsedJson: z.object({
    entities: z.array(proposal.extend({
      action: z.enum(["created", "updated", "skipped"]),
      noteId: z.string().optional(),
    })).default([]),
    summary: z.string().optional(),
    revisions: z.array(z.object({
      noteId: z.string(),
      title: z.string(),
      contentBefore: htmlOrNull,
      contentAfter: htmlOrNull,
    })).default([]),
  }).nullable(),
});

const historyPage = z.object({
  items: z.array(historyItem),
  nextCursor: parserIdSchema.nullable(),
  hasMore: z.boolean(),
});

/** A history entry as listed: the Parser's row, and when and how many notes, as clients read. */
const historyListItem = historyItem.extend({
  timestamp: z.string().describe("`createdAt` again"),
  entityCount: z.number().int().min(0).describe("notes created plus notes updated"),
});

/** The header that carries the next page's cursor, which a bare-array answer has no room for. */
export const NEXT_CURSOR_HEADER = "x-next-cursor";

/** `GET /api/brain-dump/history` — recent brain dumps, newest first, 20 (or `limit`) a page. */
export const history = parserRoute({
  method: "GET",
  path: "/api/brain-dump/history",
  summary:
    "Brain dumps that wrote lore, newest first: 20 (or `limit`, 1–100) a page; `cursor` pages on",
  tag: TAG,
  kept: KEPT_READ,
  query: z.object({
    cursor: parserIdSchema.optional(),
    limit: z.coerce.number().int().min(1).max(HISTORY_MAX_PAGE_SIZE).default(HISTORY_PAGE_SIZE),
  }),
  description: "Only runs that wrote something are recorded (not `inbox` or `review`, nor a " +
    "cache hit). 20 a page, or `limit` (1-100, the Parser's own bounds). The answer is a " +
    "bare array, as the front end reads it; when there are more entries the `X-Next-Cursor` " +
    "header holds the cursor of the next page (given as `cursor`), and is absent on the last. " +
    "The list carries no summary (`GET /api/brain-dump/history/:id` has it)." + KEPT_NOTE,
  responses: {
    200: {
      description: "`[{ id, rawText, notesCreated, notesUpdated, model, tokensUsed, createdAt, " +
        "timestamp, entityCount }]`, newest first; header `X-Next-Cursor` while more follow",
      schema: z.array(historyListItem),
    },
    400: "`limit` not an integer from 1 to 100, or a `cursor` that is no entry id",
  },
  upstream: (ctx) => ({
    path: "/brain-dump/history",
    query: { limit: ctx.query.limit, cursor: ctx.query.cursor },
  }),
  answer: historyPage,
  reply: (page): z.output<typeof historyListItem>[] =>
    page.items.map((item) => ({
      ...item,
      timestamp: item.createdAt,
      entityCount: item.notesCreated.length + item.notesUpdated.length,
    })),
  headers: (page): Record<string, string> =>
    page.hasMore && page.nextCursor ? { [NEXT_CURSOR_HEADER]: page.nextCursor } : {},
});

const entryParams = z.object({ id: parserIdSchema });

/** `GET /api/brain-dump/history/:id` — one entry in full. */
export const historyDetail = sanitizing(parserRoute({
  method: "GET",
  path: "/api/brain-dump/history/:id",
  summary: "One brain dump in full: entities with their outcome, summary, content revisions",
  tag: TAG,
  kept: KEPT_READ,
  params: entryParams,
  description: "`parsedJson.entities` are the proposals with what became of each (`created`, " +
    "`updated`, `skipped`, and the `noteId`); `revisions` hold each note's content before and " +
    "after. All HTML is sanitized; `parsedJson` may be null." + KEPT_NOTE,
  responses: {
    200: {
      description: "`{ id, rawText, summary, parsedJson: { entities, summary, revisions }, " +
        "notesCreated, notesUpdated, model, tokensUsed, createdAt }`",
      schema: historyEntry,
    },
    404: "No such entry for this account",
  },
  upstream: (ctx) => ({ path: upstreamPath`/brain-dump/history/${ctx.params.id}` }),
  answer: historyEntry,
}));

const diffsAnswer = z.object({
  diffs: z.array(z.object({
    noteId: z.string(),
    action: z.enum(["created", "updated"]),
    revisionIdBefore: z.string().nullable(),
    revisionIdAfter: z.string().nullable(),
    contentBefore: htmlOrNull,
    contentAfter: htmlOrNull,
  })),
});

/** `GET /api/brain-dump/:id/diffs` — before/after content of each note a brain dump touched. */
export const diffs = sanitizing(parserRoute({
  method: "GET",
  path: "/api/brain-dump/:id/diffs",
  summary: "Per-note content before and after one brain dump (revision content read from Core)",
  tag: TAG,
  kept: KEPT_READ,
  params: entryParams,
  description: "The Parser reads each revision's content from Core as it answers. Content is " +
    "sanitized, and null where there is no revision (a created note has none) or Core no " +
    "longer has it." + KEPT_NOTE,
  responses: {
    200: {
      description: '`{ diffs: [{ noteId, action: "created" | "updated", revisionIdBefore, ' +
        "revisionIdAfter, contentBefore, contentAfter }] }`",
      schema: diffsAnswer,
    },
    404: "No such entry for this account",
  },
  upstream: (ctx) => ({ path: upstreamPath`/brain-dump/history/${ctx.params.id}/diffs` }),
  answer: diffsAnswer,
}));

/** The history routes: the list and one entry. */
export const brainDumpHistoryRoutes: Route[] = [history, historyDetail];

/**
 * The diffs route, listed after the batch routes (the reference's order).
 * `/batch/:batchId` and `/:id/diffs` both fit `/api/brain-dump/batch/diffs`; the leftmost
 * literal wins (router.ts), so that path is a batch called `diffs`.
 */
export const brainDumpDiffRoutes: Route[] = [diffs];
