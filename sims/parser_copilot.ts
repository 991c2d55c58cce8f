/**
 * Parser test double, article copilot: `POST /copilot/article/stream` (the service never calls
 * the Parser's unstreamed variant) with TypeBox validation (422), the owner guard, the
 * `copilot` rate-limit group, `lore_sessions` per user (404 JSON for an unknown or foreign
 * session, before any SSE), the scope rules checked after the "LLM" (an `error` event
 * followed by `done`), `llm_call_log` rows (task `article-copilot`) and the
 * stream's event order `status`, `reasoning`/`token`*, `result`, `done` (no heartbeat, no `type`
 * in `data`).
 *
 * The "LLM" is deterministic and reads the last user message:
 * - `propose: <JSON>` answers with exactly that proposal (`{ targets: [...] }`; the list fields
 *   and `rationale` get defaults), or, when it is not JSON, with malformed output;
 * - `add <type> <Name>` (a relationship type: `ally`, `member of`, …) proposes that relation,
 *   bidirectional, from the current note to the linked or related note titled `<Name>`;
 * - `create a note about <Name>` (optionally `as a <loreType>`) proposes a `create` target
 *   related to the current note;
 * - `set <label> to <value>` proposes a label upsert on the current note;
 * - anything else gets a summary of the context and no proposal.
 *
 * @module
 */
import { cuid, type ParserStore } from "./parser_store.ts";
import {
  json,
  type ParserFeatureDeps,
  type ParserRoute,
  RATE_GROUPS,
  RELATIONSHIP_TYPES,
  type Schema,
  simEventStream,
  t,
  validate,
} from "./parser_kit.ts";
import { sleep, waitForAbort } from "./sim_http.ts";
import { LORE_TYPES } from "./world.ts";

/** Knobs of this feature in the double. */
export interface CopilotSimOptions {
  /** Milliseconds between two stream events (default 0). */
  paceMs?: number;
  /** Send this many stream events, then nothing more until the client goes away. */
  stallAfterEvents?: number;
  /** Pieces the answer's JSON is cut into for `token` events (default 6). */
  tokenChunks?: number;
  /** End every stream after its tokens with this LLM failure (terminal `error`, no `done`). */
  streamFailure?: { error: string; code?: "TIMEOUT" | "NO_MODEL" };
  /**
   * Milliseconds the model takes before its first output (default 0); the stream sends nothing
   * meanwhile (it has no heartbeat).
   */
  llmDelayMs?: number;
}

/** Compaction threshold of `lore_sessions.tokensAccumulated` (`SESSION_TOKEN_THRESHOLD`). */
export const SESSION_TOKEN_THRESHOLD = 80_000;

/** A `lore_sessions` row with its messages. */
export interface CopilotSession {
  id: string;
  userId: string;
  title: string;
  messages: { role: "user" | "assistant"; content: string; createdAt: Date }[];
  /** The summary left by the last compaction, if any. */
  summary: string | null;
  tokensAccumulated: number;
  createdAt: Date;
  updatedAt: Date;
}

/** A stream the client left before it ended. */
export interface AbortedCopilotStream {
  sessionId: string;
  /** Events written before the client went away. */
  eventsSent: number;
  at: Date;
}

/** The copilot's rows in one double. */
export interface CopilotSimState {
  sessions: Map<string, CopilotSession>;
  aborted: AbortedCopilotStream[];
  /** Every validated request body received, newest last (what the Portal sent). */
  bodies: ArticleCopilotBody[];
}

const states = new WeakMap<ParserStore, CopilotSimState>();

/**
 * The copilot rows of the double that owns `store` (created on first use).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createParserStore } from "./parser_store.ts";
 * const store = createParserStore();
 * const { sessions, aborted } = copilotSimState(store);
 * assert.equal(copilotSimState(store).sessions, sessions); // one state per store
 * assert.deepEqual(aborted, []);
 * ```
 */
export function copilotSimState(store: ParserStore): CopilotSimState {
  let s = states.get(store);
  if (!s) {
    s = { sessions: new Map(), aborted: [], bodies: [] };
    states.set(store, s);
  }
  return s;
}

