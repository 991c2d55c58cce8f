/**
 * Deadlines for every upstream body passed on to a client (raw content, images, SSE): bytes flow
 * through unbuffered, and a stream that stalls (idle deadline) or runs too long (total deadline)
 * is cut off. Cutting off cancels the upstream body, so its connection is released, and errors
 * the client's stream, so the client sees a failed response rather than a clean but short one.
 * SSE readers turn that error into their terminal `error` event instead.
 *
 * @module
 */
import type { Config } from "../config/service_config.ts";
import { type CancelDeadline, type Deadlines, sharedDeadlines } from "../util/deadlines.ts";
import { ApiError } from "./errors.ts";
import type { Logger } from "./log.ts";

/** How a guarded stream ended (for the log). */
export type StreamEnd =
  | "complete"
  | "idle-timeout"
  | "total-timeout"
  | "upstream-error"
  | "client-closed";

/**
 * The 504 of a stream cut off by a deadline: `idle` (nothing arrived for `ms`) or `total` (it
 * ran longer than `ms`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   streamDeadlineError("idle", 60_000, "Parser").message,
 *   "The stream stalled: nothing arrived for 60000 ms",
 * );
 * ```
 */
export function streamDeadlineError(kind: "idle" | "total", ms: number, service: string): ApiError {
  const message = kind === "idle"
    ? `The stream stalled: nothing arrived for ${ms} ms`
    : `The stream ran past its ${ms} ms limit`;
  return new ApiError(504, "UPSTREAM_TIMEOUT", message, { service: service.toLowerCase() });
}

/** Options of {@linkcode guardedBody}. */
export interface StreamGuardOptions {
  /** No byte from upstream for this long (while the client waits for one) ends the stream. */
  idleMs: number;
  /** The stream may live this long at most, counted from `startedAt`. */
  totalMs: number;
  /** When the response began, on the clock of `deadlines`; default: now. */
  startedAt?: number;
  /** Where the deadlines are counted; default the process-wide scheduler. */
  deadlines?: Deadlines;
  /** The client's signal: when it aborts, the upstream body is cancelled. */
  signal?: AbortSignal;
  /** Backend name for error messages, e.g. "Core". */
  service: string;
  /** Called once, when the stream ends, with how it ended. */
  onEnd?(end: StreamEnd): void;
}

/**
 * Wraps an upstream body in idle and total deadlines. On a deadline or a broken upstream the
 * returned stream errors with an {@linkcode ApiError} (504 `UPSTREAM_TIMEOUT`, 502
 * `UPSTREAM_ERROR`) and the upstream body is cancelled; cancelling the returned stream (a client
 * that leaves) or aborting `signal` cancels the upstream body too. Nothing is read ahead: a chunk
 * is read from upstream only when the consumer asks for one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const upstream = new Response("<p>lore</p>");
 * const body = guardedBody(upstream.body!, { idleMs: 60_000, totalMs: 300_000, service: "Core" });
 * assert.equal(await new Response(body).text(), "<p>lore</p>");
 * const silent = guardedBody(new ReadableStream(), {
 *   idleMs: 10,
 *   totalMs: 300_000,
 *   service: "Core",
 * });
 * await assert.rejects(new Response(silent).text(), { status: 504, code: "UPSTREAM_TIMEOUT" });
 * ```
 */
