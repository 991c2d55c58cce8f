/**
 * Brain dump (Parser): raw worldbuilding text in, lore notes out. `auto` writes at once,
 * `review` proposes entities for approval (then `commit`), `inbox` only acknowledges; the stream
 * is the auto run as server-sent events, and a non-stream auto run reads that stream too (its
 * keepalives are progress for the AI deadline). History, per-note diffs and a background batch
 * queue complete the feature. Every answer is validated; HTML in answers (proposals, history,
 * diffs) is sanitized because clients render it, and HTML a client commits is sanitized before
 * it becomes lore. What a run writes is added to the caller's semantic index before its answer
 * (or stream) ends; the Parser's own indexing files it under no user. The Core titles the Parser relays (duplicate matches, the duplicate notice of
 * a skip) are decoded to the typed text, in the stream's `done` too; the titles of proposed,
 * created and updated entities are the model's, passed on as it wrote them.
 *
 * @module
 */
import { z } from "zod";
import { readRelayed, relayedTitle, relayedTitleText } from "../core/titles.ts";
import { ApiError } from "../http/errors.ts";
import { idSchema, parserIdSchema } from "../lore/ids.ts";
import type { Ctx, Route, RouteOf } from "../api/router.ts";
import { sanitizeLoreHtml } from "../sanitize/html.ts";
import { loadHtmlEngine } from "../sanitize/html_engine.ts";
import { mapLimit } from "../util/concurrency.ts";
import { upstreamPath } from "../upstream/path.ts";
import { mapParserStreamError } from "../upstream/parser.ts";
import {
  parserAnswer,
  parserRoute,
  parserStreamRoute,
  streamErrorEventSchema,
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
// Parser answers (a trust boundary: anything else is a 502). What is passed on is their parsed
// output, so most of them are also our answers' schemas: the rewrites below (`overwrite`, a
// transform piped into its result's shape) keep that output describable.
// ---------------------------------------------------------------------------------------------

// Synchronous, like every zod check: a route whose schemas or Parser call use it is declared
// `sanitizing(…)`, which loads the HTML engine before the handler runs.
const html = z.string().overwrite((s) => sanitizeLoreHtml(s)).describe("sanitized HTML");
const htmlOrNull = html.nullable();

/** The route with the HTML engine loaded before its handler runs (see `html`). */
function sanitizing(route: Route): Route {
  const { handler } = route as RouteOf<"private">;
  return {
    ...route,
    handler: async (ctx: Ctx) => {
      await loadHtmlEngine();
      return await handler(ctx);
    },
  } as Route;
}

/**
 * Label values as the Parser writes them: lists joined with ", ", empty values left out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(labelValues({ age: 30, aliases: ["Wren", "W."], note: "" }), {
 *   age: "30",
 *   aliases: "Wren, W.",
 * });
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

const attributes = z.record(z.string(), z.unknown()).transform(labelValues)
  .pipe(z.record(z.string(), z.string()));

/** The Parser's duplicate notice: the existing note's title as Core stores it, and a score. */
const DUPLICATE_NOTICE = /^Possible duplicate of "(.*)" \((\d{1,3})% match\)$/s;

/**
 * The Parser's duplicate notice with the Core title in it as `typed` gives it; null for any
 * other text.
 */
function duplicateNotice(reason: string, typed: (stored: string) => string): string | null {
  const notice = reason.length <= 600 ? DUPLICATE_NOTICE.exec(reason) : null;
  return notice ? `Possible duplicate of "${typed(notice[1])}" (${notice[2]}% match)` : null;
}

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

const proposal = z.object({
  title: z.string(),
  type: z.string(),
  action: z.enum(["create", "update"]),
  content: html.optional(),
  existingNoteId: z.string().optional(),
  attributes: attributes.optional(),
  tags: z.array(z.string()).optional(),
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
async function autoAnswer(outcome: StreamOutcome): Promise<unknown> {
  if (outcome.error !== undefined) throw mapParserStreamError(outcome.error);
  const { raw } = await parserAnswer(streamDone, outcome.done);
  const stored = storedEntry.safeParse(raw);
  return stored.success
    ? { summary: `[cached] ${stored.data.summary}`, created: [], updated: [], skipped: [] }
    : raw;
}

/** Where the write result in a stream's `done.raw` relays Core titles, read as typed. */
const relayedInDone = z.object({
  skipped: z.array(z.object({
    // other reasons stay as the Parser wrote them: the stream passes its text on
    reason: z.string().transform((reason, ctx) =>
      duplicateNotice(reason, (stored) => relayedTitleText(stored, ctx)) ?? reason
    ),
  })).optional(),
  duplicates: z.array(z.object({ matches: z.array(z.object({ title: relayedTitle })) }))
    .optional(),
});

/**
 * The stream's `done` with the Core titles of its write result as typed (duplicate matches, the
 * duplicate notice of a skip), written back in place so the rest of `raw` keeps its bytes;
 * undefined when nothing changes (a cache hit's stored entry relays none), and for data it
 * cannot read, which then passes on as the Parser sent it.
 */
async function doneAsTyped(data: unknown): Promise<unknown> {
  const done = z.looseObject({ raw: z.string() }).safeParse(data);
  if (!done.success) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(done.data.raw);
  } catch {
    return undefined;
  }
  const read = await readRelayed(relayedInDone, raw);
  if (!read.success) return undefined;
  const result = raw as z.input<typeof relayedInDone>;
  let changed = false;
  const put = <K extends string>(into: Record<K, string>, key: K, typed: string) => {
    if (into[key] !== typed) [into[key], changed] = [typed, true];
  };
  read.data.skipped?.forEach((s, i) => put(result.skipped![i], "reason", s.reason));
  read.data.duplicates?.forEach((d, i) =>
    d.matches.forEach((m, j) => put(result.duplicates![i].matches[j], "title", m.title))
  );
  return changed ? { ...(data as Record<string, unknown>), raw: JSON.stringify(raw) } : undefined;
}

/** The stream's events as the Parser sends them: each `data` names its event in `type`. */
const streamEvents = {
  status: z.object({ type: z.literal("status"), stage: z.string(), message: z.string() }),
  reasoning: z.object({ type: z.literal("reasoning"), content: z.string() }),
  token: z.object({ type: z.literal("token"), content: z.string() }),
  done: z.object({
    type: z.literal("done"),
    raw: z.string().describe(
      "JSON: the write result (`{ summary, created, updated, skipped, … }`), or on a cache hit " +
        "the stored `{ entities, summary, revisions }`",
    ),
    tokensUsed: z.number(),
    model: z.string(),
    latencyMs: z.number(),
  }),
  error: streamErrorEventSchema,
};

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

/** A write result's notes, in a stream's `done` (a cache hit's stored entry has none). */
const writtenInDone = z.object({
  raw: z.string().transform((text) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return null;
    }
  }).pipe(z.object({
    created: z.array(z.object({ noteId: z.string() })),
    updated: z.array(z.object({ noteId: z.string() })),
  })),
});

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

const TAG = "brain-dump";

/** Brain dumps run a model (commits write for a while): what they made is also in the history. */
const AI_WORK = { historyPath: "/api/brain-dump/history" };

/**
 * The Parser counts history reads with brain dumps (10 a minute for everyone behind this
 * service): reads are kept per caller, and this caller's brain-dump writes drop them.
 */
const READS = "brain-dump";
const KEPT_READ = { group: READS, role: "read" } as const;
const CHANGES_READS = { group: READS, role: "write" } as const;
const KEPT_NOTE = " Kept per caller for `PARSER_READ_CACHE_MS` (30 s): the Parser counts these " +
  "reads with brain dumps, 10 a minute for everyone behind this service; the caller's own " +
  "brain dumps, commits and batches through this instance drop them at once.";

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
