/**
 * Server-sent events: framing, a tracker that knows where event boundaries are, and the one
 * streaming response every SSE route uses. Upstream bytes are passed on as they arrive (no
 * re-framing, keepalive comments included); what this module adds is the guarantee that every
 * stream ends with a terminal `done` or `error` event, whatever happens upstream: a stall (idle
 * deadline), a stream that runs too long (total deadline), a dropped connection, or an upstream
 * that closes without finishing. The deadlines are the ones every streamed body has
 * ({@linkcode guardedBody}).
 *
 * @module
 */
import { type CancelDeadline, type Deadlines, sharedDeadlines } from "../util/deadlines.ts";
import { ApiError } from "./errors.ts";
import { guardedBody, streamDeadlineError } from "./stream_guard.ts";

const encoder = new TextEncoder();

/**
 * Encodes one event the way the Parser frames them: `event:` line, one `data:` line, blank line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   new TextDecoder().decode(encodeSseEvent("status", { stage: "context" })),
 *   'event: status\ndata: {"stage":"context"}\n\n',
 * );
 * ```
 */
export function encodeSseEvent(event: string, data: unknown): Uint8Array {
  return encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** Names of events after which a stream is complete. */
export const TERMINAL_EVENTS: ReadonlySet<string> = new Set(["done", "error"]);

/** Incremental view of an SSE byte stream: the events seen and whether a boundary was reached. */
export interface SseTracker {
  /** Feeds the next chunk; returns the names of events completed by it. */
  push(chunk: Uint8Array): string[];
  /** True when everything fed so far ends on an event boundary (safe to inject an event). */
  atBoundary(): boolean;
  /** True once a `done` or `error` event has been completed. */
  terminated(): boolean;
}

/**
 * Tracks event names across arbitrary chunk splits (CRLF, LF and CR line ends, as the SSE spec
 * allows), without keeping more than the current line. With `onEvent`, each completed event's
 * data (its `data:` lines joined by newlines) is kept until the event ends and handed over.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const seen: string[] = [];
 * const t = createSseTracker((name, data) => seen.push(`${name} ${data}`));
 * assert.deepEqual(t.push(new TextEncoder().encode("event: done\nda")), []);
 * assert.deepEqual(t.push(new TextEncoder().encode("ta: {}\n\n")), ["done"]);
 * assert.deepEqual(seen, ["done {}"]);
 * assert.equal(t.terminated(), true);
 * ```
 */
export function createSseTracker(onEvent?: (name: string, data: string) => void): SseTracker {
  const decoder = new TextDecoder();
  let line = "";
  let eventName = "";
  let hasData = false;
  let data: string[] = [];
  let lastWasCr = false;
  let terminal = false;
  let pendingLine = false;
  let fieldsInEvent = false;

  const endLine = (out: string[]) => {
    if (line === "") {
      if (hasData) out.push(eventName || "message");
      if (hasData && TERMINAL_EVENTS.has(eventName || "message")) terminal = true;
      if (hasData) onEvent?.(eventName || "message", data.join("\n"));
      eventName = "";
      hasData = false;
      data = [];
      fieldsInEvent = false;
    } else if (!line.startsWith(":")) {
      fieldsInEvent = true;
      const at = line.indexOf(":");
      const field = at < 0 ? line : line.slice(0, at);
      let value = at < 0 ? "" : line.slice(at + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") eventName = value;
      else if (field === "data") {
        hasData = true;
        if (onEvent) data.push(value); // pass-through trackers keep no data
      }
    }
    line = "";
    pendingLine = false;
  };

  return {
    push(chunk) {
      const out: string[] = [];
      const text = decoder.decode(chunk, { stream: true });
      for (const ch of text) {
        if (ch === "\n" && lastWasCr) {
          lastWasCr = false;
          continue;
        }
        lastWasCr = ch === "\r";
        if (ch === "\n" || ch === "\r") endLine(out);
        else {
          line += ch;
          pendingLine = true;
        }
      }
      return out;
    },
    atBoundary: () => !pendingLine && !fieldsInEvent,
    terminated: () => terminal,
  };
}

/** How a stream writer talks to the client. */
export interface SseWriter {
  /** Sends one event. */
  event(name: string, data: unknown): Promise<void>;
  /**
   * Passes an upstream SSE body through byte for byte until it ends. Throws an
   * {@linkcode ApiError} when it stalls longer than the idle deadline, passes the total one or
   * breaks off.
   */
  pipe(upstream: Response): Promise<void>;
  /** True once a terminal event has been sent (by us or by the upstream). */
  terminated(): boolean;
}

/** Options of {@linkcode sseResponse}. */
export interface SseOptions {
  /** No byte from upstream for this long ends the stream with an `error` event. */
  idleMs: number;
  /** The whole stream (work before the upstream stream included) ends with `error` after this. */
  totalMs: number;
  /** The client's request signal: when it aborts, the producer's upstream calls abort too. */
  signal: AbortSignal;
  requestId: string;
  /** Called once when the stream ends: `reason` says how (for the log). */
  onEnd?(reason: "complete" | "error" | "client-closed"): void;
  /** Where the deadlines are counted; default the process-wide scheduler. */
  deadlines?: Deadlines;
  /**
   * Aborted when the service stops and can wait no longer: the stream ends with an `error`
   * event naming a retry ({@linkcode restartingError}) instead of being cut off.
   */
  closing?: AbortSignal;
}

/**
 * The terminal error of a stream the service ends because it stops: 503 `SERVICE_BUSY` whose
 * details say to repeat the request (another instance, or this one restarted, takes it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const e = restartingError();
 * assert.deepEqual([e.status, e.code, e.details], [503, "SERVICE_BUSY", {
 *   retry: "repeat the same request",
 * }]);
 * ```
 */
export function restartingError(): ApiError {
  return new ApiError(
    503,
    "SERVICE_BUSY",
    "The service is restarting: repeat the request",
    { retry: "repeat the same request" },
  );
}

/**
 * A `text/event-stream` response fed by `produce`. Errors thrown by `produce` (and stalls, the
 * total deadline, and an upstream that ends without `done`/`error`) become one terminal `error`
 * event in our error shape: `{ error, message, requestId }`. The client closing the stream, or
 * a deadline, cancels the upstream body, which aborts the upstream request.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const upstream = new Response("event: done\ndata: {}\n\n"); // e.g. the Parser's stream
 * const res = sseResponse((w) => w.pipe(upstream), {
 *   idleMs: 60_000,
 *   totalMs: 900_000,
 *   signal: new AbortController().signal,
 *   requestId: "req-1",
 * });
 * assert.equal(res.headers.get("content-type"), "text/event-stream; charset=utf-8");
 * assert.equal(await res.text(), "event: done\ndata: {}\n\n");
 * ```
 */
export function sseResponse(
  produce: (writer: SseWriter) => Promise<void>,
  opts: SseOptions,
): Response {
  const deadlines = opts.deadlines ?? sharedDeadlines;
  const s: SseStream = {
    opts,
    tracker: createSseTracker(),
    deadlines,
    startedAt: deadlines.now(),
    closed: new AbortController(),
    ended: false,
  };
  const body = new ReadableStream<Uint8Array>({
    start: (controller) => runStream(s, controller, produce),
    cancel: () => stopReading(s),
  }, { highWaterMark: 0 });
  opts.signal.addEventListener("abort", () => {
    if (!s.ended) stopReading(s);
  }, { once: true });
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}

const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-store",
  "x-accel-buffering": "no",
};

type EndReason = "complete" | "error" | "client-closed";

/** One response's stream state, shared by its writer, its producer run and its cancel. */
interface SseStream {
  opts: SseOptions;
  /** Everything sent so far, to know whether a terminal event went out and where events end. */
  tracker: SseTracker;
  deadlines: Deadlines;
  startedAt: number;
  /** Aborted when the client goes: the stream's cancel or the request's signal. */
  closed: AbortController;
  /** Set once the stream has ended: a producer still running may not write any more. */
  ended: boolean;
  /** The upstream body being piped, to cancel when the stream ends first. */
  current?: ReadableStreamDefaultReader<Uint8Array>;
}

/** The client went: the upstream body read is cancelled, which aborts its request. */
function stopReading(s: SseStream): void {
  s.closed.abort();
  void s.current?.cancel().catch(() => {});
}

/**
 * Runs `produce` to its end or the total deadline, then makes sure the stream ends terminated:
 * an `error` event unless a terminal event went out or the client is gone.
 */
async function runStream(
  s: SseStream,
  controller: ReadableStreamDefaultController<Uint8Array>,
  produce: (writer: SseWriter) => Promise<void>,
): Promise<void> {
  let reason: EndReason = "complete";
  // The total deadline also bounds the work before the upstream stream (context building).
  let cancelTotal: CancelDeadline | undefined;
  const expired = new Promise<never>((_, reject) => {
    cancelTotal = s.deadlines.start(
      Math.max(0, s.opts.totalMs - (s.deadlines.now() - s.startedAt)),
      () => reject(streamDeadlineError("total", s.opts.totalMs, "Parser")),
    );
  });
  const produced = produce(createWriter(s, controller));
  produced.catch(() => {}); // when the deadline wins, its later failure has nobody to tell
  const closing = s.opts.closing;
  let stopping: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    stopping = () => reject(restartingError());
    if (closing?.aborted) stopping();
    else closing?.addEventListener("abort", stopping, { once: true });
  });
  try {
    await Promise.race([produced, expired, stopped]);
    if (!s.tracker.terminated()) {
      throw streamBroken("The stream ended before it completed");
    }
  } catch (e) {
    if (e instanceof ClientClosed || s.closed.signal.aborted || s.opts.signal.aborted) {
      reason = "client-closed";
    } else {
      reason = "error";
      if (!s.tracker.terminated()) sendErrorEvent(s, controller, e);
    }
  } finally {
    cancelTotal?.();
    if (stopping) closing?.removeEventListener("abort", stopping);
    s.ended = true;
    void s.current?.cancel().catch(() => {}); // still piping when the total deadline hit
    s.opts.onEnd?.(reason);
    try {
      controller.close();
    } catch { /* already closed by a cancel */ }
  }
}

