/**
 * Public answers rendered once and kept: the body, its ETag and its headers, so a repeat visit
 * costs a cache lookup and a conditional one a comparison of ETags, never a render. The body is
 * kept as a string: Deno's server sends a string body for less than the same bytes as an array.
 *
 * @module
 */
import { responseWith } from "../http/response.ts";
import { etagMatches } from "../lore/preview.ts";

/** A rendered 200 answer: what every visitor of one cache key gets. */
export interface RenderedAnswer {
  body: string;
  /** The body's length in UTF-8 bytes. */
  bytes: number;
  etag: string;
  /** Every header of the 200 answer, `etag` and `content-type` included. */
  headers: readonly (readonly [string, string])[];
  /** The same without `content-type`: the 304's (kept, not filtered on every revalidation). */
  notModified: readonly (readonly [string, string])[];
}

const isLowSurrogate = (c: number) => c >= 0xdc00 && c < 0xe000;

/** UTF-8 length without encoding: ASCII (most of a page) is one byte a character. */
function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c < 0xdc00 && isLowSurrogate(text.charCodeAt(i + 1))) {
      i++; // a surrogate pair: four bytes for its two characters
      bytes += 2;
    } else bytes += 2; // the rest of the BMP, and a lone surrogate (sent as U+FFFD)
  }
  return bytes;
}

/**
 * Renders an answer once: the body measured, the ETag added to the headers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const a = renderedAnswer("{}", 'W/"v1"', [["content-type", "application/json"]]);
 * assert.equal(a.bytes, 2);
 * assert.deepEqual(a.headers.at(-1), ["etag", 'W/"v1"']);
 * ```
 */
export function renderedAnswer(
  body: string,
  etag: string,
  headers: Iterable<readonly [string, string]>,
): RenderedAnswer {
  const all: (readonly [string, string])[] = [...headers, ["etag", etag]];
  const notModified = all.filter(([name]) => name.toLowerCase() !== "content-type");
  return { body, bytes: utf8Length(body), etag, headers: all, notModified };
}

/**
 * What an answer weighs in memory, roughly: its body plus its headers (for a cache's byte bound).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const a = renderedAnswer("hello", 'W/"v1"', []);
 * assert.ok(answerBytes(a) >= 5 + 'W/"v1"'.length);
 * ```
 */
export function answerBytes(answer: RenderedAnswer): number {
  let size = answer.bytes + 64;
  for (const [name, value] of answer.headers) size += 2 * (name.length + value.length + 16);
  return size;
}

/**
 * The HTTP response for one request: 304 with the stored headers (no `content-type`) when
 * `If-None-Match` matches the stored ETag, else the stored body.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const a = renderedAnswer("<p>Harbor</p>", 'W/"v1"', [["content-type", "text/html"]]);
 * const revisit = new Request("http://x/", { headers: { "if-none-match": 'W/"v1"' } });
 * assert.equal(answerFor(revisit, a).status, 304);
 * assert.equal(await answerFor(new Request("http://x/"), a).text(), "<p>Harbor</p>");
 * ```
 */
export function answerFor(req: Request, answer: RenderedAnswer): Response {
  if (etagMatches(req.headers.get("if-none-match"), answer.etag)) {
    return responseWith(null, 304, answer.notModified as [string, string][]);
  }
  return responseWith(answer.body, 200, answer.headers as [string, string][]);
}
