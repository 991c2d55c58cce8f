/**
 * AI deadlines over HTTP through the real app against the doubles (a call cut off
 * by a deadline never loses its result). The doubles' models are slowed down (`llmDelayMs`, or a
 * delay fault for imports) past small configured deadlines: a client that stops waiting gets a
 * 504 saying how to get the answer, the Parser's work goes on (notes really land in Core), and a
 * retry of the same request gets the original answer without a second Parser call. Nothing here
 * asserts how fast anything is: only what the user gets, with generous guards against hangs.
 */
import assert from "node:assert/strict";
import { assertNoSecrets, type Harness, withHarness } from "../helpers/harness.ts";
import { type ParserSimOptions, reindexForOwner } from "../../sims/parser.ts";
import { W } from "../../sims/world.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const TEXT = "Captain Ysolde Farrow charts the Amber Shoals with Tobin Reedwick at low tide.";
/** The AI deadline of these tests, and a model far slower than it. */
const AI_TIMEOUT_MS = 300;
const SLOW_MS = 1_000;
/** Longest any step may take before the test fails instead of hanging. */
const HANG_GUARD_MS = 15_000;

const roomy = { max: 1_000, windowMs: 60_000 };

function withSlowParser(
  fn: (h: Harness, parser: ParserSimOptions) => Promise<void>,
  parser: ParserSimOptions,
  env: Record<string, string> = {},
): Promise<void> {
  return withHarness((h) => fn(h, parser), {
    parserSession: true,
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

/** Resolves when `check` holds, polling; fails after the hang guard. */
async function eventually(what: string, check: () => boolean): Promise<void> {
  const until = Date.now() + HANG_GUARD_MS;
  while (!check()) {
    if (Date.now() > until) assert.fail(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Repeats the same request until it is answered with something other than the AI deadline's
 * 504 (a retry that arrives while the Parser is still working waits for it, and may itself be
 * cut off again); every 504 on the way must point at the same kept answer.
 */
async function retryUntilAnswered(
  h: Harness,
  method: string,
  path: string,
  json: unknown,
  resultKey: string,
) {
  const until = Date.now() + HANG_GUARD_MS;
  for (;;) {
    const r = await send(h, method, path, json);
    if (r.status !== 504) return r;
    assert.equal(r.body.details.resultKey, resultKey, "a retry waits for the same call");
    if (Date.now() > until) assert.fail(`${method} ${path} never answered`);
  }
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
  withSlowParser(async (h) => {
    const body = { rawText: TEXT };
    const first = await send(h, "POST", "/api/brain-dump", body);
    const key = assertCutOff(first, "/api/brain-dump/history");

    // the Parser was not cancelled: it writes the notes after its model answered
    await eventually("the note is in Core", () => loreTitled(h, "Tobin Reedwick").length === 1);

    const retry = await retryUntilAnswered(h, "POST", "/api/brain-dump", body, key);
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
  }, { brainDump: { llmDelayMs: SLOW_MS } }));

Deno.test("brain dump: a model slower than UPSTREAM_TIMEOUT_MS but within the AI deadline answers", () =>
  withSlowParser(
    async (h) => {
      const review = await send(h, "POST", "/api/brain-dump", { rawText: TEXT, mode: "review" });
      assert.equal(review.status, 200, JSON.stringify(review.body));
      assert.equal(review.body.mode, "review");
      assert.ok(review.body.proposedEntities.length > 0);
      const auto = await send(h, "POST", "/api/brain-dump", { rawText: TEXT });
      assert.equal(auto.status, 200, JSON.stringify(auto.body));
      assert.ok(auto.body.created.length > 0);

      // an ordinary Parser call still has UPSTREAM_TIMEOUT_MS, and no kept answer
      h.parser!.fault({ path: "/brain-dump/history", delayMs: 1_000, times: 1 });
      const history = await send(h, "GET", "/api/brain-dump/history");
      assert.equal(history.status, 504);
      assert.equal(history.body.error, "UPSTREAM_TIMEOUT");
      assert.deepEqual(history.body.details, { service: "parser" });
    },
    { brainDump: { llmDelayMs: 400 } },
    { UPSTREAM_TIMEOUT_MS: "100", AI_TIMEOUT_MS: "10000" },
  ));

Deno.test("brain dump: keepalives are progress — longer than the AI deadline in total, never idle", () =>
  withSlowParser(async (h) => {
    const r = await send(h, "POST", "/api/brain-dump", { rawText: TEXT });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.cached, false);
    assert.ok(r.body.created.some((n: { title: string }) => n.title === "Tobin Reedwick"));
    assert.deepEqual(parserCalls(h, /^\/brain-dump/), ["POST /brain-dump/stream"]);
  }, { brainDump: { llmDelayMs: SLOW_MS, keepaliveMs: 40 } }));

Deno.test("brain dump: a background call that fails gives its retry that failure, once", () =>
  withSlowParser(async (h, parser) => {
    const body = { rawText: TEXT };
    const key = assertCutOff(
      await send(h, "POST", "/api/brain-dump", body),
      "/api/brain-dump/history",
    );
    const failed = await retryUntilAnswered(h, "POST", "/api/brain-dump", body, key);
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
  withSlowParser(async (h, parser) => {
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
  withSlowParser(async (h) => {
    const body = {
      rawText: TEXT,
      approvedEntities: [{ title: "Amber Shoals", type: "location", action: "create" }],
    };
    h.parser!.fault({ path: "/brain-dump/commit", delayMs: SLOW_MS, times: 1 });
    const key = assertCutOff(
      await send(h, "POST", "/api/brain-dump/commit", body),
      "/api/brain-dump/history",
    );
    await eventually("the note is in Core", () => loreTitled(h, "Amber Shoals").length === 1);
    const retry = await retryUntilAnswered(h, "POST", "/api/brain-dump/commit", body, key);
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.deepEqual(retry.body.created.map((n: { title: string }) => n.title), ["Amber Shoals"]);
    assert.equal(loreTitled(h, "Amber Shoals").length, 1, "a repeat would have written it twice");
    assert.deepEqual(parserCalls(h, /^\/brain-dump/), ["POST /brain-dump/commit"]);
  }, {}));

// ---- copilot, consistency, gaps, relationships --------------------------------------------

Deno.test("copilot chat past the AI deadline: the retry gets the original turn", () =>
  withSlowParser(async (h) => {
    const path = `/api/lore/${W.charMira}/copilot/chat`;
    const body = { transcript: [{ role: "user", content: "What do we know?" }] };
    const key = assertCutOff(await send(h, "POST", path, body));
    const retry = await retryUntilAnswered(h, "POST", path, body, key);
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.equal(typeof retry.body.sessionId, "string");
    assert.match(retry.body.assistantMessage, /^Mira Tallowend links to/);
    assert.deepEqual(parserCalls(h, /^\/copilot\//), ["POST /copilot/article/stream"]);
  }, { copilot: { llmDelayMs: SLOW_MS } }));

Deno.test("consistency past the AI deadline: the retry gets the original scan", () =>
  withSlowParser(async (h) => {
    await reindexForOwner(h.parser!); // sampling the owner's index reaches the model
    const body = {};
    const key = assertCutOff(await send(h, "POST", "/api/ai/consistency", body));
    const retry = await retryUntilAnswered(h, "POST", "/api/ai/consistency", body, key);
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.ok(Array.isArray(retry.body.issues) && typeof retry.body.summary === "string");
    assert.deepEqual(parserCalls(h, /^\/consistency\//), ["POST /consistency/check"]);
  }, { ai: { llmDelayMs: SLOW_MS } }));

Deno.test("gaps past the AI deadline: the retry gets the original analysis", () =>
  withSlowParser(async (h) => {
    const key = assertCutOff(await send(h, "POST", "/api/ai/gaps"));
    const retry = await retryUntilAnswered(h, "POST", "/api/ai/gaps", undefined, key);
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.ok(retry.body.totalNotes > 0);
    assert.deepEqual(parserCalls(h, /^\/suggest\/gaps/), ["POST /suggest/gaps"]);
    // GET is another request: its own call, not the POST's answer
    const get = await send(h, "GET", "/api/ai/gaps");
    assert.equal(get.status, 504);
    assert.notEqual(get.body.details.resultKey, key);
  }, { ai: { llmDelayMs: SLOW_MS } }));

Deno.test("relationship suggestions past the AI deadline: the retry gets the original list", () =>
  withSlowParser(async (h) => {
    await reindexForOwner(h.parser!); // the real Parser suggests only from the owner's index
    const body = { text: "Mira Tallowend sails with Oskar Venn to Saltmarrow Harbor." };
    const key = assertCutOff(await send(h, "POST", "/api/ai/relationships", body));
    const retry = await retryUntilAnswered(h, "POST", "/api/ai/relationships", body, key);
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.ok(retry.body.suggestions.length > 0);
    assert.ok(retry.body.suggestions.every((s: Json) => typeof s.type === "string"));
    assert.deepEqual(parserCalls(h, /^\/suggest\/relationships/), ["POST /suggest/relationships"]);
    // the same text from another caller identity would be another key: here, another body is
    const other = await send(h, "POST", "/api/ai/relationships", { text: `${body.text} Again.` });
    assert.equal(other.status, 504);
    assert.notEqual(other.body.details.resultKey, key);
  }, { ai: { llmDelayMs: SLOW_MS } }));

// ---- imports -----------------------------------------------------------------------------------

Deno.test("system-pack import past the AI deadline: the retry gets the notes made, not duplicates", () =>
  withSlowParser(async (h) => {
    const body = { notes: [{ name: "Shoal Wyrm", cr: 7 }] };
    h.parser!.fault({ path: "/import/system-pack", delayMs: SLOW_MS, times: 1 });
    const key = assertCutOff(await send(h, "POST", "/api/import/system-pack", body));
    await eventually(
      "the statblock is in Core",
      () =>
        h.core.store.search("#statblock").hits.some((x) =>
          h.core.store.getNote(x.noteId)?.title === "Shoal Wyrm"
        ),
    );
    const retry = await retryUntilAnswered(h, "POST", "/api/import/system-pack", body, key);
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.equal(retry.body.created, 1, "a repeat would have reported it a skipped duplicate");
    assert.equal(retry.body.detail.created[0].name, "Shoal Wyrm");
    assert.deepEqual(parserCalls(h, /^\/import\//), ["POST /import/system-pack"]);
  }, {}));
