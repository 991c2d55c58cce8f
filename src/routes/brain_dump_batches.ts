/**
 * Brain-dump batches (Parser): up to 50 texts queued as background jobs, run one after another;
 * their status, every status counted; and cancelling the jobs not yet started. A job's failure
 * text is the Parser's, which can hold model output or internal addresses, so only its meaning
 * is passed on, and jobs do not show the Parser's internal account id.
 *
 * @module
 */
import { z } from "zod";
import type { Route } from "../api/router.ts";
import { idSchema, parserIdSchema } from "../lore/ids.ts";
import { upstreamPath } from "../upstream/path.ts";
import { CHANGES_READS, rawText, TAG } from "./brain_dump_schemas.ts";
import { parserRoute } from "./parser_proxy.ts";

/** Most items in one batch (the Parser's own limit). */
export const MAX_BATCH_ITEMS = 50;

/**
 * A failed batch job's `error` as the client sees it: the Parser's text can hold model output
 * or internal addresses, so only its meaning is passed on.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   jobError("AllCodex is not connected for this user. …"),
 *   "Core is not connected for this Parser account",
 * );
 * assert.equal(jobError("LLM timeout at http://10.0.0.5"), "The brain dump failed in the Parser");
 * ```
 */
export function jobError(error: string | null): string | null {
  if (error === null) return null;
  return /^AllCodex is not connected\b/.test(error)
    ? "Core is not connected for this Parser account"
    : "The brain dump failed in the Parser";
}

const JOB_STATUSES = ["queued", "running", "done", "failed", "cancelled"] as const;

// `userId` (the Parser's internal account id) is left out
const job = z.object({
  id: z.string(),
  batchId: z.string(),
  rawText: z.string(),
  parentNoteId: z.string().nullable(),
  mode: z.enum(["auto", "review"]),
  status: z.enum(JOB_STATUSES),
  error: z.string().nullable().overwrite(jobError),
  resultHistoryId: parserIdSchema.nullable(),
  position: z.number().int(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
});

const batchAnswer = z.object({
  batchId: parserIdSchema,
  jobs: z.array(z.object({ id: z.string(), position: z.number().int().min(0) })),
});

/** `POST /api/brain-dump/batch` — queue up to 50 texts for background processing. */
export const submitBatch = parserRoute({
  method: "POST",
  path: "/api/brain-dump/batch",
  summary: "Queue 1–50 texts for background brain dumps (`auto` or `review` each)",
  tag: TAG,
  kept: CHANGES_READS,
  body: z.strictObject({
    items: z.array(z.strictObject({
      rawText,
      parentNoteId: idSchema.optional(),
      mode: z.enum(["auto", "review"]).optional(),
    })).min(1).max(MAX_BATCH_ITEMS),
  }),
  description: "1-50 items of `{ rawText, parentNoteId?, mode?: auto|review }`, each a " +
    "background job of the Parser, run one after another; `GET /api/brain-dump/batch/:batchId` " +
    "follows them.",
  responses: {
    200: { description: "`{ batchId, jobs: [{ id, position }] }`", schema: batchAnswer },
  },
  upstream: (ctx) => ({ method: "POST", path: "/brain-dump/batch", body: ctx.body }),
  answer: batchAnswer,
});

const batchParams = z.object({ batchId: parserIdSchema });

const count = z.number().int().min(0);

/** Where a batch stands, every status counted. */
const batchStatusReply = z.object({
  batchId: z.string(),
  jobs: z.array(job),
  counts: z.record(z.enum(JOB_STATUSES), count),
  terminal: z.boolean(),
});

/** `GET /api/brain-dump/batch/:batchId` — where each job of a batch stands. */
export const batchStatus = parserRoute({
  method: "GET",
  path: "/api/brain-dump/batch/:batchId",
  summary: "Batch status: every job in order, counts per status, whether all are finished",
  tag: TAG,
  params: batchParams,
  description: "`counts` always has all five statuses; `terminal` is true once no job is " +
    "queued or running. A failed job's `error` is one of our fixed sentences, never the " +
    "Parser's text, and jobs do not show the Parser's internal account id.",
  responses: {
    200: {
      description: "`{ batchId, jobs: [{ id, batchId, rawText, parentNoteId, mode, status, " +
        "error, resultHistoryId, position, createdAt, startedAt, finishedAt }], counts: " +
        "{ queued, running, done, failed, cancelled }, terminal }`",
      schema: batchStatusReply,
    },
    404: "No such batch for this account",
  },
  upstream: (ctx) => ({ path: upstreamPath`/brain-dump/batch/${ctx.params.batchId}` }),
  answer: batchStatusReply.extend({
    counts: z.partialRecord(z.enum(JOB_STATUSES), count),
  }).transform((s) => ({
    ...s,
    counts: Object.fromEntries(JOB_STATUSES.map((k) => [k, s.counts[k] ?? 0])),
  })),
});

const cancelAnswer = z.object({ cancelled: count });

/** `DELETE /api/brain-dump/batch/:batchId` — cancel the jobs that have not started. */
export const cancelBatch = parserRoute({
  method: "DELETE",
  path: "/api/brain-dump/batch/:batchId",
  summary: "Cancel a batch's queued jobs (running and finished ones are kept)",
  tag: TAG,
  kept: CHANGES_READS,
  params: batchParams,
  description: "Queued jobs become `cancelled`; an unknown batch is not an error but " +
    "`{ cancelled: 0 }` (the Parser does not tell them apart).",
  responses: {
    200: {
      description: "`{ cancelled }`: how many jobs were cancelled",
      schema: cancelAnswer,
    },
  },
  upstream: (ctx) => ({
    method: "DELETE",
    path: upstreamPath`/brain-dump/batch/${ctx.params.batchId}`,
  }),
  answer: cancelAnswer,
});

/** The batch routes: submit, status, cancel. */
export const brainDumpBatchRoutes: Route[] = [submitBatch, batchStatus, cancelBatch];
