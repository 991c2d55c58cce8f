/**
 * AI deadlines over HTTP through the real app against the doubles (a call cut off
 * by a deadline never loses its result). The service and the doubles share a clock the test
 * moves itself (`manualDeadlines`): the doubles' models take `SLOW_MS` of it (`llmDelayMs`, or a
 * delay fault for commits and imports), and the test lets the AI deadline pass while they work.
 * A client that stops waiting gets a 504 saying how to get the answer, the Parser's work goes on
 * (notes really land in Core), and a retry of the same request gets the original answer without
 * a second Parser call. Nothing here depends on how fast anything runs: time passes only when
 * the test says, and real work is only waited for, under a hang guard.
 */
import assert from "node:assert/strict";
import { assertNoSecrets, type Harness, withHarness } from "../helpers/harness.ts";
import { eventually, type ManualDeadlines, manualDeadlines } from "../helpers/manual_deadlines.ts";
import { type ParserSimOptions, reindexForOwner } from "../../sims/parser.ts";
import { W } from "../../sims/world.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const TEXT = "Captain Ysolde Farrow charts the Amber Shoals with Tobin Reedwick at low tide.";
/** The AI deadline of these tests, and a model far slower than it (both on the test's clock). */
const AI_TIMEOUT_MS = 300;
const SLOW_MS = 1_000;

const roomy = { max: 1_000, windowMs: 60_000 };

/** The harness, the Parser double's options and the clock both run on. */
interface Rig {
  h: Harness;
  parser: ParserSimOptions;
  time: ManualDeadlines;
}

function withSlowParser(
  fn: (rig: Rig) => Promise<void>,
  parser: ParserSimOptions,
  env: Record<string, string> = {},
): Promise<void> {
  const time = manualDeadlines();
  return withHarness((h) => fn({ h, parser, time }), {
    parserSession: true,
    deadlines: time,
    parser: {
      ...parser,
      rateLimits: { "brain-dump": roomy, consistency: roomy, suggest: roomy, copilot: roomy },
    },
    env: { AI_TIMEOUT_MS: String(AI_TIMEOUT_MS), LORE_ROOT_NOTE_ID: W.loreRoot, ...env },
  });
}

/** Parser calls to feature routes matching `path`. */
const parserCalls = (h: Harness, path: RegExp) =>
  h.parser!.requests.filter((r) => path.test(r.path)).map((r) => `${r.method} ${r.path}`);

async function send(h: Harness, method: string, path: string, json?: unknown) {
  const r = await h.requestJson<Json>(path, { method, json });
  assertNoSecrets(h, JSON.stringify(r.body));
  return r;
}

/**
 * Sends a request whose model is slow and, once the client waits for the AI call and the model
 * works, lets the AI deadline pass: the answer is the cut-off 504 (see {@linkcode assertCutOff}).
 */
async function sendPastDeadline({ h, time }: Rig, method: string, path: string, json?: unknown) {
  const answer = send(h, method, path, json);
  await eventually(
    "the client waits while the model works",
    () => time.pendingOf(AI_TIMEOUT_MS) === 1 && time.pendingOf(SLOW_MS) === 1,
  );
  time.advance(AI_TIMEOUT_MS);
  return await answer;
}

/** Lets the model's time pass: the call cut off from its client runs to its end. */
function modelAnswers({ time }: Rig) {
  time.advance(SLOW_MS);
}

/** The first answer is the AI deadline's 504 with details saying where the answer will be. */
function assertCutOff(r: { status: number; body: Json }, historyPath?: string): string {
  assert.equal(r.status, 504, JSON.stringify(r.body));
  assert.equal(r.body.error, "UPSTREAM_TIMEOUT");
  assert.equal(typeof r.body.requestId, "string");
  const { details } = r.body;
  assert.equal(details.service, "parser");
  assert.equal(details.retry, "repeat the same request");
  assert.match(details.resultKey, /^[0-9a-f]{32}$/);
  assert.equal(details.keptSeconds, 900);
  assert.equal(details.historyPath, historyPath);
  return details.resultKey;
}

const loreTitled = (h: Harness, title: string) =>
  h.core.store.search("#lore").hits.filter((x) => h.core.store.getNote(x.noteId)?.title === title);

// ---- brain dump --------------------------------------------------------------------------------

