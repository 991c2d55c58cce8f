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
import { credentialIdentity } from "../credentials.ts";
import type { AiRoute, Ctx } from "../router.ts";
import type { AiWork } from "../upstream/ai_calls.ts";
import { ApiError } from "./errors.ts";

/** An answer as kept: replayed as a new response to each client that gets it. */
export interface KeptAnswer {
  status: number;
  headers: [string, string][];
  body: Uint8Array<ArrayBuffer>;
}

/**
 * Runs an AI route's handler as an AI call and answers with its response, a kept one, or the
 * 504 that tells the client how to get it.
 *
 * @example
 * ```ts
 * res = route.ai
 *   ? await answerAiRoute(ctx, route.ai, (work) => route.handler(inWork(work)))
 *   : await route.handler(ctx);
 * ```
 */
export async function answerAiRoute(
  ctx: Ctx,
  ai: AiRoute,
  run: (work: AiWork) => Promise<Response> | Response,
): Promise<Response> {
  const resultKey = await aiResultKey(ctx);
  const kept = await ctx.state.aiCalls.run(resultKey, async (work) => {
    const res = await run(work);
    const body = new Uint8Array(await res.arrayBuffer());
    return { status: res.status, headers: [...res.headers], body };
  }, {
    idleMs: ctx.config.AI_TIMEOUT_MS,
    signal: ctx.signal,
    cutOff: () => {
      ctx.log.log("info", "ai call continues past its deadline", {
        requestId: ctx.requestId,
        route: ctx.url.pathname,
        resultKey,
      });
      return aiDeadlineError(ctx, ai, resultKey);
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
 * const key = await aiResultKey(ctx); // "9f2c…" — the same for a retry of the same request
 * ```
 */
export async function aiResultKey(
  ctx: Pick<Ctx, "credentials" | "req" | "url" | "query" | "body">,
): Promise<string> {
  const who = await credentialIdentity(await ctx.credentials.parser());
  const what = [
    who,
    ctx.req.method,
    ctx.url.pathname,
    JSON.stringify(ctx.query ?? null),
    JSON.stringify(ctx.body ?? null),
  ].join("\n");
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(what)),
  );
  return Array.from(digest.slice(0, 16), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The 504 of a client whose AI deadline passed while the call runs on: `details` say where the
 * answer will be (`retry`, `resultKey`, how long it is kept, `historyPath` when the route has
 * one).
 *
 * @example
 * ```ts
 * aiDeadlineError(ctx, { historyPath: "/api/brain-dump/history" }, key).details;
 * // { service: "parser", retry: "repeat the same request", resultKey: key, keptSeconds: 900, … }
 * ```
 */
export function aiDeadlineError(
  ctx: Pick<Ctx, "config">,
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
      keptSeconds: Math.floor(ctx.config.AI_RESULT_TTL_MS / 1000),
      ...(ai.historyPath ? { historyPath: ai.historyPath } : {}),
    },
  );
}
