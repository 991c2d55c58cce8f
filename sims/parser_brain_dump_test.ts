/**
 * Contract tests of the Parser double's brain-dump group, straight over HTTP against the double
 * : bodies, modes, cache, history, diffs, commit, batch,
 * the SSE stream's events, keepalives and error shapes, rate limiting.
 */
import assert from "node:assert/strict";
import type { CoreSim } from "./core.ts";
import { DEFAULT_MODELS, type ParserSimOptions } from "./parser.ts";
import type { BrainDumpSimOptions } from "./parser_brain_dump.ts";
import { type ParserWorld, withParserWorld } from "./parser_sim_client.ts";
import { W } from "./world.ts";

/** A {@link ParserWorld} plus the brain-dump knobs, which a test may change as it goes. */
interface Env extends ParserWorld {
  opts: BrainDumpSimOptions;
}

function withSims(
  fn: (env: Env) => Promise<void>,
  o: { brainDump?: BrainDumpSimOptions; parser?: ParserSimOptions } = {},
): Promise<void> {
  const opts = o.brainDump ?? {};
  return withParserWorld((w) => fn({ ...w, opts }), {
    brainDump: opts,
    // the real limit (10 a minute) would stop most tests halfway; its own test sets it low
    rateLimits: { "brain-dump": { max: 1_000, windowMs: 60_000 } },
    ...o.parser,
  });
}

const TEXT = "Captain Hollis Marrow sails the Gull Queen out of Saltmarrow Harbor at dawn. " +
  "Hollis Marrow owes the Tidewater Company a fortune.";
/** The ids the real Parser makes: history rows get `crypto.randomUUID()`, jobs Prisma's cuid. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const CUID = /^c[0-9a-z]{24}$/;

/** SSE events of a stream body, comments left out: `{ event, data }` with data parsed. */
function events(text: string): { event: string; data: Record<string, unknown> }[] {
  return text.split("\n\n").filter((b) => b.startsWith("event: ")).map((b) => {
    const [ev, data] = b.split("\n");
    return { event: ev.slice("event: ".length), data: JSON.parse(data.slice("data: ".length)) };
  });
}

const lore = (core: CoreSim, title: string) =>
  [...core.store.search("#lore").hits].map((h) => core.store.getNote(h.noteId)!)
    .filter((n) => n.title === title);

