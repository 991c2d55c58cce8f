/**
 * Parser conformance steps: brain dumps in every mode (inbox, review then commit, auto and its
 * idempotency cache, the stream), the history with its detail and diffs, and the batch queue.
 * Texts name one invented person after the run's tag, so whatever the model makes of them is a
 * new note; each note the Parser creates is checked in Core and then moved into the scratch note.
 *
 * @module
 */
import { z } from "zod";
import { check, factOf, ownAttrs, readLore, same, short } from "./kit.ts";
import { created, type SseEvent, streamEvents, unknownIdLike } from "./parser_steps_kit.ts";
import type { ParserStep, ParserSuiteState } from "./parser_suite.ts";

const noteRef = z.object({ noteId: z.string(), title: z.string(), type: z.string() });
const writeResult = z.object({
  summary: z.string(),
  created: z.array(noteRef),
  updated: z.array(noteRef),
  skipped: z.array(z.object({ title: z.string(), reason: z.string() })),
  duplicates: z.array(z.unknown()),
  relations: z.array(z.unknown()),
});
const autoAnswer = writeResult.extend({ mode: z.literal("auto"), cached: z.boolean() });
const reviewAnswer = z.object({
  mode: z.literal("review"),
  summary: z.string(),
  proposedEntities: z.array(z.looseObject({
    title: z.string().min(1),
    type: z.string().min(1),
    action: z.enum(["create", "update"]),
    content: z.string().optional(),
  })),
  duplicates: z.array(z.unknown()),
});
const historyItem = z.object({
  id: z.string().min(1),
  rawText: z.string(),
  notesCreated: z.array(z.string()),
  notesUpdated: z.array(z.string()),
  model: z.string().nullable(),
  tokensUsed: z.number().nullable(),
  createdAt: z.string(),
});
/** The list is a bare array; each entry also says when (`timestamp`) and how many notes. */
const historySchema = z.array(historyItem.extend({
  timestamp: z.string(),
  entityCount: z.number().int().min(0),
}));
const detailSchema = historyItem.extend({
  summary: z.string().nullable(),
  parsedJson: z.object({
    entities: z.array(z.looseObject({
      title: z.string(),
      action: z.enum(["created", "updated", "skipped"]),
      noteId: z.string().optional(),
    })),
    summary: z.string().optional(),
    revisions: z.array(z.unknown()),
  }).nullable(),
});
const diffsSchema = z.object({
  diffs: z.array(z.object({
    noteId: z.string(),
    action: z.enum(["created", "updated"]),
    revisionIdBefore: z.string().nullable(),
    revisionIdAfter: z.string().nullable(),
    contentBefore: z.string().nullable(),
    contentAfter: z.string().nullable(),
  })),
});
const STATUSES = ["queued", "running", "done", "failed", "cancelled"] as const;
const batchSchema = z.object({
  batchId: z.string(),
  jobs: z.array(z.looseObject({
    id: z.string(),
    position: z.number().int(),
    mode: z.enum(["auto", "review"]),
    status: z.enum(STATUSES),
    error: z.string().nullable(),
  })),
  counts: z.record(z.enum(STATUSES), z.number().int().min(0)),
  terminal: z.boolean(),
});

/** A well-formed batch id no batch has. */
const UNKNOWN_BATCH = "/api/brain-dump/batch/batch_1_00000000";

/** Longest wait for the Parser's worker to start a batch's first job (it polls every 2 s). */
const JOB_START_MS = 30_000;

/** Batch status, read every `batchPollMs` until `done` holds, or null after `waitMs`. */
async function batchUntil(
  s: ParserSuiteState,
  path: string,
  done: (b: z.output<typeof batchSchema>) => boolean,
  waitMs: number,
): Promise<z.output<typeof batchSchema> | null> {
  const until = Date.now() + waitMs;
  for (;;) {
    const b = await s.api.json("GET", path, 200, batchSchema);
    if (done(b)) return b;
    if (Date.now() > until) return null;
    await new Promise((resolve) => setTimeout(resolve, s.batchPollMs));
  }
}

/** A surname per kind of text, so that each text names a person of its own. */
const SURNAMES: Record<string, string> = {
  inbox: "Inbarrow",
  review: "Revane",
  model: "Modrell",
  auto: "Varrow",
  stream: "Strand",
  "batch one": "Batley",
  "batch two": "Batwick",
};

