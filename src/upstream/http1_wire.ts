/**
 * HTTP/1.1 wire format for the backend client (http1_fetch.ts): request heads written, response
 * heads and bodies (by length, chunked, or to the close) read strictly. Anything a lenient parser
 * would guess at (conflicting lengths, a length next to chunked, bad chunk sizes, folded or
 * malformed fields) is refused with a `TypeError` like fetch's network errors: a backend that
 * answers that way is broken, and guessing is how requests get smuggled.
 *
 * @module
 */
import { concatBytes } from "../util/bytes.ts";

/** Unread bytes of a connection: `buf[start, end)`. Readers advance `start`. */
export interface ByteWindow {
  buf: Uint8Array;
  start: number;
  end: number;
}

/** A parsed response head. */
export interface ResponseHead {
  status: number;
  statusText: string;
  /** Fields in the order received, repeated names (`Set-Cookie`) kept apart. */
  headers: [string, string][];
  /** The `Content-Length`, or null without one. */
  contentLength: number | null;
  /** `Transfer-Encoding: chunked`. */
  chunked: boolean;
  /** The connection may carry another request once this response is read. */
  keepAlive: boolean;
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

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Field values and reason phrases: visible characters, obs-text, space and tab. */
const FIELD_TEXT = /^[\t\x20-\x7e\x80-\xff]*$/;
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9][0-9]{2})(?: (.*))?$/;
const CHUNK_SIZE = /^([0-9A-Fa-f]{1,12})(?:[\t ]*;.*)?$/;
/** Longest chunk-size line (extensions included) and trailer line accepted. */
const MAX_CHUNK_LINE = 4096;
const METHODS_NORMALIZED = new Set(["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"]);
const METHODS_FORBIDDEN = new Set(["CONNECT", "TRACE", "TRACK"]);
/** Request fields the client writes itself: a caller's would contradict the framing. */
const MANAGED_FIELDS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
]);
const HTTP_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;
const FIELD_WHITESPACE = /^[\t ]+|[\t ]+$/g;
const USER_AGENT = `Deno/${Deno.version.deno}`;

/**
 * The error of an answer that is no valid HTTP: a `TypeError`, as fetch reports it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(invalidResponse("bad chunk size").message, "invalid HTTP response: bad chunk size");
 * ```
 */
export function invalidResponse(reason: string): TypeError {
  return new TypeError(`invalid HTTP response: ${reason}`);
}

/**
 * A request method as fetch sends it: the six common ones upper-cased, the forbidden ones and
 * non-tokens refused.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(normalizeMethod("post"), "POST");
 * assert.equal(normalizeMethod("patch"), "patch");
 * assert.throws(() => normalizeMethod("GET /x"), TypeError);
 * ```
 */
export function normalizeMethod(method: string): string {
  if (!TOKEN.test(method)) throw new TypeError("invalid request method");
  const upper = method.toUpperCase();
  if (METHODS_FORBIDDEN.has(upper)) throw new TypeError(`request method ${upper} is forbidden`);
  return METHODS_NORMALIZED.has(upper) ? upper : method;
}

/**
 * The fields of a `HeadersInit`, validated as fetch validates them: names are tokens, values
 * lose surrounding whitespace and may hold no CR, LF or NUL nor characters above U+00FF.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(headerFields({ authorization: " token " }), [["authorization", "token"]]);
 * assert.throws(() => headerFields({ "x-a": "1\r\nx-b: 2" }), TypeError);
 * ```
 */
export function headerFields(init: HeadersInit | undefined): [string, string][] {
  if (!init) return [];
  const raw: Iterable<[string, string]> | [string, string][] = init instanceof Headers
    ? init
    : Array.isArray(init)
    ? init.map((pair) => {
      if (pair.length !== 2) throw new TypeError("a header must be a [name, value] pair");
      return [pair[0], pair[1]] as [string, string];
    })
    : Object.entries(init);
  const out: [string, string][] = [];
  for (const [name, rawValue] of raw) {
    const value = String(rawValue).replace(HTTP_WHITESPACE, "");
    if (!TOKEN.test(name)) throw new TypeError("invalid header name");
    if (/[\0\r\n]|[^\0-\xff]/.test(value)) throw new TypeError(`invalid value of header ${name}`);
    out.push([name, value]);
  }
  return out;
}