Deno.test("brain dump past the AI deadline: 504 with details, the notes land, a retry gets them", () =>
  withSlowParser(async (rig) => {
    const { h } = rig;
    const body = { rawText: TEXT };
    const first = await sendPastDeadline(rig, "POST", "/api/brain-dump", body);
    const key = assertCutOff(first, "/api/brain-dump/history");

    // the Parser was not cancelled: it writes the notes after its model answered
    modelAnswers(rig);
    await eventually("the note is in Core", () => loreTitled(h, "Tobin Reedwick").length === 1);

    // the retry gets the call's outcome (kept, or waited for while the call ends)
    const retry = await send(h, "POST", "/api/brain-dump", body);
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.equal(retry.body.mode, "auto");
    assert.equal(retry.body.cached, false, "the original answer, not the idempotency cache's");
    const created = retry.body.created.map((n: { title: string }) => n.title);
    assert.ok(created.includes("Tobin Reedwick"), JSON.stringify(created));
    const tobin = retry.body.created.find((n: { title: string }) => n.title === "Tobin Reedwick");
    assert.equal(loreTitled(h, "Tobin Reedwick")[0].noteId, tobin.noteId);
    assert.deepEqual(parserCalls(h, /^\/brain-dump/), ["POST /brain-dump/stream"]);

    // handed out once: asking again is a new brain dump, which the Parser's cache answers
    const again = await send(h, "POST", "/api/brain-dump", body);
    assert.equal(again.status, 200);
    assert.equal(again.body.cached, true);
    assert.deepEqual(again.body.created, []);
    assert.equal(parserCalls(h, /^\/brain-dump/).length, 2);
    assert.ok(h.logs.some((l) => l.includes("ai call continues past its deadline")));
    assert.ok(h.logs.some((l) => l.includes(key)), "the log names the kept answer's key");
  }, { brainDump: { llmDelayMs: SLOW_MS } }));

Deno.test("brain dump: a model slower than UPSTREAM_TIMEOUT_MS but within the AI deadline answers", () =>
  withSlowParser(
    async ({ h, time }) => {
      /** Sends, and lets the model's 400 ms pass: four upstream deadlines, within the AI one. */
      const slowModel = async (json: unknown) => {
        const answer = send(h, "POST", "/api/brain-dump", json);
        // nothing else in flight whose 100 ms deadline the 400 would pass
        await eventually(
          "the model works",
          () => time.pendingOf(400) === 1 && time.pendingOf(100) === 0,
        );
        time.advance(400);
        return await answer;
      };
      const review = await slowModel({ rawText: TEXT, mode: "review" });
      assert.equal(review.status, 200, JSON.stringify(review.body));
      assert.equal(review.body.mode, "review");
      assert.ok(review.body.proposedEntities.length > 0);
      const auto = await slowModel({ rawText: TEXT });
      assert.equal(auto.status, 200, JSON.stringify(auto.body));
      assert.ok(auto.body.created.length > 0);

      // an ordinary Parser call still has UPSTREAM_TIMEOUT_MS, and no kept answer
      h.parser!.fault({ path: "/brain-dump/history", delayMs: 1_000, times: 1 });
      const answer = send(h, "GET", "/api/brain-dump/history");
      await eventually("the Parser holds the call", () => time.pendingOf(1_000) === 1);
      time.advance(100);
      const history = await answer;
      assert.equal(history.status, 504);
      assert.equal(history.body.error, "UPSTREAM_TIMEOUT");
      assert.deepEqual(history.body.details, { service: "parser" });
    },
    { brainDump: { llmDelayMs: 400 } },
    { UPSTREAM_TIMEOUT_MS: "100", AI_TIMEOUT_MS: "10000" },
  ));

/** The brain-dump double's keepalive interval in the test below. */
const KEEPALIVE_MS = 100;

Deno.test("brain dump: keepalives are progress — longer than the AI deadline in total, never idle", () =>
  withSlowParser(async ({ h, time }) => {
    const answer = send(h, "POST", "/api/brain-dump", { rawText: TEXT });
    await eventually("the model works", () => time.pendingOf(SLOW_MS) === 1);
    // the model takes SLOW_MS (over three AI deadlines); a keepalive comes every KEEPALIVE_MS
    for (let t = KEEPALIVE_MS; t < SLOW_MS; t += KEEPALIVE_MS) {
      time.advance(KEEPALIVE_MS);
      await eventually(
        `the keepalive at ${t} ms restarted the client's AI deadline`,
        () => time.setAt(AI_TIMEOUT_MS).at(-1) === t,
      );
    }
    time.advance(KEEPALIVE_MS);
    const r = await answer;
    assert.ok(time.now() >= 3 * AI_TIMEOUT_MS);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.cached, false);
    assert.ok(r.body.created.some((n: { title: string }) => n.title === "Tobin Reedwick"));
    assert.deepEqual(parserCalls(h, /^\/brain-dump/), ["POST /brain-dump/stream"]);
  }, { brainDump: { llmDelayMs: SLOW_MS, keepaliveMs: KEEPALIVE_MS } }));

