/**
 * Core's image references in text content as the portal's editor and pages load them. Core
 * stores them relative (`api/images/<id>/<file>`, `api/attachments/<id>/image/<file>`), meant to
 * resolve against Core's own root; under a page such as `/lore/<id>` a browser would resolve them
 * to `/lore/api/images/…`, which does not exist. Rooted (`/api/images/…`), they reach our image
 * routes from every page, and Core makes them relative again when the content is saved back, so
 * the stored form never changes.
 *
 * @module
 */

// ` src="api/images/` (also `src = 'api/attachments/`): a bounded pattern, so a stream needs to
// hold back only a short tail. The whitespace runs are bounded to keep that tail short.
const RELATIVE_IMAGE_SRC = /(\ssrc\s{0,16}=\s{0,16}["'])(api\/(?:images|attachments)\/)/gi;
// the longest text RELATIVE_IMAGE_SRC can match
const LONGEST_MATCH = " src".length + 16 + 1 + 16 + 1 + "api/attachments/".length;

/**
 * Rewrites the complete matches in `text`; unless `final`, also holds back the tail that could
 * still grow into a match once the next chunk arrives.
 */
function rootMatches(text: string, final: boolean): { out: string; rest: string } {
  let out = "";
  let done = 0;
  for (const m of text.matchAll(RELATIVE_IMAGE_SRC)) {
    out += `${text.slice(done, m.index)}${m[1]}/${m[2]}`;
    done = m.index + m[0].length;
  }
  const cut = final ? text.length : Math.max(done, text.length - (LONGEST_MATCH - 1));
  return { out: out + text.slice(done, cut), rest: text.slice(cut) };
}

/**
 * Core's relative image sources in HTML made root-relative: `src="api/images/…"` becomes
 * `src="/api/images/…"`, `src="api/attachments/…"` `src="/api/attachments/…"`. Nothing else
 * changes (absolute URLs, links, text that merely mentions the path).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   rootImageLinks('<p><img src="api/images/AbC123/map.png" alt="api/images/"></p>'),
 *   '<p><img src="/api/images/AbC123/map.png" alt="api/images/"></p>',
 * );
 * ```
 */
export function rootImageLinks(html: string): string {
  return rootMatches(html, true).out;
}

/**
 * {@linkcode rootImageLinks} over a UTF-8 byte stream, without buffering it: each chunk is passed
 * on as it arrives, less a tail of at most a few dozen characters that could be the start of a
 * reference split across chunks.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const parts = ['<img src="api/im', 'ages/AbC123/m.png">'];
 * const bytes = ReadableStream.from(parts).pipeThrough(new TextEncoderStream());
 * const html = await new Response(bytes.pipeThrough(rootImageLinksStream())).text();
 * assert.equal(html, '<img src="/api/images/AbC123/m.png">');
 * ```
 */
export function rootImageLinksStream(): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder("utf-8");
  const encoder = new TextEncoder();
  let rest = "";
  return new TransformStream({
    transform(chunk, controller) {
      const step = rootMatches(rest + decoder.decode(chunk, { stream: true }), false);
      rest = step.rest;
      if (step.out) controller.enqueue(encoder.encode(step.out));
    },
    flush(controller) {
      const step = rootMatches(rest + decoder.decode(), true);
      if (step.out) controller.enqueue(encoder.encode(step.out));
    },
  });
}
