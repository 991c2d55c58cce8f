/**
 * Public answers rendered once and kept: the body, its ETag and its headers, so a repeat visit
 * costs a cache lookup and a conditional one a comparison of ETags, never a render. The ETag is a
 * digest of what the visitor receives, so it changes only when the answer's bytes do: nothing a
 * visitor cannot read (a hidden draft's edits, the share snapshot's version) can move it. The
 * body is kept as a string: Deno's server sends a string body for less than the same bytes as an
 * array.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { markPolicyHeaders, responseWith } from "../http/response.ts";
import { etagMatches } from "../lore/preview.ts";

/** A rendered 200 answer: what every visitor of one cache key gets. */
export interface RenderedAnswer {
  body: string;
  /** The body's length in UTF-8 bytes. */
  bytes: number;
  /** {@linkcode answerEtag} of the body and headers. */
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

/** Headers that say who may keep an answer, not what it is: outside its ETag. */
const CACHING_HEADERS = new Set(["cache-control", "vary"]);

/**
 * The ETag of an answer: a weak validator over its body and the headers that describe it
 * (content type, `X-Robots-Tag`, the site's policies), in any order. `Cache-Control` and `Vary`
 * stay out: a visitor with credentials who gets the same bytes as everyone else gets the same
 * ETag. Answers made from the same public bytes share it whatever snapshot they came from.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const json = [["content-type", "application/json"]] as const;
 * const etag = answerEtag("{}", json);
 * assert.match(etag, /^W\/"[\w-]{22}"$/);
 * assert.equal(answerEtag("{}", [...json, ["cache-control", "private, no-cache"]]), etag);
 * assert.notEqual(answerEtag('{"a":1}', json), etag);
 * assert.notEqual(answerEtag("{}", [...json, ["x-robots-tag", "noindex"]]), etag);
 * ```
 */
export function answerEtag(body: string, headers: Iterable<readonly [string, string]>): string {
  const described = [...headers]
    .filter(([name]) => !CACHING_HEADERS.has(name.toLowerCase()))
    .map(([name, value]) => `${name.toLowerCase()}: ${value}`)
    .sort();
  const h = createHash("sha256");
  for (const line of described) h.update(line).update("\n");
  h.update("\n").update(body);
  return `W/"${h.digest("base64url").slice(0, 22)}"`;
}

/**
 * Renders an answer once: the body measured, its ETag ({@linkcode answerEtag}) added to the
 * headers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const headers = [["content-type", "application/json"]] as const;
 * const a = renderedAnswer("{}", headers);
 * assert.equal(a.bytes, 2);
 * assert.deepEqual(a.headers.at(-1), ["etag", answerEtag("{}", headers)]);
 * ```
 */
export function renderedAnswer(
  body: string,
  headers: Iterable<readonly [string, string]>,
): RenderedAnswer {
  const given = [...headers];
  const etag = answerEtag(body, given);
  const all: (readonly [string, string])[] = [...given, ["etag", etag]];
  const notModified = all.filter(([name]) => name.toLowerCase() !== "content-type");
  return { body, bytes: utf8Length(body), etag, headers: all, notModified };
}

/**
 * What an answer weighs in memory, roughly: its body plus its headers (for a cache's byte bound).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const a = renderedAnswer("hello", []);
 * assert.ok(answerBytes(a) >= 5 + a.etag.length);
 * ```
 */
export function answerBytes(answer: RenderedAnswer): number {
  let size = answer.bytes + 64;
  for (const [name, value] of answer.headers) size += 2 * (name.length + value.length + 16);
  return size;
}

/**
 * Each answer's 200 and 304 responses, built on first use and never handed out: a clone copies
 * their headers as they are, where building one validates every header again (several times
 * the cost, on every public answer).
 */
const templates = new WeakMap<
  RenderedAnswer,
  { ok?: Response; notModified?: Response; policies?: boolean }
>();

/**
 * The HTTP response for one request: 304 with the stored headers (no `content-type`) when
 * `If-None-Match` matches the stored ETag, else the stored body. Each call gets its own
 * response, whose headers it may change.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const a = renderedAnswer("<p>Harbor</p>", [["content-type", "text/html"]]);
 * const revisit = new Request("http://x/", { headers: { "if-none-match": a.etag } });
 * assert.equal(answerFor(revisit, a).status, 304);
 * const first = answerFor(new Request("http://x/"), a);
 * first.headers.set("x-request-id", "r1");
 * assert.equal(await first.text(), "<p>Harbor</p>");
 * const second = answerFor(new Request("http://x/"), a);
 * assert.equal(second.headers.get("x-request-id"), null);
 * assert.equal(await second.text(), "<p>Harbor</p>");
 * ```
 */
export function answerFor(req: Request, answer: RenderedAnswer): Response {
  let kept = templates.get(answer);
  if (kept === undefined) {
    const names = new Set(answer.notModified.map(([name]) => name.toLowerCase()));
    const policies = names.has("x-content-type-options") && names.has("referrer-policy");
    templates.set(answer, kept = { policies });
  }
  const template = etagMatches(req.headers.get("if-none-match"), answer.etag)
    ? kept.notModified ??= responseWith(null, 304, answer.notModified as [string, string][])
    : kept.ok ??= responseWith(answer.body, 200, answer.headers as [string, string][]);
  return kept.policies ? markPolicyHeaders(template.clone()) : template.clone();
}
