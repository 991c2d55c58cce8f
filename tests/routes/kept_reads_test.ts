/**
 * Brain-dump history reads kept per caller: the Parser counts them with brain dumps (10 a minute
 * for everyone behind the service), so repeated reads must not spend that budget, and what the
 * caller just wrote must still show at once.
 */
import assert from "node:assert/strict";
import { type Harness, type HarnessOptions, withHarness } from "../helpers/harness.ts";

const TEXT = "Captain Ilsa Venn sails from Saltmarrow Harbor to the Ember Isles at dawn.";

/** Parser calls of the brain-dump group, as "METHOD /path?query". */
function parserCalls(h: Harness): string[] {
  return h.parser!.requests.filter((r) => r.path.startsWith("/brain-dump"))
    .map((r) => `${r.method} ${r.path}${r.search}`);
}

function withKept(
  fn: (h: Harness, clock: { now: number }) => Promise<void>,
  o: { max?: number; env?: Record<string, string> } = {},
): Promise<void> {
  const clock = { now: 1_000_000 };
  const options: HarnessOptions = {
    parserSession: true,
    now: () => clock.now,
    env: o.env,
    parser: { rateLimits: { "brain-dump": { max: o.max ?? 1_000, windowMs: 60_000 } } },
  };
  return withHarness((h) => fn(h, clock), options);
}

type Item = { id: string; rawText: string };

Deno.test("kept reads: a repeated history read asks the Parser once, until the keep time ends", () =>
  withKept(async (h, clock) => {
    const first = await h.requestJson<Item[]>("/api/brain-dump/history");
    const again = await h.requestJson<Item[]>("/api/brain-dump/history");
    assert.deepEqual([first.status, again.status], [200, 200]);
    assert.deepEqual(again.body, first.body);
    assert.deepEqual(parserCalls(h), ["GET /brain-dump/history?limit=20"]);
    // another page is another read
    await h.requestJson("/api/brain-dump/history?limit=5");
    assert.equal(parserCalls(h).length, 2);
    clock.now += 30_001; // PARSER_READ_CACHE_MS, 30 s by default
    await h.requestJson("/api/brain-dump/history");
    assert.deepEqual(parserCalls(h).at(-1), "GET /brain-dump/history?limit=20");
    assert.equal(parserCalls(h).length, 3);
  }));

Deno.test("kept reads: the caller's brain dump, streamed or not, shows in the next read at once", () =>
  withKept(async (h) => {
    assert.deepEqual((await h.requestJson<Item[]>("/api/brain-dump/history")).body, []);
    const auto = await h.requestJson("/api/brain-dump", {
      method: "POST",
      json: { rawText: TEXT, mode: "auto" },
    });
    assert.equal(auto.status, 200);
    const afterAuto = await h.requestJson<Item[]>("/api/brain-dump/history");
    assert.deepEqual(afterAuto.body.map((i) => i.rawText), [TEXT]);

    const stream = await h.request("/api/brain-dump/stream", {
      method: "POST",
      json: { rawText: `${TEXT} Twice.` },
    });
    assert.match(await stream.text(), /event: done/);
    const afterStream = await h.requestJson<Item[]>("/api/brain-dump/history");
    assert.deepEqual(afterStream.body.map((i) => i.rawText), [`${TEXT} Twice.`, TEXT]);
    // an entry is read once, then kept
    const id = afterStream.body[0].id;
    for (let i = 0; i < 3; i++) {
      const entry = await h.requestJson<{ rawText: string }>(`/api/brain-dump/history/${id}`);
      assert.equal(entry.body.rawText, `${TEXT} Twice.`);
    }
    assert.equal(
      parserCalls(h).filter((c) => c === `GET /brain-dump/history/${id}`).length,
      1,
    );
  }));

Deno.test("kept reads: with the Parser's 10 a minute, the page read on every visit leaves room for dumps", () =>
  withKept(async (h) => {
    // ten visits of the brain-dump page, then dumps: without kept reads the visits spend it all
    for (let i = 0; i < 10; i++) {
      assert.equal((await h.requestJson("/api/brain-dump/history")).status, 200);
    }
    const dump = await h.requestJson("/api/brain-dump", {
      method: "POST",
      json: { rawText: TEXT, mode: "auto" },
    });
    assert.equal(dump.status, 200, JSON.stringify(dump.body));
    const after = await h.requestJson<Item[]>("/api/brain-dump/history");
    assert.deepEqual(after.body.map((i) => i.rawText), [TEXT]);
    assert.equal(parserCalls(h).length, 3);
  }, { max: 10 }));

Deno.test("kept reads: a failed read is not kept; PARSER_READ_CACHE_MS=0 keeps nothing", async () => {
  await withKept(async (h) => {
    h.parser!.fault({ path: "/brain-dump/history", status: 500, times: 1 });
    assert.equal((await h.requestJson("/api/brain-dump/history")).status, 502);
    assert.equal((await h.requestJson("/api/brain-dump/history")).status, 200);
    assert.equal(parserCalls(h).length, 2);
  });
  await withKept(async (h) => {
    await h.requestJson("/api/brain-dump/history");
    await h.requestJson("/api/brain-dump/history");
    assert.equal(parserCalls(h).length, 2);
  }, { env: { PARSER_READ_CACHE_MS: "0" } });
});

Deno.test("kept reads: once the stream's done event arrives, a history read shows the dump (the stream still open)", () =>
  withKept(async (h) => {
    await h.requestJson("/api/brain-dump/history"); // kept: an empty list
    // indexing the written notes hangs, so the stream stays open after `done`
    h.parser!.fault({ path: /^\/rag\/reindex\//, hang: true });
    const stream = await h.request("/api/brain-dump/stream", {
      method: "POST",
      json: { rawText: TEXT },
    });
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("event: done")) {
      const { value, done } = await reader.read();
      assert.ok(!done, "the stream ended before its done event");
      text += value;
    }
    // the front end reads the history again as soon as it has `done`
    const after = await h.requestJson<Item[]>("/api/brain-dump/history");
    assert.deepEqual(after.body.map((i) => i.rawText), [TEXT]);
    await reader.cancel();
  }));
