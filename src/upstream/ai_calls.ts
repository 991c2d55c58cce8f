/**
 * AI calls that outlive their client's wait. A model answering in minutes must not lose its
 * result when the client stops waiting: the Parser goes on (and may write lore), and asking
 * again hits its idempotency cache, which no longer says what was made. So an AI call runs once
 * per key, detached from the request that started it; clients wait for it while it shows
 * progress, and a client cut off by that wait leaves the call running. Its outcome is then kept
 * for a retry of the same request, which gets it once instead of calling the Parser again.
 *
 * Bounded: each call ends at `totalMs` (its work is aborted), a kept outcome expires after
 * `ttlMs`, and at most `maxEntries` calls and outcomes are held (oldest kept outcomes go first),
 * the kept outcomes at most `maxKeptBytes` together.
 * In memory, per instance; with `shared` (a store several instances use), a call is claimed there
 * so that one instance runs it, the others' clients wait for its outcome, and an outcome nobody
 * waited for is kept there, for a retry through any instance.
 *
 * @module
 */
import { ApiError } from "../http/errors.ts";
import { type CancelDeadline, type Deadlines, sharedDeadlines } from "../util/deadlines.ts";
import { ClientAbortError } from "./fetch.ts";

/** What a piece of work gets: its own signal (total deadline, shutdown) and a progress hook. */
export interface AiWork {
  /** Aborted when the call passes its total deadline or the registry closes. */
  signal: AbortSignal;
  /** The upstream is still working (an event, a keepalive): waiting clients' deadlines restart. */
  progress(): void;
}

/** How one client waits for a call. */
export interface AiWait {
  /** Longest wait without progress; then `cutOff()` is thrown and the call runs on. */
  idleMs: number;
  /** The client's signal: when it aborts, the wait ends with {@linkcode ClientAbortError}. */
  signal: AbortSignal;
  /** The error a client cut off by `idleMs` gets. */
  cutOff(): Error;
}

/** Options of {@linkcode createAiCalls}. */
export interface AiCallsOptions<V = unknown> {
  /** The longest a call may run; then its work is aborted and its outcome is a 504. */
  totalMs: number;
  /** How long an outcome nobody waited for is kept for a retry. */
  ttlMs: number;
  maxEntries: number;
  /** Most bytes the kept outcomes may hold together, as `sizeOf` counts them (needs `sizeOf`). */
  maxKeptBytes?: number;
  /** A kept value's size in bytes; one larger than `maxKeptBytes` is not kept. */
  sizeOf?: (value: V) => number;
  now?: () => number;
  /** Where `totalMs` and the clients' `idleMs` are counted; default the process-wide scheduler. */
  deadlines?: Deadlines;
  /** Told when an outcome is kept for a retry (`ok`: a result, not an error), for the log. */
  onKept?(key: string, ok: boolean): void;
  /** Calls and kept outcomes as every instance on a shared store sees them. */
  shared?: SharedCalls<V>;
}

/** A call's outcome: its value or its error. */
export type Outcome<V> = { ok: true; value: V } | { ok: false; error: unknown };

/**
 * Running calls and kept outcomes in a store several instances share (`shared_ai_calls.ts`).
 * Every method may reject when the store does not answer.
 */
export interface SharedCalls<V> {
  /** Takes the outcome kept under `key`: once, whichever instance asks first. */
  take(key: string): Promise<Outcome<V> | undefined>;
  /** Claims `key`'s call for this instance: false when another instance runs it. */
  claim(key: string): Promise<boolean>;
  /** Renews this instance's claim while its call runs; a claim lapses with a dead instance. */
  renew(key: string): Promise<void>;
  /** Whether some instance runs `key`'s call. */
  running(key: string): Promise<boolean>;
  /** Ends this instance's claim, keeping `outcome` (if any) for `ttlMs`. */
  finish(key: string, outcome: Outcome<V> | undefined, ttlMs: number): Promise<void>;
  /** How often a claim is renewed and another instance's call looked at. */
  readonly pollMs: number;
}

/** The registry of one app instance. */
export interface AiCalls<V> {
  /**
   * The outcome of the call under `key`: a kept one (handed out once), the running one, or a new
   * run of `work`. Resolves or rejects as the call does, or rejects with `wait.cutOff()` when the
   * call shows no progress for `wait.idleMs`.
   */
  run(key: string, work: (w: AiWork) => Promise<V>, wait: AiWait): Promise<V>;
  /** Aborts every running call and drops every kept outcome (shutdown). */
  close(): void;
  /**
   * Resolves once no call runs and every outcome is written to the shared store (shutdown lets
   * them finish first, within its grace).
   */
  drained(): Promise<void>;
  /** Calls running plus outcomes kept. */
  readonly size: number;
}

