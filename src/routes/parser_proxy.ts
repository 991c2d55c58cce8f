/**
 * The shared shape of every Parser-backed route: validate our input, call one Parser endpoint
 * with this caller's Parser session, validate the Parser's answer (a trust boundary: anything
 * unexpected is a 502, never passed on; the Core titles it relays, declared `relayedTitle` in
 * its schema, are decoded to the typed text there), optionally reshape it, answer JSON.
 * Streaming routes use {@linkcode parserStreamRoute}: errors before the first byte are our JSON
 * errors, after it a terminal SSE `error` event.
 *
 * AI routes (`ai`) get the AI deadline (see pipeline/ai_route.ts); one whose work the Parser also
 * offers as a stream may read that stream instead (`fromStream`,
 * {@linkcode parserStreamOutcome}): its events and keepalives are progress, so the client waits
 * as long as the Parser keeps working, and the final event becomes the same JSON answer.
 *
 * @module
 */
import { z } from "zod";
import { readRelayed } from "../core/titles.ts";
import { ApiError, errorBodySchema } from "../http/errors.ts";
import { json } from "../http/response.ts";
import { createSseTracker, encodeSseEvent, sseResponse, type SseWriter } from "../http/sse.ts";
import type { AiRoute } from "../pipeline/ai_route.ts";
import {
  type BodyValue,
  type Ctx,
  defineRoute,
  type Method,
  type Responses,
  type Route,
  type RouteOf,
} from "../api/router.ts";
import type { ParserClient } from "../upstream/parser.ts";
import { forgetKeptReads, type KeptReads, withKeptReads } from "./kept_reads.ts";

/** What to send to the Parser for one request. */
export interface ParserCall {
  method?: Method;
  /** Built with `upstreamPath` when it holds caller input. */
  path: string;
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
}

/** Declaration of a JSON pass-through route. */
export interface ParserRouteSpec<
  P extends z.ZodType,
  Q extends z.ZodType,
  S extends z.ZodType | undefined,
  A extends z.ZodType,
> {
  method: Method;
  path: string;
  summary: string;
  tag: string;
  params?: P;
  query?: Q;
  /** JSON body schema (zod), when the route takes one. */
  body?: S;
  /** What the route decides where the API is silent (`Route.description`). */
  description?: string;
  responses: Responses;
  /** The Parser call for this request. */
  upstream(ctx: ParserCtx<P, Q, S>): ParserCall;
  /** The Parser's answer as we accept it. */
  answer: A;
  /**
   * Our answer, from the validated Parser answer (default: as is); a promise when work must
   * finish before the answer (indexing the notes the Parser wrote).
   */
  reply?(data: z.output<A>, ctx: ParserCtx<P, Q, S>): unknown;
  /**
   * Response headers from the validated Parser answer: facts a bare-array answer has no room
   * for (the next page's cursor), declared in the route's response description.
   */
  headers?(data: z.output<A>): HeadersInit;
  /** AI work: the AI deadline, progress-aware waiting and a kept answer (`Route.ai`). */
  ai?: AiRoute;
  /**
   * The same work as a Parser SSE stream (AI routes), when this request has one: the Parser
   * answer is read from that stream's final events instead of the plain call's body.
   */
  fromStream?(ctx: ParserCtx<P, Q, S>): ParserStreamCall | undefined;
  /** Part in a group of reads kept per caller (see kept_reads.ts). */
  kept?: KeptReads;
}

/** A Parser stream that answers a JSON route, and how its final events become the answer. */
export interface ParserStreamCall extends ParserCall {
  /**
   * The Parser answer (then validated by the route's `answer`) from the stream's outcome, or a
   * promise of it.
   */
  answer(outcome: StreamOutcome): unknown;
}

/** The data of the last events of a Parser stream that carry its outcome. */
export interface StreamOutcome {
  result?: unknown;
  done?: unknown;
  error?: unknown;
}

/** The handler context of a Parser route. */
export type ParserCtx<P extends z.ZodType, Q extends z.ZodType, S> = Ctx<
  z.output<P>,
  z.output<Q>,
  S extends z.ZodType ? z.output<S> : undefined
>;

/** What a Parser-backed route declares about itself, taken from its spec. */
type RouteHead = Pick<
  RouteOf<"private">,
  "method" | "path" | "summary" | "tag" | "description" | "responses" | "ai"
>;

