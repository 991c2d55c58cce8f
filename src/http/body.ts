/**
 * Request body reading with limits enforced while reading (a lying or absent Content-Length
 * cannot get past them), a pace every body must keep (http/body_pace.ts: clients that stop
 * sending, trickle or take too long get 408), and content-type checks.
 *
 * @module
 */
import type { Config } from "../config/service_config.ts";
import { concatBytes } from "../util/bytes.ts";
import { type CancelDeadline, type Deadlines, sharedDeadlines } from "../util/deadlines.ts";
import { MIN_READ_BYTES, nextReadSize } from "../util/read_size.ts";
import {
  bodyPace,
  type BodyPaceBreach,
  type BodyPaceLimits,
  type BodyPaceState,
} from "./body_pace.ts";
import { ApiError } from "./errors.ts";
import type { Logger } from "./log.ts";

/**
 * The media type of a request without parameters, lower-cased (`""` when absent).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const req = new Request("http://x", {
 *   method: "POST",
 *   headers: { "content-type": "Application/JSON; charset=utf-8" },
 * });
 * assert.equal(mediaType(req), "application/json");
 * ```
 */
export function mediaType(req: Request): string {
  return (req.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
}

/**
 * 415 unless the request's media type is one of `allowed`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const req = new Request("http://x", { method: "POST", body: "a=1" }); // text/plain by default
 * assert.throws(() => requireMediaType(req, ["application/json"]), {
 *   status: 415,
 *   code: "UNSUPPORTED_MEDIA_TYPE",
 * });
 * ```
 */
export function requireMediaType(req: Request, allowed: readonly string[]): void {
  const t = mediaType(req);
  if (!allowed.includes(t)) {
    throw new ApiError(
      415,
      "UNSUPPORTED_MEDIA_TYPE",
      `Content-Type must be ${allowed.join(" or ")}`,
      { expected: allowed, received: t || null },
    );
  }
}

/**
 * 415 unless the request's `charset` is absent or UTF-8 (`utf-8`/`utf8`, any case): text bodies
 * are decoded as UTF-8 only, so a body in UTF-7 or Latin-1 would be stored as something other
 * than what the client meant.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const withCharset = (charset: string) =>
 *   new Request("http://x", { headers: { "content-type": `text/plain; charset=${charset}` } });
 * requireUtf8(withCharset("UTF-8")); // passes, as does no charset at all
 * assert.throws(() => requireUtf8(withCharset("latin1")), { status: 415 });
 * ```
 */
export function requireUtf8(req: Request): void {
  const params = (req.headers.get("content-type") ?? "").split(";").slice(1);
  for (const param of params) {
    const [name, ...rest] = param.split("=");
    if (name.trim().toLowerCase() !== "charset") continue;
    const charset = rest.join("=").trim().replace(/^"(.*)"$/, "$1").toLowerCase();
    if (charset !== "utf-8" && charset !== "utf8") {
      throw new ApiError(415, "UNSUPPORTED_MEDIA_TYPE", "The body must be UTF-8 (charset=utf-8)", {
        expected: ["utf-8"],
        received: charset || null,
      });
    }
  }
}

/** The limits every request body is read under, from `CLIENT_BODY_*` ({@linkcode bodyLimits}). */
export type BodyLimits = BodyPaceLimits;

/**
 * The body limits a config sets.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "../config/service_config.ts";
 * const limits = bodyLimits(loadConfig({}));
 * assert.equal(limits.idleMs, 10_000);
 * // a 100 MiB upload at 512 kbit/s takes 27 minutes: far above the minimum rate, within the total
 * assert.ok(limits.minBytesPerSecond < 512_000 / 8 / 10);
 * assert.ok(limits.totalMs > ((100 * 1024 * 1024) / (512_000 / 8)) * 1000);
 * ```
 */
export function bodyLimits(
  config: Pick<
    Config,
    | "CLIENT_BODY_TIMEOUT_MS"
    | "CLIENT_BODY_MIN_BYTES_PER_SECOND"
    | "CLIENT_BODY_RATE_WINDOW_MS"
    | "CLIENT_BODY_TOTAL_TIMEOUT_MS"
  >,
): BodyLimits {
  return {
    idleMs: config.CLIENT_BODY_TIMEOUT_MS,
    minBytesPerSecond: config.CLIENT_BODY_MIN_BYTES_PER_SECOND,
    windowMs: config.CLIENT_BODY_RATE_WINDOW_MS,
    totalMs: config.CLIENT_BODY_TOTAL_TIMEOUT_MS,
  };
}

/**
 * The 408 of a body cut off by one of its limits: `idle` (nothing arrived for `idleMs`), `slow`
 * (below the minimum rate over the last window) or `total` (it took too long altogether).
 * `details` say which limit, and how much had arrived.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const limits = { idleMs: 10_000, minBytesPerSecond: 2048, windowMs: 30_000, totalMs: 3_600_000 };
 * const e = bodyTimeout("slow", limits, { bytes: 52, waitedMs: 31_000, windowBytes: 6 });
 * assert.equal(e.status, 408);
 * assert.equal(
 *   e.message,
 *   "The request body is too slow: 6 bytes arrived in the last 30000 ms, below 2048 bytes per second",
 * );
 * assert.equal(bodyTimeout("idle", limits, { bytes: 0, waitedMs: 10_000, windowBytes: 0 }).message,
 *   "The request body stalled: nothing arrived for 10000 ms");
 * ```
 */
export function bodyTimeout(
  reason: BodyPaceBreach,
  limits: BodyLimits,
  state: BodyPaceState,
): ApiError {
  const message = reason === "idle"
    ? `The request body stalled: nothing arrived for ${limits.idleMs} ms`
    : reason === "slow"
    ? `The request body is too slow: ${state.windowBytes} bytes arrived in the last ` +
      `${limits.windowMs} ms, below ${limits.minBytesPerSecond} bytes per second`
    : `The request body took longer than its ${limits.totalMs} ms limit`;
  const limit = reason === "idle"
    ? { idleMs: limits.idleMs }
    : reason === "slow"
    ? { minBytesPerSecond: limits.minBytesPerSecond, windowMs: limits.windowMs }
    : { totalMs: limits.totalMs };
  return new ApiError(408, "REQUEST_TIMEOUT", message, {
    reason,
    ...limit,
    receivedBytes: state.bytes,
  });
}

/** A body cut off by its limits, as {@linkcode BodyReading.onCutOff} hears of it. */
export interface BodyCutOff {
  /** The pace it broke (408), or `too-large` (413: over `maxBytes`). */
  reason: BodyPaceBreach | "too-large";
  /** The error the body's reader fails with. */
  error: ApiError;
  state: BodyPaceState;
}

/** How a request body is read: its limits, where they are counted, who hears of a cut-off. */
export interface BodyReading {
  limits: BodyLimits;
  /** Where the limits are counted; default the process-wide scheduler. */
  deadlines?: Deadlines;
  /** More bytes than this end the body with a 413 ({@linkcode tooLarge}). */
  maxBytes?: number;
  /** Aborting it stops reading: the body errors with the signal's reason. */
  signal?: AbortSignal;
  /** Called once when a limit cuts the body off (before its reader fails). */
  onCutOff?(cut: BodyCutOff): void;
}

/** What {@linkcode bodyReading} needs of a request (every route context has it). */
export interface BodyContext {
  config: Parameters<typeof bodyLimits>[0];
  log: Logger;
  requestId: string;
  url: URL;
  /** Where the limits are counted; default the process-wide scheduler. */
  deadlines?: Deadlines;
}

/**
 * The {@linkcode BodyReading} of a request: the config's limits, and a `request body cut off`
 * log line saying which limit ended the body and how much had arrived.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "../config/service_config.ts";
 * import { jsonLogger } from "./log.ts";
 * const lines: string[] = [];
 * const reading = bodyReading({
 *   config: loadConfig({ CLIENT_BODY_TIMEOUT_MS: "100" }),
 *   log: jsonLogger("debug", (l) => lines.push(l)),
 *   requestId: "req-1",
 *   url: new URL("http://x/api/lore"),
 * });
 * await assert.rejects(new Response(pacedBody(new ReadableStream(), reading)).text(), {
 *   status: 408,
 * });
 * assert.equal(JSON.parse(lines[0]).msg, "request body cut off");
 * assert.equal(JSON.parse(lines[0]).reason, "idle");
 * ```
 */
export function bodyReading(ctx: BodyContext): BodyReading {
  return {
    limits: bodyLimits(ctx.config),
    deadlines: ctx.deadlines,
    onCutOff: ({ reason, state }) =>
      ctx.log.log("info", "request body cut off", {
        requestId: ctx.requestId,
        route: ctx.url.pathname,
        reason,
        bytes: state.bytes,
        windowBytes: state.windowBytes,
        waitedMs: Math.round(state.waitedMs),
      }),
  };
}

/**
 * Wraps a request body in its limits ({@linkcode BodyLimits}, see http/body_pace.ts): when the
 * client breaks one, the returned stream errors with the 408 of {@linkcode bodyTimeout} and the
 * source is cancelled. Only time spent waiting for the client counts: while the reader is busy
 * elsewhere (a backend slow to take the bytes) no clock runs. Past `maxBytes` it errors with a
 * 413 the same way, and an aborted `signal` errors it with the signal's reason: a consumer that
 * sends the bytes on (an upload) then fails rather than take a short body for a whole one.
 *
 * A served request's body is read into buffers of its own ({@linkcode nextReadSize}): the
 * runtime would give each chunk, however small, a fresh 64 KiB buffer, so a client trickling a
 * byte at a time would cost 64 KiB per byte until a garbage collection. Small reads are copied
 * out at their size; a chunk that fills its buffer is handed on whole.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const limits = { idleMs: 10, minBytesPerSecond: 0, windowMs: 30_000, totalMs: 60_000 };
 * assert.equal(await new Response(pacedBody(new Response("lore").body!, { limits })).text(), "lore");
 * const silent = new ReadableStream<Uint8Array>(); // a client that never sends
 * await assert.rejects(new Response(pacedBody(silent, { limits })).arrayBuffer(), {
 *   status: 408,
 *   code: "REQUEST_TIMEOUT",
 * });
 * ```
 */
export function pacedBody(
  body: ReadableStream<Uint8Array>,
  reading: BodyReading,
): ReadableStream<Uint8Array> {
  const { limits, maxBytes = Infinity, signal } = reading;
  const deadlines = reading.deadlines ?? sharedDeadlines;
  const pace = bodyPace(limits);
  const read = chunkReader(body);
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let cancelCheck: CancelDeadline | undefined;
  let cut = false;
  let bytes = 0;

  /** Ends the body once: the reader fails with `error`, the client's body is cancelled. */
  const fail = (error: unknown) => {
    if (cut) return;
    cut = true;
    cancelCheck?.();
    signal?.removeEventListener("abort", onAbort);
    controller.error(error);
    void read.cancel(error).catch(() => {});
  };
  const cutOff = (reason: BodyCutOff["reason"]) => {
    const state = pace.state(deadlines.now());
    const error = reason === "too-large" ? tooLarge(maxBytes) : bodyTimeout(reason, limits, state);
    reading.onCutOff?.({ reason, error, state });
    fail(error);
  };
  const onAbort = () => fail(signal?.reason);
  // checked when the first limit would break if nothing more arrived: never earlier, as a rule
  // with `untilBreach` exact while the read waits
  const arm = (now: number) => {
    cancelCheck = deadlines.start(Math.ceil(pace.untilBreach(now)), () => {
      const at = deadlines.now();
      const breach = pace.breach(at);
      if (breach) cutOff(breach);
      else arm(at);
    });
  };

  return new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      if (signal?.aborted) onAbort();
      else signal?.addEventListener("abort", onAbort, { once: true });
    },
    async pull(c) {
      if (cut) return;
      const now = deadlines.now();
      pace.waiting(now);
      const due = pace.breach(now);
      if (due) return cutOff(due);
      arm(now);
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await read.next();
      } catch (e) {
        if (cut) return; // the cut-off cancelled the read
        throw e;
      } finally {
        cancelCheck?.();
      }
      if (cut) return;
      pace.received(deadlines.now(), next.done ? 0 : next.value.byteLength);
      if (next.done) {
        signal?.removeEventListener("abort", onAbort);
        return c.close();
      }
      bytes += next.value.byteLength;
      if (bytes > maxBytes) return cutOff("too-large");
      c.enqueue(next.value);
    },
    cancel(reason) {
      cut = true;
      cancelCheck?.();
      signal?.removeEventListener("abort", onAbort);
      return read.cancel(reason);
    },
  }, { highWaterMark: 0 });
}