/** A brain-dump text naming one invented person; `kind` keeps the run's texts distinct. */
function text(s: ParserSuiteState, kind: string): string {
  return `${s.name} ${SURNAMES[kind]}, a keeper of the drowned bell, rows out each night to ` +
    `count the lanterns of the harbour. Conformance run ${s.tag}, ${kind}.`;
}

const ragHits = z.object({
  results: z.array(z.looseObject({ noteId: z.string(), title: z.string() })),
});

/**
 * Every note is found by the caller's semantic search for its own text once the run has ended.
 * The Parser indexes a note's content, not its title, and drops hits below its similarity
 * threshold, so the probe is the note's content as Core stores it (tags stripped).
 */
async function checkIndexed(s: ParserSuiteState, notes: z.output<typeof noteRef>[]) {
  for (const n of notes) {
    const content = await s.api.call("GET", `/api/lore/${n.noteId}/content`);
    const probe = content.text.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim().slice(0, 500);
    const { results } = await s.api.json("POST", "/api/rag", 200, ragHits, {
      json: { text: probe || n.title, topK: 50 },
    });
    check(
      results.some((r) => r.noteId === n.noteId && r.title === n.title),
      `created note ${n.noteId} is not in the caller's semantic index`,
    );
  }
}

/** Every created note is a lore note in Core with the type the Parser reported. */
async function checkCreated(s: ParserSuiteState, notes: z.output<typeof noteRef>[]) {
  for (const n of notes) {
    const note = await readLore(s, n.noteId);
    const own = ownAttrs(note);
    check(own.includes("label:lore="), `created note ${n.noteId} has no #lore`);
    same(note.loreType, n.type, `#loreType of created note ${n.noteId}`);
    same(note.title, n.title, `title of created note ${n.noteId}`);
  }
}

function historyIdOf<T extends { rawText: string }>(s: ParserSuiteState, items: T[], kind: string) {
  const row = items.find((i) => i.rawText === text(s, kind));
  check(row, `the ${kind} brain dump is not in the history`);
  return row;
}