const oneOf = (values: readonly string[]) => t.Union(values.map((v) => t.Literal(v)));

const noteCtx = t.Object({
  noteId: t.String(),
  title: t.String(),
  loreType: t.String(),
  contentHtml: t.String(),
  parentNoteIds: t.Array(t.String()),
  labels: t.Array(t.Object({ name: t.String(), value: t.String() })),
  relations: t.Array(t.Object({
    name: t.String(),
    targetNoteId: t.String(),
    description: t.Optional(t.String()),
  })),
});

/** `ArticleCopilotBody` (§2.6). */
const bodySchema = t.Object({
  noteId: t.String(),
  sessionId: t.Optional(t.String()),
  transcript: t.Array(t.Object({
    role: oneOf(["user", "assistant"]),
    content: t.String({ minLength: 1 }),
  })),
  currentNote: noteCtx,
  linkedNotes: t.Array(noteCtx),
  ragContext: t.Array(t.Object({
    noteId: t.String(),
    title: t.String(),
    excerpt: t.String(),
    score: t.Number(),
  })),
  writableTargetIds: t.Array(t.String()),
});

/** The LLM output schema, without `proposal` (checked on its own: it may be null). */
const outputSchema = t.Object({
  assistantMessage: t.String(),
  citations: t.Array(t.Object({
    noteId: t.String(),
    title: t.String(),
    source: oneOf(["current", "linked", "rag"]),
  })),
});

const proposalSchema: Schema = t.Object({
  targets: t.Array(t.Object({
    kind: oneOf(["update", "create"]),
    targetId: t.String(),
    title: t.Optional(t.String()),
    loreType: t.Optional(oneOf(LORE_TYPES)),
    contentHtml: t.Optional(t.String()),
    labelUpserts: t.Array(t.Object({ name: t.String(), value: t.String() })),
    labelDeletes: t.Array(t.String()),
    relationAdds: t.Array(t.Object({
      relationshipType: oneOf(RELATIONSHIP_TYPES),
      targetId: t.String(),
      targetKind: oneOf(["existing", "new"]),
      description: t.Optional(t.String()),
      bidirectional: t.Optional(t.Boolean()),
    })),
    relationDeletes: t.Array(t.Object({
      relationshipType: oneOf(RELATIONSHIP_TYPES),
      targetId: t.String(),
    })),
    rationale: t.String(),
  })),
});

interface NoteCtx {
  noteId: string;
  title: string;
  loreType: string;
}

interface ArticleCopilotBody {
  noteId: string;
  sessionId?: string;
  transcript: { role: "user" | "assistant"; content: string }[];
  currentNote: NoteCtx;
  linkedNotes: NoteCtx[];
  ragContext: { noteId: string; title: string; excerpt: string; score: number }[];
  writableTargetIds: string[];
}

interface Target {
  kind: "update" | "create";
  targetId: string;
  title?: string;
  loreType?: string;
  contentHtml?: string;
  relationAdds: { targetId: string; targetKind: "existing" | "new" }[];
}

interface Citation {
  noteId: string;
  title: string;
  source: "current" | "linked" | "rag";
}

/** What the "model" wrote: the raw JSON text and its reasoning. */
interface LlmRun {
  raw: string;
  reasoning: string[];
}

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => `&${{ "&": "amp", "<": "lt", ">": "gt", '"': "quot" }[c] ?? "#39"};`,
  );

const TYPE_PATTERN = [...RELATIONSHIP_TYPES].sort((a, b) => b.length - a.length)
  .map((type) => type.replace("_", "[_ ]")).join("|");

