/**
 * Test-side client of the Parser double: one call over HTTP with the owner's bearer token by
 * default, and the worlds the double's own tests run in (the double alone, or wired to a Core
 * double with the sample world).
 *
 * @module
 */
import { type CoreSim, startCoreSim } from "./core.ts";
import { type ParserSim, type ParserSimOptions, startParserSim } from "./parser.ts";

/** What a call sends. */
export interface ParserCallInit {
  /** Default GET, or POST when there is a body. */
  method?: string;
  /** Sent as JSON (with `Content-Type: application/json`). */
  body?: unknown;
  /** Bearer token; default the default owner's (a new session); `null` sends none. */
  token?: string | null;
  /** Extra request headers (a `token` wins over an `Authorization` here). */
  headers?: HeadersInit;
  signal?: AbortSignal;
}

/** A call's answer, read to the end. */
export interface ParserCallResult {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  // deno-lint-ignore no-explicit-any
  json: any;
}

/** What a call needs of the double: its URL and, for the default token, its owner. */
export type ParserTarget = Pick<ParserSim, "url" | "ownerToken">;

/**
 * Sends one request to the double and gives the response unread (for streams read as they
 * come, or abandoned halfway).
 *
 * @example
 * ```ts
 * // Declared, not run here: `sim` is a running Parser double.
 * async function firstChunk(sim: ParserTarget, rawText: string, signal: AbortSignal) {
 *   const res = await openParser(sim, "/brain-dump/stream", { body: { rawText }, signal });
 *   const reader = res.body!.getReader();
 *   const { value } = await reader.read();
 *   await reader.cancel(); // abandoned halfway, as a client that leaves
 *   return value;
 * }
 * ```
 */
export function openParser(
  sim: ParserTarget,
  path: string,
  init: ParserCallInit = {},
): Promise<Response> {
  const headers = new Headers(init.headers);
  const token = init.token === undefined ? sim.ownerToken() : init.token;
  if (token !== null) headers.set("Authorization", `Bearer ${token}`);
  const body = init.body === undefined ? undefined : JSON.stringify(init.body);
  if (body !== undefined) headers.set("Content-Type", "application/json");
  return fetch(`${sim.url}${path}`, {
    method: init.method ?? (body === undefined ? "GET" : "POST"),
    headers,
    body,
    signal: init.signal,
  });
}

/**
 * Sends one request to the double and reads the whole answer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * // Declared, not run here: `sim` is a running Parser double.
 * async function ragAndGuard(sim: ParserTarget): Promise<void> {
 *   const r = await callParser(sim, "/rag/query", { body: { text: "lighthouse" } });
 *   assert.equal(r.status, 200);
 *   const anonymous = await callParser(sim, "/config/models", { token: null });
 *   assert.equal(anonymous.status, 401);
 * }
 * ```
 */
export async function callParser(
  sim: ParserTarget,
  path: string,
  init: ParserCallInit = {},
): Promise<ParserCallResult> {
  const res = await openParser(sim, path, init);
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/**
 * Runs `fn` against a fresh Parser double (no Core), closing it afterwards.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * // Declared, not run here: the test it registers starts a Parser double.
 * function registerHealthTest(): void {
 *   Deno.test("health", () =>
 *     withParserSim(async (sim) => {
 *       assert.equal((await callParser(sim, "/health", { token: null })).status, 200);
 *     }, { bootstrap: false }));
 * }
 * ```
 */
export async function withParserSim(
  fn: (sim: ParserSim) => Promise<void>,
  opts: ParserSimOptions = {},
): Promise<void> {
  const sim = await startParserSim(opts);
  try {
    await fn(sim);
  } finally {
    await sim.close();
  }
}

/** A Core double with the sample world and a Parser double whose owner is connected to it. */
export interface ParserWorld {
  core: CoreSim;
  parser: ParserSim;
  /** One session of the default owner, the default token of `call` and `open`. */
  token: string;
  /** {@link callParser} with {@link ParserWorld.token} as the default token. */
  call(path: string, init?: ParserCallInit): Promise<ParserCallResult>;
  /** {@link openParser} with {@link ParserWorld.token} as the default token. */
  open(path: string, init?: ParserCallInit): Promise<Response>;
}

/**
 * Runs `fn` in a fresh {@link ParserWorld}; `opts` go to the Parser double (after `core`, so
 * they may override it). Both doubles are closed afterwards, the Parser first.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * // Declared, not run here: the test it registers starts both doubles.
 * function registerRagTest(): void {
 *   Deno.test("rag", () =>
 *     withParserWorld(async (w) => {
 *       const r = await w.call("/rag/query", { body: { text: "tides" } });
 *       assert.equal(r.status, 200);
 *     }, { ai: { llmDelayMs: 10 } }));
 * }
 * ```
 */
export async function withParserWorld(
  fn: (w: ParserWorld) => Promise<void>,
  opts: ParserSimOptions = {},
): Promise<void> {
  const core = await startCoreSim();
  try {
    await withParserSim((parser) => {
      const token = parser.ownerToken();
      const target: ParserTarget = { url: parser.url, ownerToken: () => token };
      return fn({
        core,
        parser,
        token,
        call: (path, init) => callParser(target, path, init),
        open: (path, init) => openParser(target, path, init),
      });
    }, { core: { url: core.url, token: core.token }, ...opts });
  } finally {
    await core.close();
  }
}
