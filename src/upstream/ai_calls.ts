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
 * Per instance, in memory: a retry through another instance does not see it.
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
  /** Calls running plus outcomes kept. */
  readonly size: number;
}

type Outcome<V> = { ok: true; value: V } | { ok: false; error: unknown };

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
  };
  return {
    run(key, work, w) {
      const found = r.entries.get(key);
      if (found?.outcome) {
        // a kept outcome is handed out once, and only while fresh
        r.entries.delete(key);
        if (found.expires > r.now()) {
          const o = found.outcome;
          return o.ok ? Promise.resolve(o.value) : Promise.reject(o.error);
        }
      }
      const entry = found && !found.outcome ? found : startCall(r, key, work);
      return waitFor(entry, w, r.deadlines);
    },
    close() {
      const running = [...r.entries.values()].filter((e) => !e.outcome);
      r.entries.clear();
      for (const e of running) {
        e.stop(
          new ApiError(503, "UNREACHABLE", "The service is shutting down", {
            service: "parser",
          }),
        );
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
  entry.promise = Promise.race([work({ signal: abort.signal, progress }), stopped]);
  // registered before any waiter's handlers, so `waiters` still counts them when this runs
  entry.promise.then(
    (value) => settle(r, key, entry, { ok: true, value }),
    (error) => settle(r, key, entry, { ok: false, error }),
  ).finally(cancelTotal);
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
  return new Promise<V>((resolve, reject) => {
    if (w.signal.aborted) return reject(new ClientAbortError());
    let cancelIdle: CancelDeadline | undefined;
    let done = false;
    const finish = (end: () => void) => {
      if (done) return;
      done = true;
      cancelIdle?.();
      entry.listeners.delete(restart);
      entry.waiters--;
      w.signal.removeEventListener("abort", onAbort);
      end();
    };
    const restart = () => {
      cancelIdle?.();
      cancelIdle = deadlines.start(w.idleMs, () => finish(() => reject(w.cutOff())));
    };
    const onAbort = () => finish(() => reject(new ClientAbortError()));
    entry.waiters++;
    entry.listeners.add(restart);
    w.signal.addEventListener("abort", onAbort, { once: true });
    restart();
    entry.promise.then(
      (value) => finish(() => resolve(value)),
      (error) => finish(() => reject(error)),
    );
  });
}