export function guardedBody(
  source: ReadableStream<Uint8Array>,
  opts: StreamGuardOptions,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  const deadlines = opts.deadlines ?? sharedDeadlines;
  const remaining = opts.totalMs - (deadlines.now() - (opts.startedAt ?? deadlines.now()));
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let cancelIdle: CancelDeadline | undefined;
  let cancelTotal: CancelDeadline | undefined;
  let ended = false;

  /** Ends once: timers off, upstream cancelled unless it completed, client stream errored. */
  const end = (how: StreamEnd, error?: unknown) => {
    if (ended) return;
    ended = true;
    cancelIdle?.();
    cancelTotal?.();
    opts.signal?.removeEventListener("abort", onAbort);
    if (how !== "complete") void reader.cancel(error).catch(() => {});
    if (error !== undefined) {
      try {
        controller.error(error);
      } catch { /* already closed or cancelled */ }
    }
    opts.onEnd?.(how);
  };
  const onAbort = () =>
    end("client-closed", opts.signal?.reason ?? new DOMException("", "AbortError"));

  return new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      if (opts.signal?.aborted) return onAbort();
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      cancelTotal = deadlines.start(
        Math.max(0, remaining),
        () => end("total-timeout", streamDeadlineError("total", opts.totalMs, opts.service)),
      );
    },
    async pull(c) {
      if (ended) return;
      cancelIdle = deadlines.start(
        opts.idleMs,
        () => end("idle-timeout", streamDeadlineError("idle", opts.idleMs, opts.service)),
      );
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read();
      } catch {
        // the upstream error's text may name the backend's address: never pass it on
        end(
          "upstream-error",
          new ApiError(502, "UPSTREAM_ERROR", `${opts.service} broke off the stream`, {
            service: opts.service.toLowerCase(),
          }),
        );
        return;
      } finally {
        cancelIdle?.();
      }
      if (ended) return; // a deadline or the client ended it while we waited
      if (next.done) {
        end("complete");
        c.close();
      } else c.enqueue(next.value);
    },
    cancel() {
      end("client-closed");
    },
  }, { highWaterMark: 0 });
}

/** What {@linkcode guardedResponseBody} needs from a request (every route context has it). */
export interface StreamContext {
  config: Pick<Config, "STREAM_IDLE_TIMEOUT_MS" | "STREAM_TOTAL_TIMEOUT_MS">;
  /** The client's signal. */
  signal: AbortSignal;
  log: Logger;
  requestId: string;
  url: URL;
  /** Where the stream's deadlines are counted; default the process-wide scheduler. */
  deadlines?: Deadlines;
}

/**
 * {@linkcode guardedBody} for a backend body this request streams to its client (content,
 * images): `STREAM_IDLE_TIMEOUT_MS` and `STREAM_TOTAL_TIMEOUT_MS`, the client's signal, and one
 * `stream end` log line saying how it ended (the request line is written when the head is sent).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { jsonLogger } from "./log.ts";
 * const lines: string[] = [];
 * const ctx: StreamContext = {
 *   config: { STREAM_IDLE_TIMEOUT_MS: 60_000, STREAM_TOTAL_TIMEOUT_MS: 300_000 },
 *   signal: new AbortController().signal,
 *   log: jsonLogger("debug", (l) => lines.push(l)),
 *   requestId: "req-1",
 *   url: new URL("http://x/api/lore/abc/content"),
 * };
 * const body = guardedResponseBody(ctx, new Response("<p>lore</p>").body!, "Core");
 * assert.equal(await new Response(body).text(), "<p>lore</p>");
 * assert.equal(JSON.parse(lines[0]).msg, "stream end");
 * ```
 */
export function guardedResponseBody(
  ctx: StreamContext,
  body: ReadableStream<Uint8Array>,
  service: string,
): ReadableStream<Uint8Array> {
  const startedAt = performance.now();
  return guardedBody(body, {
    idleMs: ctx.config.STREAM_IDLE_TIMEOUT_MS,
    totalMs: ctx.config.STREAM_TOTAL_TIMEOUT_MS,
    deadlines: ctx.deadlines,
    signal: ctx.signal,
    service,
    onEnd: (how) =>
      ctx.log.log(how === "complete" || how === "client-closed" ? "info" : "warn", "stream end", {
        requestId: ctx.requestId,
        route: ctx.url.pathname,
        reason: how,
        ms: Math.round(performance.now() - startedAt),
      }),
  });
}