/** A spec's declaration as a route row: the Parser behind it, the caller's credentials needed. */
function declaration(spec: RouteHead): RouteHead & Pick<RouteOf<"private">, "backend" | "access"> {
  const { method, path, summary, tag, description, responses, ai } = spec;
  return {
    method,
    path,
    summary,
    backend: "Parser",
    access: "private",
    tag,
    description,
    responses,
    ai,
  };
}

/**
 * Calls the Parser and validates its answer with `schema` (502 `UPSTREAM_ERROR` on mismatch).
 */
export async function parserJson<A extends z.ZodType>(
  parser: ParserClient,
  call: ParserCall,
  schema: A,
): Promise<z.output<A>> {
  const raw = await parser.json(call.method ?? "GET", call.path, call.body, call.query);
  return await parserAnswer(schema, raw);
}

/**
 * Validates a Parser answer with `schema` (502 `UPSTREAM_ERROR` on mismatch). Asynchronous, as
 * decoding the Core titles the schema declares (`relayedTitle`) may load the HTML engine
 * (`readRelayed`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 *
 * import { relayedTitle } from "../core/titles.ts";
 * import { ApiError } from "../http/errors.ts";
 *
 * const node = z.object({ noteId: z.string(), title: relayedTitle });
 * assert.deepEqual(await parserAnswer(node, { noteId: "n1", title: "Salt &amp; Smoke" }), {
 *   noteId: "n1",
 *   title: "Salt & Smoke",
 * });
 * await assert.rejects(
 *   parserAnswer(node, "oops"),
 *   (e) => e instanceof ApiError && e.status === 502, // UPSTREAM_ERROR
 * );
 * ```
 */
export async function parserAnswer<A extends z.ZodType>(
  schema: A,
  raw: unknown,
): Promise<z.output<A>> {
  const parsed = await readRelayed(schema, raw);
  if (!parsed.success) throw unexpected();
  return parsed.data;
}

function unexpected(): ApiError {
  return new ApiError(502, "UPSTREAM_ERROR", "The Parser sent an unexpected response", {
    service: "parser",
  });
}

/**
 * Reads a Parser SSE stream to its end for a JSON answer: every chunk (events, keepalive
 * comments) is reported as progress; the data of the last `result`, `done` and `error` events
 * is kept (tokens and reasoning are not). A stream that ends without `done` or `error`, breaks
 * off, passes `MAX_UPSTREAM_BODY_BYTES` or carries data that is not JSON is a 502.
 */
export async function parserStreamOutcome(
  parser: ParserClient,
  call: ParserCall,
  ctx: Pick<Ctx, "progress" | "config">,
): Promise<StreamOutcome> {
  const res = await parser.stream(call.method ?? "POST", call.path, call.body);
  const outcome: StreamOutcome = {};
  let malformed = false;
  const tracker = createSseTracker((name, data) => {
    if (name !== "result" && name !== "done" && name !== "error") return;
    try {
      outcome[name] = JSON.parse(data);
    } catch {
      malformed = true;
    }
  });
  const reader = res.body?.getReader();
  let bytes = 0;
  try {
    for (;;) {
      let next: ReadableStreamReadResult<Uint8Array> | undefined;
      try {
        next = await reader?.read();
      } catch {
        throw new ApiError(502, "UPSTREAM_ERROR", "The Parser broke off the stream", {
          service: "parser",
        });
      }
      if (!next || next.done) break;
      ctx.progress();
      bytes += next.value.byteLength;
      if (bytes > ctx.config.MAX_UPSTREAM_BODY_BYTES) {
        throw new ApiError(502, "UPSTREAM_ERROR", "The Parser sent an oversized response", {
          service: "parser",
        });
      }
      tracker.push(next.value);
    }
  } finally {
    void reader?.cancel().catch(() => {}); // a no-op after the end; releases it after a failure
  }
  if (malformed) throw unexpected();
  if (outcome.done === undefined && outcome.error === undefined) {
    throw new ApiError(502, "UPSTREAM_ERROR", "The stream ended before it completed", {
      service: "parser",
    });
  }
  return outcome;
}

/**
 * Declares a route that forwards to one Parser endpoint and answers JSON.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 *
 * const vapidAnswer = z.object({ publicKey: z.string().nullable() });
 * const vapidKey = parserRoute({
 *   method: "GET",
 *   path: "/api/notifications/vapid-public-key",
 *   tag: "notifications",
 *   summary: "VAPID public key",
 *   responses: { 200: { description: "`{ publicKey }`", schema: vapidAnswer } },
 *   upstream: () => ({ path: "/notifications/vapid-public-key" }),
 *   answer: vapidAnswer,
 * });
 * // a row of the route table: the Parser behind it, the caller's credentials needed
 * assert.deepEqual([vapidKey.backend, vapidKey.access], ["Parser", "private"]);
 * ```
 */
