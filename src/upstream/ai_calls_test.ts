import assert from "node:assert/strict";
import { type ManualDeadlines, manualDeadlines } from "../../tests/helpers/manual_deadlines.ts";
import { ApiError } from "../http/errors.ts";
import { type AiCalls, type AiWork, createAiCalls } from "./ai_calls.ts";
import { ClientAbortError } from "./fetch.ts";
import { memoryStore } from "../store/shared_store.ts";
import { CLAIM_LOOKS, sharedAiCalls } from "./shared_ai_calls.ts";

/** A piece of work the test finishes by hand; `calls` counts how often it was started. */
function manualWork<V>() {
  let settle!: { resolve(v: V): void; reject(e: unknown): void };
  let work: AiWork | undefined;
  let calls = 0;
  return {
    run: (w: AiWork) => {
      calls++;
      work = w;
      return new Promise<V>((resolve, reject) => settle = { resolve, reject });
    },
    resolve: (v: V) => settle.resolve(v),
    reject: (e: unknown) => settle.reject(e),
    get work() {
      return work!;
    },
    get calls() {
      return calls;
    },
  };
}

class CutOff extends Error {}

const waiting = (idleMs = 5_000, signal = new AbortController().signal) => ({
  idleMs,
  signal,
  cutOff: () => new CutOff("still working"),
});

const tick = () => new Promise((r) => setTimeout(r, 0));

/** A registry whose deadlines run on `time` and whose kept answers expire on `clock`. */
function withCalls(
  fn: (calls: AiCalls<string>, clock: { now: number }, time: ManualDeadlines) => Promise<void>,
  opts: { totalMs?: number; ttlMs?: number; maxEntries?: number } = {},
) {
  const clock = { now: 1_000 };
  const time = manualDeadlines();
  const calls = createAiCalls<string>({
    totalMs: opts.totalMs ?? 60_000,
    ttlMs: opts.ttlMs ?? 60_000,
    maxEntries: opts.maxEntries ?? 10,
    now: () => clock.now,
    deadlines: time,
  });
  return fn(calls, clock, time).finally(() => calls.close());
}

/** Runs `key` and lets the client's `idleMs` pass without progress: it is cut off. */
async function cutOffClient(
  calls: AiCalls<string>,
  time: ManualDeadlines,
  key: string,
  work: (w: AiWork) => Promise<string>,
) {
  const answer = calls.run(key, work, waiting(20));
  time.advance(20);
  await assert.rejects(answer, CutOff);
}

Deno.test("ai calls: an answer a client waited for is handed over and not kept", () =>
  withCalls(async (calls) => {
    const w = manualWork<string>();
    const answer = calls.run("k", w.run, waiting());
    w.resolve("made");
    assert.equal(await answer, "made");
    assert.equal(calls.size, 0);
  }));

Deno.test("ai calls: identical requests meanwhile join the one running call", () =>
  withCalls(async (calls) => {
    const w = manualWork<string>();
    const a = calls.run("k", w.run, waiting());
    const b = calls.run("k", w.run, waiting());
    w.resolve("once");
    assert.deepEqual(await Promise.all([a, b]), ["once", "once"]);
    assert.equal(w.calls, 1);
  }));

Deno.test("ai calls: a client cut off leaves the call running; the retry gets its answer once", () =>
  withCalls(async (calls, _, time) => {
    const w = manualWork<string>();
    await cutOffClient(calls, time, "k", w.run);
    assert.equal(w.work.signal.aborted, false, "the work is not cancelled");
    w.resolve("made in the background");
    await tick();
    assert.equal(calls.size, 1, "kept for a retry");
    assert.equal(await calls.run("k", w.run, waiting()), "made in the background");
    assert.equal(w.calls, 1);
    // handed out once: the next request is a new call
    const next = calls.run("k", w.run, waiting());
    assert.equal(w.calls, 2);
    w.resolve("new");
    assert.equal(await next, "new");
  }));

Deno.test("ai calls: a failure nobody waited for goes to the retry, once", () =>
  withCalls(async (calls, _, time) => {
    const w = manualWork<string>();
    await cutOffClient(calls, time, "k", w.run);
    const failure = new ApiError(502, "UPSTREAM_ERROR", "The Parser failed");
    w.reject(failure);
    await tick();
    await assert.rejects(calls.run("k", w.run, waiting()), (e) => e === failure);
    const again = calls.run("k", w.run, waiting());
    assert.equal(w.calls, 2, "after the failure was handed out the work runs again");
    w.resolve("ok");
    assert.equal(await again, "ok");
  }));

