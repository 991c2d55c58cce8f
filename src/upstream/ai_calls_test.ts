import assert from "node:assert/strict";
import { ApiError } from "../http/errors.ts";
import { type AiCalls, type AiWork, createAiCalls } from "./ai_calls.ts";
import { ClientAbortError } from "./fetch.ts";

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

function withCalls(
  fn: (calls: AiCalls<string>, clock: { now: number }) => Promise<void>,
  opts: { totalMs?: number; ttlMs?: number; maxEntries?: number } = {},
) {
  const clock = { now: 1_000 };
  const calls = createAiCalls<string>({
    totalMs: opts.totalMs ?? 60_000,
    ttlMs: opts.ttlMs ?? 60_000,
    maxEntries: opts.maxEntries ?? 10,
    now: () => clock.now,
  });
  return fn(calls, clock).finally(() => calls.close());
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
  withCalls(async (calls) => {
    const w = manualWork<string>();
    await assert.rejects(calls.run("k", w.run, waiting(20)), CutOff);
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
  withCalls(async (calls) => {
    const w = manualWork<string>();
    await assert.rejects(calls.run("k", w.run, waiting(20)), CutOff);
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
  withCalls(async (calls) => {
    const answer = calls.run("k", async ({ progress }) => {
      for (let i = 0; i < 50; i++) {
        await new Promise((r) => setTimeout(r, 5));
        progress(); // e.g. a keepalive: never idle for 80 ms, far longer than that in total
      }
      return "done";
    }, waiting(80));
    assert.equal(await answer, "done");
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
  withCalls(async (calls) => {
    const w = manualWork<string>();
    await assert.rejects(
      calls.run("k", w.run, waiting()),
      (e) =>
        e instanceof ApiError && e.status === 504 && /ran past its 30 ms limit/.test(e.message),
    );
    assert.equal(w.work.signal.aborted, true);
  }, { totalMs: 30 }));

Deno.test("ai calls: kept answers expire after the TTL; the oldest go first when full", () =>
  withCalls(async (calls, clock) => {
    const cutOff = async (key: string, value: string) => {
      const w = manualWork<string>();
      await assert.rejects(calls.run(key, w.run, waiting(1)), CutOff);
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
