/**
 * Parser test double, brain dump: the `/brain-dump/*` group,
 * owner-only and rate-limited as one group. The "model" is deterministic: capitalised
 * multi-word names (and titles of existing `#lore` notes) found in the text are the entities,
 * each typed from keywords in or next to its name; an existing `#lore` note with the same title
 * is updated (its content plus the new sentences), anything else is created under
 * `app_config.loreRootNoteId` (default `root`) with `#lore`, `#loreType` and `~template`, all
 * through the user's own Core integration over ETAPI, like the real one.
 *
 * Modelled: the three modes (inbox stores nothing), `INVALID_MODEL`, the preflight, the
 * idempotency cache (`[cached] …`; a hit in the stream sends the stored `parsedJson`), history
 * rows only when something was written, cursor paging per user, detail and diffs (revision
 * content fetched live from Core, failures → null), commit, the batch queue with one FIFO
 * worker, cancel (200 even for an unknown batch), `llm_call_log` rows (task `brain-dump`) and a
 * wipe hook for the history. The SSE stream sends the exact events, `: keepalive` comments and
 * both error shapes. Knobs ({@link BrainDumpSimOptions}) are read per request, so a test may
 * change them between requests.
 *
 * @module
 */
import { createHash, randomBytes } from "node:crypto";
import {
  etapi,
  ETAPI_TIMEOUT_MS,
  type EtapiTarget,
  json,
  type ParserCtx,
  type ParserFeatureDeps,
  type ParserRoute,
  RATE_GROUPS,
  simEventStream,
  t,
  validate,
  validationReply,
} from "./parser_kit.ts";
import { cuid } from "./parser_store.ts";
import { indexNote, RAG_DEFAULT_USER } from "./parser_rag.ts";
import { sleep, waitForAbort } from "./sim_http.ts";
import { LORE_TYPES } from "./world.ts";

/** How the double's model calls fail when {@link BrainDumpSimOptions.llmFailure} is set. */
export type LlmFailure =
  /** Non-stream: 500 `LLM returned invalid JSON: …`; stream: the `BRAIN_DUMP_FAILED` shape. */
  | "invalid-json"
  /** Non-stream: 500 model-router timeout; stream: `{type,error,code:"TIMEOUT"}` mid-stream. */
  | "timeout"
  /** Non-stream: 500 text; stream: `{type,error,code:"NO_MODEL"}` before any token. */
  | "no-model"
  /** Non-stream: 500 text; stream: `{type,error}` without a code. */
  | "provider";

/** Knobs of the brain-dump feature in the double (read per request). */
export interface BrainDumpSimOptions {
  /** Interval of the stream's `: keepalive` comment; default 10 000 ms like the real one. */
  keepaliveMs?: number;
  /** Pause before each stream event (default 0), so progressive delivery can be measured. */
  paceMs?: number;
  /**
   * After this many events a stream stops sending events without closing (keepalives go on):
   * a stalled upstream. It ends when the client goes away or the double closes.
   */
  stallAfterEvents?: number;
  /** Every model call fails this way (see {@link LlmFailure}). */
  llmFailure?: LlmFailure;
  /**
   * Milliseconds the model takes to answer (default 0). Like the real one it works on when the
   * client leaves: a non-stream brain dump still writes its notes after the delay.
   */
  llmDelayMs?: number;
  /** Poll interval of the batch worker; default 2 000 ms like the real one. */
  batchPollMs?: number;
  /** Called as each stream event is sent: its name and `performance.now()`. */
  onStreamEvent?(event: string, at: number): void;
  /** Called once when a client abandons a stream before its terminal event. */
  onStreamAbort?(): void;
}

/** An entity as the model proposes it (and as commit receives it). */
interface Entity {
  title: string;
  type: string;
  action: "create" | "update";
  content?: string;
  existingNoteId?: string;
}

interface NoteRef {
  noteId: string;
  title: string;
  type: string;
}

interface Duplicate {
  proposedTitle: string;
  proposedType: string;
  matches: { noteId: string; title: string; score: number }[];
}

/** `BrainDumpWriteResult` plus the internal `reindexIds` (the stream's `done.raw` keeps it). */
interface WriteResult {
  summary: string;
  created: NoteRef[];
  updated: NoteRef[];
  skipped: { title: string; reason: string }[];
  duplicates?: Duplicate[];
  reindexIds: string[];
  relations?: { noteId: string; applied: number; failed: number }[];
}

interface Revision {
  noteId: string;
  title: string;
  contentBefore: string;
  contentAfter: string;
}

/** A `brain_dump_history` row; `snapshots` holds the Core revisions taken around updates. */
interface HistoryRow {
  id: string;
  userId: string;
  rawText: string;
  rawTextHash: string;
  parsedJson: {
    entities: (Omit<Entity, "action"> & {
      noteId?: string;
      action: "created" | "updated" | "skipped";
    })[];
    summary: string;
    revisions: Revision[];
  };
  notesCreated: string[];
  notesUpdated: string[];
  model: string;
  tokensUsed: number | null;
  createdAt: Date;
  snapshots: Map<string, { before: string | null; after: string | null }>;
}

