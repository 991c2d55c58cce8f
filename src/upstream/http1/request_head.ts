/**
 * A request's head as fetch would write it: the method and fields validated as fetch validates
 * them (so a caller's value cannot smuggle a second field or request), the fields the client
 * frames itself left out, and fetch's defaults added.
 *
 * @module
 */
import { TOKEN } from "./syntax.ts";

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
const USER_AGENT = `Deno/${Deno.version.deno}`;

/** How a request body is framed: its length (and default type), `chunked` (a stream), or none. */
export type RequestFraming = { length: number; contentType?: string } | "chunked" | null;

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
  framing: RequestFraming,
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