/** The terminal `error` event for `e`, in our error shape (a non-ApiError says nothing more). */
function sendErrorEvent(
  s: SseStream,
  controller: ReadableStreamDefaultController<Uint8Array>,
  e: unknown,
): void {
  const err = e instanceof ApiError ? e : streamBroken("The stream failed");
  // an event must start on a boundary: finish a half-sent upstream event first
  const prefix = s.tracker.atBoundary() ? "" : "\n\n";
  const payload = {
    error: err.code,
    message: err.message,
    requestId: s.opts.requestId,
    ...(err.details === undefined ? {} : { details: err.details }),
  };
  try {
    controller.enqueue(
      encoder.encode(prefix + new TextDecoder().decode(encodeSseEvent("error", payload))),
    );
  } catch { /* the client is gone */ }
}

/** The writer `produce` gets: every byte it sends is tracked, and none after the end. */
function createWriter(
  s: SseStream,
  controller: ReadableStreamDefaultController<Uint8Array>,
): SseWriter {
  const send = (bytes: Uint8Array) => {
    s.tracker.push(bytes);
    // after the end (a deadline left `produce` running) nothing more may be written
    if (s.closed.signal.aborted || s.ended) throw new ClientClosed();
    controller.enqueue(bytes);
  };
  return {
    event: (name, data) => {
      send(encodeSseEvent(name, data));
      return Promise.resolve();
    },
    pipe: (upstream) => pipeUpstream(s, upstream, send),
    terminated: () => s.tracker.terminated(),
  };
}

/** Passes the upstream body on under the stream's deadlines (see {@linkcode guardedBody}). */
async function pipeUpstream(
  s: SseStream,
  upstream: Response,
  send: (bytes: Uint8Array) => void,
): Promise<void> {
  if (!upstream.body) throw streamBroken("The upstream stream had no body");
  const reader = guardedBody(upstream.body, {
    idleMs: s.opts.idleMs,
    totalMs: s.opts.totalMs,
    startedAt: s.startedAt,
    deadlines: s.deadlines,
    signal: s.closed.signal,
    service: "Parser",
  }).getReader();
  s.current = reader;
  try {
    for (;;) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read();
      } catch (e) {
        if (s.closed.signal.aborted) throw new ClientClosed();
        throw e; // the guard's ApiError: stalled, too long, or broken off
      }
      if (next.done) return;
      send(next.value);
    }
  } finally {
    s.current = undefined;
  }
}

class ClientClosed extends Error {
  constructor() {
    super("client closed the stream");
  }
}

function streamBroken(message: string): ApiError {
  return new ApiError(502, "UPSTREAM_ERROR", message, { service: "parser" });
}