/** The deterministic "LLM" (see the module doc). */
function runModel(body: ArticleCopilotBody): LlmRun {
  const current = body.currentNote;
  const message = body.transcript.at(-1)?.content.trim() ?? "";
  const cite = (n: NoteCtx, source: Citation["source"]): Citation => ({
    noteId: n.noteId,
    title: n.title,
    source,
  });
  const reasoning = [
    `Reading ${current.title} and ${body.linkedNotes.length} linked notes.`,
    `I may change ${body.writableTargetIds.length} notes.`,
  ];
  const answer = (assistantMessage: string, citations: Citation[], proposal: unknown) => ({
    raw: JSON.stringify({ assistantMessage, citations, proposal }),
    reasoning,
  });
  const target = (t: Record<string, unknown>) => ({
    labelUpserts: [],
    labelDeletes: [],
    relationAdds: [],
    relationDeletes: [],
    rationale: "Requested in the conversation.",
    ...t,
  });

  const propose = /^propose\s*:\s*([\s\S]*)$/i.exec(message);
  if (propose) {
    let given: { targets?: unknown };
    try {
      given = JSON.parse(propose[1]);
    } catch {
      return { raw: `{"assistantMessage":"Here you go.","proposal":${propose[1]}`, reasoning };
    }
    const targets = Array.isArray(given?.targets)
      ? given.targets.map((x) => typeof x === "object" && x !== null ? target(x) : x)
      : given?.targets;
    return answer("Here is the change you described.", [cite(current, "current")], {
      ...given,
      targets,
    });
  }

  const relation = new RegExp(`^(?:add|make)\\s+(?:an?\\s+)?(${TYPE_PATTERN})\\s+(.+)$`, "i")
    .exec(message);
  if (relation) {
    const type = relation[1].toLowerCase().replace(" ", "_");
    const name = relation[2].replace(/[.!?]+$/, "").trim().toLowerCase();
    const known = [
      ...body.linkedNotes.map((n) => ({ n, source: "linked" as const })),
      ...body.ragContext.map((r) => ({
        n: { noteId: r.noteId, title: r.title, loreType: "" },
        source: "rag" as const,
      })),
    ];
    const found = known.find((k) => k.n.title.toLowerCase() === name) ??
      known.find((k) => k.n.title.toLowerCase().includes(name));
    if (!found) {
      return answer(
        `I found no note called "${relation[2].trim()}" near ${current.title}.`,
        [cite(current, "current")],
        null,
      );
    }
    return answer(
      `I propose recording ${found.n.title} as ${type.replace("_", " ")} of ${current.title}.`,
      [cite(current, "current"), cite(found.n, found.source)],
      {
        targets: [target({
          kind: "update",
          targetId: body.noteId,
          relationAdds: [{
            relationshipType: type,
            targetId: found.n.noteId,
            targetKind: "existing",
            description: `Named as ${type.replace("_", " ")} in the conversation`,
            bidirectional: true,
          }],
        })],
      },
    );
  }

  const create = /^create (?:a )?(?:new )?note (?:about|for|on) (.+?)(?: as an? (\w+))?[.!]?$/i
    .exec(message);
  if (create) {
    const title = create[1].trim();
    const loreType = (LORE_TYPES as readonly string[]).includes(create[2]?.toLowerCase() ?? "")
      ? create[2].toLowerCase()
      : "character";
    const targetId = `new_${title.toLowerCase().replace(/[^a-z0-9]+/g, "_")}`;
    return answer(
      `I drafted a ${loreType} note about ${title}, related to ${current.title}.`,
      [cite(current, "current")],
      {
        targets: [target({
          kind: "create",
          targetId,
          title,
          loreType,
          contentHtml: `<p>${escapeHtml(title)}, first met in ${escapeHtml(current.title)}.</p>`,
          relationAdds: [{
            relationshipType: "related_to",
            targetId: body.noteId,
            targetKind: "existing",
            bidirectional: true,
          }],
        })],
      },
    );
  }

  const set = /^set\s+#?([\p{L}\p{N}_:]+)\s+(?:to|=)\s+(.+)$/iu.exec(message);
  if (set) {
    return answer(
      `I propose setting #${set[1]} to "${set[2].trim()}" on ${current.title}.`,
      [cite(current, "current")],
      {
        targets: [target({
          kind: "update",
          targetId: body.noteId,
          labelUpserts: [{ name: set[1], value: set[2].trim() }],
        })],
      },
    );
  }

  const linked = body.linkedNotes.map((n) => n.title);
  const related = body.ragContext.map((r) => r.title);
  return answer(
    `${current.title} links to ${linked.length} notes${
      linked.length ? `: ${linked.join(", ")}` : ""
    }.${related.length ? ` Related lore: ${related.join(", ")}.` : ""}`,
    [
      cite(current, "current"),
      ...body.linkedNotes.slice(0, 3).map((n) => cite(n, "linked")),
      ...body.ragContext.slice(0, 1).map((r) => ({
        noteId: r.noteId,
        title: r.title,
        source: "rag" as const,
      })),
    ],
    null,
  );
}

