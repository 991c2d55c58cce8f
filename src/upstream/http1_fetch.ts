/**
 * `fetch` for the backend hop, over `Deno.connect` with a keep-alive pool per origin: the runtime's
 * own `fetch` costs more per call than the rest of a pass-through route. It has `fetch`'s
 * signature and behaviour for what the backend clients send (`redirect: "manual"`, string and
 * byte bodies, streamed uploads, an abort signal) and hands everything else to
 * `globalThis.fetch`: `https:`, `Request` objects, redirects to follow, form data, a custom
 * `client`.
 *
 * - A connection goes back to the pool only once its response has come off the wire whole (at
 *   once for a small answer) and the request body went out whole; a body cancelled or aborted
 *   midway, a `Connection: close`, a body read to the close, or bytes nobody asked for close it.
 * - An idle connection keeps a read pending, so a backend that closes it is noticed at once; one
 *   that died unnoticed fails before any byte of the answer and is retried once, on a new
 *   connection, for idempotent requests without a streamed body.
 * - Errors are fetch's: a `TypeError` naming the class ("connection refused", "connection reset
 *   by peer", "invalid HTTP response: …"), never the URL; an abort rejects with the signal's
 *   reason, or errors the body stream with it.
 * - A streamed request body's chunks are handed over: each is copied into one frame buffer
 *   reused for the whole body, and a chunk that owns its whole buffer is then detached, which
 *   frees its memory at once. The runtime frees a chunk's memory only when a garbage collection
 *   finds it, and a stream of large chunks makes little garbage on the heap itself: a 100 MiB
 *   upload otherwise held tens of MiB of finished chunks.
 * - A connection's read buffer starts small and doubles while reads fill it (up to 64 KiB, or
 *   the head limit): a connection waiting for the answer to a slow upload, or idle in the pool,
 *   holds a few KiB, while a large answer is still read in large pieces.
 *
 * @module
 */
import { concatBytes } from "../util/bytes.ts";
import { MIN_READ_BYTES } from "../util/read_size.ts";
import {
  type BodyDecoder,
  bodyDecoder,
  bodyFraming,
  type ByteWindow,
  closedEarly,
  headEnd,
  headerFields,
  invalidResponse,
  latin1,
  latin1Bytes,
  normalizeMethod,
  parseResponseHead,
  requestHead,
  type ResponseHead,
} from "./http1_wire.ts";

/** Tuning of a client; every field has a default. */
export interface Http1ClientOptions {
  /** Idle connections kept per origin; more are closed when released. Default 64. */
  maxIdlePerOrigin?: number;
  /**
   * An idle connection unused this long is closed. Default 4 000 ms: below the 5 s a Node
   * server keeps an idle connection, so the backend never closes one as it is being reused.
   */
  idleTimeoutMs?: number;
  /** Largest response head (and trailers), bytes. Default 64 KiB. */
  maxHeadBytes?: number;
  /** Where requests the client does not handle go; default `globalThis.fetch` at call time. */
  fallback?: typeof fetch;
  /**
   * Opens a connection, resolving the host name (`Deno.connect` by default; a test gives its
   * own resolver's outcome).
   */
  connect?: (options: Deno.ConnectOptions) => Promise<Deno.TcpConn>;
}

/** A pooled client. */
export interface Http1Client {
  fetch: typeof fetch;
  /** Closes every idle connection (those in use finish and are closed, not pooled, if over). */
  closeIdle(): void;
  /** How many connections wait in the pool for their next request. */
  idleConnections(): number;
}

/** A pooled TCP connection and its read buffer. */
interface Connection extends ByteWindow {
  tcp: Deno.TcpConn;
  key: string;
  /** In the pool, its read watching for a close. */
  idle: boolean;
  idleSince: number;
  /** The read started while idle: the next exchange takes its result. */
  pending: Promise<number | null> | null;
  /** Bytes received during the current exchange. */
  received: number;
  closed: boolean;
}

