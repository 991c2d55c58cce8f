/**
 * Public answers rendered once and kept: the encoded body, its ETag and its headers, so a repeat
 * visit costs a cache lookup and a conditional one a comparison of ETags, never a render.
 *
 * @module
 */
import { responseWith } from "../http/response.ts";
import { etagMatches } from "../lore/preview.ts";

/** A rendered 200 answer: what every visitor of one cache key gets. */
export interface RenderedAnswer {
  body: Uint8Array<ArrayBuffer>;
  etag: string;
  /** Every header of the 200 answer, `etag` and `content-type` included. */
  headers: readonly (readonly [string, string])[];
}

const encoder = new TextEncoder();

/**
 * Renders an answer once: the body encoded, the ETag added to the headers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const a = renderedAnswer("{}", 'W/"v1"', [["content-type", "application/json"]]);
 * assert.equal(a.body.byteLength, 2);
 * assert.deepEqual(a.headers.at(-1), ["etag", 'W/"v1"']);
 * ```
 */
export function renderedAnswer(
  body: string,
  etag: string,
  headers: Iterable<readonly [string, string]>,
): RenderedAnswer {
  return { body: encoder.encode(body), etag, headers: [...headers, ["etag", etag]] };
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
  let size = answer.body.byteLength + 64;
  for (const [name, value] of answer.headers) size += name.length + value.length + 16;
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
    const headers = answer.headers.filter(([name]) => name !== "content-type");
    return responseWith(null, 304, headers as [string, string][]);
  }
  return responseWith(answer.body, 200, answer.headers as [string, string][]);
}
