/**
 * The article copilot: one conversation turn about a note, as JSON or as a stream, and applying
 * an approved proposal. The turn's context (the note, the notes it links to, related lore and
 * which notes may be written) is built here from Core and the Parser's index; the Parser only
 * answers and proposes. Applying goes to Core directly, re-checking the proposal's scope.
 *
 * @module
 */
import { z } from "zod";
import { json } from "../http/response.ts";
import { applyProposal, proposalSchema } from "../lore/copilot_apply.ts";
import { buildCopilotBody, COPILOT_CONTEXT_LIMITS as LIMITS } from "../lore/copilot_context.ts";
import { parserIdSchema } from "../lore/ids.ts";
import { refuseSystemNote } from "../lore/system_notes.ts";
import { defineRoute, type Route } from "../api/router.ts";
import { mapParserStreamError } from "../upstream/parser.ts";
import {
  parserAnswer,
  parserStreamOutcome,
  streamErrorEventSchema,
  streamResponse,
} from "./parser_proxy.ts";
import { idParams } from "./schemas.ts";

/**
 * Bounds of one turn's transcript: how many messages a request may carry (`accepted`), how many
 * of the most recent the Parser is sent (`sent`), and the length of one message.
 */
export const TRANSCRIPT_LIMITS = { accepted: 1_000, sent: 50, messageChars: 20_000 } as const;

type Message = { role: "user" | "assistant"; content: string };

/**
 * The transcript as the Parser is sent it: an assistant message left empty (a turn that failed
 * before its first token, as a client keeps it) is dropped, then the most recent
 * `TRANSCRIPT_LIMITS.sent` messages are kept.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const sent = recentTranscript([
 *   { role: "user", content: "Who is she?" },
 *   { role: "assistant", content: "" },
 *   { role: "user", content: "Who is she?" },
 * ]);
 * assert.deepEqual(sent.map((m) => m.role), ["user", "user"]);
 * ```
 */
export function recentTranscript(messages: readonly Message[]): Message[] {
  return messages.filter((m) => m.role === "user" || m.content.trim() !== "")
    .slice(-TRANSCRIPT_LIMITS.sent);
}

const message = z.strictObject({
  role: z.enum(["user", "assistant"]),
  content: z.string().max(TRANSCRIPT_LIMITS.messageChars),
}).refine((m) => m.role === "assistant" || m.content.trim() !== "", {
  message: "a user message must not be blank",
  path: ["content"],
});
const conversation = z.array(message).min(1).max(TRANSCRIPT_LIMITS.accepted)
  .refine((t) => t.at(-1)?.role === "user", "the last message must be the user's");

// `transcript` is the API's word, `messages` the front end's: one of them
const turnBody = z.strictObject({
  transcript: conversation.optional(),
  messages: conversation.optional(),
  sessionId: parserIdSchema.optional(),
}).refine((b) => (b.transcript === undefined) !== (b.messages === undefined), {
  message: "give the conversation as transcript or as messages (one of them)",
  path: ["transcript"],
}).transform(({ transcript, messages, sessionId }) => ({
  transcript: recentTranscript((transcript ?? messages)!),
  ...(sessionId === undefined ? {} : { sessionId }),
}));

/** The Parser's `ArticleCopilotResponse`, as we accept and pass it on. */
export const copilotAnswerSchema = z.object({
  sessionId: parserIdSchema,
  assistantMessage: z.string(),
  citations: z.array(z.object({
    noteId: z.string(),
    title: z.string(),
    source: z.enum(["current", "linked", "rag"]),
  })),
  proposal: proposalSchema.nullable(),
});

/** The stream's events: our first `status`, then the Parser's (no `type` in their data). */
const streamEvents = {
  status: z.object({ stage: z.string(), message: z.string() }),
  reasoning: z.object({ content: z.string() }),
  token: z.object({ content: z.string() }),
  result: copilotAnswerSchema,
  done: z.object({ tokensUsed: z.number(), model: z.string(), latencyMs: z.number() }),
  error: streamErrorEventSchema,
};

/** What applying a proposal did, target by target (`ApplyReport`). */
const applyReportSchema = z.object({
  updatedNoteIds: z.array(z.string()),
  createdNoteIds: z.array(z.string()),
  created: z.array(z.object({ targetId: z.string(), noteId: z.string() })),
  skipped: z.array(z.object({ targetId: z.string(), reason: z.string() })),
  failed: z.array(z.object({
    targetId: z.string(),
    error: z.string().describe("An error code; `PARTIAL_FAILURE` when undoing failed too"),
    message: z.string(),
    details: z.unknown().optional().describe(
      "`rolledBack`, or for `PARTIAL_FAILURE` what was left behind (`leftBehind`)",
    ),
  })),
});