/** Reads a body chunk by chunk: into buffers of its own where the body allows (a byte stream). */
function chunkReader(body: ReadableStream<Uint8Array>): {
  next(): Promise<ReadableStreamReadResult<Uint8Array>>;
  cancel(reason: unknown): Promise<void>;
} {
  let byob: ReadableStreamBYOBReader | undefined;
  try {
    byob = body.getReader({ mode: "byob" });
  } catch {
    // not a byte stream (a body made in the process): its chunks are already its own
    const reader = body.getReader();
    return { next: () => reader.read(), cancel: (reason) => reader.cancel(reason) };
  }
  const reader = byob;
  let size = MIN_READ_BYTES;
  let spare: ArrayBuffer | null = null;
  return {
    async next() {
      const buffer = spare && spare.byteLength === size ? spare : new ArrayBuffer(size);
      spare = null;
      const r = await reader.read(new Uint8Array(buffer));
      if (r.done || !r.value) return { done: true, value: undefined };
      const n = r.value.byteLength;
      const filled = n === size;
      size = nextReadSize(size, n);
      if (filled) return r; // the chunk is all of its buffer: handed on, not copied
      spare = r.value.buffer as ArrayBuffer;
      return { done: false, value: r.value.slice() };
    },
    cancel: (reason) => reader.cancel(reason),
  };
}