/**
 * The head of a request: request line, `Host`, the caller's fields (those the client manages
 * itself left out), fetch's defaults where the caller set none (`Accept`, `Accept-Language`,
 * `User-Agent`, and `Content-Type` of the body; no `Accept-Encoding`, since answers are not
 * decompressed) and the body's framing: a length, `chunked` (a stream), or none.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const head = requestHead("GET", "/etapi/app-info", "core:8080", [["authorization", "t"]], null);
 * const lines = head.split("\r\n");
 * assert.deepEqual(lines.slice(0, 3), [
 *   "GET /etapi/app-info HTTP/1.1",
 *   "host: core:8080",
 *   "authorization: t",
 * ]);
 * assert.equal(lines.includes(`user-agent: Deno/${Deno.version.deno}`), true);
 * assert.equal(head.endsWith("\r\n\r\n"), true);
 * ```
 */
export function requestHead(
  method: string,
  target: string,
  host: string,
  fields: readonly [string, string][],
  framing: { length: number; contentType?: string } | "chunked" | null,
): string {
  let head = `${method} ${target} HTTP/1.1\r\nhost: ${host}\r\n`;
  let accept = false, language = false, agent = false, type = false;
  for (const [name, value] of fields) {
    const lower = name.toLowerCase();
    if (MANAGED_FIELDS.has(lower)) continue;
    if (lower === "accept") accept = true;
    else if (lower === "accept-language") language = true;
    else if (lower === "user-agent") agent = true;
    else if (lower === "content-type") type = true;
    head += `${name}: ${value}\r\n`;
  }
  if (!accept) head += "accept: */*\r\n";
  if (!language) head += "accept-language: *\r\n";
  if (!agent) head += `user-agent: ${USER_AGENT}\r\n`;
  if (framing === "chunked") {
    head += "transfer-encoding: chunked\r\n";
  } else if (framing) {
    if (framing.contentType && !type) head += `content-type: ${framing.contentType}\r\n`;
    head += `content-length: ${framing.length}\r\n`;
  }
  return `${head}\r\n`;
}

/**
 * Bytes as Latin-1 text (one character per byte, as header fields are carried).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(latin1(new Uint8Array([0x48, 0x49, 0xe9]), 0, 3), "HI\u00e9");
 * ```
 */
export function latin1(buf: Uint8Array, from: number, to: number): string {
  let out = "";
  for (let i = from; i < to; i += 4096) {
    const part = buf.subarray(i, Math.min(to, i + 4096)) as unknown as number[];
    out += String.fromCharCode.apply(null, part);
  }
  return out;
}

/**
 * Text as Latin-1 bytes (the inverse of {@linkcode latin1}; every character is ≤ U+00FF).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(latin1Bytes("H\u00e9"), new Uint8Array([0x48, 0xe9]));
 * ```
 */