/**
 * The route's checks after the LLM (§2.6): JSON, schema, then the scope rules. Returns the
 * validated output, or the message the real route throws.
 */
function checkOutput(
  body: ArticleCopilotBody,
  raw: string,
): { ok: true; output: Record<string, unknown> } | { ok: false; error: string } {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { ok: false, error: "Copilot returned invalid JSON" };
  }
  const base = validate(outputSchema, parsed);
  const proposal = parsed?.proposal ?? null;
  const checked = proposal === null ? null : validate(proposalSchema, proposal);
  if (base.errors.length || checked?.errors.length) {
    return { ok: false, error: "Copilot response failed schema validation" };
  }
  const targets = (checked?.value as { targets: Target[] } | undefined)?.targets ?? [];
  const writable = new Set(body.writableTargetIds);
  const creates = new Set(targets.filter((x) => x.kind === "create").map((x) => x.targetId));
  for (const x of targets) {
    if (x.kind === "update" && !writable.has(x.targetId)) {
      return { ok: false, error: `Proposal targets non-writable note ${x.targetId}` };
    }
    if (x.kind === "create") {
      if (!x.loreType || !x.title || x.contentHtml === undefined) {
        return {
          ok: false,
          error: `Create target ${x.targetId} needs loreType, title and content`,
        };
      }
      if (!x.relationAdds.some((r) => r.targetKind === "existing" && r.targetId === body.noteId)) {
        return { ok: false, error: `Create target ${x.targetId} must relate to the current note` };
      }
    }
    for (const r of x.relationAdds) {
      if (r.targetKind === "existing" && !writable.has(r.targetId)) {
        return { ok: false, error: `Relation targets non-writable note ${r.targetId}` };
      }
      if (r.targetKind === "new" && !creates.has(r.targetId)) {
        return { ok: false, error: `Relation targets unknown new note ${r.targetId}` };
      }
    }
  }
  return {
    ok: true,
    output: { ...(base.value as Record<string, unknown>), proposal: checked?.value ?? null },
  };
}

function chunks(text: string, n: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / Math.max(1, n)));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/**
 * This feature's route rows.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createParserStore } from "./parser_store.ts";
 * import { NOT_CONNECTED, type ParserFeatureDeps } from "./parser_kit.ts";
 * const deps: ParserFeatureDeps = {
 *   store: createParserStore(),
 *   selfUrl: () => "http://parser:3001",
 *   models: () => ({}),
 *   coreFor: () => {
 *     throw new Error(NOT_CONNECTED);
 *   },
 * };
 * const rows = copilotSimRoutes(deps, { paceMs: 20 });
 * assert.ok(rows.some((r) => r.path === "/copilot/article/stream"));
 * ```
 */