interface Entry<V> {
  promise: Promise<V>;
  /** Set once the call has ended. */
  outcome?: Outcome<V>;
  /** What the kept outcome weighs (0 until kept). */
  bytes: number;
  /** When a kept outcome expires. */
  expires: number;
  /** Clients waiting right now. */
  waiters: number;
  /** Deadline restarts of the waiting clients. */
  listeners: Set<() => void>;
  /** Ends the call now with `error`: its work is aborted, its timer cleared. */
  stop(error: unknown): void;
}

/**
 * Creates the registry of AI calls of one app.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const calls = createAiCalls<string>({ totalMs: 600_000, ttlMs: 900_000, maxEntries: 500 });
 * let finish = (_answer: string) => {};
 * const slowModel = new Promise<string>((resolve) => finish = resolve);
 * const wait = {
 *   idleMs: 1,
 *   signal: new AbortController().signal,
 *   cutOff: () => new Error("wait"),
 * };
 * // the model shows no progress within idleMs: the client is cut off, the call runs on
 * await assert.rejects(calls.run("user:digest", () => slowModel, wait), { message: "wait" });
 * finish("a digest");
 * await slowModel;
 * // the same request again gets the kept answer; its work does not run a second time
 * const again = () => Promise.reject(new Error("not called"));
 * assert.equal(await calls.run("user:digest", again, wait), "a digest");
 * calls.close();
 * ```
 */
export function createAiCalls<V>(opts: AiCallsOptions<V>): AiCalls<V> {
  const r: Registry<V> = {
    opts,
    entries: new Map(),
    now: opts.now ?? (() => Date.now()),
    deadlines: opts.deadlines ?? sharedDeadlines,
    maxKeptBytes: opts.maxKeptBytes ?? Infinity,
    finishing: new Set(),
  };
  return {
    run(key, work, w) {
      const found = r.entries.get(key);
      if (found?.outcome) {
        // a kept outcome is handed out once, and only while fresh
        r.entries.delete(key);
        if (found.expires > r.now()) return delivered(found.outcome);
      }
      if (found && !found.outcome) return waitFor(found, w, r.deadlines);
      if (opts.shared) return runShared(r, opts.shared, key, work, w);
      return waitFor(startCall(r, key, work), w, r.deadlines);
    },
    close() {
      const running = [...r.entries.values()].filter((e) => !e.outcome);
      r.entries.clear();
      r.closing = true;
      for (const e of running) {
        e.stop(
          new ApiError(503, "UNREACHABLE", "The service is shutting down", {
            service: "parser",
          }),
        );
      }
    },
    async drained() {
      for (;;) {
        const running = [...r.entries.values()].filter((e) => !e.outcome).map((e) => e.promise);
        if (running.length === 0 && r.finishing.size === 0) return;
        await Promise.allSettled([...running, ...r.finishing]);
      }
    },
    get size() {
      return r.entries.size;
    },
  };
}

/** One registry's state, passed to the functions below. */
interface Registry<V> {
  opts: AiCallsOptions<V>;
  /** Calls and kept outcomes by key, oldest first (insertion order). */
  entries: Map<string, Entry<V>>;
  now: () => number;
  deadlines: Deadlines;
  maxKeptBytes: number;
  /** Shutting down: a claim ends without keeping anything (a retry must run the call anew). */
  closing?: boolean;
  /** Outcomes being written to the shared store (shutdown waits for them). */
  finishing: Set<Promise<unknown>>;
}

/** An outcome as its caller gets it. */
function delivered<V>(o: Outcome<V>): Promise<V> {
  return o.ok ? Promise.resolve(o.value) : Promise.reject(o.error);
}

/**
 * A call when instances share a store: an outcome kept there is handed out; a call this instance
 * claims runs here; one another instance runs is waited for there.
 */
