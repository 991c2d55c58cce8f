/**
 * HTTP plumbing shared by the test doubles (Core, Parser): `Deno.serve` on a free port, request
 * recording and fault injection (status, body, delay, hang, times) in front of a handler.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * // Declared, not run here: it listens on a port.
 * async function faultOnce(): Promise<void> {
 *   const sim = startSimServer({
 *     name: "echo",
 *     faultBody: (status) => JSON.stringify({ status }),
 *     handler: () => (req) => Promise.resolve(new Response(new URL(req.url).pathname)),
 *   });
 *   sim.fault({ path: "/x", status: 503, times: 1 });
 *   const res = await fetch(`${sim.url}/x`);
 *   await res.body?.cancel();
 *   assert.equal(res.status, 503);
 *   assert.equal(sim.requests.length, 1);
 *   await sim.close();
 * }
 * ```
 * @module
 */
import type { Deadlines } from "../src/util/deadlines.ts";

/** An injected failure; faults are checked in the order added, before normal handling. */
export interface SimFault {
  /** HTTP method to match; default any. */
  method?: string;
  /** Matched against the URL pathname (a string must be equal). */
  path: string | RegExp;
  /** Respond with this status instead of handling the request. */
  status?: number;
  /** Raw body; default the double's own error body for `status`. */
  body?: string;
  /** Default `application/json; charset=utf-8`. */
  contentType?: string;
  /** Wait before answering (or before normal handling when no status is set). */
  delayMs?: number;
  /** Never answer, until the client aborts or the sim closes. */
  hang?: boolean;
  /** How many matching requests it applies to; default Infinity. */
  times?: number;
}

/** One request as a double received it. Binary bodies are recorded as null. */
export interface RecordedRequest {
  method: string;
  path: string;
  search: string;
  headers: Headers;
  bodyText: string | null;
}

/** The handler a double mounts behind recording and faults. */
export type SimHandler = (req: Request, info: Deno.ServeHandlerInfo) => Promise<Response>;

/** Options of {@link startSimServer}. */
export interface SimServerOptions {
  /** Short name used in messages, e.g. "core" gives "core sim closed". */
  name: string;
  /** Port; 0 (default) picks a free one. */
  port?: number;
  /** Default 127.0.0.1. */
  hostname?: string;
  /** Body of a fault that sets `status` but no `body`. */
  faultBody(status: number): string;
  /** Builds the handler; `closed` aborts when the server closes (ends deliberate hangs). */
  handler(closed: AbortSignal): SimHandler;
  /** Compress answers as an Express server's `compression()` does ({@linkcode gzipLikeExpress}). */
  compress?: boolean;
  /** The clock of fault delays (`delayMs`); default the runtime's timers. */
  deadlines?: Deadlines;
}

/** A running double's HTTP side. */
export interface SimServer {
  /** Base URL without trailing slash. */
  url: string;
  /** Every request received, in order (faulted ones included). */
  requests: RecordedRequest[];
  clearRequests(): void;
  fault(f: SimFault): void;
  clearFaults(): void;
  /** Requests a `hang` fault holds right now (only the client giving up ends them). */
  held(): number;
  /** Aborted when {@link SimServer.close} starts. */
  closed: AbortSignal;
  /** Stops the server; hanging and delayed requests are ended first. */
  close(): Promise<void>;
}

const JSON_TYPE = "application/json; charset=utf-8";
const BINARY_TYPES = /^(application\/(octet-stream|zip|pdf)|image\/|audio\/|video\/)/i;

