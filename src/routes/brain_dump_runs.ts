/**
 * Brain-dump runs (Parser): raw worldbuilding text in, lore notes out. `auto` writes at once,
 * `review` proposes entities for approval (then `commit`), `inbox` only acknowledges; the stream
 * is the auto run as server-sent events, and a non-stream auto run reads that stream too (its
 * keepalives are progress for the AI deadline; see brain_dump_stream.ts). HTML in proposals is
 * sanitized because clients render it, and HTML a client commits is sanitized before it becomes
 * lore. What a run writes is added to the caller's semantic index before its answer (or stream)
 * ends; the Parser's own indexing files it under no user. The Core titles the Parser relays
 * (duplicate matches, the duplicate notice of a skip) are decoded to the typed text; the titles
 * of proposed, created and updated entities are the model's, passed on as it wrote them.
 *
 * @module
 */
import { z } from "zod";
import type { Ctx, Route } from "../api/router.ts";
import { relayedTitle, relayedTitleText } from "../core/titles.ts";
import { ApiError } from "../http/errors.ts";
import { idSchema } from "../lore/ids.ts";
import { sanitizeLoreHtml } from "../sanitize/html.ts";
import { mapLimit } from "../util/concurrency.ts";
import { upstreamPath } from "../upstream/path.ts";
import {
  CHANGES_READS,
  duplicateNotice,
  proposal,
  rawText,
  READS,
  sanitizing,
  TAG,
} from "./brain_dump_schemas.ts";
import { autoAnswer, doneAsTyped, streamEvents, writtenInDone } from "./brain_dump_stream.ts";
import { parserRoute, parserStreamRoute } from "./parser_proxy.ts";

/** Most entities one commit may write (the Parser sets no limit). */
export const MAX_COMMIT_ENTITIES = 100;

const modelName = z.string().min(1).max(200);
const loreTypeName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be a simple word");

// ---------------------------------------------------------------------------------------------
// Parser answers (a trust boundary: anything else is a 502). What is passed on is their parsed
// output, so most of them are also our answers' schemas.
// ---------------------------------------------------------------------------------------------

/**
 * A `skipped` reason as the client may see it: the duplicate notice (the existing note's title,
 * as typed, and a score) is kept; anything else is a Parser or Core error text and becomes a
 * fixed sentence.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readRelayed } from "../core/titles.ts";
 *
 * const read = async (reason: string) => {
 *   const r = await readRelayed(skipReason, reason);
 *   return r.success ? r.data : undefined;
 * };
 * assert.equal(
 *   await read('Possible duplicate of "Salt &amp; Smoke" (93% match)'),
 *   'Possible duplicate of "Salt & Smoke" (93% match)',
 * );
 * assert.equal(await read("ETAPI POST /create-note → 400: …"), "Could not be written to Core");
 * ```
 */
export const skipReason = z.string().transform((reason, ctx) =>
  duplicateNotice(reason, (stored) => relayedTitleText(stored, ctx)) ??
    "Could not be written to Core"
);

const noteRef = z.object({ noteId: z.string(), title: z.string(), type: z.string() });
const duplicateMatch = z.object({ noteId: z.string(), title: z.string(), score: z.number() });
const duplicate = z.object({
  proposedTitle: z.string(),
  proposedType: z.string(),
  matches: z.array(duplicateMatch),
});
/** The Parser's: its matches are notes of its index, titled as Core stores them. */
const relayedDuplicate = duplicate.extend({
  matches: z.array(duplicateMatch.extend({ title: relayedTitle })),
});
const skippedEntity = z.object({ title: z.string(), reason: z.string() });
const writeResult = z.object({
  summary: z.string(),
  created: z.array(noteRef),
  updated: z.array(noteRef),
  skipped: z.array(skippedEntity),
  duplicates: z.array(duplicate).default([]),
  relations: z.array(
    z.object({
      noteId: z.string(),
      applied: z.number().int().min(0),
      failed: z.number().int().min(0),
    }),
  ).default([]),
});

/** The Parser's write result, read: Core titles decoded, skip reasons ours. */
const writeAnswer = writeResult.extend({
  skipped: z.array(skippedEntity.extend({ reason: skipReason })),
  duplicates: z.array(relayedDuplicate).default([]),
});

