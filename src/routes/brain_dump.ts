/**
 * Brain dump (Parser): raw worldbuilding text in, lore notes out. `auto` writes at once,
 * `review` proposes entities for approval (then `commit`), `inbox` only acknowledges; the stream
 * is the auto run as server-sent events, and a non-stream auto run reads that stream too (its
 * keepalives are progress for the AI deadline). History, per-note diffs and a background batch
 * queue complete the feature. Every answer is validated; HTML in answers (proposals, history,
 * diffs) is sanitized because clients render it, and HTML a client commits is sanitized before
 * it becomes lore.
 *
 * @module
 */
import { z } from "zod";
import { idSchema, parserIdSchema } from "../lore/ids.ts";
import type { Route } from "../router.ts";
import { sanitizeLoreHtml } from "../sanitize/html.ts";
import { upstreamPath } from "../upstream/path.ts";
import { mapParserStreamError } from "../upstream/parser.ts";
import {
  parserAnswer,
  parserRoute,
  parserStreamRoute,
  type StreamOutcome,
} from "./parser_proxy.ts";

/** Seed limit: the history shows the 20 most recent brain dumps (one page; `cursor` pages on). */
export const HISTORY_PAGE_SIZE = 20;
/** Largest history page a client may ask for with `limit` (the Parser's own bound). */
export const HISTORY_MAX_PAGE_SIZE = 100;
/** Most entities one commit may write (the Parser sets no limit). */
export const MAX_COMMIT_ENTITIES = 100;
/** Most items in one batch (the Parser's own limit). */
export const MAX_BATCH_ITEMS = 50;

const rawText = z.string().min(10).max(50_000);
const modelName = z.string().min(1).max(200);
const loreTypeName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be a simple word");

// ---------------------------------------------------------------------------------------------
// Parser answers (a trust boundary: anything else is a 502)
// ---------------------------------------------------------------------------------------------

const html = z.string().transform((s) => sanitizeLoreHtml(s));
const htmlOrNull = html.nullable();

/**
 * Label values as the Parser writes them: lists joined with ", ", empty values left out.
 *
 * @example
 * ```ts
 * labelValues({ age: 30, aliases: ["Wren", "W."], note: "" });
 * // { age: "30", aliases: "Wren, W." }
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

const attributes = z.record(z.string(), z.unknown()).transform(labelValues);

/**
 * A `skipped` reason the client may see: the duplicate notice (titles and a score) is kept;
 * anything else is a Parser or Core error text and becomes a fixed sentence.
 *
 * @example
 * ```ts
 * skipReason('Possible duplicate of "Mira" (93% match)'); // unchanged
 * skipReason("ETAPI POST /create-note → 400: …"); // "Could not be written to Core"
 * ```
 */
export function skipReason(reason: string): string {
  return /^Possible duplicate of "/.test(reason) && reason.length <= 600
    ? reason
    : "Could not be written to Core";
}

/**
 * A failed batch job's `error` as the client sees it: the Parser's text can hold model output
 * or internal addresses, so only its meaning is passed on.
 *
 * @example
 * ```ts
 * jobError("AllCodex is not connected for this user. …");
 * // "Core is not connected for this Parser account"
 * ```
 */
export function jobError(error: string | null): string | null {
  if (error === null) return null;
  return /^AllCodex is not connected\b/.test(error)
    ? "Core is not connected for this Parser account"
    : "The brain dump failed in the Parser";
}

const noteRef = z.object({ noteId: z.string(), title: z.string(), type: z.string() });
const duplicate = z.object({
  proposedTitle: z.string(),
  proposedType: z.string(),
  matches: z.array(z.object({ noteId: z.string(), title: z.string(), score: z.number() })),
});
const writeResult = z.object({
  summary: z.string(),
  created: z.array(noteRef),
  updated: z.array(noteRef),
  skipped: z.array(
    z.object({ title: z.string(), reason: z.string().transform(skipReason) }),
  ),
  duplicates: z.array(duplicate).default([]),
  relations: z.array(
    z.object({
      noteId: z.string(),
      applied: z.number().int().min(0),
      failed: z.number().int().min(0),
    }),
  ).default([]),
});

