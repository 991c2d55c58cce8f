/**
 * Time a test moves itself. A {@linkcode ManualDeadlines} given to the service (`deadlines` of
 * the harness, `AppDeps.deadlines`) and to the doubles runs every deadline of both — backend
 * calls, AI waits, streams, model delays, keepalives — on a clock that stands still until the
 * test advances it: "slower than the deadline" then means what the test says, never how busy the
 * machine is. {@linkcode eventually} waits for what the system does meanwhile (real work,
 * over real sockets), under a hang guard only.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Deadlines } from "../../src/util/deadlines.ts";

/** A deadline scheduler on a clock that moves only when the test says. */
export interface ManualDeadlines extends Deadlines {
  /**
   * Moves the clock `ms` forward, firing every deadline due by then, earliest first (those due
   * together in the order they were set), including deadlines set by the ones firing.
   */
  advance(ms: number): void;
  /**
   * Moves the clock to the earliest pending deadline and fires it (with any due at the same
   * moment); returns how far the clock moved (0 with nothing pending).
   */
  advanceToNext(): number;
  /** Deadlines of this duration set and neither fired nor cancelled. */
  pendingOf(ms: number): number;
  /** When each deadline of this duration was set, on this clock, in order. */
  setAt(ms: number): readonly number[];
}

interface Entry {
  due: number;
  order: number;
  ms: number;
  onExpire: () => void;
}

/**
 * A scheduler whose clock starts at 0 and stands still until {@linkcode ManualDeadlines.advance}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const time = manualDeadlines();
 * const fired: string[] = [];
 * time.start(300, () => fired.push("ai wait"));
 * const cancel = time.start(100, () => fired.push("cancelled"));
 * cancel();
 * time.advance(299);
 * assert.equal(fired.join(), "");
 * time.advance(1);
 * assert.equal(fired.join(), "ai wait");
 * assert.equal(time.now(), 300);
 * time.start(50, () => fired.push("next"));
 * time.start(90, () => fired.push("later"));
 * assert.equal(time.advanceToNext(), 50);
 * assert.equal(fired.join(), "ai wait,next");
 * ```
 */
export function manualDeadlines(): ManualDeadlines {
  let now = 0;
  let order = 0;
  const entries = new Set<Entry>();
  const setAt = new Map<number, number[]>();
  /** The deadline due first by `to` (of those due together, the first set). */
  const nextDue = (to: number) => {
    let next: Entry | undefined;
    for (const e of entries) {
      if (e.due > to) continue;
      if (!next || e.due < next.due || (e.due === next.due && e.order < next.order)) next = e;
    }
    return next;
  };
  const advance = (ms: number) => {
    const to = now + ms;
    for (let e = nextDue(to); e; e = nextDue(to)) {
      entries.delete(e);
      now = Math.max(now, e.due);
      e.onExpire();
    }
    now = to;
  };
  return {
    start(ms, onExpire) {
      const entry = { due: now + ms, order: order++, ms, onExpire };
      entries.add(entry);
      let times = setAt.get(ms);
      if (!times) setAt.set(ms, times = []);
      times.push(now);
      return () => void entries.delete(entry);
    },
    pending: () => entries.size,
    now: () => now,
    advance,
    advanceToNext() {
      let due = Infinity;
      for (const e of entries) due = Math.min(due, e.due);
      if (due === Infinity) return 0;
      const moved = Math.max(0, due - now);
      advance(moved);
      return moved;
    },
    pendingOf: (ms) => [...entries].filter((e) => e.ms === ms).length,
    setAt: (ms) => setAt.get(ms) ?? [],
  };
}

/** How long {@linkcode eventually} waits before it fails instead of hanging. */
export const HANG_GUARD_MS = 60_000;

/**
 * Resolves once `check` holds (it may ask over the network), looking again every few
 * milliseconds; fails the test after {@linkcode HANG_GUARD_MS} (a guard against a hang, not a
 * measure of speed).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * let done = false;
 * setTimeout(() => done = true, 5);
 * await eventually("the work is done", () => done);
 * assert.equal(done, true);
 * ```
 */
export async function eventually(
  what: string,
  check: () => boolean | Promise<boolean>,
): Promise<void> {
  const until = performance.now() + HANG_GUARD_MS;
  while (!await check()) {
    if (performance.now() > until) assert.fail(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * Waits for `answer` while moving `time` from one deadline to the next, but only while `stuck()`
 * says nothing but a deadline can end the wait (e.g. a double holds the request): real work is
 * never cut short by time passing, however slowly the machine runs. Between moves it yields to
 * what the fired deadline set off; `stuck()` should turn false as soon as a deadline fires where
 * firing the next one too early would matter (count the pending deadlines).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const time = manualDeadlines();
 * let held = true; // e.g. a backend that never answers, released only by the deadline
 * const answer = new Promise<string>((resolve) =>
 *   time.start(15_000, () => {
 *     held = false;
 *     resolve("504");
 *   })
 * );
 * assert.equal(await answerMovingTime(time, answer, () => held), "504");
 * assert.equal(time.now(), 15_000);
 * ```
 */
export async function answerMovingTime<T>(
  time: ManualDeadlines,
  answer: Promise<T>,
  stuck: () => boolean,
  what = "the answer",
): Promise<T> {
  let done = false;
  answer.then(() => done = true, () => done = true);
  for (;;) {
    await eventually(`${what}, or a wait only a deadline ends`, () => done || stuck());
    if (done) return await answer;
    time.advanceToNext();
    await new Promise((r) => setTimeout(r, 0));
  }
}