/** One request on its way: what an abort must stop, and what decides reuse. */
interface Exchange {
  signal: AbortSignal | null;
  conn: Connection | null;
  /** The request, body included, went out whole. */
  sent: boolean;
  /** The caller's body stream failed while being sent. */
  bodyError: unknown;
  bodyReader: ReadableStreamDefaultReader<Uint8Array> | null;
  controller: ReadableStreamDefaultController<Uint8Array> | null;
  connectAbort: ((reason: unknown) => void) | null;
  done: boolean;
  onAbort: () => void;
}

/** A request body ready to send: bytes with their default type, or a stream sent chunked. */
type Outgoing = { bytes: Uint8Array; contentType?: string } | {
  stream: ReadableStream<Uint8Array>;
};

const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);
const READ_BUFFER_BYTES = 64 * 1024;
/** Bodies up to this size go out in the same write as the head. */
const COALESCE_BYTES = 64 * 1024;
const LAST_CHUNK = new TextEncoder().encode("0\r\n\r\n");
const encoder = new TextEncoder();

/**
 * A client with its own pool.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) =>
 *   new Response(`${req.method} ${new URL(req.url).pathname}`));
 * const client = createHttp1Client();
 * const url = `http://127.0.0.1:${server.addr.port}/etapi/app-info`;
 * const res = await client.fetch(url, { redirect: "manual" });
 * assert.equal(await res.text(), "GET /etapi/app-info");
 * client.closeIdle();
 * await server.shutdown();
 * ```
 */