async function runShared<V>(
  r: Registry<V>,
  shared: SharedCalls<V>,
  key: string,
  work: (w: AiWork) => Promise<V>,
  w: AiWait,
): Promise<V> {
  const kept = await shared.take(key);
  if (kept) return delivered(kept);
  // another client of this instance may have started it while the store answered
  const running = r.entries.get(key);
  if (running && !running.outcome) return waitFor(running, w, r.deadlines);
  if (await shared.claim(key)) return waitFor(startCall(r, key, work), w, r.deadlines);
  return waitElsewhere(r, shared, key, work, w);
}

/**
 * Waits for the call another instance runs: its kept outcome, or `cutOff()` after `idleMs` (no
 * progress is seen from here), or {@linkcode ClientAbortError}. A claim that lapsed without an
 * outcome (the instance died, or shut down) leaves the call to run here.
 */
function waitElsewhere<V>(
  r: Registry<V>,
  shared: SharedCalls<V>,
  key: string,
  work: (w: AiWork) => Promise<V>,
  w: AiWait,
): Promise<V> {
  return clientWait<V>(w, r.deadlines, (end) => {
    let cancelLook: CancelDeadline | undefined;
    const look = async () => {
      try {
        const kept = await shared.take(key);
        if (kept) return end.follow(delivered(kept));
        if (!(await shared.running(key))) return end.follow(runShared(r, shared, key, work, w));
        if (!end.ended()) cancelLook = r.deadlines.start(shared.pollMs, look);
      } catch (e) {
        end.follow(Promise.reject(e));
      }
    };
    cancelLook = r.deadlines.start(shared.pollMs, look);
    return () => cancelLook?.();
  });
}

/** Runs `work` as the call under `key`, detached from any client, ended at `totalMs`. */
function startCall<V>(r: Registry<V>, key: string, work: (w: AiWork) => Promise<V>): Entry<V> {
  makeRoom(r);
  const abort = new AbortController();
  let fail!: (error: unknown) => void;
  const stopped = new Promise<never>((_, reject) => fail = reject);
  const entry: Entry<V> = {
    promise: Promise.resolve() as Promise<V>,
    expires: Infinity,
    bytes: 0,
    waiters: 0,
    listeners: new Set(),
    stop: (error) => {
      cancelTotal();
      abort.abort(error);
      fail(error);
    },
  };
  const totalMs = r.opts.totalMs;
  const cancelTotal = r.deadlines.start(totalMs, () =>
    entry.stop(
      new ApiError(504, "UPSTREAM_TIMEOUT", `The AI call ran past its ${totalMs} ms limit`, {
        service: "parser",
      }),
    ));
  const progress = () => {
    for (const restart of entry.listeners) restart();
  };
  const shared = r.opts.shared;
  // the claim is renewed while the call runs, so that it lapses soon after a dead instance
  let cancelRenew: CancelDeadline = () => {};
  const renew = () => {
    shared?.renew(key).catch(() => {});
    cancelRenew = r.deadlines.start(shared!.pollMs, renew);
  };
  if (shared) cancelRenew = r.deadlines.start(shared.pollMs, renew);
  entry.promise = Promise.race([work({ signal: abort.signal, progress }), stopped]);
  // registered before any waiter's handlers, so `waiters` still counts them when this runs
  entry.promise.then(
    (value) => settle(r, key, entry, { ok: true, value }),
    (error) => settle(r, key, entry, { ok: false, error }),
  ).finally(() => {
    cancelTotal();
    cancelRenew();
  });
  r.entries.set(key, entry);
  return entry;
}

/** Drops expired outcomes, then the oldest outcomes and, if still full, the oldest calls. */
function makeRoom<V>(r: Registry<V>): void {
  const { entries } = r;
  for (const [key, e] of entries) if (e.outcome && e.expires <= r.now()) entries.delete(key);
  for (const kept of [true, false]) {
    for (const [key, e] of entries) {
      if (entries.size < r.opts.maxEntries) return;
      // a dropped running call still answers the clients waiting for it; it is just not kept
      if (!!e.outcome === kept) entries.delete(key);
    }
  }
}

/** Delivered to waiting clients: forgotten. Nobody waiting: kept for a retry. */
function settle<V>(r: Registry<V>, key: string, entry: Entry<V>, outcome: Outcome<V>): void {
  entry.outcome = outcome;
  if (r.opts.shared) return settleShared(r, r.opts.shared, key, entry, outcome);
  if (r.entries.get(key) !== entry) return;
  if (entry.waiters > 0 || r.opts.ttlMs <= 0) {
    r.entries.delete(key);
    return;
  }
  entry.bytes = outcome.ok ? r.opts.sizeOf?.(outcome.value) ?? 0 : 0;
  if (entry.bytes > r.maxKeptBytes) {
    r.entries.delete(key);
    return;
  }
  entry.expires = r.now() + r.opts.ttlMs;
  r.opts.onKept?.(key, outcome.ok);
  trimKept(r);
}