const inboxAnswer = z.object({ mode: z.literal("inbox"), queued: z.literal(true) });
const reviewReply = z.object({
  mode: z.literal("review"),
  summary: z.string(),
  proposedEntities: z.array(proposal),
  duplicates: z.array(duplicate).default([]),
});
const reviewAnswer = reviewReply.extend({ duplicates: z.array(relayedDuplicate).default([]) });
const autoReply = writeResult.extend({
  mode: z.literal("auto"),
  cached: z.boolean().describe(
    "The same text was brain-dumped before: the Parser's idempotency cache answered, nothing " +
      "was written",
  ),
});

const brainDumpAnswer = z.union([
  inboxAnswer,
  reviewAnswer,
  // the auto answer has no `mode`; the idempotency cache answers `[cached] <old summary>`
  writeAnswer.transform((r): z.output<typeof autoReply> => ({
    mode: "auto",
    cached: r.summary.startsWith("[cached] "),
    ...r,
  })),
]);

/** Our brain-dump answer: every mode names itself. */
const brainDumpReply = z.discriminatedUnion("mode", [inboxAnswer, reviewReply, autoReply]);

// ---------------------------------------------------------------------------------------------
// The caller's semantic index
// ---------------------------------------------------------------------------------------------

/**
 * Indexes the notes a brain dump wrote for this caller, so that their semantic search (and the
 * Parser's own context for the next brain dump, consistency scan or suggestion) finds them at
 * once. The Parser indexes them too, but for no user (`"default"`), which no caller's search
 * reads. One `POST /rag/reindex/:noteId` each; a failure is logged, never the request's.
 */
async function indexWritten(
  ctx: Ctx,
  result: { created: { noteId: string }[]; updated: { noteId: string }[] },
): Promise<void> {
  const ids = [...new Set([...result.created, ...result.updated].map((n) => n.noteId))];
  if (ids.length === 0) return;
  const failed = (noteId: string, e: unknown) =>
    ctx.log.log("warn", "note not added to the semantic index", {
      requestId: ctx.requestId,
      noteId,
      reason: e instanceof ApiError ? e.code : "error",
    });
  try {
    // detached: the notes are written, whether or not the client waits for their indexing
    const parser = await ctx.parser({ detached: true });
    await mapLimit(ids, ctx.concurrency, async (noteId) => {
      try {
        await parser.json("POST", upstreamPath`/rag/reindex/${noteId}`);
      } catch (e) {
        failed(noteId, e);
      }
    });
  } catch (e) {
    failed(ids.join(","), e);
  }
}

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

/** Brain dumps run a model (commits write for a while): what they made is also in the history. */
const AI_WORK = { historyPath: "/api/brain-dump/history" };

/** `POST /api/brain-dump` — process raw text in one of the three modes. */
export const brainDump = sanitizing(parserRoute({
  method: "POST",
  path: "/api/brain-dump",
  summary: "Process raw text: `auto` writes lore (default), `review` proposes, `inbox` queues",
  tag: TAG,
  kept: CHANGES_READS,
  body: z.strictObject({
    rawText,
    mode: z.enum(["auto", "review", "inbox"]).default("auto"),
    model: modelName.optional(),
  }),
  description: "`rawText` 10-50 000 characters; `model` one of the Parser's chain for brain " +
    "dumps. Every answer names its `mode`. `auto` always has `duplicates` and `relations` " +
    "arrays, and `cached: true` when the Parser's idempotency cache answered (the same text " +
    "was brain-dumped before: `summary` starts `[cached] `, nothing is written or listed). " +
    "An auto run is read from the Parser's own stream of the same work, so every event and " +
    "keepalive is progress and a run of any length that keeps talking is not cut off. HTML in " +
    "proposals is sanitized; skip reasons other than the duplicate notice become a fixed " +
    "sentence. The notes an auto run wrote are in the caller's semantic index (`/api/rag`) " +
    "when it answers. After the AI deadline the 504 names `historyPath`: what the run wrote " +
    "is listed there, and repeating the request gets the answer.",
  responses: {
    200: {
      description: '`auto`: `{ mode: "auto", cached, summary, created, updated, skipped, ' +
        'duplicates, relations }`; `review`: `{ mode: "review", summary, proposedEntities, ' +
        'duplicates }`; `inbox`: `{ mode: "inbox", queued: true }`',
      schema: brainDumpReply,
    },
    400:
      "Invalid body; `UPSTREAM_REJECTED` with `upstreamCode: INVALID_MODEL` for a model outside the Parser's chain",
    429: "The Parser's brain-dump rate limit (10 a minute), with `Retry-After`",
    503: "`NOT_CONFIGURED` (`service: core`): Core is not connected for this Parser account",
  },
  upstream: (ctx) => ({ method: "POST", path: "/brain-dump", body: ctx.body }),
  answer: brainDumpAnswer,
  reply: async (data, ctx) => {
    if (data.mode === "auto" && !data.cached) await indexWritten(ctx, data);
    return data;
  },
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
}));

