/**
 * The pace a request body must keep, as pure bookkeeping over times the caller passes in (no
 * clock, no timer: http/body.ts runs it on a scheduler, tests on numbers). Three limits, each
 * counted in *waiting time*: only the time a read waits for the client's next bytes, never the
 * time the service spends elsewhere (a backend slow to take an upload stops the client's clock):
 *
 * - idle: nothing arrives for `idleMs`;
 * - slow: once a whole window of waiting has passed (the grace period), fewer than
 *   `minBytesPerSecond` × `windowMs` arrived during the last `windowMs` (a body trickling a byte
 *   every few seconds never stalls for `idleMs`, but ends here);
 * - total: the body has taken `totalMs` and is still not complete.
 *
 * Arrivals are kept per sixteenth of a window, each stamped with its last arrival, so a
 * window may count a sixteenth of a window's bytes more than it strictly holds (in the
 * client's favour), and the bookkeeping stays a few numbers per body however many chunks come.
 *
 * @module
 */

/** The limits, in milliseconds and bytes per second. */
export interface BodyPaceLimits {
  /** Longest wait for the next bytes. */
  idleMs: number;
  /** Least average rate over each window, once one window has passed (0: no minimum). */
  minBytesPerSecond: number;
  /** The window the rate is averaged over, and the grace period before it applies. */
  windowMs: number;
  /** Longest the whole body may take. */
  totalMs: number;
}

/** Which limit a body broke. */
export type BodyPaceBreach = "idle" | "slow" | "total";

/** Where a body stands (for the 408 and the log line). */
export interface BodyPaceState {
  /** Bytes received so far. */
  bytes: number;
  /** Waiting time so far, in milliseconds. */
  waitedMs: number;
  /** Bytes received during the last window of waiting. */
  windowBytes: number;
}

/** The pace of one body: {@linkcode bodyPace}. */
export interface BodyPace {
  /** A read starts waiting for the client at `now`. */
  waiting(now: number): void;
  /** The waiting read got `bytes` at `now`. */
  received(now: number, bytes: number): void;
  /** The limit broken by `now`, if any. */
  breach(now: number): BodyPaceBreach | null;
  /**
   * Milliseconds from `now` until a limit breaks if nothing more arrives (0: broken already).
   * Counted as waiting time, so exact while a read waits.
   */
  untilBreach(now: number): number;
  state(now: number): BodyPaceState;
}

/** Arrivals are grouped per this fraction of a window. */
const BUCKETS_PER_WINDOW = 16;

/**
 * Starts the bookkeeping of one body under `limits`. Times are milliseconds on any clock that
 * only moves forward.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const limits = { idleMs: 10_000, minBytesPerSecond: 100, windowMs: 30_000, totalMs: 3_600_000 };
 * const pace = bodyPace(limits);
 * // one byte every 5 s: never idle for 10 s...
 * for (let now = 0; now < 30_000; now += 5_000) {
 *   pace.waiting(now);
 *   pace.received(now + 5_000, 1);
 * }
 * pace.waiting(30_000);
 * assert.equal(pace.untilBreach(30_000), 0);
 * // ...but 6 bytes in 30 s is far below 100 bytes per second
 * assert.equal(pace.breach(30_000), "slow");
 * assert.equal(pace.state(30_000).windowBytes, 6);
 * ```
 */
export function bodyPace(limits: BodyPaceLimits): BodyPace {
  const { idleMs, windowMs, totalMs } = limits;
  const need = limits.minBytesPerSecond * windowMs / 1000;
  const bucketMs = windowMs / BUCKETS_PER_WINDOW;
  let waited = 0;
  let waitingSince: number | null = null;
  let bytes = 0;
  let lastArrival = 0;
  // Cumulative bytes by waiting time: `totals[i]` had arrived by `times[i]`. The first entry is
  // the latest one at or before the window's start (the base the window's bytes are counted
  // from); `opened[i]` is when entry i's bucket began.
  const times = [0];
  const totals = [0];
  const opened = [0];

  const waitedAt = (now: number) => waited + (waitingSince === null ? 0 : now - waitingSince);
  const prune = (at: number) => {
    while (times.length > 1 && times[1] <= at - windowMs) {
      times.shift();
      totals.shift();
      opened.shift();
    }
  };
  const windowBytes = (at: number) => {
    prune(at);
    return times[0] <= at - windowMs ? bytes - totals[0] : bytes;
  };

  return {
    waiting(now) {
      if (waitingSince === null) waitingSince = now;
    },
    received(now, n) {
      const at = waitedAt(now);
      waited = at;
      waitingSince = null;
      if (n <= 0) return;
      bytes += n;
      lastArrival = at;
      const last = times.length - 1;
      if (last > 0 && at - opened[last] < bucketMs) {
        times[last] = at;
        totals[last] = bytes;
      } else {
        times.push(at);
        totals.push(bytes);
        opened.push(at);
      }
      prune(at);
    },
    breach(now) {
      const at = waitedAt(now);
      if (at >= totalMs) return "total";
      if (at - lastArrival >= idleMs) return "idle";
      if (need > 0 && at >= windowMs && windowBytes(at) < need) return "slow";
      return null;
    },
    untilBreach(now) {
      const at = waitedAt(now);
      let due = Math.min(totalMs, lastArrival + idleMs);
      if (need > 0) {
        prune(at);
        // with nothing more arriving, the window's bytes fall below `need` once the first
        // entry holding more than `bytes - need` has left the window
        let i = 0;
        while (totals[i] <= bytes - need) i++; // the last entry holds `bytes`: the loop ends
        due = Math.min(due, Math.max(windowMs, times[i] + windowMs));
      }
      return Math.max(0, due - at);
    },
    state(now) {
      const at = waitedAt(now);
      return { bytes, waitedMs: at, windowBytes: windowBytes(at) };
    },
  };
}
