/**
 * A response body taken off a connection's bytes as they arrive: delimited by its length, by
 * chunks, or by the close. Chunk sizes, extensions and trailers are read strictly and dropped;
 * a malformed chunk fails with fetch's `TypeError` rather than being guessed at, since a guess
 * is where one response's bytes become the next one's.
 *
 * @module
 */
import { concatBytes } from "../../util/bytes.ts";
import { closedEarly, invalidResponse } from "./errors.ts";
import type { ResponseHead } from "./response_head.ts";
import { latin1 } from "./syntax.ts";

/** Unread bytes of a connection: `buf[start, end)`. Readers advance `start`. */
export interface ByteWindow {
  buf: Uint8Array;
  start: number;
  end: number;
}

/** How a response body is delimited. */
export type BodyFraming = "none" | "length" | "chunked" | "close";

/** Reads one body out of a connection's bytes as they arrive. */
export interface BodyDecoder {
  /** Consumes what `win` holds of the body: a copy of the bytes, or null when none arrived. */
  take(win: ByteWindow): Uint8Array<ArrayBuffer> | null;
  /** The connection ended: the end of a body read to the close, an error for any other. */
  end(): void;
  /** Whether the whole body has been consumed. */
  readonly done: boolean;
}

const CHUNK_SIZE = /^([0-9A-Fa-f]{1,12})(?:[\t ]*;.*)?$/;
/** Longest chunk-size line (extensions included) and trailer line accepted. */
const MAX_CHUNK_LINE = 4096;

/**
 * How the body of `head` (answering `method`) is delimited: none for `HEAD`, 1xx, 204, 205 and
 * 304; else chunked, by length, or up to the close.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseResponseHead } from "./response_head.ts";
 * const head = parseResponseHead("HTTP/1.1 200 OK\r\nContent-Length: 2");
 * assert.equal(bodyFraming(head, "GET"), "length");
 * assert.equal(bodyFraming(head, "HEAD"), "none");
 * ```
 */
export function bodyFraming(head: ResponseHead, method: string): BodyFraming {
  const s = head.status;
  if (method === "HEAD" || s < 200 || s === 204 || s === 205 || s === 304) return "none";
  if (head.chunked) return "chunked";
  return head.contentLength === null ? "close" : "length";
}

/**
 * A decoder for one body. Chunked bodies have their chunk extensions and trailers read and
 * dropped (trailers up to `maxTrailerBytes`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const bytes = new TextEncoder().encode("3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nT: 1\r\n\r\n");
 * const win = { buf: bytes, start: 0, end: bytes.length };
 * const decoder = bodyDecoder("chunked", 0, 1024);
 * assert.equal(new TextDecoder().decode(decoder.take(win)!), "abcde");
 * assert.equal(decoder.done, true);
 * assert.equal(win.start, bytes.length);
 * ```
 */
export function bodyDecoder(
  framing: Exclude<BodyFraming, "none">,
  length: number,
  maxTrailerBytes: number,
): BodyDecoder {
  if (framing === "chunked") return chunkedDecoder(maxTrailerBytes);
  let remaining = framing === "length" ? length : Infinity;
  const decoder = {
    done: remaining === 0,
    take(win: ByteWindow): Uint8Array<ArrayBuffer> | null {
      const n = Math.min(remaining, win.end - win.start);
      if (n <= 0) return null;
      const bytes = win.buf.slice(win.start, win.start + n);
      win.start += n;
      remaining -= n;
      decoder.done = remaining === 0;
      return bytes;
    },
    end() {
      if (framing !== "close") throw closedEarly();
      decoder.done = true;
    },
  };
  return decoder;
}

/** The end of the line starting at `win.start` (its CR), or -1 when it has not arrived. */
function lineEnd(win: ByteWindow, limit: number): number {
  const lf = win.buf.subarray(0, win.end).indexOf(10, win.start);
  if (lf !== -1) {
    if (lf === win.start || win.buf[lf - 1] !== 13) throw invalidResponse("bare LF in body");
    if (lf - win.start > limit) throw invalidResponse("chunk line too long");
    return lf - 1;
  }
  if (win.end - win.start > limit) throw invalidResponse("chunk line too long");
  return -1;
}

function chunkedDecoder(maxTrailerBytes: number): BodyDecoder {
  let state: "size" | "data" | "crlf" | "trailer" = "size";
  let remaining = 0;
  let trailerBytes = 0;
  const decoder = {
    done: false,
    take(win: ByteWindow): Uint8Array<ArrayBuffer> | null {
      const parts: Uint8Array[] = [];
      let total = 0;
      while (win.start < win.end && !decoder.done) {
        if (state === "data") {
          const n = Math.min(remaining, win.end - win.start);
          parts.push(win.buf.subarray(win.start, win.start + n));
          total += n;
          win.start += n;
          remaining -= n;
          if (remaining === 0) state = "crlf";
        } else if (state === "crlf") {
          if (win.end - win.start < 2) break;
          if (win.buf[win.start] !== 13 || win.buf[win.start + 1] !== 10) {
            throw invalidResponse("chunk data longer than its size");
          }
          win.start += 2;
          state = "size";
        } else if (state === "size") {
          const eol = lineEnd(win, MAX_CHUNK_LINE);
          if (eol === -1) break;
          const size = CHUNK_SIZE.exec(latin1(win.buf, win.start, eol));
          if (!size) throw invalidResponse("bad chunk size");
          win.start = eol + 2;
          remaining = parseInt(size[1], 16);
          state = remaining === 0 ? "trailer" : "data";
        } else {
          const eol = lineEnd(win, Math.min(MAX_CHUNK_LINE, maxTrailerBytes));
          if (eol === -1) break;
          trailerBytes += eol + 2 - win.start;
          if (trailerBytes > maxTrailerBytes) throw invalidResponse("trailers too large");
          decoder.done = eol === win.start; // the blank line ends the message
          win.start = eol + 2;
        }
      }
      if (!total) return null;
      // the parts lie in the connection's buffer, which the next read overwrites
      return parts.length === 1
        ? parts[0].slice()
        : concatBytes(parts, total) as Uint8Array<ArrayBuffer>;
    },
    end() {
      throw closedEarly();
    },
  };
  return decoder;
}