/** `POST /api/brain-dump/stream` — the auto run as server-sent events, passed through. */
export const brainDumpStream = parserStreamRoute({
  method: "POST",
  path: "/api/brain-dump/stream",
  summary:
    "Auto brain dump as server-sent events (`status`, `reasoning`, `token`, then `done` or `error`)",
  tag: TAG,
  changes: READS,
  body: z.strictObject({
    rawText,
    autoRelate: z.boolean().optional(),
    model: modelName.optional(),
  }),
  description: "The same input as `POST /api/brain-dump` in `auto` mode, plus `autoRelate`. " +
    "The Parser's events pass through byte for byte as they arrive, `: keepalive` comments " +
    "included: `status` as each stage starts, `reasoning` and `token` while the model answers, " +
    "then `done` or `error` (a cache hit sends `done` at once). Only the Core titles in " +
    "`done.raw` change: duplicate matches and duplicate notices show them as typed. After " +
    "`done` the stream stays open until the notes written are in the caller's semantic index " +
    "(`/api/rag`); its end means they are. A stall, " +
    "the stream deadline, or an upstream stream that breaks off or ends unfinished ends it " +
    "with our own `error` event in the error shape.",
  responses: {
    200: {
      description: "Server-sent events: the Parser's, then ours only to end a failed stream",
      mediaType: "text/event-stream",
      events: streamEvents,
    },
    400: "Invalid body, or `UPSTREAM_REJECTED` (`INVALID_MODEL`) before the stream starts",
    429: "Rate limited before the stream starts, with `Retry-After`",
    503: "`NOT_CONFIGURED`: Core is not connected for this Parser account",
  },
  upstream: (ctx) => ({ method: "POST", path: "/brain-dump/stream", body: ctx.body }),
  rewrite: { done: doneAsTyped },
  afterDone: async (ctx, done) => {
    const written = writtenInDone.safeParse(done);
    if (written.success) await indexWritten(ctx, written.data.raw);
  },
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
export const commit = sanitizing(parserRoute({
  method: "POST",
  path: "/api/brain-dump/commit",
  summary:
    "Commit reviewed entities (1–100; `update` needs `existingNoteId`); content is sanitized first",
  tag: TAG,
  kept: CHANGES_READS,
  body: z.strictObject({
    rawText: z.string().min(1).max(50_000),
    approvedEntities: z.array(commitEntity).min(1).max(MAX_COMMIT_ENTITIES),
  }),
  description: "`approvedEntities`: 1-100, `title` 1-500 characters, `type` a word of up to " +
    "64 characters, `content` HTML of up to 1 000 000 characters, sanitized before the " +
    "Parser writes it; an `update` needs `existingNoteId`. Unknown fields are a 400 at the top " +
    "level and dropped inside entities (as the Parser does), so a review's proposals can be " +
    "sent back as they came. The notes written are in the caller's semantic index when it " +
    "answers. After the AI deadline the 504 " +
    "names `historyPath`; a repeat of the request gets the answer and writes nothing twice.",
  responses: {
    200: {
      description: "`{ summary, created, updated, skipped, duplicates, relations }`",
      schema: writeResult,
    },
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
  answer: writeAnswer,
  reply: async (data, ctx) => {
    await indexWritten(ctx, data);
    return data;
  },
  ai: AI_WORK,
}));

/** The brain-dump runs: the three modes, the stream and the commit of a review. */
export const brainDumpRunRoutes: Route[] = [brainDump, brainDumpStream, commit];
