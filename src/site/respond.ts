/**
 * Successful public pages as HTTP responses: the site's headers, an ETag derived from the public
 * API's ETag and the page itself, and 304 for a matching `If-None-Match`. A page is rendered
 * once into a {@linkcode RenderedAnswer} the public share can keep.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { answerFor, type RenderedAnswer, renderedAnswer } from "../share/rendered_answer.ts";
import { siteHeaders } from "./headers.ts";
import { layout, type PageParts } from "./layout.ts";

/** HTML pages' content type. */
export const HTML_TYPE = "text/html; charset=utf-8";

/**
 * The page's ETag: a digest of the public API's ETag and the rendered document, so both a change
 * of the data and a change of the site's templates give a new one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const etag = pageEtag('"snap-1"', "<!doctype html><title>Ashford</title>");
 * assert.match(etag, /^W\/"[\w-]{27}"$/);
 * assert.notEqual(pageEtag('"snap-2"', "<!doctype html><title>Ashford</title>"), etag);
 * ```
 */
export function pageEtag(apiEtag: string, document: string): string {
  const digest = createHash("sha256").update(apiEtag).update("\n").update(document)
    .digest("base64url");
  return `W/"${digest.slice(0, 27)}"`;
}

/**
 * Answers a rendered page. Pages are revalidated on every visit (`no-cache` + ETag), so an
 * unpublished note disappears at once; pages read with a password are `private` and vary by
 * `Authorization`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { html } from "./html.ts";
 * const page = { title: "Ashford", main: html`<h1>Ashford</h1>`, noIndex: false };
 * const first = pageResponse(new Request("http://x/public/lore/ashford"), page, '"snap-1"');
 * assert.equal(first.status, 200);
 * const etag = first.headers.get("etag")!;
 * const again = new Request("http://x/public/lore/ashford", {
 *   headers: { "if-none-match": etag },
 * });
 * assert.equal(pageResponse(again, page, '"snap-1"').status, 304);
 * ```
 */
export function pageResponse(req: Request, page: PageParts, apiEtag: string): Response {
  return answerFor(req, renderedPage(page, apiEtag, req.headers.has("authorization")));
}

/**
 * A page rendered once: the document, its ETag and the site's headers (`private` when the
 * request carried credentials).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { html } from "./html.ts";
 * const page = { title: "Ashford", main: html`<h1>Ashford</h1>`, noIndex: false };
 * const answer = renderedPage(page, '"snap-1"', false);
 * assert.equal(answer.etag, pageEtag('"snap-1"', answer.body));
 * ```
 */
export function renderedPage(
  page: PageParts,
  apiEtag: string,
  authorized: boolean,
): RenderedAnswer {
  const document = layout(page).html;
  const headers = siteHeaders({
    contentType: HTML_TYPE,
    cacheControl: authorized ? "private, no-cache" : "no-cache",
    noIndex: page.noIndex,
    varyAuthorization: true,
  });
  return renderedAnswer(document, pageEtag(apiEtag, document), headers);
}