export function parserRoute<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  S extends z.ZodType | undefined = undefined,
  A extends z.ZodType = z.ZodType,
>(spec: ParserRouteSpec<P, Q, S, A>): Route {
  return defineRoute({
    ...declaration(spec),
    params: spec.params,
    query: spec.query,
    body: spec.body ? { kind: "json", schema: spec.body } : undefined,
    handler: async (ctx) => {
      const c = ctx as unknown as ParserCtx<P, Q, S>;
      // a kept read serves every concurrent caller: it must not die with the first one's client
      const parser = await ctx.parser({ ai: !!spec.ai, detached: spec.kept?.role === "read" });
      const streamed = spec.fromStream?.(c);
      const data = await withKeptReads(ctx, spec.kept, async () =>
        streamed
          ? await parserAnswer(
            spec.answer,
            await streamed.answer(await parserStreamOutcome(parser, streamed, ctx)),
          )
          : await parserJson(parser, spec.upstream(c), spec.answer));
      return json(spec.reply ? await spec.reply(data, c) : data, 200, spec.headers?.(data));
    },
  });
}

/**
 * The data of a stream's terminal `error` event: ours in the error shape (a stall, a deadline,
 * a broken or unfinished stream), or either of the Parser's own, passed through as it sent them.
 */
export const streamErrorEventSchema = z.union([
  errorBodySchema,
  z.object({ error: z.string(), code: z.string().optional() }).describe("the Parser's"),
  z.object({ code: z.string(), message: z.string() }).describe("the Parser's"),
]);

/** Declaration of a streaming (SSE) pass-through route. */
export interface ParserStreamSpec<P extends z.ZodType, S extends z.ZodType> {
  method: Method;
  path: string;
  summary: string;
  tag: string;
  params?: P;
  body: S;
  /** What the route decides where the API is silent (`Route.description`). */
  description?: string;
  responses: Responses;
  upstream(ctx: Ctx<z.output<P>, unknown, BodyValue<{ kind: "json"; schema: S }>>): ParserCall;
  /**
   * Events whose data is rewritten before it is passed on (the Core titles they relay), by
   * event name: the new data, or undefined to pass the event on as it came. Every other byte
   * passes through as it arrives.
   */
  rewrite?: Readonly<Record<string, (data: unknown) => Promise<unknown>>>;
  /**
   * Work once the Parser's stream has ended and before ours does, with the data of its `done`
   * event as it was passed on (only when one came): the client has every event by then, and
   * the end of our stream tells it that work is finished too. It must not throw.
   */
  afterDone?(
    ctx: Ctx<z.output<P>, unknown, BodyValue<{ kind: "json"; schema: S }>>,
    done: unknown,
  ): Promise<void>;
  /** The group of kept reads the stream's work changes: dropped once it has ended. */
  changes?: string;
}

/**
 * Declares a route that streams one Parser SSE endpoint through unchanged (but for the events
 * its `rewrite` names). The Parser's pre-stream errors (422, 401, 429, …) come back as our JSON
 * errors because the stream is only opened once the Parser has answered 200.
 */
export function parserStreamRoute<P extends z.ZodType, S extends z.ZodType>(
  spec: ParserStreamSpec<P, S>,
): Route {
  return defineRoute({
    ...declaration(spec),
    params: spec.params,
    body: { kind: "json", schema: spec.body },
    handler: async (ctx) => {
      const call = spec.upstream(ctx as never);
      const upstream = await (await ctx.parser()).stream(
        call.method ?? "POST",
        call.path,
        call.body,
      );
      const { afterDone, changes } = spec;
      const forget = () => changes ? forgetKeptReads(ctx, changes).catch(() => {}) : undefined;
      let done: unknown;
      // the `done` event is read (and kept) on its way through when there is work after it; the
      // kept reads it changes go before it does: the client reads them again once it has it
      const rewrite = afterDone || changes
        ? {
          ...spec.rewrite,
          done: async (data: unknown) => {
            await forget();
            const replaced = await spec.rewrite?.done?.(data);
            done = replaced ?? data;
            return replaced;
          },
        }
        : spec.rewrite;
      return streamResponse(ctx, async (w) => {
        try {
          await w.pipe(rewrite ? rewriteSseEvents(upstream, rewrite) : upstream);
          if (afterDone && done !== undefined) await afterDone(ctx as never, done);
        } finally {
          await forget(); // also after an error or a cut: the Parser may have written
        }
      });
    },
  });
}

