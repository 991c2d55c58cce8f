/**
 * Request body reading with limits enforced while reading (a lying or absent Content-Length
 * cannot get past them), an idle deadline for clients that stop sending, and content-type checks.
 *
 * @module
 */
import { ApiError } from "./errors.ts";
import { concatBytes } from "../util/bytes.ts";

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

/**
 * 408 for a client that stopped sending its body.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const e = requestTimeout(30_000);
 * assert.equal(e.status, 408);
 * assert.equal(e.message, "The request body stalled: nothing arrived for 30000 ms");
 * ```
 */
export function requestTimeout(idleMs: number): ApiError {
  return new ApiError(
    408,
    "REQUEST_TIMEOUT",
    `The request body stalled: nothing arrived for ${idleMs} ms`,
    { idleMs },
  );
}

/**
 * Wraps a request body so that it errors with a 408 {@linkcode ApiError} when the client sends
 * nothing for `idleMs` while the body is being read. Only time spent waiting for the client
 * counts: while the reader is busy elsewhere (an upstream slow to take the bytes) no clock runs.
 * The source is cancelled on timeout.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const silent = new ReadableStream<Uint8Array>(); // a client that never sends
 * const body = idleDeadline(silent, 10);
 * await assert.rejects(new Response(body).arrayBuffer(), { status: 408 });
 * ```
 */
export function idleDeadline(
  body: ReadableStream<Uint8Array>,
  idleMs: number,
  onTimeout?: () => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const stalled = new Promise<"stalled">((r) => timer = setTimeout(r, idleMs, "stalled"));
      try {
        const r = await Promise.race([reader.read(), stalled]);
        if (r === "stalled") {
          const e = requestTimeout(idleMs);
          onTimeout?.();
          controller.error(e);
          await reader.cancel(e).catch(() => {});
        } else if (r.done) controller.close();
        else controller.enqueue(r.value);
      } finally {
        clearTimeout(timer);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  }, { highWaterMark: 0 });
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
 * Wraps a byte stream so it errors with a 413 {@linkcode ApiError} as soon as more than `limit`
 * bytes have passed. Used to stream uploads upstream without buffering them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const limited = limitStream(new Response("12345").body!, 4);
 * await assert.rejects(new Response(limited).text(), { code: "PAYLOAD_TOO_LARGE" });
 * ```
 */
export function limitStream(
  body: ReadableStream<Uint8Array>,
  limit: number,
  onExceeded?: () => void,
): ReadableStream<Uint8Array> {
  let total = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        total += chunk.byteLength;
        if (total > limit) {
          onExceeded?.();
          controller.error(tooLarge(limit));
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
}

/**
 * Reads the whole body as UTF-8 text, at most `limit` bytes (413 beyond); a client that sends
 * nothing for `idleMs` meanwhile gets 408.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const req = new Request("http://x", { method: "POST", body: "<p>Harbor</p>" });
 * assert.equal(await readLimitedText(req, 5 * 1024 * 1024, 30_000), "<p>Harbor</p>");
 * ```
 */
export async function readLimitedText(
  req: Request,
  limit: number,
  idleMs: number,
): Promise<string> {
  checkDeclaredLength(req, limit);
  if (!req.body) return "";
  const reader = limitStream(idleDeadline(req.body, idleMs), limit).getReader();
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
