/**
 * The one fetch helper both backend clients use: a deadline for the response head, the caller's
 * abort propagated, network failures mapped to the shared error shape without leaking the
 * backend's address, and timing reported for the request log. It never retries: a write that
 * timed out may still have happened, so only the caller can decide.
 *
 * @module
 */
import type { z } from "zod";
import { ApiError } from "../http/errors.ts";
import { type CancelDeadline, type Deadlines, sharedDeadlines } from "../util/deadlines.ts";
import { concatBytes } from "../util/bytes.ts";

/** What the helper needs from its surroundings (injected so tests control it). */
export interface UpstreamDeps {
  fetch: typeof fetch;
  /** Milliseconds until the response head must arrive (buffered reads: until the body is read). */
  timeoutMs: number;
  /** The incoming request's signal: a client that goes away cancels the upstream call. */
  signal?: AbortSignal;
  /** Called once per upstream call with its duration in ms. */
  onTiming?: (ms: number) => void;
  /**
   * Called when a call fails on the way (never for an answer with an error status, nor when the
   * client went away), with the failure's class: the request log names it.
   */
  onFailure?: (service: string, reason: UpstreamFailure) => void;
  /** Largest body read whole (JSON, content as text); default {@linkcode DEFAULT_MAX_BODY_BYTES}. */
  maxBodyBytes?: number;
  /** Where `timeoutMs` is counted; default the process-wide {@linkcode sharedDeadlines}. */
  deadlines?: Deadlines;
}

/**
 * The cap on a body read whole when the deps name none (`MAX_UPSTREAM_BODY_BYTES`'s default).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const up = { res: new Response("<p>lore</p>"), release() {}, timedOut: () => false };
 * assert.equal(await readBodyText(up, {}, "Core", DEFAULT_MAX_BODY_BYTES), "<p>lore</p>");
 * ```
 */
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

/**
 * The cap on an error answer's body: only its code is ever looked at.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const errorPage = new Response("x".repeat(100_000), { status: 500 });
 * const up = { res: errorPage, release() {}, timedOut: () => false };
 * // an error body too large to look at: only the status counts
 * assert.equal(await readBodyText(up, {}, "Core", MAX_ERROR_BODY_BYTES).catch(() => ""), "");
 * ```
 */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * Why an upstream call failed, for operators: the connection was refused, reset or closed early,
 * the name did not resolve, TLS failed, the deadline passed, the answer was no valid HTTP or not
 * the expected body, or the backend could not be reached for another reason.
 */
export type UpstreamFailure =
  | "refused"
  | "reset"
  | "dns"
  | "tls"
  | "timeout"
  | "bad_response"
  | "unreachable";

/**
 * The call's headers asking for uncompressed answers (unless it names an encoding itself). The
 * backends are private and near (loopback, a LAN): Core's `compression()` would gzip every answer
 * over 1 KiB, which costs both sides far more CPU than the bytes cost the network (a 0.9 MB list
 * went from +5 to +37 ms, a note's pass-through from 0.34× to 0.19× of nginx).
 */
function plainAnswers(headers: HeadersInit | undefined): HeadersInit {
  if (headers === undefined) return { "accept-encoding": "identity" };
  if (!Array.isArray(headers) && !(headers instanceof Headers)) {
    // a plain record (what the backend clients pass): no Headers object to build
    for (const name in headers) if (name.toLowerCase() === "accept-encoding") return headers;
    return { ...headers, "accept-encoding": "identity" };
  }
  const h = new Headers(headers);
  if (!h.has("accept-encoding")) h.set("accept-encoding", "identity");
  return h;
}

/** One upstream call. `path` must come from {@linkcode upstreamPath} (already encoded). */
export interface UpstreamRequest {
  method?: string;
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: HeadersInit;
  body?: BodyInit | null;
  /** Keep the deadline running only until the head arrives (streamed bodies). */
  stream?: boolean;
}

