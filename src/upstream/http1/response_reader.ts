/**
 * A response read off a connection into a `Response`: interim answers skipped, the head read
 * within its limit, a small body read at once and a larger one streamed. Its connection is let
 * go (pooled or closed) the moment the body has come off the wire, or failed: a body read to the
 * close, a `Connection: close`, a cancel or an abort midway close it; an error in the body
 * stream is fetch's `TypeError`, or the abort's reason.
 *
 * @module
 */
import { type BodyDecoder, bodyDecoder, bodyFraming } from "./body_decoder.ts";
import { type Connection, fill } from "./connection.ts";
import { abortReason, closedEarly, invalidResponse, networkError } from "./errors.ts";
import { type Exchange, finish } from "./exchange.ts";
import { headEnd, parseResponseHead, type ResponseHead } from "./response_head.ts";
import { latin1 } from "./syntax.ts";

/**
 * Reads the answer to `method` on `c` as a `Response`; heads, interim ones included, may take
 * `maxHead` bytes in all (the chunked body's trailers as many).
 */
export async function readResponse(
  x: Exchange,
  c: Connection,
  method: string,
  maxHead: number,
): Promise<Response> {
  let head: ResponseHead;
  // interim (1xx) answers are skipped; together they count against the head limit
  for (let budget = maxHead;;) {
    const [h, size] = await readHead(c, budget, maxHead);
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

/** Reads one head of at most `limit` bytes: it and its size (`maxHead` names the limit). */
async function readHead(
  c: Connection,
  limit: number,
  maxHead: number,
): Promise<[ResponseHead, number]> {
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

/** The rest of a body as a stream read off the connection as the caller pulls. */
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

/** A `Response`, or fetch's `TypeError` for an answer the class cannot represent. */
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