export function latin1Bytes(text: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

/**
 * Where a head ends in `buf[from, to)`: the index just past its blank line, or -1 when it has
 * not arrived yet.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const bytes = new TextEncoder().encode("HTTP/1.1 204 No Content\r\n\r\nrest");
 * assert.equal(headEnd(bytes, 0, bytes.length), bytes.length - 4);
 * assert.equal(headEnd(bytes, 0, 20), -1);
 * ```
 */
export function headEnd(buf: Uint8Array, from: number, to: number): number {
  const window = buf.subarray(0, to); // never look at stale bytes past `to`
  for (let i = window.indexOf(10, from + 3); i !== -1; i = window.indexOf(10, i + 1)) {
    if (buf[i - 1] === 13 && buf[i - 2] === 10 && buf[i - 3] === 13) return i + 1;
  }
  return -1;
}

/**
 * Parses a response head (without its blank line): status line, fields, and what they say
 * about the body and the connection. Conflicting or malformed framing is refused.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const head = parseResponseHead(
 *   "HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 5",
 * );
 * assert.equal(head.contentLength, 5);
 * assert.equal(head.headers.length, 3);
 * assert.throws(
 *   () => parseResponseHead("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6"),
 *   TypeError,
 * );
 * ```
 */
export function parseResponseHead(text: string): ResponseHead {
  const lines = text.split("\r\n");
  const status = STATUS_LINE.exec(lines[0]);
  if (!status || !FIELD_TEXT.test(status[3] ?? "")) throw invalidResponse("bad status line");
  const headers: [string, string][] = [];
  const lengths: string[] = [];
  const codings: string[] = [];
  const connection: string[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    const colon = line.indexOf(":");
    // a name is a token: no leading space (obsolete line folding), none before the colon
    const name = line.slice(0, colon);
    if (colon <= 0 || !TOKEN.test(name)) throw invalidResponse("malformed header line");
    const value = line.slice(colon + 1).replace(FIELD_WHITESPACE, "");
    if (!FIELD_TEXT.test(value)) throw invalidResponse(`bad value of header ${name}`);
    headers.push([name, value]);
    const lower = name.toLowerCase();
    if (lower === "content-length") lengths.push(...value.split(","));
    else if (lower === "transfer-encoding") codings.push(...value.split(","));
    else if (lower === "connection") connection.push(...value.split(","));
  }
  const http10 = status[1] === "0";
  let contentLength: number | null = null;
  if (lengths.length) {
    const values = new Set(lengths.map((v) => v.replace(FIELD_WHITESPACE, "")));
    const [only] = values;
    if (values.size !== 1 || !/^[0-9]{1,15}$/.test(only)) {
      throw invalidResponse("malformed or conflicting Content-Length");
    }
    contentLength = Number(only);
  }
  let chunked = false;
  if (codings.length) {
    if (contentLength !== null) throw invalidResponse("both Content-Length and Transfer-Encoding");
    const list = codings.map((c) => c.replace(FIELD_WHITESPACE, "").toLowerCase());
    if (http10 || list.length !== 1 || list[0] !== "chunked") {
      throw invalidResponse("unsupported Transfer-Encoding");
    }
    chunked = true;
  }
  const tokens = connection.map((c) => c.replace(FIELD_WHITESPACE, "").toLowerCase());
  return {
    status: Number(status[2]),
    statusText: status[3] ?? "",
    headers,
    contentLength,
    chunked,
    keepAlive: http10 ? tokens.includes("keep-alive") : !tokens.includes("close"),
  };
}

/**
 * How the body of `head` (answering `method`) is delimited: none for `HEAD`, 1xx, 204, 205 and
 * 304; else chunked, by length, or up to the close.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
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

/**
 * The error of a connection that ended before the response did.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(closedEarly().message, "connection closed before message completed");
 * ```
 */
export function closedEarly(): TypeError {
  return new TypeError("connection closed before message completed");
}

function chunkedDecoder(maxTrailerBytes: number): BodyDecoder {
  let state: "size" | "data" | "crlf" | "trailer" = "size";
  let remaining = 0;
  let trailerBytes = 0;
  /** The end of the line starting at `win.start` (its CR), or -1 when it has not arrived. */
  const lineEnd = (win: ByteWindow, limit: number) => {
    const lf = win.buf.subarray(0, win.end).indexOf(10, win.start);
    if (lf !== -1) {
      if (lf === win.start || win.buf[lf - 1] !== 13) throw invalidResponse("bare LF in body");
      if (lf - win.start > limit) throw invalidResponse("chunk line too long");
      return lf - 1;
    }
    if (win.end - win.start > limit) throw invalidResponse("chunk line too long");
    return -1;
  };
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