const proposal = z.object({
  title: z.string(),
  type: z.string(),
  action: z.enum(["create", "update"]),
  content: html.optional(),
  existingNoteId: z.string().optional(),
  attributes: attributes.optional(),
  tags: z.array(z.string()).optional(),
});

const brainDumpAnswer = z.union([
  z.object({ mode: z.literal("inbox"), queued: z.literal(true) }),
  z.object({
    mode: z.literal("review"),
    summary: z.string(),
    proposedEntities: z.array(proposal),
    duplicates: z.array(duplicate).default([]),
  }),
  // the auto answer has no `mode`; the idempotency cache answers `[cached] <old summary>`
  writeResult.transform((r) => ({
    mode: "auto" as const,
    cached: r.summary.startsWith("[cached] "),
    ...r,
  })),
]);

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

const JOB_STATUSES = ["queued", "running", "done", "failed", "cancelled"] as const;

// `userId` (the Parser's internal account id) is left out
const job = z.object({
  id: z.string(),
  batchId: z.string(),
  rawText: z.string(),
  parentNoteId: z.string().nullable(),
  mode: z.enum(["auto", "review"]),
  status: z.enum(JOB_STATUSES),
  error: z.string().nullable().transform(jobError),
  resultHistoryId: parserIdSchema.nullable(),
  position: z.number().int(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
});

/** The stream's `done`: `raw` is JSON (the write result, or a cache hit's stored entry). */
const streamDone = z.object({
  raw: z.string().transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: "custom", message: "not JSON" });
      return z.NEVER;
    }
  }),
});

/** A stream cache hit's `raw`: the history entry stored by the earlier run. */
const storedEntry = z.object({ entities: z.array(z.unknown()), summary: z.string() });

/**
 * The auto answer from the stream's outcome, in the non-stream route's shape: the write result,
 * or for a cache hit (`raw` is the stored `{ entities, summary, revisions }`) the `[cached]`
 * answer that route gives (`{ summary: "[cached] <summary>", created: [], updated: [],
 * skipped: [] }`); an `error` event is the error that route would give.
 */
function autoAnswer(outcome: StreamOutcome): unknown {
  if (outcome.error !== undefined) throw mapParserStreamError(outcome.error);
  const { raw } = parserAnswer(streamDone, outcome.done);
  const stored = storedEntry.safeParse(raw);
  return stored.success
    ? { summary: `[cached] ${stored.data.summary}`, created: [], updated: [], skipped: [] }
    : raw;
}

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

const TAG = "brain-dump";

/** Brain dumps run a model (commits write for a while): what they made is also in the history. */
const AI_WORK = { historyPath: "/api/brain-dump/history" };

/** `POST /api/brain-dump` — process raw text in one of the three modes. */
export const brainDump = parserRoute({
  method: "POST",
  path: "/api/brain-dump",
  summary: "Process raw text: `auto` writes lore (default), `review` proposes, `inbox` queues",
  tag: TAG,
  body: z.strictObject({
    rawText,
    mode: z.enum(["auto", "review", "inbox"]).default("auto"),
    model: modelName.optional(),
  }),
  responses: {
    200:
      '`auto`: `{ mode: "auto", cached, summary, created, updated, skipped, duplicates, relations }`; `review`: `{ mode: "review", summary, proposedEntities, duplicates }`; `inbox`: `{ mode: "inbox", queued: true }`',
    400:
      "Invalid body; `UPSTREAM_REJECTED` with `upstreamCode: INVALID_MODEL` for a model outside the Parser's chain",
    429: "The Parser's brain-dump rate limit (10 a minute), with `Retry-After`",
    503: "`NOT_CONFIGURED` (`service: core`): Core is not connected for this Parser account",
  },
  upstream: (ctx) => ({ method: "POST", path: "/brain-dump", body: ctx.body }),
  answer: brainDumpAnswer,
  ai: AI_WORK,
  // auto is the stream's work: its keepalives and events show the Parser is still at it
  fromStream: (ctx) =>
    ctx.body.mode === "auto"
      ? {
        method: "POST",
        path: "/brain-dump/stream",
        body: { rawText: ctx.body.rawText, model: ctx.body.model },
        answer: autoAnswer,
      }
      : undefined,
});