/** The client's request was cancelled; nobody is left to answer. */
export class ClientAbortError extends Error {
  constructor() {
    super("client closed the request");
    this.name = "ClientAbortError";
  }
}

/** A response whose deadline is still running until `release()` (buffered reads). */
export interface UpstreamResponse {
  res: Response;
  /** Stop the deadline timer; call after the body has been consumed. */
  release(): void;
  /** Whether the deadline fired (a body read that fails afterwards is a timeout). */
  timedOut(): boolean;
}

/**
 * Performs one call to `baseUrl + path`. Resolves with the response whatever its status; rejects
 * with an {@linkcode ApiError} (503 unreachable, 504 timeout) or {@linkcode ClientAbortError}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const echo = (url: string | URL | Request) =>
 *   Promise.resolve(Response.json({ url: String(url) }));
 * const { res, release } = await upstreamFetch(
 *   { fetch: echo, timeoutMs: 15_000 },
 *   "Core",
 *   "http://core:8080",
 *   {
 *     path: "/etapi/notes",
 *     query: { search: "#lore", limit: 10 },
 *   },
 * );
 * assert.deepEqual(await res.json(), {
 *   url: "http://core:8080/etapi/notes?search=%23lore&limit=10",
 * });
 * release();
 * const refused = () =>
 *   Promise.reject(new TypeError("error sending request (Connect): Connection refused"));
 * const failures: string[] = [];
 * const down = upstreamFetch(
 *   { fetch: refused, timeoutMs: 15_000, onFailure: (service, reason) => failures.push(reason) },
 *   "Core",
 *   "http://core:8080",
 *   { path: "/etapi/app-info" },
 * );
 * await assert.rejects(down, { status: 503, message: "Core is unreachable" }); // no address in it
 * assert.deepEqual(failures, ["refused"]);
 * ```
 */
export async function upstreamFetch(
  deps: UpstreamDeps,
  service: string,
  baseUrl: string,
  req: UpstreamRequest,
): Promise<UpstreamResponse> {
  const url = new URL(baseUrl + req.path);
  for (const [k, v] of Object.entries(req.query ?? {})) {
    if (v !== undefined) url.searchParams.set(k, String(v));
  }
  // One controller stops the call, for the deadline or for the client: it follows the client's
  // signal through a listener, which costs far less than `AbortSignal.any` on every call.
  const stop = new AbortController();
  let cancelDeadline: CancelDeadline | undefined;
  let released = false;
  let expired = false;
  const expire = () => {
    expired = true;
    stop.abort(new DOMException("timeout", "TimeoutError"));
  };
  // calls share a timer per duration (util/deadlines.ts): one of their own would cost more
  const deadlines = deps.deadlines ?? sharedDeadlines;
  const arm = () => {
    cancelDeadline?.();
    cancelDeadline = deadlines.start(deps.timeoutMs, expire);
  };
  arm();
  // A streamed request body (an upload) may take longer than the deadline to send: while bytes
  // keep flowing the deadline restarts, so only a stalled upload or a slow answer times out.
  const body = req.body instanceof ReadableStream
    ? req.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          if (!released) arm();
          controller.enqueue(chunk);
        },
      }),
    )
    : req.body;
  const client = deps.signal;
  const clientLeft = () => stop.abort(client?.reason);
  if (client?.aborted) clientLeft();
  else client?.addEventListener("abort", clientLeft, { once: true });
  const started = performance.now();
  const release = () => {
    if (released) return;
    released = true;
    cancelDeadline?.();
    // a streamed answer's body still follows the client after its head arrived
    if (!req.stream) client?.removeEventListener("abort", clientLeft);
  };
  try {
    const res = await deps.fetch(url, {
      method: req.method ?? "GET",
      headers: plainAnswers(req.headers),
      body: body ?? undefined,
      signal: stop.signal,
      redirect: "manual",
    });
    if (req.stream && stop.signal.aborted) {
      // the deadline passed (or the client left) just as the head came in: its body is gone
      void res.body?.cancel().catch(() => {});
      throw stop.signal.reason;
    }
    deps.onTiming?.(performance.now() - started);
    if (req.stream) release();
    return { res, release, timedOut: () => expired };
  } catch (e) {
    release();
    deps.onTiming?.(performance.now() - started);
    if (deps.signal?.aborted) throw new ClientAbortError();
    const details = { service: service.toLowerCase() };
    const timedOut = expired;
    const reason = timedOut ? "timeout" : networkFailure(e);
    deps.onFailure?.(service, reason);
    if (timedOut) {
      throw new ApiError(504, "UPSTREAM_TIMEOUT", `${service} did not answer in time`, details);
    }
    // the backend was reached, but what came back was no HTTP answer
    if (reason === "reset" || reason === "bad_response") {
      throw new ApiError(502, "UPSTREAM_ERROR", `${service} sent no valid response`, details);
    }
    throw new ApiError(503, "UNREACHABLE", `${service} is unreachable`, details);
  }
}