/** The steps of this module, in run order. */
export const brainDumpSteps: ParserStep[] = [
  {
    method: "POST",
    path: "/api/brain-dump",
    check: "inbox: acknowledged; review: proposals, nothing written; unknown model 400",
    run: async (s) => {
      const inbox = await s.api.json(
        "POST",
        "/api/brain-dump",
        200,
        z.object({ mode: z.literal("inbox"), queued: z.literal(true) }),
        { json: { rawText: text(s, "inbox"), mode: "inbox" } },
      );
      same(inbox, { mode: "inbox", queued: true }, "inbox answer");
      const review = await s.api.json("POST", "/api/brain-dump", 200, reviewAnswer, {
        json: { rawText: text(s, "review"), mode: "review" },
      });
      check(review.proposedEntities.length > 0, "review proposed no entity");
      s.facts.set("reviewProposal", JSON.stringify(review.proposedEntities[0]));
      const e = await s.api.error("POST", "/api/brain-dump", 400, "UPSTREAM_REJECTED", {
        json: { rawText: text(s, "model"), model: `no-such-model-${s.tag}` },
      });
      same((e.details as { upstreamCode?: string })?.upstreamCode, "INVALID_MODEL", "code");
      await s.api.error("POST", "/api/brain-dump", 400, "INVALID_REQUEST", {
        json: { rawText: "too short" },
      });
    },
  },
  {
    method: "POST",
    path: "/api/brain-dump/commit",
    check: "the reviewed entity becomes a lore note; its content sanitized first",
    run: async (s) => {
      const proposal = JSON.parse(factOf(s, "reviewProposal")) as { title: string; type: string };
      const r = await s.api.json("POST", "/api/brain-dump/commit", 200, writeResult, {
        json: {
          rawText: text(s, "review"),
          approvedEntities: [{
            title: proposal.title,
            type: proposal.type,
            action: "create",
            content: `<p>Reviewed ${s.tag}.</p><script>alert(1)</script>`,
          }],
        },
      });
      created(s, r.created.map((n) => n.noteId));
      same(r.created.length, 1, "notes created by the commit");
      await checkCreated(s, r.created);
      const content = await s.api.call("GET", `/api/lore/${r.created[0].noteId}/content`);
      check(content.text.includes(`Reviewed ${s.tag}.`), "the committed content is not stored");
      check(!/<script/i.test(content.text), "a script reached Core through commit");
      s.facts.set("commitNote", r.created[0].noteId);
    },
  },
  {
    method: "POST",
    path: "/api/brain-dump",
    check: "auto writes lore notes, in the caller's semantic index when it answers; the same " +
      "text again is the cache: nothing new written",
    run: async (s) => {
      const first = await s.api.json("POST", "/api/brain-dump", 200, autoAnswer, {
        json: { rawText: text(s, "auto"), mode: "auto" },
      });
      created(s, first.created.map((n) => n.noteId));
      same(first.cached, false, "first answer cached");
      check(first.created.length > 0, `auto created nothing (${short(first.summary, 80)})`);
      await checkCreated(s, first.created);
      await checkIndexed(s, first.created);
      s.facts.set("autoNotes", JSON.stringify(first.created));
      const again = await s.api.json("POST", "/api/brain-dump", 200, autoAnswer, {
        json: { rawText: text(s, "auto") },
      });
      same(again.cached, true, "the repeated text answered from the cache");
      check(again.summary.startsWith("[cached] "), "cached summary does not say so");
      same([again.created, again.updated], [[], []], "notes written by the cached answer");
    },
  },
  {
    method: "POST",
    path: "/api/brain-dump/stream",
    check: "status/token events, then done with the written notes (each a lore note, in the " +
      "caller's semantic index when the stream ends)",
    run: async (s) => {
      const events = await streamEvents(s, "/api/brain-dump/stream", {
        rawText: text(s, "stream"),
      });
      const names = new Set(events.map((e) => e.event));
      const unknown = [...names].filter((n) =>
        !["status", "reasoning", "token", "done"].includes(n)
      );
      same(unknown, [], "unexpected event names");
      check(names.has("status"), "no status event");
      for (const e of events) {
        same((e.data as { type?: string }).type, e.event, `type inside the ${e.event} event`);
      }
      const done = events.at(-1) as SseEvent & { data: { raw: string } };
      const result = writeResult.partial({ duplicates: true, relations: true })
        .parse(JSON.parse(done.data.raw));
      created(s, result.created.map((n) => n.noteId));
      check(result.created.length > 0, "the stream created nothing");
      await checkCreated(s, result.created);
      await checkIndexed(s, result.created);
    },
  },
  {
    method: "GET",
    path: "/api/brain-dump/history",
    check: "a bare array, newest first, the run's writes listed with their notes; the " +
      "X-Next-Cursor header pages on",
    run: async (s) => {
      const items = await s.api.json("GET", "/api/brain-dump/history", 200, historySchema);
      check(items.length <= 20, `${items.length} items on a page of 20`);
      const times = items.map((i) => Date.parse(i.createdAt));
      check(times.every((t, i) => i === 0 || t <= times[i - 1]), "items are not newest first");
      for (const i of items) {
        same(i.timestamp, i.createdAt, "timestamp");
        same(i.entityCount, i.notesCreated.length + i.notesUpdated.length, "entityCount");
      }
      const auto = historyIdOf(s, items, "auto");
      const stream = historyIdOf(s, items, "stream");
      const commit = items.find((i) => i.rawText === text(s, "review"));
      check(commit, "the commit is not in the history");
      check(commit.notesCreated.includes(factOf(s, "commitNote")), "commit's note not listed");
      const autoNotes = JSON.parse(factOf(s, "autoNotes")) as { noteId: string }[];
      same(auto.notesCreated, autoNotes.map((n) => n.noteId), "notes of the auto brain dump");
      check(
        items.indexOf(stream) < items.indexOf(auto),
        "the stream (later) is not listed before the auto brain dump",
      );
      check(
        !items.some((i) => i.rawText === text(s, "inbox")),
        "the inbox text was stored although nothing was written",
      );
      s.facts.set("autoHistoryId", auto.id);
      const first = await s.api.call("GET", "/api/brain-dump/history?limit=1");
      same(first.status, 200, "status of a page of one");
      const cursor = first.headers.get("x-next-cursor");
      same(cursor, items[0].id, "X-Next-Cursor of a page of one");
      const next = await s.api.json(
        "GET",
        `/api/brain-dump/history?limit=1&cursor=${encodeURIComponent(cursor ?? "")}`,
        200,
        historySchema,
      );
      same(next[0]?.id, items[1]?.id, "first item after the cursor");
    },
  },
  {
    method: "GET",
    path: "/api/brain-dump/history/:id",
    check: "the auto brain dump in full: text, entities with their notes, summary; unknown 404",
    run: async (s) => {
      const id = factOf(s, "autoHistoryId");
      const d = await s.api.json(
        "GET",
        `/api/brain-dump/history/${encodeURIComponent(id)}`,
        200,
        detailSchema,
      );
      same(d.rawText, text(s, "auto"), "rawText");
      const autoNotes = JSON.parse(factOf(s, "autoNotes")) as { noteId: string }[];
      const made = d.parsedJson?.entities.filter((e) => e.action === "created")
        .map((e) => e.noteId) ?? [];
      same(made, autoNotes.map((n) => n.noteId), "entities created, with their notes");
      check(d.summary, "no summary");
      await s.api.error(
        "GET",
        `/api/brain-dump/history/${encodeURIComponent(unknownIdLike(id))}`,
        404,
        "NOT_FOUND",
      );
    },
  },
  {
    method: "GET",
    path: "/api/brain-dump/:id/diffs",
    check: "one created diff per new note (no revisions before); unknown 404",
    run: async (s) => {
      const id = factOf(s, "autoHistoryId");
      const { diffs } = await s.api.json(
        "GET",
        `/api/brain-dump/${encodeURIComponent(id)}/diffs`,
        200,
        diffsSchema,
      );
      const autoNotes = JSON.parse(factOf(s, "autoNotes")) as { noteId: string }[];
      same(diffs.map((d) => d.noteId).sort(), autoNotes.map((n) => n.noteId).sort(), "notes");
      for (const d of diffs) {
        same([d.action, d.revisionIdBefore, d.contentBefore], ["created", null, null], "a diff");
      }
      await s.api.error(
        "GET",
        `/api/brain-dump/${encodeURIComponent(unknownIdLike(id))}/diffs`,
        404,
        "NOT_FOUND",
      );
    },
  },
  {
    method: "POST",
    path: "/api/brain-dump/batch",
    check: "two review jobs queued in order under a batch id",
    run: async (s) => {
      const r = await s.api.json(
        "POST",
        "/api/brain-dump/batch",
        200,
        z.object({
          batchId: z.string(),
          jobs: z.array(z.object({ id: z.string(), position: z.number() })),
        }),
        {
          json: {
            items: [
              { rawText: text(s, "batch one"), mode: "review" },
              { rawText: text(s, "batch two"), mode: "review" },
            ],
          },
        },
      );
      same(r.jobs.map((j) => j.position), [0, 1], "job positions");
      s.facts.set("batchId", r.batchId);
    },
  },
  {
    method: "DELETE",
    path: "/api/brain-dump/batch/:batchId",
    check: "once the first job has started: cancels the rest; an unknown batch cancels 0",
    run: async (s) => {
      const path = `/api/brain-dump/batch/${factOf(s, "batchId")}`;
      const started = await batchUntil(
        s,
        path,
        (b) => b.jobs[0]?.status !== "queued",
        JOB_START_MS,
      );
      check(started, `the Parser's worker started no job within ${JOB_START_MS / 1000} s`);
      const schema = z.object({ cancelled: z.number().int().min(0) });
      const r = await s.api.json("DELETE", path, 200, schema);
      check(r.cancelled <= 1, `${r.cancelled} jobs cancelled, but the first had started`);
      s.facts.set("cancelled", String(r.cancelled));
      const none = await s.api.json("DELETE", UNKNOWN_BATCH, 200, schema);
      same(none.cancelled, 0, "cancelled in an unknown batch");
    },
  },
  {
    method: "GET",
    path: "/api/brain-dump/batch/:batchId",
    check: "both jobs in order, the first done, cancelled as reported; counts add up; unknown 404",
    run: async (s) => {
      const path = `/api/brain-dump/batch/${factOf(s, "batchId")}`;
      const b = await batchUntil(s, path, (b) => b.terminal, s.batchWaitMs);
      check(b, `not finished after ${s.batchWaitMs / 1000} s`);
      same(b.jobs.map((j) => j.position), [0, 1], "job order");
      same(Object.keys(b.counts).sort(), [...STATUSES].sort(), "count keys");
      same(b.counts.cancelled, Number(factOf(s, "cancelled")), "cancelled jobs");
      same(
        b.counts.done + b.counts.cancelled,
        2,
        `done and cancelled (${JSON.stringify(b.counts)})`,
      );
      same([b.jobs[0].status, b.jobs[0].error], ["done", null], "the first job (a review)");
      await s.api.error("GET", UNKNOWN_BATCH, 404, "NOT_FOUND");
      return `finished: ${b.counts.done} done, ${b.counts.cancelled} cancelled before it started`;
    },
  },
];