type JobStatus = "queued" | "running" | "done" | "failed" | "cancelled";

/** A `brain_dump_job` row (its JSON is the row). */
interface Job {
  id: string;
  userId: string;
  batchId: string;
  rawText: string;
  parentNoteId: string | null;
  mode: "auto" | "review";
  status: JobStatus;
  error: string | null;
  resultHistoryId: null;
  position: number;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/** One chunk of the stream; the event name is its `type`. */
type Chunk =
  | { type: "status"; stage: string; message: string }
  | { type: "reasoning" | "token"; content: string }
  | { type: "done"; raw: string; tokensUsed: number; model: string; latencyMs: number }
  | { type: "error"; error: string; code?: string };

/** What the model "answers": entities, summary, the raw JSON and its token count. */
interface Thought {
  entities: Entity[];
  summary: string;
  raw: string;
  tokens: number;
  model: string;
  latencyMs: number;
}

interface LoreNote {
  noteId: string;
  title: string;
  loreType: string | null;
}

const RAW_TEXT = t.String({ minLength: 10, maxLength: 50_000 });
const MODE = t.Union([t.Literal("auto"), t.Literal("review"), t.Literal("inbox")]);

const BRAIN_DUMP_BODY = t.Object({
  rawText: RAW_TEXT,
  mode: t.Optional(MODE),
  model: t.Optional(t.String()),
});
const STREAM_BODY = t.Object({
  rawText: RAW_TEXT,
  autoRelate: t.Optional(t.Boolean()),
  model: t.Optional(t.String()),
});
const COMMIT_BODY = t.Object({
  rawText: t.String({ minLength: 1 }),
  approvedEntities: t.Array(t.Object({
    title: t.String(),
    type: t.String(),
    action: t.Union([t.Literal("create"), t.Literal("update")]),
    content: t.Optional(t.String()),
    existingNoteId: t.Optional(t.String()),
  })),
});
const BATCH_BODY = t.Object({
  items: t.Array(
    t.Object({
      rawText: RAW_TEXT,
      parentNoteId: t.Optional(t.String()),
      mode: t.Optional(t.Union([t.Literal("auto"), t.Literal("review")])),
    }),
    { minItems: 1, maxItems: 50 },
  ),
});
const HISTORY_QUERY = t.Object({
  cursor: t.Optional(t.String()),
  limit: t.Optional(t.Number({ minimum: 1, maximum: 100 })),
});

const NOT_FOUND_ENTRY = { error: "Brain dump entry not found", code: "ENTRY_NOT_FOUND" };
const STREAM_FAILED = {
  type: "error",
  code: "BRAIN_DUMP_FAILED",
  message: "Unable to complete brain dump.",
};
const PREFLIGHT_TIMEOUT_MS = 5_000;
const DUPLICATE_THRESHOLD = 0.88;
const TOKEN_CHUNK = 48;

/** Model-call failures as the real pipeline reports them. */
const FAILURES: Record<LlmFailure, { text: string; stream: Chunk | null }> = {
  "invalid-json": { text: "LLM returned invalid JSON: Unexpected end of JSON input", stream: null },
  timeout: {
    text: '[model-router] "brain-dump" timed out after the specified duration',
    stream: { type: "error", error: "Stream stalled (no data for 15000ms)", code: "TIMEOUT" },
  },
  "no-model": {
    text: 'No models configured for task "brain-dump"',
    stream: {
      type: "error",
      error: 'No models configured for task "brain-dump"',
      code: "NO_MODEL",
    },
  },
  provider: {
    text: "Provider returned error",
    stream: { type: "error", error: "Provider returned error" },
  },
};

// ---------------------------------------------------------------------------------------------
// The deterministic "model"
// ---------------------------------------------------------------------------------------------

/** Words that start a sentence rather than a name ("Then Mira Tallowend …"). */
const LEADING_STOP = new Set(
  ("a an and as at after before but by during for from he her his in it its later meanwhile " +
    "next of on once she since so that then there these they this those to we when while " +
    "with yesterday today tomorrow")
    .split(" "),
);
const CONNECTORS = new Set(["of", "the", "de", "du", "von", "van"]);
const NAME_WORD = /^\p{Lu}[\p{L}'’-]*$/u;

/** Keywords that give a lore type: checked in the name first, then just after it. */
const TYPE_WORDS: [string, RegExp][] = [
  [
    "character",
    /^(captain|pilot|smuggler|keeper|knight|queen|king|prince|princess|merchant|priest|priestess|wizard|witch|sailor|lord|lady|she|he|who)s?$/i,
  ],
  [
    "location",
    /^(harbou?r|port|town|city|village|lighthouse|reef|coast|island|isle|forest|mountain|river|castle|tower|keep|valley|bay|cave|temple|inn|market)s?$/i,
  ],
  [
    "faction",
    /^(guild|order|brotherhood|company|clan|league|cult|council|crew|fleet)s?$/i,
  ],
  ["event", /^(flood|battle|war|siege|festival|storm|fall|coronation|pact|treaty|uprising)s?$/i],
  ["item", /^(sword|blade|ring|amulet|crown|staff|lantern|bell|ledger|relic|compass)s?$/i],
  ["creature", /^(dragon|beast|eel|serpent|wolf|monster|kraken|wyrm|hound)s?$/i],
  ["deity", /^(god|goddess|deity)s?$/i],
  ["spell", /^(spell|incantation|ritual|curse)s?$/i],
];

function sentencesOf(text: string): string[] {
  return text.split(/(?<=[.!?])\s+|\n+/).map((s) => s.trim()).filter(Boolean);
}

function wordsOf(text: string): string[] {
  return text.split(/[^\p{L}\p{N}'’-]+/u).filter(Boolean);
}

function escapeHtml(s: string): string {
  return s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
}

function decodeTitle(s: string): string {
  return s.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'").replaceAll("&amp;", "&");
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function mentions(sentence: string, title: string): boolean {
  return new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(title)}(?![\\p{L}\\p{N}])`, "iu")
    .test(sentence);
}

/** Capitalised multi-word names, leading sentence words removed, in order of appearance. */
function namesIn(text: string): { title: string; at: number }[] {
  const out: { title: string; at: number }[] = [];
  const re = /\p{Lu}[\p{L}'’-]*(?:\s+(?:(?:of|the|de|du|von|van)\s+)*\p{Lu}[\p{L}'’-]*)+/gu;
  for (const m of text.matchAll(re)) {
    const words = m[0].split(/\s+/);
    while (words.length && LEADING_STOP.has(words[0].toLowerCase())) words.shift();
    while (words.length && CONNECTORS.has(words.at(-1)!.toLowerCase())) words.pop();
    if (words.filter((w) => NAME_WORD.test(w)).length < 2) continue;
    const title = words.join(" ").replace(/['’]s$/, "");
    out.push({ title, at: m.index! + m[0].indexOf(words[0]) });
  }
  return out;
}

/**
 * The lore type of a name: keywords in the name (a place or group word wins over a title such
 * as "Captain"), then in the four words after it; `character` when nothing matches.
 */
function typeOf(title: string, text: string): string {
  const own = wordsOf(title);
  for (const [type, re] of [...TYPE_WORDS.slice(1), TYPE_WORDS[0]]) {
    if (own.some((w) => re.test(w))) return type;
  }
  const at = text.search(new RegExp(escapeRegExp(title), "i"));
  const after = at < 0 ? [] : wordsOf(text.slice(at + title.length)).slice(0, 4);
  for (const [type, re] of TYPE_WORDS) if (after.some((w) => re.test(w))) return type;
  return "character";
}

/**
 * Reads the text the way the double's model does: named entities, each with the sentences that
 * mention it as HTML; titles of existing lore notes become updates of those notes.
 */
function extract(
  rawText: string,
  index: LoreNote[],
  contentOf: Map<string, string>,
): { entities: Entity[]; summary: string } {
  const found = new Map<string, { title: string; at: number }>();
  const add = (title: string, at: number) => {
    const key = title.toLowerCase();
    if (!found.has(key) || found.get(key)!.at > at) found.set(key, { title, at });
  };
  for (const note of index) {
    const title = decodeTitle(note.title);
    if (title.length < 3) continue;
    const m = new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(title)}(?![\\p{L}\\p{N}])`, "u")
      .exec(rawText);
    if (m) add(title, m.index);
  }
  for (const n of namesIn(rawText)) add(n.title, n.at);
  const sentences = sentencesOf(rawText);
  const entities = [...found.values()].sort((a, b) => a.at - b.at).map(({ title }): Entity => {
    const paragraphs = sentences.filter((s) => mentions(s, title))
      .map((s) => `<p>${escapeHtml(s)}</p>`).join("");
    const existing = index.find((n) => decodeTitle(n.title).toLowerCase() === title.toLowerCase());
    if (existing) {
      return {
        title: decodeTitle(existing.title),
        type: existing.loreType ?? typeOf(title, rawText),
        action: "update",
        content: (contentOf.get(existing.noteId) ?? "") + paragraphs,
        existingNoteId: existing.noteId,
      };
    }
    return { title, type: typeOf(title, rawText), action: "create", content: paragraphs };
  });
  const summary = entities.length
    ? `Found ${entities.length} lore ${entities.length === 1 ? "entity" : "entities"}: ${
      entities.map((e) => `${e.title} (${e.type})`).join(", ")
    }.`
    : "No lore entities found in the text.";
  return { entities, summary };
}

/**
 * Existing notes whose title matches a proposed one well enough (the RAG check, > 0.88), in
 * either form (an embedding finds `Salt &amp; Smoke` close to `Salt & Smoke`). Each match
 * carries the title as the index holds it, Core's stored form (`r.noteTitle`), as the real one.
 */
function duplicatesOf(title: string, index: LoreNote[]): Duplicate["matches"] {
  const want = title.toLowerCase();
  return index.flatMap((n) => {
    const score = Math.max(
      ...[n.title, decodeTitle(n.title)].map((form) => {
        const have = form.toLowerCase();
        return have === want ? 0.95 : have.includes(want) || want.includes(have) ? 0.9 : 0;
      }),
    );
    return score > DUPLICATE_THRESHOLD ? [{ noteId: n.noteId, title: n.title, score }] : [];
  });
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function truncate(s: string, max: number): string {
  return s.length > max ? s.slice(0, max) : s;
}

// ---------------------------------------------------------------------------------------------
// The feature
// ---------------------------------------------------------------------------------------------

/**
 * The `/brain-dump/*` route rows of the Parser double.
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
 * const opts: BrainDumpSimOptions = { paceMs: 50, keepaliveMs: 200 };
 * const rows = brainDumpSimRoutes(deps, opts); // startParserSim({ brainDump: opts }) mounts them
 * assert.ok(rows.some((r) => r.method === "POST" && r.path === "/brain-dump/stream"));
 * opts.llmFailure = "timeout"; // read per call: the next stream ends with the TIMEOUT error event
 * ```
 */
export function brainDumpSimRoutes(
  deps: ParserFeatureDeps,
  opts: BrainDumpSimOptions,
): ParserRoute[] {
  const { store } = deps;
  const history: HistoryRow[] = [];
  const jobs: Job[] = [];
  let workerRunning = false;
  const signals = [deps.closed];

  store.wipeHooks.push((userId) => {
    for (let i = history.length - 1; i >= 0; i--) {
      if (history[i].userId === userId) history.splice(i, 1);
    }
  });

  const call = (
    target: EtapiTarget,
    method: string,
    path: string,
    body?: { json?: unknown; text?: string },
  ) => etapi(target, method, path, ETAPI_TIMEOUT_MS, signals, body);
  const callJson = async <T>(target: EtapiTarget, method: string, path: string, body?: unknown) =>
    JSON.parse(
      (await call(target, method, path, body === undefined ? undefined : { json: body }))
        .text,
    ) as T;
  const enc = encodeURIComponent;

  /** `probeAllCodex`: `GET /etapi/app-info` with a 5 s timeout. */
  const preflight = async (target: EtapiTarget): Promise<string | null> => {
    try {
      await etapi(target, "GET", "/app-info", PREFLIGHT_TIMEOUT_MS, signals);
      return null;
    } catch (e) {
      const status = /→ (\d{3}):/.exec((e as Error).message)?.[1];
      return status
        ? `AllCodex ETAPI returned HTTP ${status}`
        : "AllCodex unreachable: Unable to connect. Is the computer able to access the url?";
    }
  };

  const loreIndex = async (target: EtapiTarget): Promise<LoreNote[]> => {
    const r = await callJson<{
      results: {
        noteId: string;
        title: string;
        attributes: { type: string; name: string; value: string }[];
      }[];
    }>(target, "GET", `/notes?search=${enc("#lore")}`);
    return r.results.map((n) => ({
      noteId: n.noteId,
      title: n.title,
      loreType: n.attributes.find((a) => a.type === "label" && a.name === "loreType")?.value ??
        null,
    }));
  };

  const cachedRow = (userId: string, hash: string) =>
    history.filter((h) => h.userId === userId && h.rawTextHash === hash).reverse()
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())[0];

  const modelFor = (requested?: string) =>
    requested ?? deps.models()["brain-dump"]?.models[0] ?? "openrouter/auto";

  /** RAG context plus the model call; logs the call in `llm_call_log`. */
  const think = async (
    target: EtapiTarget,
    rawText: string,
    requested?: string,
  ): Promise<Thought & { index: LoreNote[] }> => {
    const index = await loreIndex(target).catch(() => []);
    const contentOf = new Map<string, string>();
    for (const note of index) {
      if (!mentions(rawText, decodeTitle(note.title))) continue;
      const r = await call(target, "GET", `/notes/${enc(note.noteId)}/content`).catch(() => null);
      if (r) contentOf.set(note.noteId, r.text);
    }
    const { entities, summary } = extract(rawText, index, contentOf);
    const raw = JSON.stringify({ entities, summary });
    const tokens = Math.ceil(rawText.length / 4) + Math.ceil(raw.length / 4);
    const model = modelFor(requested);
    const latencyMs = 40 + Math.ceil(tokens / 10);
    return { entities, summary, raw, tokens, model, latencyMs, index };
  };

  const logCall = (userId: string, th: Thought) =>
    store.recordLlmCall({
      userId,
      task: "brain-dump",
      model: th.model,
      tokens: th.tokens,
      costUsd: Math.round(th.tokens * 2) / 1_000_000,
      latencyMs: th.latencyMs,
    });

  /** The newest revision of a note after taking a snapshot (`POST …/revision`). */
  const snapshot = async (target: EtapiTarget, noteId: string): Promise<string | null> => {
    await call(target, "POST", `/notes/${enc(noteId)}/revision`);
    const list = await callJson<{ revisionId: string }[]>(
      target,
      "GET",
      `/notes/${enc(noteId)}/revisions`,
    );
    return list[0]?.revisionId ?? null;
  };

  /** `_writeEntitiesToAllCodex`: writes, auto-relates, and records history when it wrote. */
  const writeEntities = async (
    target: EtapiTarget,
    userId: string,
    input: Pick<Thought, "entities" | "summary" | "tokens" | "model"> & {
      rawText: string;
      hash: string;
      autoRelate: boolean;
    },
  ): Promise<WriteResult> => {
    const created: NoteRef[] = [];
    const updated: NoteRef[] = [];
    const skipped: WriteResult["skipped"] = [];
    const duplicates: Duplicate[] = [];
    const reindexIds: string[] = [];
    const revisions: Revision[] = [];
    const snapshots: HistoryRow["snapshots"] = new Map();
    const index = await loreIndex(target).catch(() => []);
    const parentNoteId = store.appConfig.get("loreRootNoteId") ?? "root";

    for (const entity of input.entities) {
      try {
        if (entity.action === "create" || !entity.existingNoteId) {
          const matches = duplicatesOf(entity.title, index);
          if (matches.length) {
            duplicates.push({ proposedTitle: entity.title, proposedType: entity.type, matches });
            const exact = matches.find((d) => d.title.toLowerCase() === entity.title.toLowerCase());
            if (exact) {
              skipped.push({
                title: entity.title,
                reason: `Possible duplicate of "${exact.title}" (${
                  Math.round(exact.score * 100)
                }% match)`,
              });
              continue;
            }
          }
        }
        if (entity.action === "update" && entity.existingNoteId) {
          const id = entity.existingNoteId;
          const before = (await call(target, "GET", `/notes/${enc(id)}/content`)).text;
          const revBefore = await snapshot(target, id);
          await call(target, "PATCH", `/notes/${enc(id)}`, { json: { title: entity.title } });
          if (entity.content) {
            await call(target, "PUT", `/notes/${enc(id)}/content`, { text: entity.content });
          }
          const revAfter = await snapshot(target, id);
          snapshots.set(id, { before: revBefore, after: revAfter });
          revisions.push({
            noteId: id,
            title: entity.title,
            contentBefore: before,
            contentAfter: entity.content || before,
          });
          updated.push({ noteId: id, title: entity.title, type: entity.type });
          reindexIds.push(id);
        } else {
          const { note } = await callJson<{ note: { noteId: string } }>(
            target,
            "POST",
            "/create-note",
            { parentNoteId, title: entity.title, type: "text", content: entity.content ?? "" },
          );
          const attr = (type: string, name: string, value: string) =>
            call(target, "POST", "/attributes", {
              json: { noteId: note.noteId, type, name, value },
            });
          if ((LORE_TYPES as readonly string[]).includes(entity.type)) {
            // a missing template is logged and skipped by the real pipeline
            await attr("relation", "template", `_template_${entity.type}`).catch(() => {});
          }
          await attr("label", "lore", "");
          await attr("label", "loreType", entity.type);
          created.push({ noteId: note.noteId, title: entity.title, type: entity.type });
          reindexIds.push(note.noteId);
        }
      } catch (e) {
        skipped.push({ title: entity.title, reason: (e as Error).message });
      }
    }

    // auto-relate: a created note gets `~relRelatedTo` to what shares a sentence with it
    const relations: NonNullable<WriteResult["relations"]> = [];
    if (input.autoRelate) {
      const sentences = sentencesOf(input.rawText);
      const written = [...created, ...updated];
      for (const note of created) {
        const targets = written.filter((o) =>
          o.noteId !== note.noteId &&
          sentences.some((s) => mentions(s, note.title) && mentions(s, o.title))
        );
        if (!targets.length) continue;
        let applied = 0;
        let failed = 0;
        for (const other of targets) {
          try {
            await call(target, "POST", "/attributes", {
              json: {
                noteId: note.noteId,
                type: "relation",
                name: "relRelatedTo",
                value: other.noteId,
              },
            });
            applied++;
          } catch {
            failed++;
          }
        }
        relations.push({ noteId: note.noteId, applied, failed });
      }
    }

    if (created.length || updated.length) {
      history.push({
        id: crypto.randomUUID(), // set by the pipeline, not Prisma's cuid() default
        userId,
        rawText: input.rawText,
        rawTextHash: input.hash,
        parsedJson: {
          entities: input.entities.map((e) => {
            const c = created.find((n) => n.title === e.title);
            const u = updated.find((n) => n.title === e.title);
            return {
              ...e,
              noteId: c?.noteId ?? u?.noteId,
              action: c ? "created" : u ? "updated" : "skipped",
            };
          }),
          summary: input.summary,
          revisions,
        },
        notesCreated: created.map((n) => n.noteId),
        notesUpdated: updated.map((n) => n.noteId),
        model: input.model,
        tokensUsed: input.tokens,
        createdAt: store.now(),
        snapshots,
      });
    }
    return {
      summary: input.summary,
      created,
      updated,
      skipped,
      ...(duplicates.length ? { duplicates } : {}),
      reindexIds,
      ...(relations.length ? { relations } : {}),
    };
  };

  /**
   * The routes' reindex of written notes: `indexNote(noteId, credentials)` without a userId, so
   * the chunks are stored for user `"default"` (only the `rag_index_meta` titles are visible to
   * the owner). A background task in the real service; awaited here, failures ignored.
   */
  const reindexWritten = async (target: EtapiTarget, noteIds: string[]) => {
    for (const noteId of noteIds) {
      await indexNote(store, target, noteId, RAG_DEFAULT_USER, [deps.closed]).catch(() => {});
    }
  };

  /**
   * `runBrainDump` (the non-streaming route and the batch worker); `reindex` is the route's
   * background reindex (the worker has none).
   */
  const runBrainDump = async (
    target: EtapiTarget,
    userId: string,
    rawText: string,
    mode: "auto" | "review" | "inbox",
    model?: string,
    reindex = false,
  ): Promise<unknown> => {
    if (mode === "inbox") return { mode: "inbox", queued: true };
    const down = await preflight(target);
    if (down) throw new Error(`AllCodex is not connected: ${down}`);
    const hash = sha256(rawText);
    if (mode === "auto") {
      const cached = cachedRow(userId, hash);
      if (cached) {
        return {
          summary: `[cached] ${cached.parsedJson.summary}`,
          created: [],
          updated: [],
          skipped: [],
        };
      }
    }
    if (opts.llmFailure) throw new Error(FAILURES[opts.llmFailure].text);
    const th = await think(target, rawText, model);
    await sleep(opts.llmDelayMs ?? 0, signals, deps.deadlines);
    logCall(userId, th);
    if (mode === "review") {
      const duplicates: Duplicate[] = [];
      for (const e of th.entities.filter((e) => e.action === "create")) {
        const matches = duplicatesOf(e.title, th.index);
        if (matches.length) {
          duplicates.push({ proposedTitle: e.title, proposedType: e.type, matches });
        }
      }
      return {
        mode: "review",
        summary: th.summary,
        proposedEntities: th.entities,
        ...(duplicates.length ? { duplicates } : {}),
      };
    }
    const { reindexIds, ...result } = await writeEntities(target, userId, {
      ...th,
      rawText,
      hash,
      autoRelate: true,
    });
    if (reindex) await reindexWritten(target, reindexIds);
    return result;
  };

  /** `runBrainDumpStream`: the stream's chunks in the real order. */
  async function* streamChunks(
    target: EtapiTarget,
    userId: string,
    rawText: string,
    autoRelate: boolean,
    model?: string,
  ): AsyncGenerator<Chunk> {
    yield { type: "status", stage: "preflight", message: "Checking AllCodex connection..." };
    const down = await preflight(target);
    if (down) {
      yield { type: "error", error: `AllCodex is not connected: ${down}` };
      return;
    }
    const hash = sha256(rawText);
    const cached = cachedRow(userId, hash);
    if (cached) {
      yield {
        type: "status",
        stage: "cache",
        message: `Found cached result: ${cached.parsedJson.summary}`,
      };
      yield {
        type: "done",
        raw: JSON.stringify(cached.parsedJson),
        tokensUsed: 0,
        model: "cache",
        latencyMs: 0,
      };
      return;
    }
    yield { type: "status", stage: "rag", message: "Querying existing lore for context..." };
    const th = await think(target, rawText, model);
    const context = th.index.filter((n) => mentions(rawText, decodeTitle(n.title))).length;
    yield {
      type: "status",
      stage: "rag",
      message: `Found ${Math.min(context, 12)} context chunks`,
    };
    yield { type: "status", stage: "llm", message: "Sending to LLM..." };
    await sleep(opts.llmDelayMs ?? 0, signals, deps.deadlines); // keepalives go on meanwhile
    const failure = opts.llmFailure;
    if (failure === "no-model" || failure === "provider") {
      yield FAILURES[failure].stream!;
      return;
    }
    yield {
      type: "reasoning",
      content: "Looking for named people, places, groups and events in the text.",
    };
    const raw = failure === "invalid-json" ? th.raw.slice(0, th.raw.length >> 1) : th.raw;
    for (let i = 0; i < raw.length; i += TOKEN_CHUNK) {
      yield { type: "token", content: raw.slice(i, i + TOKEN_CHUNK) };
      if (failure === "timeout") {
        yield FAILURES.timeout.stream!;
        return;
      }
    }
    logCall(userId, th);
    yield { type: "status", stage: "parse", message: "Parsing entities..." };
    if (failure === "invalid-json") throw new Error(FAILURES[failure].text);
    const n = th.entities.length;
    yield { type: "status", stage: "parse", message: `Found ${n} entities` };
    yield { type: "status", stage: "write", message: `Writing ${n} entities to AllCodex...` };
    const result = await writeEntities(target, userId, { ...th, rawText, hash, autoRelate });
    yield {
      type: "status",
      stage: "complete",
      message:
        `Created ${result.created.length}, updated ${result.updated.length}, skipped ${result.skipped.length}`,
    };
    yield {
      type: "done",
      raw: JSON.stringify(result),
      tokensUsed: th.tokens,
      model: th.model,
      latencyMs: th.latencyMs,
    };
    // after the stream closes: fire-and-forget reindex (user "default"); close() awaits it
    const job = reindexWritten(target, [...result.created, ...result.updated].map((n) => n.noteId))
      .finally(() => store.background.delete(job));
    store.background.add(job);
  }

  /** The SSE response: paced events, keepalives, stall, abort detection, exception shape. */
  const sseResponse = (req: Request, chunks: AsyncGenerator<Chunk>): Response => {
    let finished = false;
    return simEventStream(req, deps, async ({ send, gone, signals }) => {
      let sent = 0;
      for await (const chunk of chunks) {
        if (opts.stallAfterEvents !== undefined && sent >= opts.stallAfterEvents) {
          await waitForAbort(signals);
        }
        if (opts.paceMs) await sleep(opts.paceMs, signals, deps.deadlines);
        if (gone()) break;
        send(chunk.type, chunk);
        sent++;
        opts.onStreamEvent?.(chunk.type, performance.now());
        if (chunk.type === "done" || chunk.type === "error") finished = true;
      }
    }, {
      heartbeatMs: opts.keepaliveMs ?? 10_000,
      errorData: () => STREAM_FAILED,
      onAbandon: () => {
        if (!finished) opts.onStreamAbort?.();
      },
    });
  };

  const invalidModel = (model: unknown): Response | null => {
    if (typeof model !== "string" || model === "") return null;
    const allowed = deps.models()["brain-dump"]?.models ?? [];
    if (allowed.includes(model)) return null;
    return json(400, {
      error: "INVALID_MODEL",
      message: `Model not in configured chain. Allowed: ${allowed.join(", ")}`,
    });
  };

  // -- batch worker ----------------------------------------------------------------------------

  const runJob = async (job: Job) => {
    job.status = "running";
    job.startedAt = store.now();
    try {
      await runBrainDump(deps.coreFor(job.userId), job.userId, job.rawText, job.mode);
      job.status = "done";
    } catch (e) {
      job.status = "failed";
      job.error = truncate((e as Error).message, 500);
    }
    job.finishedAt = store.now();
  };

  /** One in-process worker, FIFO by `createdAt` across users; started when work arrives. */
  const startWorker = () => {
    if (workerRunning) return;
    workerRunning = true;
    void (async () => {
      try {
        while (!deps.closed?.aborted) {
          await sleep(opts.batchPollMs ?? 2_000, signals, deps.deadlines);
          if (deps.closed?.aborted) break;
          const next = jobs.filter((j) => j.status === "queued")
            .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())[0];
          if (!next) break;
          await runJob(next);
        }
      } finally {
        workerRunning = false;
      }
    })();
  };

  // -- routes ----------------------------------------------------------------------------------

  const userOf = (c: ParserCtx) => c.auth!.user.id;
  const rate = RATE_GROUPS.brainDump;

  const historyRoute = (c: ParserCtx): Response => {
    const raw = Object.fromEntries(c.url.searchParams);
    const query: Record<string, unknown> = { ...raw };
    // t.Numeric: a numeric string is coerced before validation
    if (typeof raw.limit === "string" && raw.limit.trim() !== "" && !isNaN(Number(raw.limit))) {
      query.limit = Number(raw.limit);
    }
    const checked = validate(HISTORY_QUERY, query);
    if (checked.errors.length) {
      return validationReply("query", HISTORY_QUERY, query, checked.errors);
    }
    const limit = Math.min((query.limit as number | undefined) ?? 20, 100);
    const rows = history.filter((h) => h.userId === userOf(c)).reverse()
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
    let start = 0;
    if (typeof query.cursor === "string") {
      const at = rows.findIndex((r) => r.id === query.cursor);
      start = at < 0 ? rows.length : at + 1; // Prisma: an unknown cursor finds nothing
    }
    const page = rows.slice(start, start + limit + 1);
    const hasMore = page.length > limit;
    const items = page.slice(0, limit).map((h) => ({
      id: h.id,
      rawText: h.rawText,
      notesCreated: h.notesCreated,
      notesUpdated: h.notesUpdated,
      model: h.model,
      tokensUsed: h.tokensUsed,
      createdAt: h.createdAt,
    }));
    return json(200, { items, nextCursor: hasMore ? items.at(-1)!.id : null, hasMore });
  };

  const ownRow = (c: ParserCtx) =>
    history.find((h) => h.id === c.params.id && h.userId === userOf(c));

  const diffsRoute = async (c: ParserCtx): Promise<Response> => {
    const row = ownRow(c);
    if (!row) return json(404, NOT_FOUND_ENTRY);
    const target = deps.coreFor(userOf(c));
    const content = async (revisionId: string | null) => {
      if (!revisionId) return null;
      try {
        return (await call(target, "GET", `/revisions/${enc(revisionId)}/content`)).text;
      } catch {
        return null;
      }
    };
    const diffs = [
      ...row.notesCreated.map((noteId) => ({
        noteId,
        action: "created",
        revisionIdBefore: null,
        revisionIdAfter: null,
        contentBefore: null,
        contentAfter: null,
      })),
      ...await Promise.all(row.notesUpdated.map(async (noteId) => {
        const s = row.snapshots.get(noteId) ?? { before: null, after: null };
        return {
          noteId,
          action: "updated",
          revisionIdBefore: s.before,
          revisionIdAfter: s.after,
          contentBefore: await content(s.before),
          contentAfter: await content(s.after),
        };
      })),
    ];
    return json(200, { diffs });
  };

  const batchStatus = (c: ParserCtx): Response => {
    const own = jobs.filter((j) => j.batchId === c.params.batchId && j.userId === userOf(c))
      .sort((a, b) => a.position - b.position);
    if (!own.length) return json(404, { error: "BATCH_NOT_FOUND" });
    const counts: Partial<Record<JobStatus, number>> = {};
    for (const j of own) counts[j.status] = (counts[j.status] ?? 0) + 1;
    const terminal = !counts.queued && !counts.running;
    return json(200, { batchId: c.params.batchId, jobs: own, counts, terminal });
  };

  return [
    {
      method: "POST",
      path: "/brain-dump",
      auth: "owner",
      body: BRAIN_DUMP_BODY,
      rate,
      handler: async (c) => {
        const b = c.body as { rawText: string; mode?: "auto" | "review" | "inbox"; model?: string };
        const refused = invalidModel(b.model);
        if (refused) return refused;
        const target = deps.coreFor(userOf(c));
        return json(
          200,
          await runBrainDump(target, userOf(c), b.rawText, b.mode ?? "auto", b.model, true),
        );
      },
    },
    {
      method: "POST",
      path: "/brain-dump/stream",
      auth: "owner",
      body: STREAM_BODY,
      rate,
      handler: (c) => {
        const b = c.body as { rawText: string; autoRelate?: boolean; model?: string };
        const refused = invalidModel(b.model);
        if (refused) return refused;
        const target = deps.coreFor(userOf(c));
        const chunks = streamChunks(target, userOf(c), b.rawText, b.autoRelate ?? true, b.model);
        return sseResponse(c.req, chunks);
      },
    },
    {
      method: "POST",
      path: "/brain-dump/commit",
      auth: "owner",
      body: COMMIT_BODY,
      rate,
      handler: async (c) => {
        const b = c.body as { rawText: string; approvedEntities: Entity[] };
        const target = deps.coreFor(userOf(c));
        const down = await preflight(target);
        if (down) throw new Error(`AllCodex is not connected: ${down}`);
        const entities = b.approvedEntities.map((e): Entity => ({
          title: e.title,
          type: e.type,
          action: e.action === "update" ? "update" : "create",
          content: e.content ?? "",
          existingNoteId: e.existingNoteId,
        }));
        const { reindexIds, ...result } = await writeEntities(target, userOf(c), {
          rawText: b.rawText,
          hash: sha256(`commit:${b.rawText}`),
          entities,
          summary: "Committed from review",
          tokens: 0,
          model: "review-commit",
          autoRelate: true,
        });
        await reindexWritten(target, reindexIds);
        return json(200, result);
      },
    },
    { method: "GET", path: "/brain-dump/history", auth: "owner", rate, handler: historyRoute },
    {
      method: "GET",
      path: "/brain-dump/history/:id",
      auth: "owner",
      rate,
      handler: (c) => {
        const row = ownRow(c);
        if (!row) return json(404, NOT_FOUND_ENTRY);
        return json(200, {
          id: row.id,
          rawText: row.rawText,
          parsedJson: row.parsedJson,
          notesCreated: row.notesCreated,
          notesUpdated: row.notesUpdated,
          model: row.model,
          tokensUsed: row.tokensUsed,
          createdAt: row.createdAt,
          summary: row.parsedJson.summary ?? null,
        });
      },
    },
    {
      method: "GET",
      path: "/brain-dump/history/:id/diffs",
      auth: "owner",
      rate,
      handler: diffsRoute,
    },
    {
      method: "POST",
      path: "/brain-dump/batch",
      auth: "owner",
      body: BATCH_BODY,
      rate,
      handler: (c) => {
        const b = c.body as {
          items: { rawText: string; parentNoteId?: string; mode?: "auto" | "review" }[];
        };
        const now = store.now();
        const batchId = `batch_${now.getTime()}_${randomBytes(4).toString("hex")}`;
        const rows = b.items.map((item, position): Job => ({
          id: cuid(),
          userId: userOf(c),
          batchId,
          rawText: item.rawText,
          parentNoteId: item.parentNoteId ?? null,
          mode: item.mode ?? "auto",
          status: "queued",
          error: null,
          resultHistoryId: null,
          position,
          createdAt: now,
          startedAt: null,
          finishedAt: null,
        }));
        jobs.push(...rows);
        startWorker();
        return json(200, { batchId, jobs: rows.map((j) => ({ id: j.id, position: j.position })) });
      },
    },
    {
      method: "GET",
      path: "/brain-dump/batch/:batchId",
      auth: "owner",
      rate,
      handler: batchStatus,
    },
    {
      method: "DELETE",
      path: "/brain-dump/batch/:batchId",
      auth: "owner",
      rate,
      handler: (c) => {
        let cancelled = 0;
        for (const j of jobs) {
          if (j.batchId === c.params.batchId && j.userId === userOf(c) && j.status === "queued") {
            j.status = "cancelled";
            j.finishedAt = store.now();
            cancelled++;
          }
        }
        return json(200, { cancelled });
      },
    },
  ];
}