/** `POST /api/brain-dump/stream` — the auto run as server-sent events, passed through. */
export const brainDumpStream = parserStreamRoute({
  method: "POST",
  path: "/api/brain-dump/stream",
  summary:
    "Auto brain dump as server-sent events (`status`, `reasoning`, `token`, then `done` or `error`)",
  tag: TAG,
  body: z.strictObject({
    rawText,
    autoRelate: z.boolean().optional(),
    model: modelName.optional(),
  }),
  responses: {
    200:
      "`text/event-stream`: the Parser's events byte for byte (`data` carries `type`), `: keepalive` comments included; a stall or a broken stream ends with our `error` event",
    400: "Invalid body, or `UPSTREAM_REJECTED` (`INVALID_MODEL`) before the stream starts",
    429: "Rate limited before the stream starts, with `Retry-After`",
    503: "`NOT_CONFIGURED`: Core is not connected for this Parser account",
  },
  upstream: (ctx) => ({ method: "POST", path: "/brain-dump/stream", body: ctx.body }),
});

const commitEntity = z.object({
  title: z.string().trim().min(1).max(500),
  type: loreTypeName,
  action: z.enum(["create", "update"]),
  content: z.string().max(1_000_000).optional(),
  existingNoteId: idSchema.optional(),
}).refine((e) => e.action === "create" || e.existingNoteId !== undefined, {
  message: "an update needs existingNoteId",
  path: ["existingNoteId"],
});

/** `POST /api/brain-dump/commit` — write the entities a user approved from a review. */
export const commit = parserRoute({
  method: "POST",
  path: "/api/brain-dump/commit",
  summary:
    "Commit reviewed entities (1–100; `update` needs `existingNoteId`); content is sanitized first",
  tag: TAG,
  body: z.strictObject({
    rawText: z.string().min(1).max(50_000),
    approvedEntities: z.array(commitEntity).min(1).max(MAX_COMMIT_ENTITIES),
  }),
  responses: {
    200: "`{ summary, created, updated, skipped, duplicates, relations }`",
    400: "Invalid body (nothing is written)",
  },
  upstream: (ctx) => ({
    method: "POST",
    path: "/brain-dump/commit",
    body: {
      rawText: ctx.body.rawText,
      approvedEntities: ctx.body.approvedEntities.map((e) => ({
        title: e.title,
        type: e.type,
        action: e.action,
        ...(e.content === undefined ? {} : { content: sanitizeLoreHtml(e.content) }),
        ...(e.action === "update" ? { existingNoteId: e.existingNoteId } : {}),
      })),
    },
  }),
  answer: writeResult,
  ai: AI_WORK,
});

/** `GET /api/brain-dump/history` — recent brain dumps, newest first, 20 (or `limit`) a page. */
export const history = parserRoute({
  method: "GET",
  path: "/api/brain-dump/history",
  summary:
    "Brain dumps that wrote lore, newest first: 20 (or `limit`, 1–100) a page; `cursor` pages on",
  tag: TAG,
  query: z.object({
    cursor: parserIdSchema.optional(),
    limit: z.coerce.number().int().min(1).max(HISTORY_MAX_PAGE_SIZE).default(HISTORY_PAGE_SIZE),
  }),
  responses: {
    200:
      "`{ items: [{ id, rawText, notesCreated, notesUpdated, model, tokensUsed, createdAt }], nextCursor, hasMore }`",
    400: "`limit` not an integer from 1 to 100, or a `cursor` that is no entry id",
  },
  upstream: (ctx) => ({
    path: "/brain-dump/history",
    query: { limit: ctx.query.limit, cursor: ctx.query.cursor },
  }),
  answer: z.object({
    items: z.array(historyItem),
    nextCursor: parserIdSchema.nullable(),
    hasMore: z.boolean(),
  }),
});

const entryParams = z.object({ id: parserIdSchema });

/** `GET /api/brain-dump/history/:id` — one entry in full. */
export const historyDetail = parserRoute({
  method: "GET",
  path: "/api/brain-dump/history/:id",
  summary: "One brain dump in full: entities with their outcome, summary, content revisions",
  tag: TAG,
  params: entryParams,
  responses: {
    200:
      "`{ id, rawText, summary, parsedJson: { entities, summary, revisions }, notesCreated, notesUpdated, model, tokensUsed, createdAt }`",
    404: "No such entry for this account",
  },
  upstream: (ctx) => ({ path: upstreamPath`/brain-dump/history/${ctx.params.id}` }),
  answer: historyEntry,
});