export function createHttp1Client(opts: Http1ClientOptions = {}): Http1Client {
  const maxIdle = opts.maxIdlePerOrigin ?? 64;
  const idleTimeoutMs = opts.idleTimeoutMs ?? 4_000;
  const maxHead = opts.maxHeadBytes ?? 64 * 1024;
  const bufferBytes = Math.max(READ_BUFFER_BYTES, maxHead + 1);
  const idle = new Map<string, Connection[]>();
  let idleCount = 0;
  let sweeper: ReturnType<typeof setInterval> | undefined;

  // --- the pool ------------------------------------------------------------------------------

  function destroy(c: Connection): void {
    if (c.closed) return;
    c.closed = true;
    try {
      c.tcp.close();
    } catch {
      // already closed by the runtime
    }
  }

  function release(c: Connection): void {
    let list = idle.get(c.key);
    if (!list) idle.set(c.key, list = []);
    if (list.length >= maxIdle) return destroy(c);
    c.start = c.end = 0;
    // a buffer grown for a large answer is not kept for the wait in the pool
    if (c.buf.byteLength > MIN_READ_BYTES) c.buf = new Uint8Array(MIN_READ_BYTES);
    c.idle = true;
    c.idleSince = performance.now();
    c.tcp.unref(); // an idle connection must not keep the process alive
    const watch = c.tcp.read(c.buf);
    c.pending = watch;
    // while idle, any outcome (close, reset, unasked bytes) means the connection is unusable
    const gone = () => {
      if (c.idle) dropIdle(c);
    };
    watch.then(gone, gone);
    list.push(c);
    idleCount++;
    if (sweeper === undefined) {
      const timer = setInterval(sweep, Math.max(50, idleTimeoutMs / 2));
      Deno.unrefTimer(timer);
      sweeper = timer;
    }
  }

  function dropIdle(c: Connection): void {
    const list = idle.get(c.key);
    const at = list?.indexOf(c) ?? -1;
    if (at !== -1) {
      list!.splice(at, 1);
      idleCount--;
    }
    c.idle = false;
    destroy(c);
    stopSweeperWhenEmpty();
  }

  function takeIdle(key: string): Connection | null {
    const list = idle.get(key);
    const now = performance.now();
    for (let c = list?.pop(); c; c = list!.pop()) {
      idleCount--;
      c.idle = false;
      if (now - c.idleSince < idleTimeoutMs && !c.closed) {
        c.tcp.ref();
        stopSweeperWhenEmpty();
        return c;
      }
      destroy(c);
    }
    stopSweeperWhenEmpty();
    return null;
  }

  function sweep(): void {
    const now = performance.now();
    for (const list of idle.values()) {
      // released in time order: the oldest are first
      while (list.length && now - list[0].idleSince >= idleTimeoutMs) {
        const c = list.shift()!;
        idleCount--;
        c.idle = false;
        destroy(c);
      }
    }
    stopSweeperWhenEmpty();
  }

  function stopSweeperWhenEmpty(): void {
    if (idleCount > 0 || sweeper === undefined) return;
    clearInterval(sweeper);
    sweeper = undefined;
  }

  function closeIdle(): void {
    for (const list of idle.values()) {
      for (const c of list) {
        c.idle = false;
        destroy(c);
      }
    }
    idle.clear();
    idleCount = 0;
    stopSweeperWhenEmpty();
  }

  // --- reading ---------------------------------------------------------------------------------

  /** Reads more bytes into the window; false at the end of the stream. */
  async function fill(c: Connection): Promise<boolean> {
    let n: number | null;
    if (c.pending) {
      const pending = c.pending;
      c.pending = null;
      n = await pending;
    } else {
      if (c.start === c.end) c.start = c.end = 0;
      if (c.end === c.buf.length) {
        if (c.start > 0) {
          c.buf.copyWithin(0, c.start, c.end);
          c.end -= c.start;
          c.start = 0;
        } else if (c.buf.length < bufferBytes) {
          grow(c);
        } else {
          // the decoders bound every partial line below the largest buffer's size
          throw invalidResponse("line too long");
        }
      }
      n = await c.tcp.read(c.buf.subarray(c.end));
    }
    if (n === null) return false;
    c.end += n;
    // a read that took all the room: more is coming than this buffer holds at once
    if (c.end === c.buf.length && c.buf.length < bufferBytes) grow(c);
    c.received += n;
    return true;
  }

  /** Doubles the read buffer (up to its largest size), keeping the unread window. */
  function grow(c: Connection): void {
    const next = new Uint8Array(Math.min(bufferBytes, c.buf.length * 2));
    next.set(c.buf.subarray(c.start, c.end));
    c.end -= c.start;
    c.start = 0;
    c.buf = next;
  }

  async function readHead(c: Connection, limit: number): Promise<[ResponseHead, number]> {
    let from = c.start;
    for (;;) {
      const at = headEnd(c.buf, from, c.end);
      if (at !== -1) {
        const size = at - c.start;
        if (size > limit) break;
        const head = parseResponseHead(latin1(c.buf, c.start, at - 4));
        c.start = at;
        return [head, size];
      }
      if (c.end - c.start > limit) break;
      const before = c.start;
      from = Math.max(c.start, c.end - 3);
      if (!(await fill(c))) throw closedEarly();
      from -= before - c.start; // the window may have moved to the buffer's start
    }
    throw invalidResponse(`head over ${maxHead} bytes`);
  }

  // --- one exchange ----------------------------------------------------------------------------

  function finish(x: Exchange, reusable: boolean): void {
    if (x.done) return;
    x.done = true;
    x.signal?.removeEventListener("abort", x.onAbort);
    const c = x.conn;
    if (!c) return;
    if (reusable && x.sent && c.start === c.end && !c.closed) release(c);
    else destroy(c);
  }

  function abortExchange(x: Exchange): void {
    const reason = abortReason(x.signal!);
    x.connectAbort?.(reason);
    x.bodyReader?.cancel(reason).catch(() => {});
    try {
      x.controller?.error(reason);
    } catch {
      // the body stream already ended
    }
    finish(x, false);
  }

  async function connect(x: Exchange, url: URL): Promise<Connection> {
    const connecting = (opts.connect ?? Deno.connect)({
      hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: url.port ? Number(url.port) : 80,
    }).catch((e) => {
      throw connectError(e);
    });
    let tcp: Deno.TcpConn;
    try {
      tcp = x.signal
        ? await Promise.race([
          connecting,
          new Promise<never>((_, reject) => x.connectAbort = reject),
        ])
        : await connecting;
    } catch (e) {
      connecting.then((late) => late.close(), () => {});
      throw e;
    } finally {
      x.connectAbort = null;
    }
    if (x.signal?.aborted) {
      tcp.close();
      throw abortReason(x.signal);
    }
    tcp.setNoDelay(true);
    return {
      tcp,
      key: url.host,
      buf: new Uint8Array(Math.min(MIN_READ_BYTES, bufferBytes)),
      start: 0,
      end: 0,
      idle: false,
      idleSince: 0,
      pending: null,
      received: 0,
      closed: false,
    };
  }

  /** Sends a streamed body chunked, alongside the wait for the answer. */
  async function pump(x: Exchange, c: Connection, stream: ReadableStream<Uint8Array>) {
    const reader = stream.getReader();
    x.bodyReader = reader;
    let frame: Frame = { buffer: new Uint8Array(0), bytes: new Uint8Array(0) };
    try {
      for (;;) {
        let chunk: Uint8Array;
        try {
          const { done, value } = await reader.read();
          if (done) break;
          if (!(value instanceof Uint8Array)) {
            throw new TypeError("a request body chunk is not a Uint8Array");
          }
          chunk = value;
        } catch (e) {
          // the caller's body failed: the backend must not take half a body for a whole one
          x.bodyError = e;
          reader.cancel(e).catch(() => {});
          destroy(c);
          return;
        }
        if (chunk.byteLength) {
          frame = framed(chunk, frame);
          handOver(chunk);
          await writeAll(c.tcp, frame.bytes);
        }
      }
      await writeAll(c.tcp, LAST_CHUNK);
      x.sent = true;
    } catch {
      // the connection failed or was closed; reading the answer reports what happened
      reader.cancel().catch(() => {});
    }
  }

  async function exchange(
    x: Exchange,
    c: Connection,
    method: string,
    parts: readonly Uint8Array[],
    stream: ReadableStream<Uint8Array> | null,
  ): Promise<Response> {
    x.conn = c;
    x.sent = false;
    c.received = 0;
    for (const part of parts) await writeAll(c.tcp, part);
    if (stream) void pump(x, c, stream);
    else x.sent = true;
    let head: ResponseHead;
    // interim (1xx) answers are skipped; together they count against the head limit
    for (let budget = maxHead;;) {
      const [h, size] = await readHead(c, budget);
      head = h;
      budget -= size;
      if (head.status >= 200) break;
      if (head.status === 101) throw invalidResponse("unexpected protocol switch");
    }
    const framing = bodyFraming(head, method);
    // a 205 must carry nothing: whatever it carries anyway goes with the connection
    const keepAlive = head.keepAlive && framing !== "close" && head.status !== 205;
    const init = { status: head.status, statusText: head.statusText, headers: head.headers };
    // the answer is built before the connection is let go: a status or field the Response
    // class refuses fails the exchange, and that connection must not be reused
    if (framing === "none") {
      const res = respond(null, init);
      finish(x, keepAlive);
      return res;
    }
    const decoder = bodyDecoder(framing, head.contentLength ?? 0, maxHead);
    const first = decoder.take(c);
    if (decoder.done) {
      const res = respond(first ?? new Uint8Array(0), init);
      finish(x, keepAlive);
      return res;
    }
    return respond(bodyStream(x, c, decoder, first, keepAlive), init);
  }

  function bodyStream(
    x: Exchange,
    c: Connection,
    decoder: BodyDecoder,
    first: Uint8Array<ArrayBuffer> | null,
    keepAlive: boolean,
  ): ReadableStream<Uint8Array> {
    let queued = first;
    return new ReadableStream<Uint8Array>({
      start(controller) {
        x.controller = controller;
      },
      async pull(controller) {
        try {
          if (queued) {
            controller.enqueue(queued);
            queued = null;
            return;
          }
          for (;;) {
            if (!(await fill(c))) decoder.end();
            const chunk = decoder.take(c);
            if (chunk) controller.enqueue(chunk);
            if (decoder.done) {
              x.controller = null;
              finish(x, keepAlive);
              controller.close();
              return;
            }
            if (chunk) return;
          }
        } catch (e) {
          x.controller = null;
          const aborted = x.signal?.aborted;
          finish(x, false);
          throw aborted ? abortReason(x.signal!) : networkError(e);
        }
      },
      cancel() {
        x.controller = null;
        finish(x, false);
      },
    });
  }

  // --- fetch -----------------------------------------------------------------------------------

  async function http1Fetch(
    input: string | URL | Request,
    init: RequestInit = {},
  ): Promise<Response> {
    const fallback = opts.fallback ?? globalThis.fetch;
    if (input instanceof Request || init.redirect !== "manual" || "client" in init) {
      return fallback(input, init);
    }
    const url = typeof input === "string" ? new URL(input) : input;
    if (url.protocol !== "http:") return fallback(input, init);
    if (url.username || url.password) throw new TypeError("request URL includes credentials");
    const method = normalizeMethod(init.method ?? "GET");
    const body = await outgoing(init.body);
    if (body === "unsupported") return fallback(input, init);
    if (body && (method === "GET" || method === "HEAD")) {
      throw new TypeError(`a ${method} request cannot have a body`);
    }
    const stream = body && "stream" in body ? body.stream : null;
    const bytes = body && "bytes" in body ? body.bytes : null;
    const framing = stream
      ? "chunked"
      : bytes
      ? { length: bytes.byteLength, contentType: (body as { contentType?: string }).contentType }
      : method === "POST" || method === "PUT"
      ? { length: 0 }
      : null;
    const headText = requestHead(
      method,
      url.pathname + url.search,
      url.host,
      headerFields(init.headers),
      framing,
    );
    // header values may hold Latin-1 characters, which travel as single bytes
    const head = /[^\0-\x7f]/.test(headText) ? latin1Bytes(headText) : encoder.encode(headText);
    const parts = !bytes?.byteLength
      ? [head]
      : bytes.byteLength <= COALESCE_BYTES
      ? [concatBytes([head, bytes], head.byteLength + bytes.byteLength)]
      : [head, bytes];

    const signal = init.signal ?? null;
    if (signal?.aborted) throw abortReason(signal);
    const x: Exchange = {
      signal,
      conn: null,
      sent: false,
      bodyError: undefined,
      bodyReader: null,
      controller: null,
      connectAbort: null,
      done: false,
      onAbort: () => abortExchange(x),
    };
    signal?.addEventListener("abort", x.onAbort, { once: true });
    try {
      const pooled = takeIdle(url.host);
      if (!pooled) return await exchange(x, await connect(x, url), method, parts, stream);
      try {
        return await exchange(x, pooled, method, parts, stream);
      } catch (e) {
        // nothing came back on a kept connection: it died idle, unnoticed; a request that may
        // be repeated is repeated once, on a new connection
        const stale = pooled.received === 0 && IDEMPOTENT.has(method) && !stream;
        if (!stale || signal?.aborted || x.done) throw e;
        destroy(pooled);
        return await exchange(x, await connect(x, url), method, parts, stream);
      }
    } catch (e) {
      finish(x, false);
      if (signal?.aborted) throw abortReason(signal);
      if (x.bodyError !== undefined) {
        throw new TypeError("the request body stream failed", { cause: x.bodyError });
      }
      throw networkError(e);
    }
  }

  return { fetch: http1Fetch, closeIdle, idleConnections: () => idleCount };
}

