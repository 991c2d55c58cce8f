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
  const tracker = createSseTracker();
  const deadlines = opts.deadlines ?? sharedDeadlines;
  const startedAt = deadlines.now();
  let ended = false;
  let current: ReadableStreamDefaultReader<Uint8Array> | undefined;
  const closed = new AbortController();

  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (bytes: Uint8Array) => {
        // after the end (a deadline left `produce` running) nothing more may be written
        if (closed.signal.aborted || ended) throw new ClientClosed();
        controller.enqueue(bytes);
      };
      const writer: SseWriter = {
        event: (name, data) => {
          const bytes = encodeSseEvent(name, data);
          tracker.push(bytes);
          send(bytes);
          return Promise.resolve();
        },
        pipe: async (upstream) => {
          if (!upstream.body) throw streamBroken("The upstream stream had no body");
          const reader = guardedBody(upstream.body, {
            idleMs: opts.idleMs,
            totalMs: opts.totalMs,
            startedAt,
            deadlines,
            signal: closed.signal,
            service: "Parser",
          }).getReader();
          current = reader;
          try {
            for (;;) {
              let next: ReadableStreamReadResult<Uint8Array>;
              try {
                next = await reader.read();
              } catch (e) {
                if (closed.signal.aborted) throw new ClientClosed();
                throw e; // the guard's ApiError: stalled, too long, or broken off
              }
              if (next.done) return;
              tracker.push(next.value);
              send(next.value);
            }
          } finally {
            current = undefined;
          }
        },
        terminated: () => tracker.terminated(),
      };
      let reason: "complete" | "error" | "client-closed" = "complete";
      // The total deadline also bounds the work before the upstream stream (context building).
      let cancelTotal: CancelDeadline | undefined;
      const expired = new Promise<never>((_, reject) => {
        cancelTotal = deadlines.start(
          Math.max(0, opts.totalMs - (deadlines.now() - startedAt)),
          () => reject(streamDeadlineError("total", opts.totalMs, "Parser")),
        );
      });
      const produced = produce(writer);
      produced.catch(() => {}); // when the deadline wins, its later failure has nobody to tell
      try {
        await Promise.race([produced, expired]);
        if (!tracker.terminated()) {
          throw streamBroken("The stream ended before it completed");
        }
      } catch (e) {
        if (e instanceof ClientClosed || closed.signal.aborted || opts.signal.aborted) {
          reason = "client-closed";
        } else {
          reason = "error";
          if (!tracker.terminated()) {
            const err = e instanceof ApiError ? e : streamBroken("The stream failed");
            // an event must start on a boundary: finish a half-sent upstream event first
            const prefix = tracker.atBoundary() ? "" : "\n\n";
            const payload = { error: err.code, message: err.message, requestId: opts.requestId };
            try {
              controller.enqueue(
                encoder.encode(
                  prefix + new TextDecoder().decode(encodeSseEvent("error", payload)),
                ),
              );
            } catch { /* the client is gone */ }
          }
        }
      } finally {
        cancelTotal?.();
        ended = true;
        void current?.cancel().catch(() => {}); // still piping when the total deadline hit
        opts.onEnd?.(reason);
        try {
          controller.close();
        } catch { /* already closed by a cancel */ }
      }
    },
    cancel() {
      closed.abort();
      void current?.cancel().catch(() => {});
    },
  }, { highWaterMark: 0 });

  opts.signal.addEventListener("abort", () => {
    if (!ended) {
      closed.abort();
      void current?.cancel().catch(() => {});
    }
  }, { once: true });

  return new Response(body, {
    status: 200,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-store",
      "x-accel-buffering": "no",
    },
  });
}

class ClientClosed extends Error {
  constructor() {
    super("client closed the stream");
  }
}

function streamBroken(message: string): ApiError {
  return new ApiError(502, "UPSTREAM_ERROR", message, { service: "parser" });
}
