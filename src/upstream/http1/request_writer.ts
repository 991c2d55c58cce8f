/**
 * A request put on the wire: fetch's body types turned into bytes, the head and a small body
 * sent in one write, and a streamed body sent chunked alongside the wait for the answer.
 *
 * A streamed body's chunks are handed over: each is copied into one frame buffer reused for the
 * whole body, and a chunk that owns its whole buffer is then detached, which frees its memory at
 * once. The runtime frees a chunk's memory only when a garbage collection finds it, and a stream
 * of large chunks makes little garbage on the heap itself: a 100 MiB upload otherwise held tens
 * of MiB of finished chunks.
 *
 * @module
 */
import { concatBytes } from "../../util/bytes.ts";
import { type Connection, destroy, writeAll } from "./connection.ts";
import type { Exchange } from "./exchange.ts";
import { headerFields, type RequestFraming, requestHead } from "./request_head.ts";
import { latin1Bytes } from "./syntax.ts";

/** A request body ready to send: bytes with their default type, or a stream sent chunked. */
export type Outgoing = { bytes: Uint8Array; contentType?: string } | {
  stream: ReadableStream<Uint8Array>;
};

/** Bodies up to this size go out in the same write as the head. */
const COALESCE_BYTES = 64 * 1024;
const LAST_CHUNK = new TextEncoder().encode("0\r\n\r\n");
const encoder = new TextEncoder();

/**
 * A fetch body as bytes or a stream, null without one, or "unsupported" for what the client
 * leaves to the runtime's `fetch` (form data). Byte bodies are copied, as fetch copies them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(await outgoing("hi"), {
 *   bytes: new TextEncoder().encode("hi"),
 *   contentType: "text/plain;charset=UTF-8",
 * });
 * assert.equal(await outgoing(new FormData()), "unsupported");
 * ```
 */
export async function outgoing(
  body: BodyInit | null | undefined,
): Promise<Outgoing | null | "unsupported"> {
  if (body === null || body === undefined) return null;
  if (typeof body === "string") {
    return { bytes: encoder.encode(body), contentType: "text/plain;charset=UTF-8" };
  }
  if (body instanceof ReadableStream) {
    if (body.locked) throw new TypeError("the request body stream is locked");
    return { stream: body };
  }
  // fetch sends a copy: the caller may reuse its buffer once the call started
  if (ArrayBuffer.isView(body)) {
    return { bytes: new Uint8Array(body.buffer, body.byteOffset, body.byteLength).slice() };
  }
  if (body instanceof ArrayBuffer) return { bytes: new Uint8Array(body.slice(0)) };
  if (body instanceof URLSearchParams) {
    return {
      bytes: encoder.encode(body.toString()),
      contentType: "application/x-www-form-urlencoded;charset=UTF-8",
    };
  }
  if (body instanceof Blob) {
    return { bytes: new Uint8Array(await body.arrayBuffer()), contentType: body.type || undefined };
  }
  return "unsupported";
}

/**
 * The writes that send a request, all but a streamed body: the head, with a byte body of up to
 * 64 KiB in the same write. Throws fetch's `TypeError` for a header it would refuse.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const body = { bytes: new Uint8Array(2) };
 * const parts = requestParts("POST", new URL("http://core/x"), undefined, body);
 * assert.equal(parts.length, 1); // head and body in one write
 * const text = new TextDecoder().decode(parts[0]);
 * assert.match(text, /^POST \/x HTTP\/1.1\r\n[^]*content-length: 2\r\n\r\n\0\0$/);
 * ```
 */
export function requestParts(
  method: string,
  url: URL,
  headers: HeadersInit | undefined,
  body: Outgoing | null,
): Uint8Array[] {
  const bytes = body && "bytes" in body ? body.bytes : null;
  const framing: RequestFraming = body && "stream" in body
    ? "chunked"
    : bytes
    ? { length: bytes.byteLength, contentType: (body as { contentType?: string }).contentType }
    : method === "POST" || method === "PUT"
    ? { length: 0 }
    : null;
  const headText = requestHead(
    method,
    url.pathname + url.search,
    url.host,
    headerFields(headers),
    framing,
  );
  // header values may hold Latin-1 characters, which travel as single bytes
  const head = /[^\0-\x7f]/.test(headText) ? latin1Bytes(headText) : encoder.encode(headText);
  return !bytes?.byteLength
    ? [head]
    : bytes.byteLength <= COALESCE_BYTES
    ? [concatBytes([head, bytes], head.byteLength + bytes.byteLength)]
    : [head, bytes];
}

/**
 * Sends a streamed body chunked, alongside the wait for the answer. Never rejects: a failing
 * caller's stream is recorded on the exchange and closes the connection (the backend must not
 * take half a body for a whole one); a failing connection shows when the answer is read.
 */
export async function sendBody(
  x: Exchange,
  c: Connection,
  stream: ReadableStream<Uint8Array>,
): Promise<void> {
  const reader = stream.getReader();
  x.bodyReader = reader;
  let frame: Frame = { buffer: new Uint8Array(0), bytes: new Uint8Array(0) };
  try {
    for (;;) {
      let chunk: Uint8Array;
      try {
        const { done, value } = await reader.read();
        if (done) break;
        if (!(value instanceof Uint8Array)) {
          throw new TypeError("a request body chunk is not a Uint8Array");
        }
        chunk = value;
      } catch (e) {
        // the caller's body failed: the backend must not take half a body for a whole one
        x.bodyError = e;
        reader.cancel(e).catch(() => {});
        destroy(c);
        return;
      }
      if (chunk.byteLength) {
        frame = framed(chunk, frame);
        handOver(chunk);
        await writeAll(c.tcp, frame.bytes);
      }
    }
    await writeAll(c.tcp, LAST_CHUNK);
    x.sent = true;
  } catch {
    // the connection failed or was closed; reading the answer reports what happened
    reader.cancel().catch(() => {});
  }
}

/** A chunk of a chunked body, in a buffer kept for the next one. */
interface Frame {
  buffer: Uint8Array;
  /** The frame itself: size line, chunk, CRLF. */
  bytes: Uint8Array;
}

/** `chunk` framed for chunked encoding, in `previous`'s buffer when it is large enough. */
function framed(chunk: Uint8Array, previous: Frame): Frame {
  const size = encoder.encode(`${chunk.byteLength.toString(16)}\r\n`);
  const length = size.byteLength + chunk.byteLength + 2;
  const buffer = previous.buffer.byteLength >= length ? previous.buffer : new Uint8Array(length);
  buffer.set(size);
  buffer.set(chunk, size.byteLength);
  buffer[length - 2] = 13;
  buffer[length - 1] = 10;
  return { buffer, bytes: buffer.subarray(0, length) };
}

/** Frees a sent chunk's memory now, when the chunk is all of its buffer (never a shared one). */
function handOver(chunk: Uint8Array): void {
  const buffer = chunk.buffer;
  if (
    buffer instanceof ArrayBuffer && !buffer.detached && chunk.byteOffset === 0 &&
    chunk.byteLength === buffer.byteLength
  ) {
    buffer.transfer(0);
  }
}