let shared: Http1Client | undefined;

/**
 * The process's client, created on first use (like `globalThis.fetch`, one pool for everyone).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(sharedHttp1Client(), sharedHttp1Client());
 * ```
 */
export function sharedHttp1Client(): Http1Client {
  return shared ??= createHttp1Client();
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The signal has been aborted", "AbortError");
}

/** A failure once connected, as a `TypeError` naming its class (the backend answered badly). */
function networkError(e: unknown): TypeError {
  if (e instanceof TypeError) return e;
  if (e instanceof Deno.errors.ConnectionReset) {
    return new TypeError("connection reset by peer", { cause: e });
  }
  if (e instanceof Deno.errors.BrokenPipe) return new TypeError("broken pipe", { cause: e });
  const name = e instanceof Error ? e.name : "unknown";
  return new TypeError(`connection closed unexpectedly (${name})`, { cause: e });
}

/** A failure to connect, as a `TypeError` naming its class (the backend was not reached). */
function connectError(e: unknown): TypeError {
  if (e instanceof Deno.errors.ConnectionRefused) {
    return new TypeError("connection refused", { cause: e });
  }
  if (e instanceof Deno.errors.TimedOut) {
    return new TypeError("connect error: timed out", { cause: e });
  }
  if (e instanceof Error && /lookup address|name or service/i.test(e.message)) {
    return new TypeError("dns error: failed to look up the address", { cause: e });
  }
  const name = e instanceof Error ? e.name : "unknown";
  return new TypeError(`connect error: ${name}`, { cause: e });
}