/**
 * What applying reported, as the front end reads it (`applied`): the notes changed and made,
 * and the targets skipped and failed, by their ids.
 */
const appliedSchema = z.object({
  updatedNoteIds: z.array(z.string()),
  createdNoteIds: z.array(z.string()),
  skipped: z.array(z.string()).describe("the skipped targets' `targetId`s"),
  failed: z.array(z.string()).describe("the failed targets' `targetId`s"),
});

const applyBody = z.strictObject({
  proposal: proposalSchema.refine((p) => p.targets.length > 0, "give at least one target")
    .refine(
      (p) => new Set(p.targets.map((t) => t.targetId)).size === p.targets.length,
      "each target must have its own targetId",
    ),
  approvedTargetIds: z.array(z.string().min(1).max(200)).min(1).max(50).optional(),
}).refine(
  (b) =>
    b.approvedTargetIds?.every((id) => b.proposal.targets.some((t) => t.targetId === id)) ??
      true,
  { message: "every approved id must name a target of the proposal", path: ["approvedTargetIds"] },
).transform(({ proposal, approvedTargetIds }) => {
  if (approvedTargetIds === undefined) return proposal;
  const approved = new Set(approvedTargetIds);
  return { targets: proposal.targets.filter((t) => approved.has(t.targetId)) };
});

/** What both forms of a turn (JSON, stream) declare alike: backend, access and input. */
const turnRoute = {
  backend: "Parser",
  access: "private",
  tag: "copilot",
  params: idParams,
  body: { kind: "json", schema: turnBody },
} as const;

/** What a turn (JSON or stream) is and what the Parser is told. */
const TURN_NOTES = `\`transcript\` (or, the front end's word, \`messages\`): the ` +
  `conversation, 1-${TRANSCRIPT_LIMITS.accepted} messages of up to ` +
  `${TRANSCRIPT_LIMITS.messageChars} characters, the last the user's; no user message may be ` +
  "blank, an empty assistant message (a turn that failed) is left out, and the Parser is " +
  `sent the most recent ${TRANSCRIPT_LIMITS.sent}. ` +
  "`sessionId` continues one of the Parser's sessions. The Parser is sent the note's " +
  `sanitized HTML (up to ${LIMITS.currentContentChars} characters), up to ` +
  `${LIMITS.linkedNotes} linked notes (own relations first, then content links; up to ` +
  `${LIMITS.linkedContentChars} characters each; protected, image and file notes left out), ` +
  `${LIMITS.ragTopK} related passages from its semantic index (a failing search gives none ` +
  "and a warning in the log, not a failed turn) and the ids a proposal may write: the note " +
  "and its linked `#lore` notes, never system or protected notes.";

const turnResponses = {
  400: "Invalid transcript or sessionId (nothing is sent to the Parser)",
  401: "UNAUTHORIZED: no Parser session or Core credentials, and logging in would give them",
  404: "No such note, or a `sessionId` the Parser does not know",
  503: "NOT_CONFIGURED: no Parser session or no Core credentials, and no login could give them",
};

/** `POST /api/lore/:id/copilot/chat` — one turn, answered as JSON. */
export const copilotChat = defineRoute({
  method: "POST",
  path: "/api/lore/:id/copilot/chat",
  summary: "One copilot turn about a note: `{ transcript | messages, sessionId? }` → assistant " +
    "message, citations and an optional proposal",
  ...turnRoute,
  description: `${TURN_NOTES} The answer is read from the Parser's stream of the same turn: ` +
    "every event is progress for the AI deadline, and its `result` event is the answer.",
  responses: {
    200: {
      description: "`{ sessionId, assistantMessage, citations: [{ noteId, title, source }], " +
        "proposal }`: the Parser's answer; `proposal` null when it proposes nothing",
      schema: copilotAnswerSchema,
    },
    ...turnResponses,
  },
  ai: {},
  handler: async (ctx) => {
    const parser = await ctx.parser();
    const core = await ctx.core();
    const body = await buildCopilotBody(core, parser, { noteId: ctx.params.id, ...ctx.body }, ctx);
    // the stream's tokens show the model is still answering; its `result` is the plain answer
    const call = { path: "/copilot/article/stream", body };
    const turn = await parserStreamOutcome(await ctx.parser({ ai: true }), call, ctx);
    if (turn.error !== undefined) throw mapParserStreamError(turn.error);
    return json(await parserAnswer(copilotAnswerSchema, turn.result));
  },
});

