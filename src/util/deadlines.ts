/**
 * Deadlines for work that almost always finishes first: every backend call has one, and nearly
 * every one is cancelled a few milliseconds later. A runtime timer per call costs several
 * microseconds to start and clear (more than the rest of a small call's bookkeeping); here calls
 * with the same duration share one timer. Their deadlines fall due in the order they were set, so
 * each duration keeps an insertion-ordered queue whose timer only ever waits for the oldest
 * entry: setting and cancelling a deadline are a set insert and delete. A queue that empties
 * clears its timer, so nothing keeps the process alive that a cleared `setTimeout` would not.
 *
 * @module
 */

/** Stops a deadline from firing; a no-op once it fired or was cancelled. */
export type CancelDeadline = () => void;

/**
 * Sets deadlines: {@linkcode createDeadlines}. Everything in the service that gives up after a
 * while takes one (backend calls, AI waits, streams), so a test can run them on a clock it moves
 * itself instead of racing the runtime's timers with real work.
 */
export interface Deadlines {
  /** Calls `onExpire` once, `ms` from now, unless cancelled first. `onExpire` must not throw. */
  start(ms: number, onExpire: () => void): CancelDeadline;
  /** Deadlines set and neither fired nor cancelled. */
  pending(): number;
  /** The clock deadlines are counted on, in milliseconds (for work started earlier). */
  now(): number;
}

/** The clock and timer a {@linkcode Deadlines} uses (tests pass their own). */
export interface DeadlineClock {
  now(): number;
  /** Starts a one-shot timer; what it returns is only ever given back to `clearTimer`. */
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(id: unknown): void;
}

const RUNTIME_CLOCK: DeadlineClock = {
  now: () => performance.now(),
  setTimer: (fn, ms) => setTimeout(fn, ms),
  clearTimer: (id) => clearTimeout(id as ReturnType<typeof setTimeout>),
};

interface Entry {
  due: number;
  onExpire: () => void;
}

interface Queue {
  entries: Set<Entry>;
  timer: unknown;
}

/**
 * A deadline scheduler: one timer per distinct duration, armed for the oldest pending deadline.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const deadlines = createDeadlines();
 * const fired: string[] = [];
 * const started = deadlines.now();
 * const cancel = deadlines.start(20, () => fired.push("cancelled one"));
 * deadlines.start(20, () => fired.push("late one"));
 * cancel();
 * await new Promise((r) => setTimeout(r, 40));
 * assert.deepEqual(fired, ["late one"]);
 * assert.equal(deadlines.pending(), 0);
 * assert.ok(deadlines.now() - started >= 19);
 * ```
 */
export function createDeadlines(clock: DeadlineClock = RUNTIME_CLOCK): Deadlines {
  const queues = new Map<number, Queue>();

  const arm = (ms: number, queue: Queue, wait: number) => {
    queue.timer = clock.setTimer(() => expire(ms, queue), Math.max(0, wait));
  };

  const expire = (ms: number, queue: Queue) => {
    queue.timer = undefined;
    const now = clock.now();
    const due: Entry[] = [];
    for (const entry of queue.entries) {
      // timers may wake a fraction of a millisecond early: that counts as on time
      if (entry.due - now > 0.5) break;
      queue.entries.delete(entry);
      due.push(entry);
    }
    const next = queue.entries.values().next();
    if (next.done) queues.delete(ms);
    else arm(ms, queue, next.value.due - now);
    for (const entry of due) entry.onExpire();
  };

  return {
    start(ms, onExpire) {
      let queue = queues.get(ms);
      if (!queue) queues.set(ms, queue = { entries: new Set(), timer: undefined });
      const entry: Entry = { due: clock.now() + ms, onExpire };
      queue.entries.add(entry);
      // every entry already queued falls due no later than this one: a running timer stays
      if (queue.timer === undefined) arm(ms, queue, ms);
      const q = queue;
      return () => {
        if (!q.entries.delete(entry)) return;
        if (q.entries.size === 0) {
          if (q.timer !== undefined) clock.clearTimer(q.timer);
          q.timer = undefined;
          if (queues.get(ms) === q) queues.delete(ms);
        }
      };
    },
    pending: () => {
      let n = 0;
      for (const q of queues.values()) n += q.entries.size;
      return n;
    },
    now: () => clock.now(),
  };
}

/**
 * The scheduler the service's deadlines share unless a test gives its own (`AppDeps.deadlines`),
 * like the runtime's own timer list.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const before = sharedDeadlines.pending();
 * const cancel = sharedDeadlines.start(15_000, () => {});
 * assert.equal(sharedDeadlines.pending(), before + 1);
 * cancel(); // and with nothing left pending, no timer is left running
 * assert.equal(sharedDeadlines.pending(), before);
 * ```
 */
export const sharedDeadlines: Deadlines = createDeadlines();