function respond(
  body: BodyInit | null,
  init: { status: number; statusText: string; headers: [string, string][] },
): Response {
  try {
    return new Response(body, init);
  } catch (e) {
    // a status outside 200–599, or a field the Headers class refuses
    if (body instanceof ReadableStream) body.cancel().catch(() => {});
    throw invalidResponse(e instanceof Error ? e.message : "unrepresentable answer");
  }
}

async function outgoing(
  body: BodyInit | null | undefined,
): Promise<Outgoing | null | "unsupported"> {
  if (body === null || body === undefined) return null;
  if (typeof body === "string") {
    return { bytes: encoder.encode(body), contentType: "text/plain;charset=UTF-8" };
  }
  if (body instanceof ReadableStream) {
    if (body.locked) throw new TypeError("the request body stream is locked");
    return { stream: body };
  }
  // fetch sends a copy: the caller may reuse its buffer once the call started
  if (ArrayBuffer.isView(body)) {
    return { bytes: new Uint8Array(body.buffer, body.byteOffset, body.byteLength).slice() };
  }
  if (body instanceof ArrayBuffer) return { bytes: new Uint8Array(body.slice(0)) };
  if (body instanceof URLSearchParams) {
    return {
      bytes: encoder.encode(body.toString()),
      contentType: "application/x-www-form-urlencoded;charset=UTF-8",
    };
  }
  if (body instanceof Blob) {
    return { bytes: new Uint8Array(await body.arrayBuffer()), contentType: body.type || undefined };
  }
  return "unsupported";
}