Deno.test("brain dump: without keepalives the same model is cut off at the AI deadline", () =>
  withSlowParser(async (rig) => {
    const r = await sendPastDeadline(rig, "POST", "/api/brain-dump", { rawText: TEXT });
    assertCutOff(r, "/api/brain-dump/history");
    assert.equal(rig.time.now(), AI_TIMEOUT_MS, "not a moment later");
  }, { brainDump: { llmDelayMs: SLOW_MS, keepaliveMs: 10 * SLOW_MS } }));

Deno.test("brain dump: a background call that fails gives its retry that failure, once", () =>
  withSlowParser(async (rig) => {
    const { h, parser } = rig;
    const body = { rawText: TEXT };
    assertCutOff(
      await sendPastDeadline(rig, "POST", "/api/brain-dump", body),
      "/api/brain-dump/history",
    );
    modelAnswers(rig);
    const failed = await send(h, "POST", "/api/brain-dump", body);
    assert.equal(failed.status, 502);
    assert.equal(failed.body.error, "UPSTREAM_ERROR");
    assert.equal(failed.body.details.upstreamCode, "NO_MODEL");
    assert.equal(parserCalls(h, /^\/brain-dump/).length, 1);

    parser.brainDump!.llmFailure = undefined;
    parser.brainDump!.llmDelayMs = 0;
    const fresh = await send(h, "POST", "/api/brain-dump", body);
    assert.equal(fresh.status, 200, JSON.stringify(fresh.body));
    assert.ok(fresh.body.created.length > 0);
    assert.equal(parserCalls(h, /^\/brain-dump/).length, 2);
  }, { brainDump: { llmDelayMs: SLOW_MS, llmFailure: "no-model" } }));

Deno.test("brain dump auto from the stream: the Parser's stream errors map like its plain ones", () =>
  withSlowParser(async ({ h, parser }) => {
    const body = { rawText: TEXT };
    h.core.fault({ path: "/etapi/app-info", status: 401, times: 1 }); // the Parser's preflight
    const down = await send(h, "POST", "/api/brain-dump", body);
    assert.equal(down.status, 503);
    assert.equal(down.body.error, "NOT_CONFIGURED");
    assert.equal(down.body.details.service, "core");
    for (const [failure, code] of [["invalid-json", "BRAIN_DUMP_FAILED"], ["timeout", "TIMEOUT"]]) {
      parser.brainDump!.llmFailure = failure as "invalid-json" | "timeout";
      const r = await send(h, "POST", "/api/brain-dump", body);
      assert.equal(r.status, 502, failure);
      assert.equal(r.body.error, "UPSTREAM_ERROR");
      assert.equal(r.body.details.upstreamCode, code);
      assert.doesNotMatch(r.body.message, /LLM|stalled|Unable/); // the Parser's words stay there
    }
  }, { brainDump: {} }));

Deno.test("brain dump commit past the AI deadline: the retry gets the notes, nothing twice", () =>
  withSlowParser(async (rig) => {
    const { h } = rig;
    const body = {
      rawText: TEXT,
      approvedEntities: [{ title: "Amber Shoals", type: "location", action: "create" }],
    };
    h.parser!.fault({ path: "/brain-dump/commit", delayMs: SLOW_MS, times: 1 });
    assertCutOff(
      await sendPastDeadline(rig, "POST", "/api/brain-dump/commit", body),
      "/api/brain-dump/history",
    );
    modelAnswers(rig);
    await eventually("the note is in Core", () => loreTitled(h, "Amber Shoals").length === 1);
    const retry = await send(h, "POST", "/api/brain-dump/commit", body);
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.deepEqual(retry.body.created.map((n: { title: string }) => n.title), ["Amber Shoals"]);
    assert.equal(loreTitled(h, "Amber Shoals").length, 1, "a repeat would have written it twice");
    assert.deepEqual(parserCalls(h, /^\/brain-dump/), ["POST /brain-dump/commit"]);
  }, {}));

// ---- copilot, consistency, gaps, relationships --------------------------------------------

