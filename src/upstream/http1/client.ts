/**
 * `fetch` for the backend hop, over `Deno.connect` with a keep-alive pool per origin: the runtime's
 * own `fetch` costs more per call than the rest of a pass-through route. It has `fetch`'s
 * signature and behaviour for what the backend clients send (`redirect: "manual"`, string and
 * byte bodies, streamed uploads, an abort signal) and hands everything else to
 * `globalThis.fetch`: `https:`, `Request` objects, redirects to follow, form data, a custom
 * `client`.
 *
 * This is the folder's entry point; the other modules are its pieces. A kept connection that
 * died unnoticed fails before any byte of the answer: the request is then retried once, on a new
 * connection, when it is idempotent and has no streamed body. Errors are fetch's (see
 * errors.ts): a `TypeError` naming the class, never the URL; an abort rejects with the signal's
 * reason, or errors the body stream with it.
 *
 * @module
 */
import { type Connect, type Connection, destroy, openConnection, writeAll } from "./connection.ts";
import { abortReason, networkError } from "./errors.ts";
import { type Exchange, finish, startExchange } from "./exchange.ts";
import { createPool, type Pool } from "./pool.ts";
import { normalizeMethod } from "./request_head.ts";
import { outgoing, requestParts, sendBody } from "./request_writer.ts";
import { readResponse } from "./response_reader.ts";

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
  connect?: Connect;
}

/** A pooled client. */
export interface Http1Client {
  fetch: typeof fetch;
  /** Closes every idle connection (those in use finish and are closed, not pooled, if over). */
  closeIdle(): void;
  /** How many connections wait in the pool for their next request. */
  idleConnections(): number;
}

/** A request ready to go: its method, the writes of its head (and small body), its stream. */
interface Prepared {
  url: URL;
  method: string;
  parts: readonly Uint8Array[];
  stream: ReadableStream<Uint8Array> | null;
}

/** Where a client's requests go: its pool, how it opens a connection, its head limit. */
interface Route {
  pool: Pool;
  open: (x: Exchange, url: URL) => Promise<Connection>;
  maxHead: number;
}

const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);
const READ_BUFFER_BYTES = 64 * 1024;

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
  const maxHead = opts.maxHeadBytes ?? 64 * 1024;
  // a head must fit in one buffer: the largest holds the head limit
  const bufferLimit = Math.max(READ_BUFFER_BYTES, maxHead + 1);
  const pool = createPool({
    maxIdle: opts.maxIdlePerOrigin ?? 64,
    idleTimeoutMs: opts.idleTimeoutMs ?? 4_000,
  });
  const route: Route = {
    pool,
    open: (x, url) => openConnection(url, x, opts.connect, bufferLimit),
    maxHead,
  };

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
    const parts = requestParts(method, url, init.headers, body);
    const signal = init.signal ?? null;
    if (signal?.aborted) throw abortReason(signal);
    const x = startExchange(signal, pool.release);
    try {
      return await send(x, { url, method, parts, stream }, route);
    } catch (e) {
      finish(x, false);
      if (signal?.aborted) throw abortReason(signal);
      if (x.bodyError !== undefined) {
        throw new TypeError("the request body stream failed", { cause: x.bodyError });
      }
      throw networkError(e);
    }
  }

  return { fetch: http1Fetch, closeIdle: pool.closeIdle, idleConnections: pool.size };
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

/**
 * Sends `req` on a pooled connection, or a new one; a pooled one that turns out to have died
 * unnoticed (nothing came back) is replaced once, for a request that may be repeated.
 */
async function send(x: Exchange, req: Prepared, route: Route): Promise<Response> {
  const pooled = route.pool.take(req.url.host);
  if (!pooled) return await exchange(x, await route.open(x, req.url), req, route.maxHead);
  try {
    return await exchange(x, pooled, req, route.maxHead);
  } catch (e) {
    // nothing came back on a kept connection: it died idle, unnoticed; a request that may
    // be repeated is repeated once, on a new connection
    const stale = pooled.received === 0 && IDEMPOTENT.has(req.method) && !req.stream;
    if (!stale || x.signal?.aborted || x.done) throw e;
    destroy(pooled);
    return await exchange(x, await route.open(x, req.url), req, route.maxHead);
  }
}

/** One request and its answer on `c`: the head (and small body), a streamed body, the reading. */
async function exchange(
  x: Exchange,
  c: Connection,
  req: Prepared,
  maxHead: number,
): Promise<Response> {
  x.conn = c;
  x.sent = false;
  c.received = 0;
  for (const part of req.parts) await writeAll(c.tcp, part);
  if (req.stream) void sendBody(x, c, req.stream);
  else x.sent = true;
  return await readResponse(x, c, req.method, maxHead);
}
