/**
 * Answering an AI route (`Route.ai`: a call cut off by a deadline never loses its
 * result). The handler runs as an AI call (upstream/ai_calls.ts) keyed by the caller's Parser
 * identity and a digest of method, path, query and body: the client waits while it makes
 * progress, and when `AI_TIMEOUT_MS` passes without any it gets a 504 whose `details` say how to
 * get the answer — repeat the same request — while the call runs on. The answer (or error) is
 * kept for `AI_RESULT_TTL_MS` and handed to that retry once, instead of a second Parser call.
 *
 * @module
 */
import { z } from "zod";
import type { Config } from "../config/service_config.ts";
import { ApiError } from "../http/errors.ts";
import type { Logger } from "../http/log.ts";
import type { AiCalls, AiWork } from "../upstream/ai_calls.ts";
import type { ValueCodec } from "../upstream/shared_ai_calls.ts";
import { sha256Hex } from "../util/sha256.ts";

/** What an AI route declares about itself. */
export interface AiRoute {
  /** Where the work's outcome is listed besides the retry (e.g. the brain-dump history). */
  historyPath?: string;
}

/** An answer as kept: replayed as a new response to each client that gets it. */
export interface KeptAnswer {
  status: number;
  headers: [string, string][];
  body: Uint8Array<ArrayBuffer>;
}

const keptAnswerJson = z.object({
  status: z.number().int().min(200).max(599),
  headers: z.array(z.tuple([z.string(), z.string()])),
  body: z.string(),
});

/**
 * How a kept answer is written to a shared store (its body as base64) and read back.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const answer: KeptAnswer = {
 *   status: 200,
 *   headers: [["content-type", "application/json"]],
 *   body: new TextEncoder().encode('{"summary":"made"}'),
 * };
 * const json = JSON.parse(JSON.stringify(keptAnswerCodec.encode(answer)));
 * assert.deepEqual(keptAnswerCodec.decode(json), answer);
 * ```
 */
export const keptAnswerCodec: ValueCodec<KeptAnswer> = {
  encode: (a) => ({ status: a.status, headers: a.headers, body: a.body.toBase64() }),
  decode(json) {
    const a = keptAnswerJson.parse(json);
    return { status: a.status, headers: a.headers, body: Uint8Array.fromBase64(a.body) };
  },
};

/**
 * What a kept answer weighs, roughly: its body plus its headers (for the kept answers' byte bound).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const answer: KeptAnswer = { status: 200, headers: [], body: new Uint8Array(1000) };
 * assert.ok(keptAnswerBytes(answer) >= 1000);
 * ```
 */
export function keptAnswerBytes(answer: KeptAnswer): number {
  let size = answer.body.byteLength + 64;
  for (const [name, value] of answer.headers) size += (name.length + value.length) * 2 + 32;
  return size;
}

/** What answering an AI route needs of its request; a private route's context has the rest. */
export interface AiRequest {
  req: Request;
  url: URL;
  /** The validated query and body: part of what was asked. */
  query: unknown;
  body: unknown;
  /** The client's signal. */
  signal: AbortSignal;
  requestId: string;
  log: Logger;
  config: Pick<Config, "AI_TIMEOUT_MS" | "AI_RESULT_TTL_MS">;
  /** A stable, non-secret key for the caller's Parser credentials: whose answer it is. */
  parserIdentity(): Promise<string>;
}

/**
 * Runs an AI route's handler as an AI call among `calls` and answers with its response, a kept
 * one, or the 504 that tells the client how to get it.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../config/service_config.ts";
 * import { jsonLogger } from "../http/log.ts";
 * import { createAiCalls } from "../upstream/ai_calls.ts";
 *
 * const config = loadConfig({});
 * const calls = createAiCalls<KeptAnswer>({ totalMs: 60_000, ttlMs: 60_000, maxEntries: 10 });
 * const url = new URL("http://127.0.0.1:8080/api/ai/analyze");
 * const request: AiRequest = {
 *   req: new Request(url),
 *   url,
 *   query: {},
 *   body: null,
 *   signal: new AbortController().signal,
 *   requestId: "req-1",
 *   log: jsonLogger("silent"),
 *   config,
 *   parserIdentity: () => Promise.resolve("caller-1"),
 * };
 * const res = await answerAiRoute(calls, request, {}, () => new Response("done"));
 * ```
 */
export async function answerAiRoute(
  calls: AiCalls<KeptAnswer>,
  request: AiRequest,
  ai: AiRoute,
  run: (work: AiWork) => Promise<Response> | Response,
): Promise<Response> {
  const resultKey = await aiResultKey(request);
  const kept = await calls.run(resultKey, async (work) => {
    const res = await run(work);
    const body = new Uint8Array(await res.arrayBuffer());
    return { status: res.status, headers: [...res.headers], body };
  }, {
    idleMs: request.config.AI_TIMEOUT_MS,
    signal: request.signal,
    cutOff: () => {
      request.log.log("info", "ai call continues past its deadline", {
        requestId: request.requestId,
        route: request.url.pathname,
        resultKey,
      });
      return aiDeadlineError(request, ai, resultKey);
    },
  });
  return new Response(kept.body, { status: kept.status, headers: kept.headers });
}

/**
 * The key of a request's AI call: the caller's Parser identity and what was asked (method,
 * path, validated query and body), digested (32 hex characters).
 *
 * @example
 * ```ts
 * const url = new URL("http://127.0.0.1:8080/api/ai/analyze?noteId=abc");
 * const key = await aiResultKey({
 *   req: new Request(url),
 *   url,
 *   query: { noteId: "abc" },
 *   body: null,
 *   parserIdentity: () => Promise.resolve("caller-1"),
 * }); // the same for a retry of the same request
 * ```
 */
export async function aiResultKey(
  request: Pick<AiRequest, "req" | "url" | "query" | "body" | "parserIdentity">,
): Promise<string> {
  const what = [
    await request.parserIdentity(),
    request.req.method,
    request.url.pathname,
    JSON.stringify(request.query ?? null),
    JSON.stringify(request.body ?? null),
  ].join("\n");
  return await sha256Hex(what, 16);
}

/**
 * The 504 of a client whose AI deadline passed while the call runs on: `details` say where the
 * answer will be (`retry`, `resultKey`, how long it is kept, `historyPath` when the route has
 * one).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const config = { AI_RESULT_TTL_MS: 900_000 };
 * const e = aiDeadlineError({ config }, { historyPath: "/api/brain-dump/history" }, "9f2c");
 * assert.equal(e.status, 504);
 * assert.deepEqual(e.details, {
 *   service: "parser",
 *   retry: "repeat the same request",
 *   resultKey: "9f2c",
 *   keptSeconds: 900,
 *   historyPath: "/api/brain-dump/history",
 * });
 * ```
 */
export function aiDeadlineError(
  request: { config: Pick<Config, "AI_RESULT_TTL_MS"> },
  ai: AiRoute,
  resultKey: string,
): ApiError {
  return new ApiError(
    504,
    "UPSTREAM_TIMEOUT",
    "The Parser is still working on this request: repeat the same request to get its answer",
    {
      service: "parser",
      retry: "repeat the same request",
      resultKey,
      keptSeconds: Math.floor(request.config.AI_RESULT_TTL_MS / 1000),
      ...(ai.historyPath ? { historyPath: ai.historyPath } : {}),
    },
  );
}