/**
 * The class of a failed fetch, from the texts of the error and its causes (both Deno's fetch and
 * the pooled client name the failure there). The text also names the backend's address: it is
 * only looked at, never surfaced. Failing to connect (refused, DNS, TLS, a blocked port) means
 * nothing was reached; a reset, a close before the head or garbage means the backend was reached
 * but gave no HTTP answer. An error that tells nothing is `unreachable`, the safe reading.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const fetchFailed = (cause: string) => new TypeError("fetch failed", { cause: new Error(cause) });
 * const refused = "client error (Connect): tcp connect error: Connection refused (os error 111)";
 * assert.equal(networkFailure(fetchFailed(refused)), "refused");
 * assert.equal(networkFailure(fetchFailed("client error (Connect): dns error: …")), "dns");
 * assert.equal(networkFailure(fetchFailed("client error (SendRequest): invalid HTTP version")), "bad_response");
 * assert.equal(networkFailure(new Error("something else")), "unreachable");
 * ```
 */
export function networkFailure(e: unknown): UpstreamFailure {
  const texts: string[] = [];
  for (let c = e, depth = 0; c instanceof Error && depth < 4; c = c.cause, depth++) {
    texts.push(c.message);
  }
  // addresses go first: a host named `ssl-core` must not read as a TLS failure
  const text = texts.join(" | ").replace(ADDRESSES, "");
  for (const [reason, pattern] of FAILURE_PATTERNS) if (pattern.test(text)) return reason;
  return "unreachable";
}

/** URLs, and `host:port` pairs (alone or in parentheses), as network errors quote them. */
const ADDRESSES = /\b[a-z][a-z0-9+.-]*:\/\/[^\s)]*|[^\s()]+:\d+\b/gi;

/**
 * First match wins: failing to connect (DNS, TLS, refused, a timeout or a blocked port, all
 * under `(Connect)`) before a failure once connected (under `(SendRequest)`).
 */
const FAILURE_PATTERNS: readonly (readonly [UpstreamFailure, RegExp])[] = [
  ["dns", /dns error|lookup address|name resolution|name or service not known/i],
  ["tls", /certificate|\btls\b|\bssl\b|handshake|corrupt message|received fatal alert/i],
  ["refused", /connection refused|are blocked/i], // Deno itself refuses some ports
  ["timeout", /timed out/i],
  ["unreachable", /\(Connect\)|connect error/i],
  ["reset", /reset by peer|connection closed|closed before|closed early|broken pipe/i],
  ["bad_response", /invalid HTTP|parse|invalid response|head over|line too long|\(SendRequest\)/i],
];