function recordedText(bytes: Uint8Array | null, type: string): string | null {
  if (bytes === null || BINARY_TYPES.test(type)) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/**
 * Resolves once any of `signals` is aborted (immediately if one already is).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const closed = new AbortController();
 * const waiting = waitForAbort([undefined, closed.signal]);
 * closed.abort(); // e.g. the double closes while a request hangs on purpose
 * assert.equal(await waiting, undefined);
 * ```
 */
export function waitForAbort(signals: (AbortSignal | undefined)[]): Promise<void> {
  return new Promise((resolve) => {
    const live = signals.filter((s): s is AbortSignal => s !== undefined);
    if (live.some((s) => s.aborted)) return resolve();
    const done = () => {
      for (const s of live) s.removeEventListener("abort", done);
      resolve();
    };
    for (const s of live) s.addEventListener("abort", done, { once: true });
  });
}

/**
 * Waits `ms`, or less if one of `signals` aborts first; never rejects. The wait is counted by
 * `deadlines` when given (a test's clock), else by the runtime's timers (as is a wait of 0: a
 * yield to the event loop, which no test's clock holds back).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const left = new AbortController();
 * const started = performance.now();
 * const waited = sleep(60_000, [left.signal]);
 * left.abort(); // the client leaves
 * await waited; // resolves now, not after a minute
 * assert.ok(performance.now() - started < 5_000);
 * ```
 */
export function sleep(
  ms: number,
  signals: (AbortSignal | undefined)[],
  deadlines?: Deadlines,
): Promise<void> {
  return new Promise((resolve) => {
    const live = signals.filter((s): s is AbortSignal => s !== undefined);
    let cancel = () => {};
    const done = () => {
      cancel();
      for (const s of live) s.removeEventListener("abort", done);
      resolve();
    };
    if (live.some((s) => s.aborted)) return done();
    if (deadlines && ms > 0) cancel = deadlines.start(ms, done);
    else {
      const timer = setTimeout(done, ms);
      cancel = () => clearTimeout(timer);
    }
    for (const s of live) s.addEventListener("abort", done, { once: true });
  });
}

/**
 * Serves `opts.handler` with request recording and fault injection in front of it.
 *
 * @example
 * ```ts
 * // Declared, not run here: it listens on a port.
 * async function slowPaths(): Promise<SimServer> {
 *   const sim = startSimServer({
 *     name: "demo",
 *     faultBody: () => "{}",
 *     handler: () => () => Promise.resolve(new Response("ok")),
 *   });
 *   sim.fault({ path: /^\/slow/, delayMs: 50 });
 *   return sim; // close() it when done
 * }
 * ```
 */
export function startSimServer(opts: SimServerOptions): SimServer {
  const closing = new AbortController();
  const handler = opts.handler(closing.signal);
  const requests: RecordedRequest[] = [];
  let faults: { fault: SimFault; remaining: number }[] = [];
  let held = 0;

  const takeFault = (method: string, path: string): SimFault | undefined => {
    const at = faults.findIndex(({ fault }) => {
      if (fault.method && fault.method.toUpperCase() !== method) return false;
      if (typeof fault.path === "string") return fault.path === path;
      fault.path.lastIndex = 0;
      return fault.path.test(path);
    });
    if (at === -1) return undefined;
    const entry = faults[at];
    entry.remaining--;
    if (entry.remaining <= 0) faults.splice(at, 1);
    return entry.fault;
  };

  const serve = async (req: Request, info: Deno.ServeHandlerInfo): Promise<Response> => {
    const url = new URL(req.url);
    let bytes: Uint8Array | null = null;
    try {
      bytes = req.body ? new Uint8Array(await req.arrayBuffer()) : null;
    } catch {
      return new Response(null, { status: 400 }); // the client went away mid-upload
    }
    requests.push({
      method: req.method,
      path: url.pathname,
      search: url.search,
      headers: new Headers(req.headers),
      bodyText: recordedText(bytes, req.headers.get("content-type") ?? ""),
    });
    const signals = [req.signal, closing.signal];
    const fault = takeFault(req.method, url.pathname);
    if (fault?.hang) {
      held++;
      await waitForAbort(signals).finally(() => held--);
      return new Response(`${opts.name} sim closed`, { status: 503 });
    }
    if (fault?.delayMs) await sleep(fault.delayMs, signals, opts.deadlines);
    if (fault?.status !== undefined) {
      const nullBody = [101, 204, 205, 304].includes(fault.status);
      return new Response(nullBody ? null : fault.body ?? opts.faultBody(fault.status), {
        status: fault.status,
        headers: nullBody ? {} : { "Content-Type": fault.contentType ?? JSON_TYPE },
      });
    }
    // the body was consumed for recording: hand the handler a fresh request
    const inner = new Request(req.url, {
      method: req.method,
      headers: req.headers,
      body: bytes && req.method !== "GET" && req.method !== "HEAD" ? bytes as BodyInit : null,
      signal: req.signal,
    });
    const res = await handler(inner, info);
    return opts.compress ? await gzipLikeExpress(req, res) : res;
  };

  const hostname = opts.hostname ?? "127.0.0.1";
  const server = Deno.serve({ port: opts.port ?? 0, hostname, onListen: () => {} }, serve);
  const addr = server.addr as Deno.NetAddr;
  const host = hostname === "0.0.0.0"
    ? "127.0.0.1"
    : hostname.includes(":")
    ? `[${hostname}]`
    : hostname;

  return {
    url: `http://${host}:${addr.port}`,
    requests,
    clearRequests: () => {
      requests.length = 0;
    },
    fault: (f) => {
      faults.push({ fault: f, remaining: f.times ?? Infinity });
    },
    clearFaults: () => {
      faults = [];
    },
    held: () => held,
    closed: closing.signal,
    close: async () => {
      closing.abort();
      await server.shutdown();
    },
  };
}

/** Types Express's `compression()` compresses (its `compressible` list, as far as a double answers). */
const COMPRESSIBLE = /^(?:text\/|application\/(?:json|javascript|xml)|image\/svg\+xml)/i;

/**
 * `res` gzipped the way Express's `compression()` middleware does it (the real Core runs it on
 * every answer): when the client accepts gzip, the type is compressible, the answer is not already
 * encoded or marked `no-transform`, and it is at least 1 KiB (Express sets every JSON answer's
 * length, so the double measures its answers). The length header goes (the body is then chunked)
 * and `Vary: Accept-Encoding` is added.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const req = new Request("http://core/etapi/notes/x", { headers: { "accept-encoding": "gzip" } });
 * const json = { "content-type": "application/json" };
 * const big = "x".repeat(2048);
 * const res = await gzipLikeExpress(req, new Response(big, { headers: json }));
 * assert.equal(res.headers.get("content-encoding"), "gzip");
 * const plain = await new Response(res.body!.pipeThrough(new DecompressionStream("gzip"))).text();
 * assert.equal(plain, big);
 * const small = await gzipLikeExpress(req, new Response("{}", { headers: json }));
 * assert.equal(small.headers.get("content-encoding"), null);
 * assert.equal(await small.text(), "{}");
 * ```
 */
export async function gzipLikeExpress(req: Request, res: Response): Promise<Response> {
  const accepts = /\bgzip\b/i.test(req.headers.get("accept-encoding") ?? "");
  const type = res.headers.get("content-type") ?? "";
  if (
    !accepts || !res.body || req.method === "HEAD" || res.headers.has("content-encoding") ||
    !COMPRESSIBLE.test(type) || /\bno-transform\b/i.test(res.headers.get("cache-control") ?? "")
  ) {
    return res;
  }
  const bytes = new Uint8Array(await res.arrayBuffer());
  const init = {
    status: res.status,
    statusText: res.statusText,
    headers: new Headers(res.headers),
  };
  if (bytes.length < 1024) return new Response(bytes, init);
  init.headers.delete("content-length");
  init.headers.set("content-encoding", "gzip");
  init.headers.append("vary", "Accept-Encoding");
  const gzipped = new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Response(gzipped, init);
}