Deno.test("brain dump: inbox stores nothing, review proposes, auto writes lore, repeat is cached", () =>
  withSims(async ({ core, parser, call }) => {
    const inbox = await call("/brain-dump", { body: { rawText: TEXT, mode: "inbox" } });
    assert.equal(inbox.status, 200);
    assert.deepEqual(inbox.json, { mode: "inbox", queued: true });
    assert.equal(core.requests.length, 0);
    assert.equal(parser.store.llmCalls.length, 0);

    const review = await call("/brain-dump", { body: { rawText: TEXT, mode: "review" } });
    assert.equal(review.status, 200, review.text);
    assert.equal(review.json.mode, "review");
    const proposed = review.json.proposedEntities as { title: string; type: string }[];
    assert.deepEqual(proposed.map((e) => [e.title, e.type]), [
      ["Captain Hollis Marrow", "character"],
      ["Gull Queen", "character"],
      ["Saltmarrow Harbor", "location"],
      ["Hollis Marrow", "character"],
      ["Tidewater Company", "faction"],
    ]);
    const harbor = review.json.proposedEntities[2];
    assert.equal(harbor.action, "update");
    assert.equal(harbor.existingNoteId, W.locHarbor);
    assert.match(harbor.content, /^<p>Saltmarrow Harbor: tar.*at dawn\.<\/p>$/s);
    // "Hollis Marrow" is inside "Captain Hollis Marrow": a duplicate candidate, not a note yet
    assert.equal(lore(core, "Captain Hollis Marrow").length, 0);
    assert.equal(core.requests.filter((r) => r.method !== "GET").length, 0);

    const auto = await call("/brain-dump", { body: { rawText: TEXT } });
    assert.equal(auto.status, 200, auto.text);
    assert.equal("mode" in auto.json, false);
    assert.equal("reindexIds" in auto.json, false);
    assert.deepEqual(
      auto.json.created.map((n: { title: string }) => n.title),
      ["Captain Hollis Marrow", "Gull Queen", "Hollis Marrow", "Tidewater Company"],
    );
    assert.deepEqual(auto.json.updated, [
      { noteId: W.locHarbor, title: "Saltmarrow Harbor", type: "location" },
    ]);
    assert.deepEqual(auto.json.skipped, []);
    const [note] = lore(core, "Tidewater Company");
    assert.equal(core.store.labelValue(note.noteId, "loreType"), "faction");
    assert.ok(core.store.hasLabel(note.noteId, "lore"));
    assert.ok(
      core.store.attributesOf(note.noteId).some((a) =>
        a.type === "relation" && a.name === "template" && a.value === "_template_faction"
      ),
    );
    assert.equal(
      core.store.getContent(note.noteId),
      `<p>Hollis Marrow owes the Tidewater Company a fortune.</p>`,
    );
    assert.match(String(core.store.getContent(W.locHarbor)), /sails the Gull Queen/);
    // auto-relate: created notes sharing a sentence get ~relRelatedTo
    assert.ok(auto.json.relations.length > 0);
    assert.ok(
      core.store.attributesOf(note.noteId).some((a) => a.name === "relRelatedTo"),
    );

    const again = await call("/brain-dump", { body: { rawText: TEXT } });
    assert.deepEqual(again.json, {
      summary: `[cached] ${auto.json.summary}`,
      created: [],
      updated: [],
      skipped: [],
    });
    assert.equal(lore(core, "Tidewater Company").length, 1);
    assert.deepEqual(parser.store.llmCalls.map((c) => [c.task, c.model]), [
      ["brain-dump", DEFAULT_MODELS["brain-dump"].models[0]],
      ["brain-dump", DEFAULT_MODELS["brain-dump"].models[0]],
    ]);
  }));

Deno.test("brain dump: 422 before auth, INVALID_MODEL, 401, missing integration, preflight", () =>
  withSims(async ({ parser, call }) => {
    const short = await call("/brain-dump", { body: { rawText: "short" }, token: null });
    assert.equal(short.status, 422);
    assert.equal(short.json.type, "validation");
    assert.equal(short.json.property, "/rawText");
    assert.equal(short.json.message, "Expected string length greater or equal to 10");

    const mode = await call("/brain-dump", { body: { rawText: TEXT, mode: "later" } });
    assert.equal(mode.status, 422);
    assert.equal(mode.json.property, "/mode");

    assert.equal((await call("/brain-dump", { body: { rawText: TEXT }, token: null })).status, 401);

    const model = await call("/brain-dump", { body: { rawText: TEXT, model: "x/y" } });
    assert.equal(model.status, 400);
    assert.deepEqual(model.json, {
      error: "INVALID_MODEL",
      message: "Model not in configured chain. Allowed: deepseek/deepseek-v4-pro",
    });
    const streamModel = await call("/brain-dump/stream", { body: { rawText: TEXT, model: "x" } });
    assert.equal(streamModel.status, 400);
    assert.equal(streamModel.json.error, "INVALID_MODEL");

    const owner = parser.store.ownerUserId()!;
    const integration = parser.store.getIntegration(owner)!;
    parser.store.setIntegration(owner, "http://127.0.0.1:9", integration.token);
    const down = await call("/brain-dump", { body: { rawText: TEXT } });
    assert.equal(down.status, 500);
    assert.match(down.headers.get("content-type")!, /^text\/plain/);
    assert.match(down.text, /^AllCodex is not connected: AllCodex unreachable: /);
    const stream = await call("/brain-dump/stream", { body: { rawText: TEXT } });
    assert.deepEqual(events(stream.text).map((e) => e.data), [
      { type: "status", stage: "preflight", message: "Checking AllCodex connection..." },
      {
        type: "error",
        error:
          "AllCodex is not connected: AllCodex unreachable: Unable to connect. Is the computer able to access the url?",
      },
    ]);

    parser.store.deleteIntegration(owner);
    for (const path of ["/brain-dump", "/brain-dump/stream"]) {
      const res = await call(path, { body: { rawText: TEXT } });
      assert.equal(res.status, 500);
      assert.equal(
        res.text,
        "AllCodex is not connected for this user. Reconnect AllCodex in settings.",
      );
    }
  }));