export function copilotSimRoutes(
  deps: ParserFeatureDeps,
  opts: CopilotSimOptions,
): ParserRoute[] {
  const { store } = deps;
  const state = copilotSimState(store);
  store.wipeHooks.push((userId) => {
    for (const [id, s] of state.sessions) if (s.userId === userId) state.sessions.delete(id);
  });

  /** The turn's session (created when not named), or the 404 answer. */
  const openSession = (
    body: ArticleCopilotBody,
    userId: string,
  ): CopilotSession | Response => {
    const now = store.now();
    if (body.sessionId !== undefined) {
      const s = state.sessions.get(body.sessionId);
      if (!s || s.userId !== userId) {
        return json(404, { error: "NOT_FOUND", message: "Session not found" });
      }
      return s;
    }
    const s: CopilotSession = {
      id: cuid(),
      userId,
      title: body.currentNote.title,
      messages: [],
      summary: null,
      tokensAccumulated: 0,
      createdAt: now,
      updatedAt: now,
    };
    state.sessions.set(s.id, s);
    return s;
  };

  /** Compaction (not fatal) and the user message, before the LLM runs. */
  const begin = (s: CopilotSession, body: ArticleCopilotBody) => {
    if (s.tokensAccumulated >= SESSION_TOKEN_THRESHOLD) {
      s.summary = `Summary of ${s.messages.length} earlier messages about ${s.title}.`;
      s.messages = [];
      s.tokensAccumulated = 0;
    }
    const last = body.transcript.at(-1);
    if (!last) throw new Error("Transcript is empty");
    s.messages.push({ role: "user", content: last.content, createdAt: store.now() });
  };

  const finish = (s: CopilotSession, content: string, tokens: number) => {
    s.messages.push({ role: "assistant", content, createdAt: store.now() });
    s.tokensAccumulated += tokens;
    s.updatedAt = store.now();
  };

  const modelFor = () =>
    deps.models()["article-copilot"]?.models[0] ?? deps.models()["brain-dump"]?.models[0];

  const logCall = (userId: string, model: string, tokens: number, started: number) =>
    store.recordLlmCall({
      userId,
      task: "article-copilot",
      model,
      tokens,
      costUsd: tokens * 0.000002,
      latencyMs: Math.round(performance.now() - started),
    });

  const tokensOf = (body: ArticleCopilotBody, raw: string) =>
    Math.ceil((JSON.stringify(body).length + raw.length) / 4);

  return [
    {
      method: "POST",
      path: "/copilot/article/stream",
      auth: "owner",
      body: bodySchema,
      rate: RATE_GROUPS.copilot,
      handler: ({ req, body: raw, auth }) => {
        const body = raw as ArticleCopilotBody;
        state.bodies.push(body);
        const userId = auth!.user.id;
        const session = openSession(body, userId);
        if (session instanceof Response) return session;
        begin(session, body);
        let sent = 0;
        return simEventStream(req, deps, async (sink) => {
          const send = async (event: string, data: unknown) => {
            if (opts.stallAfterEvents !== undefined && sent >= opts.stallAfterEvents) {
              await waitForAbort(sink.signals);
            }
            if (sent > 0 && opts.paceMs) await sleep(opts.paceMs, sink.signals, deps.deadlines);
            if (sink.gone()) throw new Error("client gone");
            sink.send(event, data);
            sent++;
          };
          await send("status", { stage: "llm", message: "Generating response..." });
          const model = modelFor();
          if (!model) {
            const error = 'No models configured for task "article-copilot"';
            return await send("error", { error, code: "NO_MODEL" });
          }
          const started = performance.now();
          await sleep(opts.llmDelayMs ?? 0, [deps.closed], deps.deadlines);
          const run = runModel(body);
          for (const content of run.reasoning) await send("reasoning", { content });
          for (const content of chunks(run.raw, opts.tokenChunks ?? 6)) {
            await send("token", { content });
          }
          if (opts.streamFailure) return await send("error", opts.streamFailure);
          const tokens = tokensOf(body, run.raw);
          logCall(userId, model, tokens, started);
          const checked = checkOutput(body, run.raw);
          if (checked.ok) {
            finish(session, run.raw, tokens);
            await send("result", { sessionId: session.id, ...checked.output });
          } else {
            await send("error", { error: checked.error });
          }
          const latencyMs = Math.round(performance.now() - started);
          await send("done", { tokensUsed: tokens, model, latencyMs });
        }, {
          onAbandon: () => {
            state.aborted.push({ sessionId: session.id, eventsSent: sent, at: store.now() });
          },
        });
      },
    },
  ];
}