/**
 * Reads a body as text while the deadline still runs, mapping a stalled or aborted read the same
 * way as a failed call, and refusing bodies larger than `maxBytes` (502): a declared length over
 * it is refused unread, and an undeclared one is cancelled as soon as it passes the cap, so no
 * more than the cap plus one chunk is ever held.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const answer = (body: string) => ({
 *   res: new Response(body),
 *   release() {},
 *   timedOut: () => false,
 * });
 * assert.equal(await readBodyText(answer("<p>lore</p>"), {}, "Core", 1 << 20), "<p>lore</p>");
 * await assert.rejects(readBodyText(answer("0123456789"), {}, "Core", 4), {
 *   status: 502,
 *   message: "Core sent an oversized response",
 * });
 * ```
 */
export function readBodyText(
  up: UpstreamResponse,
  deps: Pick<UpstreamDeps, "signal" | "onFailure">,
  service: string,
  maxBytes: number,
): Promise<string> {
  return readBounded(up, deps, service, maxBytes, AS_TEXT);
}

/**
 * {@linkcode readBodyText}'s read as bytes, for a caller that looks at the bytes before (or
 * instead of) decoding them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const answer = { res: new Response("lore"), release() {}, timedOut: () => false };
 * const bytes = await readBodyBytes(answer, {}, "Core", 1 << 20);
 * assert.deepEqual(bytes, new TextEncoder().encode("lore"));
 * ```
 */
export function readBodyBytes(
  up: UpstreamResponse,
  deps: Pick<UpstreamDeps, "signal" | "onFailure">,
  service: string,
  maxBytes: number,
): Promise<Uint8Array<ArrayBuffer>> {
  return readBounded(up, deps, service, maxBytes, AS_BYTES);
}

/** How a bounded read keeps the body: all at once, or chunk by chunk as it comes. */
interface BodyForm<T> {
  whole(res: Response): Promise<T>;
  empty: T;
  collector(): { add(chunk: Uint8Array<ArrayBuffer>): void; end(): T };
}

const AS_TEXT: BodyForm<string> = {
  whole: (res) => res.text(),
  empty: "",
  collector() {
    // decoded as it comes: each chunk is let go at once, and no buffer of the whole body is
    // made beside the text (a few large answers at once would otherwise leave the process's
    // memory high long after, see docs/decisions.md)
    const decoder = new TextDecoder();
    const parts: string[] = [];
    return {
      add: (chunk) => parts.push(decoder.decode(chunk, { stream: true })),
      end: () => parts.join("") + decoder.decode(),
    };
  },
};

const AS_BYTES: BodyForm<Uint8Array<ArrayBuffer>> = {
  whole: async (res) => new Uint8Array(await res.arrayBuffer()),
  empty: new Uint8Array(0),
  collector() {
    const chunks: Uint8Array<ArrayBuffer>[] = [];
    let length = 0;
    return {
      add(chunk) {
        chunks.push(chunk);
        length += chunk.byteLength;
      },
      end: () => concatBytes(chunks, length),
    };
  },
};

async function readBounded<T>(
  up: UpstreamResponse,
  deps: Pick<UpstreamDeps, "signal" | "onFailure">,
  service: string,
  maxBytes: number,
  form: BodyForm<T>,
): Promise<T> {
  const oversized = () =>
    new ApiError(502, "UPSTREAM_ERROR", `${service} sent an oversized response`, {
      service: service.toLowerCase(),
    });
  const declared = Number(up.res.headers.get("content-length") ?? NaN);
  // A declared length within the bound is read natively in one go (the HTTP client holds the
  // body to that length), which costs a fraction of reading it chunk by chunk here. Not when the
  // body is compressed: the length is then the compressed one, and only counting the decoded
  // chunks bounds what a small body may inflate to.
  const whole = declared <= maxBytes && !up.res.headers.has("content-encoding");
  const reader = whole ? undefined : up.res.body?.getReader();
  try {
    if (whole) return await form.whole(up.res);
    if (!reader) return form.empty;
    if (declared > maxBytes) throw oversized();
    const body = form.collector();
    let total = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) throw oversized();
      body.add(value);
    }
    return body.end();
  } catch (e) {
    // whatever went wrong, the rest of the body is not wanted: release the connection now
    void (reader ?? up.res.body)?.cancel().catch(() => {});
    if (e instanceof ApiError) {
      deps.onFailure?.(service, "bad_response");
      throw e;
    }
    if (deps.signal?.aborted) throw new ClientAbortError();
    deps.onFailure?.(service, up.timedOut() ? "timeout" : "reset");
    if (up.timedOut()) {
      throw new ApiError(504, "UPSTREAM_TIMEOUT", `${service} did not answer in time`, {
        service: service.toLowerCase(),
      });
    }
    throw new ApiError(502, "UPSTREAM_ERROR", `${service} dropped the connection mid-response`, {
      service: service.toLowerCase(),
    });
  } finally {
    up.release();
  }
}