Deno.test("copilot chat past the AI deadline: the retry gets the original turn", () =>
  withSlowParser(async (rig) => {
    const { h } = rig;
    const path = `/api/lore/${W.charMira}/copilot/chat`;
    const body = { transcript: [{ role: "user", content: "What do we know?" }] };
    assertCutOff(await sendPastDeadline(rig, "POST", path, body));
    modelAnswers(rig);
    const retry = await send(h, "POST", path, body);
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.equal(typeof retry.body.sessionId, "string");
    assert.match(retry.body.assistantMessage, /^Mira Tallowend links to/);
    assert.deepEqual(parserCalls(h, /^\/copilot\//), ["POST /copilot/article/stream"]);
  }, { copilot: { llmDelayMs: SLOW_MS } }));

Deno.test("consistency past the AI deadline: the retry gets the original scan", () =>
  withSlowParser(async (rig) => {
    const { h } = rig;
    await reindexForOwner(h.parser!); // sampling the owner's index reaches the model
    const body = {};
    assertCutOff(await sendPastDeadline(rig, "POST", "/api/ai/consistency", body));
    modelAnswers(rig);
    const retry = await send(h, "POST", "/api/ai/consistency", body);
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.ok(Array.isArray(retry.body.issues) && typeof retry.body.summary === "string");
    assert.deepEqual(parserCalls(h, /^\/consistency\//), ["POST /consistency/check"]);
  }, { ai: { llmDelayMs: SLOW_MS } }));

Deno.test("gaps past the AI deadline: the retry gets the original analysis", () =>
  withSlowParser(async (rig) => {
    const { h } = rig;
    const key = assertCutOff(await sendPastDeadline(rig, "POST", "/api/ai/gaps"));
    modelAnswers(rig);
    const retry = await send(h, "POST", "/api/ai/gaps");
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.ok(retry.body.totalNotes > 0);
    assert.deepEqual(parserCalls(h, /^\/suggest\/gaps/), ["POST /suggest/gaps"]);
    // GET is another request: its own call, not the POST's answer
    const get = await sendPastDeadline(rig, "GET", "/api/ai/gaps");
    assert.equal(get.status, 504);
    assert.notEqual(get.body.details.resultKey, key);
  }, { ai: { llmDelayMs: SLOW_MS } }));

Deno.test("relationship suggestions past the AI deadline: the retry gets the original list", () =>
  withSlowParser(async (rig) => {
    const { h } = rig;
    await reindexForOwner(h.parser!); // the real Parser suggests only from the owner's index
    const body = { text: "Mira Tallowend sails with Oskar Venn to Saltmarrow Harbor." };
    const key = assertCutOff(await sendPastDeadline(rig, "POST", "/api/ai/relationships", body));
    modelAnswers(rig);
    const retry = await send(h, "POST", "/api/ai/relationships", body);
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.ok(retry.body.suggestions.length > 0);
    assert.ok(retry.body.suggestions.every((s: Json) => typeof s.type === "string"));
    assert.deepEqual(parserCalls(h, /^\/suggest\/relationships/), ["POST /suggest/relationships"]);
    // the same text from another caller identity would be another key: here, another body is
    const other = await sendPastDeadline(rig, "POST", "/api/ai/relationships", {
      text: `${body.text} Again.`,
    });
    assert.equal(other.status, 504);
    assert.notEqual(other.body.details.resultKey, key);
  }, { ai: { llmDelayMs: SLOW_MS } }));

// ---- imports -----------------------------------------------------------------------------------

Deno.test("system-pack import past the AI deadline: the retry gets the notes made, not duplicates", () =>
  withSlowParser(async (rig) => {
    const { h } = rig;
    const body = { notes: [{ name: "Shoal Wyrm", cr: 7 }] };
    h.parser!.fault({ path: "/import/system-pack", delayMs: SLOW_MS, times: 1 });
    assertCutOff(await sendPastDeadline(rig, "POST", "/api/import/system-pack", body));
    modelAnswers(rig);
    await eventually(
      "the statblock is in Core",
      () =>
        h.core.store.search("#statblock").hits.some((x) =>
          h.core.store.getNote(x.noteId)?.title === "Shoal Wyrm"
        ),
    );
    const retry = await send(h, "POST", "/api/import/system-pack", body);
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.equal(retry.body.created, 1, "a repeat would have reported it a skipped duplicate");
    assert.equal(retry.body.detail.created[0].name, "Shoal Wyrm");
    assert.deepEqual(parserCalls(h, /^\/import\//), ["POST /import/system-pack"]);
  }, {}));