Deno.test("brain dump history: cursor pages newest first, per user; detail, diffs, 404s, wipe", () =>
  withSims(async ({ core, parser, call }) => {
    const texts = [
      "Wren Ashdown guards the Salt Gate.",
      "Corin Vale rows to the Knucklebone Reef.",
      "The Mira Tallowend ferry story: Mira Tallowend now ferries pilgrims.",
    ];
    for (const rawText of texts) {
      assert.equal((await call("/brain-dump", { body: { rawText } })).status, 200);
    }
    // a run that writes nothing leaves no row
    await call("/brain-dump", { body: { rawText: "nothing capitalised here at all." } });

    const first = await call("/brain-dump/history?limit=2");
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.json.items.map((i: { rawText: string }) => i.rawText), [
      texts[2],
      texts[1],
    ]);
    assert.equal(first.json.hasMore, true);
    assert.equal(first.json.nextCursor, first.json.items[1].id);
    const item = first.json.items[0];
    assert.match(item.id, UUID, "the pipeline sets crypto.randomUUID(), not the cuid() default");
    assert.deepEqual(Object.keys(item).sort(), [
      "createdAt",
      "id",
      "model",
      "notesCreated",
      "notesUpdated",
      "rawText",
      "tokensUsed",
    ]);
    assert.deepEqual(item.notesUpdated, [W.charMira]);
    const second = await call(`/brain-dump/history?limit=2&cursor=${first.json.nextCursor}`);
    assert.deepEqual(second.json.items.map((i: { rawText: string }) => i.rawText), [texts[0]]);
    assert.equal(second.json.hasMore, false);
    assert.equal(second.json.nextCursor, null);
    assert.equal((await call("/brain-dump/history")).json.items.length, 3);
    const badLimit = await call("/brain-dump/history?limit=0");
    assert.equal(badLimit.status, 422);
    assert.equal(badLimit.json.on, "query");

    const detail = await call(`/brain-dump/history/${item.id}`);
    assert.equal(detail.status, 200);
    assert.equal(detail.json.summary, detail.json.parsedJson.summary);
    const [revision] = detail.json.parsedJson.revisions;
    assert.equal(revision.noteId, W.charMira);
    assert.match(revision.contentBefore, /^<p>Mira Tallowend pilots ships/);
    assert.ok(revision.contentAfter.startsWith(revision.contentBefore));
    assert.match(revision.contentAfter, /now ferries pilgrims\.<\/p>$/);
    assert.ok(
      detail.json.parsedJson.entities.some((e: { action: string; noteId?: string }) =>
        e.action === "updated" && e.noteId === W.charMira
      ),
    );

    const diffs = await call(`/brain-dump/history/${item.id}/diffs`);
    assert.equal(diffs.status, 200);
    const updated = diffs.json.diffs.find((d: { action: string }) => d.action === "updated");
    assert.equal(updated.noteId, W.charMira);
    assert.equal(updated.contentBefore, revision.contentBefore);
    assert.equal(updated.contentAfter, revision.contentAfter);
    assert.ok(core.store.getRevision(updated.revisionIdBefore));
    const created = diffs.json.diffs.find((d: { action: string }) => d.action === "created");
    assert.deepEqual(
      { ...created, noteId: "" },
      {
        noteId: "",
        action: "created",
        revisionIdBefore: null,
        revisionIdAfter: null,
        contentBefore: null,
        contentAfter: null,
      },
    );
    core.fault({ path: /^\/etapi\/revisions\//, status: 500 });
    const broken = await call(`/brain-dump/history/${item.id}/diffs`);
    const failed = broken.json.diffs.find((d: { action: string }) => d.action === "updated");
    assert.equal(failed.contentBefore, null);
    assert.equal(failed.contentAfter, null);
    assert.equal(failed.revisionIdBefore, updated.revisionIdBefore);
    core.clearFaults();

    for (const path of [`/brain-dump/history/nope`, `/brain-dump/history/nope/diffs`]) {
      const missing = await call(path);
      assert.equal(missing.status, 404);
      assert.deepEqual(missing.json, {
        error: "Brain dump entry not found",
        code: "ENTRY_NOT_FOUND",
      });
    }

    // another owner sees none of it (rows are scoped by userId)
    const other = parser.store.createUser({
      email: "second@example.com",
      password: "password-2",
      name: "Second",
    });
    const owner = parser.store.ownerUserId()!;
    parser.store.appConfig.set("ownerUserId", other.id);
    const otherToken = parser.store.createSession(other.id).token;
    assert.deepEqual((await call("/brain-dump/history", { token: otherToken })).json.items, []);
    assert.equal((await call(`/brain-dump/history/${item.id}`, { token: otherToken })).status, 404);
    parser.store.appConfig.set("ownerUserId", owner);

    for (const hook of parser.store.wipeHooks) hook(owner);
    assert.deepEqual((await call("/brain-dump/history")).json.items, []);
  }));

Deno.test("brain dump commit: create, update, duplicate skip, stripped fields, history model", () =>
  withSims(async ({ core, call }) => {
    const res = await call("/brain-dump/commit", {
      body: {
        rawText: "reviewed text",
        approvedEntities: [
          {
            title: "Ila Thorn",
            type: "character",
            action: "create",
            content: "<p>A diver.</p>",
            attributes: { age: "30" },
            tags: ["diver"],
          },
          { title: "Oskar Venn", type: "character", action: "create" },
          {
            title: "Mira Tallowend",
            type: "character",
            action: "update",
            existingNoteId: W.charMira,
            content: "<p>Rewritten.</p>",
          },
          { title: "Odd Thing", type: "gizmo", action: "update" },
        ],
      },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.created.map((n: { title: string }) => [n.title]), [
      ["Ila Thorn"],
      ["Odd Thing"],
    ]);
    assert.deepEqual(res.json.updated, [
      { noteId: W.charMira, title: "Mira Tallowend", type: "character" },
    ]);
    assert.deepEqual(res.json.skipped, [
      { title: "Oskar Venn", reason: 'Possible duplicate of "Oskar Venn" (95% match)' },
    ]);
    assert.equal(res.json.summary, "Committed from review");
    assert.equal(core.store.getContent(W.charMira), "<p>Rewritten.</p>");
    const [ila] = lore(core, "Ila Thorn");
    assert.equal(core.store.labelValue(ila.noteId, "age"), undefined);
    assert.equal(core.store.labelValue(ila.noteId, "diver"), undefined);
    const [odd] = lore(core, "Odd Thing");
    assert.equal(core.store.labelValue(odd.noteId, "loreType"), "gizmo");
    assert.ok(!core.store.attributesOf(odd.noteId).some((a) => a.name === "template"));

    const history = await call("/brain-dump/history");
    assert.equal(history.json.items[0].model, "review-commit");
    assert.equal(history.json.items[0].tokensUsed, 0);

    const empty = await call("/brain-dump/commit", { body: { rawText: "", approvedEntities: [] } });
    assert.equal(empty.status, 422);
    const badAction = await call("/brain-dump/commit", {
      body: { rawText: "x", approvedEntities: [{ title: "A", type: "b", action: "delete" }] },
    });
    assert.equal(badAction.status, 422);
    assert.equal(badAction.json.property, "/approvedEntities/0/action");
  }));

Deno.test("brain dump stream: exact events, done.raw, cache hit, keepalive, headers, llm log", () =>
  withSims(async ({ parser, call }) => {
    const res = await call("/brain-dump/stream", { body: { rawText: TEXT, autoRelate: false } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    assert.equal(res.headers.get("cache-control"), "no-cache");
    assert.ok(res.headers.get("ratelimit-limit"));
    const evs = events(res.text);
    for (const e of evs) assert.equal(e.data.type, e.event);
    const statuses = evs.filter((e) => e.event === "status").map((e) =>
      `${e.data.stage}: ${e.data.message}`
    );
    assert.deepEqual(statuses, [
      "preflight: Checking AllCodex connection...",
      "rag: Querying existing lore for context...",
      "rag: Found 1 context chunks",
      "llm: Sending to LLM...",
      "parse: Parsing entities...",
      "parse: Found 5 entities",
      "write: Writing 5 entities to AllCodex...",
      "complete: Created 4, updated 1, skipped 0",
    ]);
    const names = evs.map((e) => e.event);
    assert.equal(names.indexOf("reasoning"), 4);
    const tokens = evs.filter((e) => e.event === "token").map((e) => e.data.content).join("");
    const parsed = JSON.parse(tokens);
    assert.equal(parsed.entities.length, 5);
    const done = evs.at(-1)!;
    assert.equal(done.event, "done");
    assert.equal(typeof done.data.raw, "string");
    const raw = JSON.parse(done.data.raw as string);
    assert.equal(raw.created.length, 4);
    assert.equal(raw.reindexIds.length, 5); // kept in the stream's raw
    assert.equal("relations" in raw, false); // autoRelate: false
    assert.equal(done.data.model, DEFAULT_MODELS["brain-dump"].models[0]);
    assert.ok((done.data.tokensUsed as number) > 0);
    assert.equal(parser.store.llmCalls.length, 1);

    const hit = await call("/brain-dump/stream", { body: { rawText: TEXT } });
    const hitEvents = events(hit.text);
    assert.deepEqual(hitEvents.map((e) => `${e.event}:${e.data.stage ?? ""}`), [
      "status:preflight",
      "status:cache",
      "done:",
    ]);
    assert.equal(hitEvents[1].data.message, `Found cached result: ${parsed.summary}`);
    const cachedRaw = JSON.parse(hitEvents[2].data.raw as string);
    assert.deepEqual(Object.keys(cachedRaw), ["entities", "summary", "revisions"]);
    assert.deepEqual(
      { tokensUsed: hitEvents[2].data.tokensUsed, model: hitEvents[2].data.model },
      { tokensUsed: 0, model: "cache" },
    );
    assert.equal(hitEvents[2].data.latencyMs, 0);
    assert.equal(parser.store.llmCalls.length, 1);
  }));

Deno.test("brain dump stream: both error shapes, codes, keepalive comments", () =>
  withSims(async ({ opts, call }) => {
    const lastOf = async (rawText: string) => {
      const res = await call("/brain-dump/stream", { body: { rawText } });
      assert.equal(res.status, 200);
      return { last: res.text.split("\n\n").filter(Boolean).at(-1), text: res.text };
    };
    opts.llmFailure = "timeout";
    assert.equal(
      (await lastOf("Ada Quill met Bo Reed.")).last,
      'event: error\ndata: {"type":"error","error":"Stream stalled (no data for 15000ms)","code":"TIMEOUT"}',
    );
    opts.llmFailure = "no-model";
    const noModel = await lastOf("Ada Quill met Bo Reed.");
    assert.equal(
      noModel.last,
      'event: error\ndata: {"type":"error","error":"No models configured for task \\"brain-dump\\"","code":"NO_MODEL"}',
    );
    assert.ok(!noModel.text.includes("event: token"));
    opts.llmFailure = "provider";
    assert.equal(
      (await lastOf("Ada Quill met Bo Reed.")).last,
      'event: error\ndata: {"type":"error","error":"Provider returned error"}',
    );
    opts.llmFailure = "invalid-json";
    assert.equal(
      (await lastOf("Ada Quill met Bo Reed.")).last,
      'event: error\ndata: {"type":"error","code":"BRAIN_DUMP_FAILED","message":"Unable to complete brain dump."}',
    );
    opts.llmFailure = undefined;

    opts.keepaliveMs = 20;
    opts.paceMs = 30;
    const kept = await lastOf("Ada Quill met Bo Reed.");
    assert.match(kept.text, /\n\n: keepalive\n\n/);
    assert.match(kept.last!, /^event: done\n/);
  }));

Deno.test("brain dump stream: a stall keeps the connection open; the client's abort is recorded", () =>
  withSims(async ({ open, opts }) => {
    let aborted = 0;
    opts.stallAfterEvents = 2;
    opts.onStreamAbort = () => aborted++;
    const ac = new AbortController();
    const res = await open("/brain-dump/stream", { body: { rawText: TEXT }, signal: ac.signal });
    const reader = res.body!.getReader();
    let text = "";
    while ((text.match(/\n\n/g) ?? []).length < 2) {
      text += new TextDecoder().decode((await reader.read()).value);
    }
    const more = await Promise.race([
      reader.read().then(() => "data"),
      new Promise((r) => setTimeout(r, 300, "stalled")),
    ]);
    assert.equal(more, "stalled");
    ac.abort();
    await reader.cancel().catch(() => {});
    // a guard, not a measure: a busy machine may take a while to pass the abort on
    for (let i = 0; i < 3_000 && aborted === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(aborted, 1);
  }));

Deno.test("brain dump batch: submit, FIFO worker, status counts, cancel, 404, limits", () =>
  withSims(async ({ core, parser, opts, call }) => {
    const waitTerminal = async (batchId: string) => {
      for (let i = 0; i < 6_000; i++) {
        const res = await call(`/brain-dump/batch/${batchId}`);
        if (res.json.terminal) return res;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error("the batch never finished");
    };
    opts.batchPollMs = 10;
    const run = await call("/brain-dump/batch", {
      body: {
        items: [
          { rawText: "Nell Farrow keeps the Drift Lamp.", parentNoteId: "root" },
          { rawText: "Pike Orrin guards the Drift Lamp.", mode: "review" },
        ],
      },
    });
    assert.equal(run.status, 200, run.text);
    assert.match(run.json.batchId, /^batch_\d+_[0-9a-f]{8}$/);
    assert.deepEqual(run.json.jobs.map((j: { position: number }) => j.position), [0, 1]);
    for (const j of run.json.jobs) assert.match(j.id, CUID);
    const done = await waitTerminal(run.json.batchId);
    assert.deepEqual(done.json.counts, { done: 2 });
    const job = done.json.jobs[0];
    assert.deepEqual(Object.keys(job).sort(), [
      "batchId",
      "createdAt",
      "error",
      "finishedAt",
      "id",
      "mode",
      "parentNoteId",
      "position",
      "rawText",
      "resultHistoryId",
      "startedAt",
      "status",
      "userId",
    ]);
    assert.equal(job.parentNoteId, "root");
    assert.equal(done.json.jobs[1].mode, "review");
    for (const j of done.json.jobs) {
      assert.equal(j.resultHistoryId, null);
      assert.ok(j.startedAt && j.finishedAt);
    }
    assert.equal(lore(core, "Nell Farrow").length, 1);
    assert.equal(lore(core, "Pike Orrin").length, 0); // review jobs write nothing

    // a job fails with the pipeline's message when the user has no integration
    const owner = parser.store.ownerUserId()!;
    const integration = parser.store.getIntegration(owner)!;
    parser.store.deleteIntegration(owner);
    const failing = await call("/brain-dump/batch", {
      body: { items: [{ rawText: "Quen Sallow rows home." }] },
    });
    const failed = await waitTerminal(failing.json.batchId);
    assert.equal(failed.json.jobs[0].status, "failed");
    assert.equal(
      failed.json.jobs[0].error,
      "AllCodex is not connected for this user. Reconnect AllCodex in settings.",
    );
    parser.store.setIntegration(owner, integration.baseUrl, integration.token);

    await new Promise((r) => setTimeout(r, 50)); // the idle worker stops
    opts.batchPollMs = 60_000; // nothing runs from here on
    const queued = await call("/brain-dump/batch", {
      body: { items: [{ rawText: "Rook Tamsin sails." }, { rawText: "Sela Brin sails." }] },
    });
    const status = await call(`/brain-dump/batch/${queued.json.batchId}`);
    assert.deepEqual(status.json.counts, { queued: 2 });
    assert.equal(status.json.terminal, false);
    const cancel = await call(`/brain-dump/batch/${queued.json.batchId}`, { method: "DELETE" });
    assert.deepEqual(cancel.json, { cancelled: 2 });
    const after = await call(`/brain-dump/batch/${queued.json.batchId}`);
    assert.deepEqual(after.json.counts, { cancelled: 2 });
    assert.equal(after.json.terminal, true);
    const unknown = await call("/brain-dump/batch/batch_1_deadbeef", { method: "DELETE" });
    assert.deepEqual([unknown.status, unknown.json], [200, { cancelled: 0 }]);
    const missing = await call("/brain-dump/batch/batch_1_deadbeef");
    assert.deepEqual([missing.status, missing.json], [404, { error: "BATCH_NOT_FOUND" }]);

    const tooMany = await call("/brain-dump/batch", {
      body: { items: Array.from({ length: 51 }, () => ({ rawText: "0123456789" })) },
    });
    assert.equal(tooMany.status, 422);
    assert.equal(tooMany.json.message, "Expected array length to be less or equal to 50");
  }));

Deno.test("brain dump rate limit: one group for every route, 429 body and headers", () =>
  withSims(async ({ call }) => {
    const first = await call("/brain-dump/history");
    assert.equal(first.headers.get("ratelimit-limit"), "2");
    assert.equal(first.headers.get("ratelimit-remaining"), "1");
    assert.equal(
      (await call("/brain-dump", { body: { rawText: TEXT, mode: "inbox" } })).status,
      200,
    );
    const refused = await call("/brain-dump/batch/batch_1_deadbeef", { method: "DELETE" });
    assert.equal(refused.status, 429);
    assert.deepEqual(refused.json, {
      error: "Rate limit exceeded. Brain dump is limited to 10 requests per minute.",
      code: "RATE_LIMITED",
    });
    assert.equal(refused.headers.get("retry-after"), "60");
  }, { parser: { rateLimits: { "brain-dump": { max: 2, windowMs: 60_000 } } } }));

Deno.test("brain dump duplicates relay Core's stored titles; the exact skip compares that form", () =>
  withSims(async ({ core, call }) => {
    // the note as the service writes `Salt & Smoke <Tide>`: Core stores it escaped
    const stored = "Salt &amp; Smoke &lt;Tide&gt;";
    const { note } = core.store.createNote({
      parentNoteId: W.loreRoot,
      title: stored,
      type: "text",
      content: "<p>A smokehouse.</p>",
    });
    assert.equal(note.title, stored);
    core.store.createAttribute({ noteId: note.noteId, type: "label", name: "lore", value: "" });
    const create = (title: string) => ({ title, type: "location", action: "create" });
    const res = await call("/brain-dump/commit", {
      body: {
        rawText: "reviewed smokehouse",
        approvedEntities: [
          create("Salt & Smoke"),
          create(stored), // e.g. a model that copied the title as its context showed it
          create("Salt & Smoke <Tide>"),
        ],
      },
    });
    assert.equal(res.status, 200, res.text);
    const match = (score: number) => [{ noteId: note.noteId, title: stored, score }];
    assert.deepEqual(res.json.duplicates, [
      { proposedTitle: "Salt & Smoke", proposedType: "location", matches: match(0.9) },
      { proposedTitle: stored, proposedType: "location", matches: match(0.95) },
      { proposedTitle: "Salt & Smoke <Tide>", proposedType: "location", matches: match(0.95) },
    ]);
    // the real pipeline compares the stored title with the proposed one: only the copy is skipped
    assert.deepEqual(res.json.skipped, [
      { title: stored, reason: `Possible duplicate of "${stored}" (95% match)` },
    ]);
    assert.deepEqual(res.json.created.map((n: { title: string }) => n.title), [
      "Salt & Smoke",
      "Salt & Smoke <Tide>",
    ]);
  }));