/** 413 with the limit stated. */
export function tooLarge(limit: number): ApiError {
  return new ApiError(413, "PAYLOAD_TOO_LARGE", `The request body exceeds ${limit} bytes`, {
    limitBytes: limit,
  });
}

/**
 * Rejects early when a declared Content-Length is over the limit (before reading anything).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const req = new Request("http://x", { method: "POST", headers: { "content-length": "2048" } });
 * assert.throws(() => checkDeclaredLength(req, 1024), { status: 413 });
 * ```
 */
export function checkDeclaredLength(req: Request, limit: number): void {
  const declared = req.headers.get("content-length");
  if (declared && /^\d+$/.test(declared) && Number(declared) > limit) throw tooLarge(limit);
}

/**
 * Reads the whole body as UTF-8 text, at most `limit` bytes (413 beyond), under the body limits
 * of `reading` (408 when the client breaks one, see {@linkcode pacedBody}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const req = new Request("http://x", { method: "POST", body: "<p>Harbor</p>" });
 * const limits = { idleMs: 10_000, minBytesPerSecond: 2048, windowMs: 30_000, totalMs: 3_600_000 };
 * assert.equal(await readLimitedText(req, 5 * 1024 * 1024, { limits }), "<p>Harbor</p>");
 * ```
 */
export async function readLimitedText(
  req: Request,
  limit: number,
  reading: BodyReading,
): Promise<string> {
  checkDeclaredLength(req, limit);
  if (!req.body) return "";
  const reader = pacedBody(req.body, { ...reading, maxBytes: limit }).getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      total += value.byteLength;
    }
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw new ApiError(400, "INVALID_REQUEST", "The request body could not be read");
  }
  const buf = concatBytes(chunks, total);
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(buf);
  } catch {
    throw new ApiError(400, "INVALID_REQUEST", "The request body is not valid UTF-8");
  }
}
