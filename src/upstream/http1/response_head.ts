/**
 * A response's head read strictly: where it ends, its status line and fields, and what they say
 * about the body and the connection. Anything a lenient parser would guess at (conflicting
 * lengths, a length next to chunked, folded or malformed fields) is refused with fetch's
 * `TypeError`: a backend that answers that way is broken, and guessing is how requests get
 * smuggled.
 *
 * @module
 */
import { invalidResponse } from "./errors.ts";
import { FIELD_TEXT, TOKEN } from "./syntax.ts";

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

const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9][0-9]{2})(?: (.*))?$/;
const FIELD_WHITESPACE = /^[\t ]+|[\t ]+$/g;

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
  const contentLength = lengthOf(lengths);
  const chunked = isChunked(codings, contentLength, http10);
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

/** The one `Content-Length` all the values agree on, or null without any. */
function lengthOf(lengths: readonly string[]): number | null {
  if (!lengths.length) return null;
  const values = new Set(lengths.map((v) => v.replace(FIELD_WHITESPACE, "")));
  const [only] = values;
  if (values.size !== 1 || !/^[0-9]{1,15}$/.test(only)) {
    throw invalidResponse("malformed or conflicting Content-Length");
  }
  return Number(only);
}

/** Whether the codings say chunked: the only one accepted, alone, and never beside a length. */
function isChunked(
  codings: readonly string[],
  contentLength: number | null,
  http10: boolean,
): boolean {
  if (!codings.length) return false;
  if (contentLength !== null) throw invalidResponse("both Content-Length and Transfer-Encoding");
  const list = codings.map((c) => c.replace(FIELD_WHITESPACE, "").toLowerCase());
  if (http10 || list.length !== 1 || list[0] !== "chunked") {
    throw invalidResponse("unsupported Transfer-Encoding");
  }
  return true;
}