/**
 * The upstream SSE stream with the data of the events `rewrite` names replaced. Those events are
 * held until they end (the Parser sends each as one `event:` and one `data:` line), then sent as
 * the Parser frames them; everything else passes on as it arrives, unfinished lines inside other
 * events included. Data that is not JSON passes on unchanged, and so does an event the stream
 * ends inside of (the stream machinery reports the unfinished stream).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const upstream = new Response(
 *   'event: token\ndata: {"content":"{"}\n\n: keepalive\n\nevent: done\ndata: {"n":1}\n\n',
 * );
 * const twice = { done: (data: unknown) => Promise.resolve({ n: (data as { n: number }).n * 2 }) };
 * assert.equal(
 *   await rewriteSseEvents(upstream, twice).text(),
 *   'event: token\ndata: {"content":"{"}\n\n: keepalive\n\nevent: done\ndata: {"n":2}\n\n',
 * );
 * ```
 */
export function rewriteSseEvents(
  upstream: Response,
  rewrite: NonNullable<ParserStreamSpec<z.ZodType, z.ZodType>["rewrite"]>,
): Response {
  if (!upstream.body) return upstream;
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = ""; // text not yet passed on: an unfinished line
  let held: { name: string; lines: string[] } | undefined;
  let inEvent = false; // a field of the current event has passed (it is not one to hold)
  let midLine = false; // the start of the current line has passed

  const finish = async (event: { name: string; lines: string[] }): Promise<Uint8Array> => {
    const data = event.lines.map((l) => l.replace(/\r?\n$/, ""))
      .flatMap((l) => l.startsWith("data:") ? [l.slice(5).replace(/^ /, "")] : []).join("\n");
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return encoder.encode(event.lines.join(""));
    }
    const replaced = await rewrite[event.name](parsed);
    return replaced === undefined
      ? encoder.encode(event.lines.join(""))
      : encodeSseEvent(event.name, replaced);
  };

  const body = upstream.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      async transform(chunk, controller) {
        pending += decoder.decode(chunk, { stream: true });
        let passed = "";
        const pass = () => {
          if (passed) controller.enqueue(encoder.encode(passed));
          passed = "";
        };
        for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
          const line = pending.slice(0, nl + 1);
          pending = pending.slice(nl + 1);
          const continued = midLine;
          midLine = false;
          const blank = !continued && /^\r?\n$/.test(line);
          if (held) {
            held.lines.push(line);
            if (blank) {
              pass();
              controller.enqueue(await finish(held));
              held = undefined;
              inEvent = false;
            }
            continue;
          }
          const name = inEvent || continued ? undefined : /^event: ?(.*?)\r?\n$/.exec(line)?.[1];
          if (name !== undefined && Object.hasOwn(rewrite, name)) {
            held = { name, lines: [line] };
            continue;
          }
          passed += line;
          if (blank) inEvent = false;
          else if (!continued && !line.startsWith(":")) inEvent = true;
        }
        // an unfinished line inside an event that is not held goes on at once (tokens); a last
        // `\r` waits, as it may be half of the line end
        const ready = !held && inEvent ? pending.replace(/\r$/, "").length : 0;
        if (ready > 0) {
          passed += pending.slice(0, ready);
          pending = pending.slice(ready);
          midLine = true;
        }
        pass();
      },
      flush(controller) {
        const rest = (held ? held.lines.join("") : "") + pending + decoder.decode();
        if (rest) controller.enqueue(encoder.encode(rest));
      },
    }),
  );
  return new Response(body, { status: upstream.status, headers: upstream.headers });
}

/**
 * An SSE response for this request with the configured idle and total deadlines; the end of the
 * stream is logged (how it ended), since the request log line is written when the head is sent.
 */
export function streamResponse(
  ctx: Ctx,
  produce: (writer: SseWriter) => Promise<void>,
): Response {
  const started = performance.now();
  return sseResponse(produce, {
    idleMs: ctx.config.STREAM_IDLE_TIMEOUT_MS,
    totalMs: ctx.config.SSE_TOTAL_TIMEOUT_MS,
    signal: ctx.signal,
    requestId: ctx.requestId,
    deadlines: ctx.deadlines,
    closing: ctx.state.closing.signal,
    onEnd: (reason) =>
      ctx.log.log(reason === "error" ? "warn" : "info", "stream end", {
        requestId: ctx.requestId,
        route: ctx.url.pathname,
        reason,
        ms: Math.round(performance.now() - started),
      }),
  });
}