/** `GET /api/brain-dump/:id/diffs` — before/after content of each note a brain dump touched. */
export const diffs = parserRoute({
  method: "GET",
  path: "/api/brain-dump/:id/diffs",
  summary: "Per-note content before and after one brain dump (revision content read from Core)",
  tag: TAG,
  params: entryParams,
  responses: {
    200:
      '`{ diffs: [{ noteId, action: "created" | "updated", revisionIdBefore, revisionIdAfter, contentBefore, contentAfter }] }` (content sanitized, null when unavailable)',
    404: "No such entry for this account",
  },
  upstream: (ctx) => ({ path: upstreamPath`/brain-dump/history/${ctx.params.id}/diffs` }),
  answer: z.object({
    diffs: z.array(z.object({
      noteId: z.string(),
      action: z.enum(["created", "updated"]),
      revisionIdBefore: z.string().nullable(),
      revisionIdAfter: z.string().nullable(),
      contentBefore: htmlOrNull,
      contentAfter: htmlOrNull,
    })),
  }),
});

/** `POST /api/brain-dump/batch` — queue up to 50 texts for background processing. */
export const submitBatch = parserRoute({
  method: "POST",
  path: "/api/brain-dump/batch",
  summary: "Queue 1–50 texts for background brain dumps (`auto` or `review` each)",
  tag: TAG,
  body: z.strictObject({
    items: z.array(z.strictObject({
      rawText,
      parentNoteId: idSchema.optional(),
      mode: z.enum(["auto", "review"]).optional(),
    })).min(1).max(MAX_BATCH_ITEMS),
  }),
  responses: { 200: "`{ batchId, jobs: [{ id, position }] }`" },
  upstream: (ctx) => ({ method: "POST", path: "/brain-dump/batch", body: ctx.body }),
  answer: z.object({
    batchId: parserIdSchema,
    jobs: z.array(z.object({ id: z.string(), position: z.number().int().min(0) })),
  }),
});

const batchParams = z.object({ batchId: parserIdSchema });

/** `GET /api/brain-dump/batch/:batchId` — where each job of a batch stands. */
export const batchStatus = parserRoute({
  method: "GET",
  path: "/api/brain-dump/batch/:batchId",
  summary: "Batch status: every job in order, counts per status, whether all are finished",
  tag: TAG,
  params: batchParams,
  responses: {
    200:
      "`{ batchId, jobs, counts: { queued, running, done, failed, cancelled }, terminal }` (every count present)",
    404: "No such batch for this account",
  },
  upstream: (ctx) => ({ path: upstreamPath`/brain-dump/batch/${ctx.params.batchId}` }),
  answer: z.object({
    batchId: z.string(),
    jobs: z.array(job),
    counts: z.partialRecord(z.enum(JOB_STATUSES), z.number().int().min(0)),
    terminal: z.boolean(),
  }).transform((s) => ({
    ...s,
    counts: Object.fromEntries(JOB_STATUSES.map((k) => [k, s.counts[k] ?? 0])),
  })),
});

/** `DELETE /api/brain-dump/batch/:batchId` — cancel the jobs that have not started. */
export const cancelBatch = parserRoute({
  method: "DELETE",
  path: "/api/brain-dump/batch/:batchId",
  summary: "Cancel a batch's queued jobs (running and finished ones are kept)",
  tag: TAG,
  params: batchParams,
  responses: { 200: "`{ cancelled }`: how many jobs were cancelled (0 for an unknown batch)" },
  upstream: (ctx) => ({
    method: "DELETE",
    path: upstreamPath`/brain-dump/batch/${ctx.params.batchId}`,
  }),
  answer: z.object({ cancelled: z.number().int().min(0) }),
});

/**
 * The brain-dump routes. `/batch/:batchId` and `/:id/diffs` both fit `/api/brain-dump/batch/diffs`;
 * the leftmost literal wins (router.ts), so that path is a batch called `diffs`.
 */
export const brainDumpRoutes: Route[] = [
  brainDump,
  brainDumpStream,
  commit,
  history,
  historyDetail,
  submitBatch,
  batchStatus,
  cancelBatch,
  diffs,
];