/** `POST /api/lore/:id/copilot/stream` — the same turn as server-sent events. */
export const copilotStream = defineRoute({
  method: "POST",
  path: "/api/lore/:id/copilot/stream",
  summary: "The same copilot turn as server-sent events (`status`, `reasoning`, `token`, " +
    "`result`, `done`; `error`)",
  ...turnRoute,
  description: `${TURN_NOTES} Our own \`status\` event (\`stage: "context"\`) comes at ` +
    "once, another when the context is loaded, then the Parser's events pass through as they " +
    "arrive: `status`, `reasoning` and `token` while the model answers, `result` (the chat " +
    "answer), `done`; the Parser reports its own failures as `error` events. Once the " +
    "stream has started, any failure of ours (context loading, a stall, the stream deadline) " +
    "ends it with one `error` event in the error shape.",
  responses: {
    200: {
      description: "Server-sent events: ours, then the Parser's",
      mediaType: "text/event-stream",
      events: streamEvents,
    },
    ...turnResponses,
  },
  handler: async (ctx) => {
    // both clients first: missing credentials stay a JSON 503, not a stream
    const parser = await ctx.parser();
    const core = await ctx.core();
    return streamResponse(ctx, async (w) => {
      await w.event("status", {
        stage: "context",
        message: "Reading the note, its links and related lore...",
      });
      const body = await buildCopilotBody(
        core,
        parser,
        { noteId: ctx.params.id, ...ctx.body },
        ctx,
      );
      await w.event("status", {
        stage: "context",
        message: `Context ready: ${body.linkedNotes.length} linked notes, ` +
          `${body.ragContext.length} related passages`,
      });
      await w.pipe(await parser.stream("POST", "/copilot/article/stream", body));
    });
  },
});

/** `POST /api/lore/:id/copilot/apply` — write an approved proposal to Core, per target. */
export const copilotApply = defineRoute({
  method: "POST",
  path: "/api/lore/:id/copilot/apply",
  summary: "Apply an approved copilot proposal (`{ proposal, approvedTargetIds? }`): creates, " +
    "then updates, each all or nothing; scope re-checked",
  backend: "Core",
  access: "private",
  tag: "copilot",
  params: idParams,
  body: { kind: "json", schema: applyBody },
  description: "`proposal.targets`: 1-50, each with its own `targetId`; " +
    "`approvedTargetIds` (the front end's), when given, names the targets to apply, the " +
    "others are left out as if the proposal did not hold them. The ids a target may " +
    "write are worked out again from Core (the client's are never trusted). A target is " +
    "skipped whole, nothing written, when it is outside them, touches a label that decides " +
    "what a note is or who sees it (`lore`, `loreType`, `template`, `draft`, `gmOnly`, " +
    "`share*`, any letter case), is a create without `loreType`, `title`, `contentHtml` or a " +
    "relation to the note, relates to a note neither writable nor created by the proposal, " +
    "or depends on a create that failed. Creates run first (made like `POST /api/lore`), then " +
    "updates; each target is all or nothing. Content is sanitized; relations are " +
    "`rel<Type>`, with an optional `#relationNote` and the inverse when bidirectional.",
  responses: {
    200: {
      description: "`{ updatedNoteIds, createdNoteIds, created: [{ targetId, noteId }], " +
        "skipped: [{ targetId, reason }], failed: [{ targetId, error, message, details }], " +
        "applied: { updatedNoteIds, createdNoteIds, skipped, failed } }`, also when some " +
        "targets failed; `applied` is the same report as the front end reads it, targets by id",
      schema: applyReportSchema.extend({ applied: appliedSchema }),
    },
    400: "Invalid proposal, or a system note (nothing written)",
    404: "No such note (nothing written)",
  },
  handler: async (ctx) => {
    refuseSystemNote(ctx.params.id, "changed");
    // detached: a client that leaves mid-apply must not stop a target between write and undo
    const core = await ctx.core({ detached: true });
    const report: z.output<typeof applyReportSchema> = await applyProposal(core, {
      noteId: ctx.params.id,
      proposal: ctx.body,
      concurrency: ctx.concurrency,
      loreRootId: ctx.loreRootId,
    });
    const applied: z.output<typeof appliedSchema> = {
      updatedNoteIds: report.updatedNoteIds,
      createdNoteIds: report.createdNoteIds,
      skipped: report.skipped.map((t) => t.targetId),
      failed: report.failed.map((t) => t.targetId),
    };
    return json({ ...report, applied });
  },
});

/** The copilot routes. */
export const copilotRoutes: Route[] = [copilotChat, copilotStream, copilotApply];