/**
 * Reads a JSON body and validates it: a backend is a trust boundary, so anything that is not
 * JSON of the expected shape is a 502, never a half-read object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 * const answer = (body: string) => ({
 *   res: new Response(body),
 *   release() {},
 *   timedOut: () => false,
 * });
 * const appInfo = z.object({ appVersion: z.string() });
 * const info = await readJsonBody(answer('{"appVersion":"0.99.3"}'), {}, "Core", appInfo, 1 << 20);
 * assert.deepEqual(info, { appVersion: "0.99.3" });
 * await assert.rejects(readJsonBody(answer("<html>"), {}, "Core", appInfo, 1 << 20), {
 *   status: 502,
 *   message: "Core sent a malformed response",
 * });
 * ```
 */
export async function readJsonBody<S extends z.ZodType>(
  up: UpstreamResponse,
  deps: Pick<UpstreamDeps, "signal" | "onFailure">,
  service: string,
  schema: S,
  maxBytes: number,
): Promise<z.output<S>> {
  return (await readJsonBodyAndText(up, deps, service, schema, maxBytes)).value;
}

/**
 * {@linkcode readJsonBody}, also giving the text the value was parsed from (for a route that
 * passes the backend's own JSON on, see `verbatimResults` in core_schemas.ts).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 * const answer = {
 *   res: new Response('{"appVersion":"0.99.3"}'),
 *   release() {},
 *   timedOut: () => false,
 * };
 * const appInfo = z.object({ appVersion: z.string() });
 * const { value, text } = await readJsonBodyAndText(answer, {}, "Core", appInfo, 1 << 20);
 * assert.equal(value.appVersion, "0.99.3");
 * assert.equal(text, '{"appVersion":"0.99.3"}');
 * ```
 */
export async function readJsonBodyAndText<S extends z.ZodType>(
  up: UpstreamResponse,
  deps: Pick<UpstreamDeps, "signal" | "onFailure">,
  service: string,
  schema: S,
  maxBytes: number,
): Promise<{ value: z.output<S>; text: string }> {
  const text = await readBodyText(up, deps, service, maxBytes);
  return { value: parseJsonAnswer(text, deps, service, schema), text };
}

/**
 * A backend's JSON answer, already read, validated by `schema`: a 502 (noted as a bad
 * response) for text that is not JSON of that shape.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 * const appInfo = z.object({ appVersion: z.string() });
 * assert.deepEqual(parseJsonAnswer('{"appVersion":"1"}', {}, "Core", appInfo), { appVersion: "1" });
 * assert.throws(() => parseJsonAnswer("{}", {}, "Core", appInfo), { status: 502 });
 * ```
 */
export function parseJsonAnswer<S extends z.ZodType>(
  text: string,
  deps: Pick<UpstreamDeps, "onFailure">,
  service: string,
  schema: S,
): z.output<S> {
  const badResponse = (what: string) => {
    deps.onFailure?.(service, "bad_response");
    return new ApiError(502, "UPSTREAM_ERROR", `${service} sent ${what} response`, {
      service: service.toLowerCase(),
    });
  };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw badResponse("a malformed");
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw badResponse("an unexpected");
  return parsed.data;
}
