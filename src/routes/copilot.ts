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
import { buildCopilotBody } from "../lore/copilot_context.ts";
import { parserIdSchema } from "../lore/ids.ts";
import { refuseSystemNote } from "../lore/system_notes.ts";
import { defineRoute, type Route } from "../router.ts";
import { mapParserStreamError } from "../upstream/parser.ts";
import { parserAnswer, parserStreamOutcome, streamResponse } from "./parser_proxy.ts";
import { idParams } from "./schemas.ts";

/** Bounds of one turn's transcript. */
export const TRANSCRIPT_LIMITS = { messages: 50, messageChars: 20_000 } as const;

const turnBody = z.strictObject({
  transcript: z.array(z.strictObject({
    role: z.enum(["user", "assistant"]),
    content: z.string().max(TRANSCRIPT_LIMITS.messageChars)
      .refine((s) => s.trim() !== "", "must not be blank"),
  })).min(1).max(TRANSCRIPT_LIMITS.messages)
    .refine((t) => t.at(-1)?.role === "user", "the last message must be the user's"),
  sessionId: parserIdSchema.optional(),
});

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

const applyBody = z.strictObject({
  proposal: proposalSchema.refine((p) => p.targets.length > 0, "give at least one target")
    .refine(
      (p) => new Set(p.targets.map((t) => t.targetId)).size === p.targets.length,
      "each target must have its own targetId",
    ),
});

/** What both forms of a turn (JSON, stream) declare alike: backend, access and input. */
const turnRoute = {
  backend: "Parser",
  access: "private",
  tag: "copilot",
  params: idParams,
  body: { kind: "json", schema: turnBody },
} as const;

const turnResponses = {
  400: "Invalid transcript or sessionId (nothing is sent to the Parser)",
  401: "NOT_AUTHENTICATED: no Parser session or Core credentials, and logging in would give them",
  404: "No such note, or a `sessionId` the Parser does not know",
  503: "NOT_CONFIGURED: no Parser session or no Core credentials, and no login could give them",
};

/** `POST /api/lore/:id/copilot/chat` — one turn, answered as JSON. */
export const copilotChat = defineRoute({
  method: "POST",
  path: "/api/lore/:id/copilot/chat",
  summary: "One copilot turn about a note: `{ transcript, sessionId? }` → assistant message, " +
    "citations and an optional proposal",
  ...turnRoute,
  responses: {
    200: "`{ sessionId, assistantMessage, citations, proposal }` (the Parser's answer)",
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
    return json(parserAnswer(copilotAnswerSchema, turn.result));
  },
});

/** `POST /api/lore/:id/copilot/stream` — the same turn as server-sent events. */
export const copilotStream = defineRoute({
  method: "POST",
  path: "/api/lore/:id/copilot/stream",
  summary: "The same copilot turn as server-sent events (`status`, `reasoning`, `token`, " +
    "`result`, `done`; `error`)",
  ...turnRoute,
  responses: {
    200: '`text/event-stream`: our `status` `{ stage: "context" }` at once, then the Parser\'s ' +
      "events; any later failure is one terminal `error` event in the error shape",
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
  summary: "Apply an approved copilot proposal (`{ proposal }`): creates, then updates, each " +
    "all or nothing; scope re-checked",
  backend: "Core",
  access: "private",
  tag: "copilot",
  params: idParams,
  body: { kind: "json", schema: applyBody },
  responses: {
    200: "`{ updatedNoteIds, createdNoteIds, created, skipped: [{ targetId, reason }], " +
      "failed: [{ targetId, error, message, details }] }`, also when some targets failed",
    400: "Invalid proposal, or a system note (nothing written)",
    404: "No such note (nothing written)",
  },
  handler: async (ctx) => {
    refuseSystemNote(ctx.params.id, "changed");
    // detached: a client that leaves mid-apply must not stop a target between write and undo
    const core = await ctx.core({ detached: true });
    return json(
      await applyProposal(core, {
        noteId: ctx.params.id,
        proposal: ctx.body.proposal,
        concurrency: ctx.concurrency,
        loreRootId: ctx.loreRootId,
      }),
    );
  },
});

/** The copilot routes. */
export const copilotRoutes: Route[] = [copilotChat, copilotStream, copilotApply];
