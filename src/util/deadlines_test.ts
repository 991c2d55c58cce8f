import assert from "node:assert/strict";
import { createDeadlines, type DeadlineClock } from "./deadlines.ts";

/** A clock whose time moves only when the test says, with the timers it was asked for. */
function manualClock() {
  let now = 0;
  let nextId = 1;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const clock: DeadlineClock = {
    now: () => now,
    setTimer: (fn, ms) => {
      const id = nextId++;
      timers.set(id, { at: now + ms, fn });
      return id;
    },
    clearTimer: (id) => void timers.delete(id as number),
  };
  /** Moves time to `to`, running each timer due by then, earliest first; the first `early` ms early. */
  const advance = (to: number, firstEarly = 0) => {
    for (let early = firstEarly;; early = 0) {
      const due = [...timers].filter(([, t]) =>
        t.at - early <= to
      ).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      timers.delete(due[0]);
      now = Math.max(now, due[1].at - early);
      due[1].fn();
    }
    now = to;
  };
  return { clock, advance, timers: () => timers.size };
}

/** A scheduler on a manual clock, and what its deadlines reported when they fired. */
function scheduler() {
  const { clock, advance, timers } = manualClock();
  return { deadlines: createDeadlines(clock), advance, timers, fired: [] as string[] };
}

Deno.test("deadlines: fire in order, once each, and only those not cancelled", () => {
  const { deadlines, advance, timers, fired } = scheduler();
  deadlines.start(100, () => fired.push("a"));
  advance(10);
  const cancelB = deadlines.start(100, () => fired.push("b"));
  advance(20);
  deadlines.start(100, () => fired.push("c"));
  assert.equal(timers(), 1, "one timer for every deadline of the same duration");
  cancelB();
  advance(105);
  assert.deepEqual(fired, ["a"], "b was cancelled and c is not due until 120");
  advance(119.9);
  assert.deepEqual(fired, ["a"]);
  advance(120);
  assert.deepEqual(fired, ["a", "c"]);
  assert.equal(deadlines.pending(), 0);
  assert.equal(timers(), 0, "nothing left to wait for: no timer");
  cancelB(); // cancelling again, or after the fact, changes nothing
  advance(500);
  assert.deepEqual(fired, ["a", "c"]);
});

Deno.test("deadlines: the last cancel clears the timer, and a later start arms a new one", () => {
  const { deadlines, advance, timers, fired } = scheduler();
  const c1 = deadlines.start(50, () => fired.push("1"));
  const c2 = deadlines.start(50, () => fired.push("2"));
  c1();
  assert.equal(timers(), 1);
  c2();
  assert.equal(timers(), 0, "an empty queue keeps no timer (nothing holds the process open)");
  assert.equal(deadlines.pending(), 0);
  advance(30);
  deadlines.start(50, () => fired.push("3"));
  advance(79);
  assert.deepEqual(fired, []);
  advance(80);
  assert.deepEqual(fired, ["3"]);
});

Deno.test("deadlines: durations keep their own timers; a timer waking early still fires", () => {
  const { deadlines, advance, timers, fired } = scheduler();
  deadlines.start(1_000, () => fired.push("long"));
  deadlines.start(10, () => fired.push("short"));
  assert.equal(timers(), 2);
  // the runtime may wake a timer a fraction of a millisecond before it was due
  advance(9.7, 0.3);
  assert.deepEqual(fired, ["short"]);
  advance(999);
  assert.deepEqual(fired, ["short"]);
  advance(1_000);
  assert.deepEqual(fired, ["short", "long"]);
});

Deno.test("deadlines: a timer that wakes too early waits again for the rest", () => {
  const { deadlines, advance, timers, fired } = scheduler();
  deadlines.start(100, () => fired.push("x"));
  advance(95, 5); // woken 5 ms early: not yet
  assert.deepEqual(fired, []);
  assert.equal(timers(), 1, "armed again for what is left");
  advance(100);
  assert.deepEqual(fired, ["x"]);
});

Deno.test("deadlines: a deadline set while others expire lands after them", () => {
  const { deadlines, advance, fired } = scheduler();
  deadlines.start(10, () => {
    fired.push("first");
    deadlines.start(10, () => fired.push("restarted"));
  });
  deadlines.start(10, () => fired.push("second"));
  advance(10);
  assert.deepEqual(fired, ["first", "second"]);
  advance(20);
  assert.deepEqual(fired, ["first", "second", "restarted"]);
  assert.equal(deadlines.pending(), 0);
});

Deno.test("deadlines: on the runtime's timers, an uncancelled deadline fires", async () => {
  const deadlines = createDeadlines();
  const fired = await new Promise<number>((resolve) => {
    const started = performance.now();
    deadlines.start(15, () => resolve(performance.now() - started));
  });
  assert.ok(fired >= 14, `fired after ${fired} ms`);
  assert.equal(deadlines.pending(), 0);
});
