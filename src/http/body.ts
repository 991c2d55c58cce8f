/**
 * Request body reading with limits enforced while reading (a lying or absent Content-Length
 * cannot get past them) and content-type checks.
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
 * mediaType(new Request("http://x", { method: "POST", headers: { "content-type": "Application/JSON; charset=utf-8" } })); // "application/json"
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
 * requireMediaType(req, ["application/json"]);
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
 * checkDeclaredLength(req, 1024);
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
 * const limited = limitStream(req.body!, 20 * 1024 * 1024);
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
 * Reads the whole body as UTF-8 text, at most `limit` bytes (413 beyond).
 *
 * @example
 * ```ts
 * const html = await readLimitedText(req, 5 * 1024 * 1024);
 * ```
 */
export async function readLimitedText(req: Request, limit: number): Promise<string> {
  checkDeclaredLength(req, limit);
  if (!req.body) return "";
  const reader = limitStream(req.body, limit).getReader();
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