Deno.test("ai calls: progress restarts the client's deadline", () =>
  withCalls(async (calls, _, time) => {
    const w = manualWork<string>();
    const answer = calls.run("k", w.run, waiting(80));
    for (let i = 0; i < 10; i++) {
      time.advance(60);
      w.work.progress(); // e.g. a keepalive: never idle for 80 ms, far longer than that in total
    }
    w.resolve("done");
    assert.equal(await answer, "done");
    assert.equal(time.now(), 600);
  }));

Deno.test("ai calls: without progress the client's deadline passes", () =>
  withCalls(async (calls, _, time) => {
    const w = manualWork<string>();
    const answer = calls.run("k", w.run, waiting(80));
    time.advance(60);
    w.work.progress();
    time.advance(79);
    let settled = false;
    answer.then(() => settled = true, () => settled = true);
    await tick();
    assert.equal(settled, false, "79 ms since the last progress: still waiting");
    time.advance(1);
    await assert.rejects(answer, CutOff);
  }));

Deno.test("ai calls: a client that leaves ends its wait, not the call", () =>
  withCalls(async (calls) => {
    const w = manualWork<string>();
    const leave = new AbortController();
    const answer = calls.run("k", w.run, waiting(5_000, leave.signal));
    leave.abort();
    await assert.rejects(answer, ClientAbortError);
    assert.equal(w.work.signal.aborted, false);
    w.resolve("kept");
    await tick();
    assert.equal(await calls.run("k", w.run, waiting()), "kept");
  }));

Deno.test("ai calls: the total deadline aborts the work and is the call's outcome", () =>
  withCalls(async (calls, _, time) => {
    const w = manualWork<string>();
    const answer = calls.run("k", w.run, waiting());
    time.advance(30);
    await assert.rejects(
      answer,
      (e) =>
        e instanceof ApiError && e.status === 504 && /ran past its 30 ms limit/.test(e.message),
    );
    assert.equal(w.work.signal.aborted, true);
  }, { totalMs: 30 }));

Deno.test("ai calls: kept answers expire after the TTL; the oldest go first when full", () =>
  withCalls(async (calls, clock, time) => {
    const cutOff = async (key: string, value: string) => {
      const w = manualWork<string>();
      await cutOffClient(calls, time, key, w.run);
      w.resolve(value);
      await tick();
    };
    await cutOff("a", "A");
    clock.now += 61_000;
    const fresh = manualWork<string>();
    const answer = calls.run("a", fresh.run, waiting());
    assert.equal(fresh.calls, 1, "expired: a new call");
    fresh.resolve("A2");
    assert.equal(await answer, "A2");

    await cutOff("b", "B");
    await cutOff("c", "C");
    await cutOff("d", "D"); // room for two: b is dropped
    assert.equal(calls.size, 2);
    const none = manualWork<string>();
    const b = calls.run("b", none.run, waiting());
    assert.equal(none.calls, 1);
    none.resolve("B2");
    assert.equal(await b, "B2");
    assert.equal(await calls.run("d", none.run, waiting()), "D");
  }, { maxEntries: 2 }));

Deno.test("ai calls: closing stops running calls and drops kept answers", async () => {
  const calls = createAiCalls<string>({ totalMs: 60_000, ttlMs: 60_000, maxEntries: 10 });
  const w = manualWork<string>();
  const answer = calls.run("k", w.run, waiting());
  calls.close();
  await assert.rejects(answer, (e) => e instanceof ApiError && e.status === 503);
  assert.equal(w.work.signal.aborted, true);
  assert.equal(calls.size, 0);
});

/** Two instances' registries on one shared store, their deadlines and the store on one clock. */
function withTwoInstances(
  fn: (a: AiCalls<string>, b: AiCalls<string>, time: ManualDeadlines) => Promise<void>,
) {
  const time = manualDeadlines();
  const store = memoryStore({ maxKeys: 100, now: time.now });
  const codec = { encode: (v: string) => v, decode: (j: unknown) => String(j) };
  const registry = (instanceId: string) =>
    createAiCalls<string>({
      totalMs: 600_000,
      ttlMs: 60_000,
      maxEntries: 10,
      now: time.now,
      deadlines: time,
      shared: sharedAiCalls({ store, codec, instanceId, pollMs: 500 }),
    });
  const [a, b] = [registry("a"), registry("b")];
  return fn(a, b, time).finally(() => {
    a.close();
    b.close();
  });
}