/**
 * With a shared store the outcome is kept there, never here: for `ttlMs` when nobody waited for
 * it, else for a few looks of another instance's clients waiting for the same call. At shutdown
 * the claim just ends: a retry runs the call anew.
 */
function settleShared<V>(
  r: Registry<V>,
  shared: SharedCalls<V>,
  key: string,
  entry: Entry<V>,
  outcome: Outcome<V>,
): void {
  if (r.entries.get(key) === entry) r.entries.delete(key);
  const keep = !r.closing;
  const ttlMs = entry.waiters > 0 ? shared.pollMs * SHARED_GRACE_LOOKS : r.opts.ttlMs;
  const size = outcome.ok ? r.opts.sizeOf?.(outcome.value) ?? 0 : 0;
  const kept = keep && ttlMs > 0 && size <= r.maxKeptBytes ? outcome : undefined;
  const finishing = shared.finish(key, kept, ttlMs).then(
    () => kept && entry.waiters === 0 && r.opts.onKept?.(key, outcome.ok),
    () => {}, // the store's outage is logged where it is seen; the claim lapses on its own
  ).finally(() => r.finishing.delete(finishing));
  r.finishing.add(finishing);
}

/** How many looks of waiting clients an outcome delivered here stays in the store for. */
const SHARED_GRACE_LOOKS = 4;

/** Drops the oldest kept outcomes until they fit in `maxKeptBytes` together. */
function trimKept<V>(r: Registry<V>): void {
  let kept = 0;
  for (const e of r.entries.values()) if (e.outcome) kept += e.bytes;
  for (const [key, e] of r.entries) {
    if (kept <= r.maxKeptBytes) return;
    if (e.outcome) {
      r.entries.delete(key);
      kept -= e.bytes;
    }
  }
}

/**
 * One client's wait for a call: its outcome, or `cutOff()` after `idleMs` without progress, or
 * {@linkcode ClientAbortError} when the client goes. Either way the call itself runs on.
 */
function waitFor<V>(entry: Entry<V>, w: AiWait, deadlines: Deadlines): Promise<V> {
  return clientWait<V>(w, deadlines, (end) => {
    entry.waiters++;
    entry.listeners.add(end.restart);
    end.follow(entry.promise);
    return () => {
      entry.listeners.delete(end.restart);
      entry.waiters--;
    };
  });
}

/** How a wait ends, for {@linkcode clientWait}'s `start`. */
interface WaitEnd<V> {
  /** Ends the wait as `outcome` settles (unless it ended first). */
  follow(outcome: Promise<V>): void;
  /** Progress: the idle deadline starts again. */
  restart(): void;
  /** Whether the wait has ended. */
  ended(): boolean;
}

/**
 * The skeleton of a client's wait: it ends once, with what `start` follows, with `cutOff()`
 * after `idleMs` without `restart()`, or with {@linkcode ClientAbortError} when the client goes;
 * `start` returns its own clean-up, run when the wait ends.
 */
function clientWait<V>(
  w: AiWait,
  deadlines: Deadlines,
  start: (end: WaitEnd<V>) => () => void,
): Promise<V> {
  return new Promise<V>((resolve, reject) => {
    if (w.signal.aborted) return reject(new ClientAbortError());
    let cancelIdle: CancelDeadline | undefined;
    let done = false;
    const cleanUps: (() => void)[] = [];
    const finish = (end: () => void) => {
      if (done) return;
      done = true;
      cancelIdle?.();
      for (const cleanUp of cleanUps) cleanUp();
      w.signal.removeEventListener("abort", onAbort);
      end();
    };
    const restart = () => {
      cancelIdle?.();
      cancelIdle = deadlines.start(w.idleMs, () => finish(() => reject(w.cutOff())));
    };
    const onAbort = () => finish(() => reject(new ClientAbortError()));
    w.signal.addEventListener("abort", onAbort, { once: true });
    restart();
    cleanUps.push(start({
      follow: (outcome) =>
        outcome.then(
          (value) => finish(() => resolve(value)),
          (error) => finish(() => reject(error)),
        ),
      restart,
      ended: () => done,
    }));
  });
}