async function writeAll(tcp: Deno.TcpConn, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.byteLength;) at += await tcp.write(bytes.subarray(at));
}

/** A chunk of a chunked body, in a buffer kept for the next one. */
interface Frame {
  buffer: Uint8Array;
  /** The frame itself: size line, chunk, CRLF. */
  bytes: Uint8Array;
}

/** `chunk` framed for chunked encoding, in `previous`'s buffer when it is large enough. */
function framed(chunk: Uint8Array, previous: Frame): Frame {
  const size = encoder.encode(`${chunk.byteLength.toString(16)}\r\n`);
  const length = size.byteLength + chunk.byteLength + 2;
  const buffer = previous.buffer.byteLength >= length ? previous.buffer : new Uint8Array(length);
  buffer.set(size);
  buffer.set(chunk, size.byteLength);
  buffer[length - 2] = 13;
  buffer[length - 1] = 10;
  return { buffer, bytes: buffer.subarray(0, length) };
}

/** Frees a sent chunk's memory now, when the chunk is all of its buffer (never a shared one). */
function handOver(chunk: Uint8Array): void {
  const buffer = chunk.buffer;
  if (
    buffer instanceof ArrayBuffer && !buffer.detached && chunk.byteOffset === 0 &&
    chunk.byteLength === buffer.byteLength
  ) {
    buffer.transfer(0);
  }
}