/** Lets the store's answers and the registries' follow-ups run. */
const settleStore = async () => {
  for (let i = 0; i < 10; i++) await tick();
};

Deno.test("ai calls, shared: a retry through another instance gets the kept answer, once", () =>
  withTwoInstances(async (a, b, time) => {
    const w = manualWork<string>();
    const first = a.run("k", w.run, waiting(20));
    await settleStore();
    time.advance(20);
    await assert.rejects(first, CutOff);
    w.resolve("made on a");
    await settleStore();
    const again = manualWork<string>();
    assert.equal(await b.run("k", again.run, waiting()), "made on a");
    assert.equal(again.calls, 0, "the retry did not call the Parser again");
    // handed out once: the next identical request is a new call
    const third = b.run("k", again.run, waiting());
    await settleStore();
    assert.equal(again.calls, 1);
    again.resolve("made on b");
    assert.equal(await third, "made on b");
  }));

Deno.test("ai calls, shared: the same request on another instance waits for the running call", () =>
  withTwoInstances(async (a, b, time) => {
    const w = manualWork<string>();
    const onA = a.run("k", w.run, waiting());
    await settleStore();
    const other = manualWork<string>();
    const onB = b.run("k", other.run, waiting());
    await settleStore();
    time.advance(500);
    await settleStore();
    w.resolve("one answer");
    assert.equal(await onA, "one answer");
    await settleStore();
    time.advance(500);
    assert.equal(await onB, "one answer");
    assert.deepEqual([w.calls, other.calls], [1, 0]);
  }));

Deno.test("ai calls, shared: a client waiting on another instance is cut off like any other", () =>
  withTwoInstances(async (a, b, time) => {
    const w = manualWork<string>();
    const onA = a.run("k", w.run, waiting(60_000));
    await settleStore();
    const other = manualWork<string>();
    const onB = assert.rejects(b.run("k", other.run, waiting(2_000)), CutOff);
    await settleStore();
    for (let t = 0; t < 4; t++) {
      time.advance(500);
      await settleStore();
    }
    await onB;
    w.resolve("done");
    assert.equal(await onA, "done");
    assert.equal(other.calls, 0);
  }));

Deno.test("ai calls, shared: when the running instance goes, a waiting client runs the call", () =>
  withTwoInstances(async (a, b, time) => {
    const w = manualWork<string>();
    const onA = a.run("k", w.run, waiting());
    onA.catch(() => {});
    await settleStore();
    const other = manualWork<string>();
    const onB = b.run("k", other.run, waiting(60_000));
    await settleStore();
    // a shuts down: its claim ends with nothing kept, so the wait on b runs the call itself
    a.close();
    await settleStore();
    time.advance(500);
    await settleStore();
    assert.equal(other.calls, 1);
    other.resolve("made again on b");
    assert.equal(await onB, "made again on b");
  }));

Deno.test("ai calls, shared: a dead instance's claim lapses and the call runs elsewhere", () =>
  withTwoInstances(async (_a, b, time) => {
    const store = memoryStore({ maxKeys: 10, now: time.now });
    const codec = { encode: (v: string) => v, decode: (j: unknown) => String(j) };
    const dead = sharedAiCalls({ store, codec, instanceId: "dead", pollMs: 500 });
    const alive = createAiCalls<string>({
      totalMs: 600_000,
      ttlMs: 60_000,
      maxEntries: 10,
      now: time.now,
      deadlines: time,
      shared: sharedAiCalls({ store, codec, instanceId: "alive", pollMs: 500 }),
    });
    try {
      // an instance claimed the call and was killed: it never renews nor finishes
      assert.equal(await dead.claim("k"), true);
      const w = manualWork<string>();
      const answer = alive.run("k", w.run, waiting(60_000));
      await settleStore();
      for (let t = 0; t < CLAIM_LOOKS && w.calls === 0; t++) {
        time.advance(500);
        await settleStore();
      }
      assert.equal(w.calls, 1, "run once the claim lapsed");
      w.resolve("made after all");
      assert.equal(await answer, "made after all");
      assert.equal(b.size, 0);
    } finally {
      alive.close();
    }
  }));
