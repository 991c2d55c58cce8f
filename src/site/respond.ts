/**
 * Successful public pages as HTTP responses: the site's headers, an ETag of the page itself
 * (see `rendered_answer.ts`), and 304 for a matching `If-None-Match`. A page is rendered once
 * into a {@linkcode RenderedAnswer} the public share can keep.
 *
 * @module
 */
import { answerFor, type RenderedAnswer, renderedAnswer } from "../share/rendered_answer.ts";
import { siteHeaders } from "./headers.ts";
import { layout, type PageParts } from "./layout.ts";

/** HTML pages' content type. */
export const HTML_TYPE = "text/html; charset=utf-8";

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
 * const first = pageResponse(new Request("http://x/public/lore/ashford"), page);
 * assert.equal(first.status, 200);
 * const etag = first.headers.get("etag")!;
 * const again = new Request("http://x/public/lore/ashford", {
 *   headers: { "if-none-match": etag },
 * });
 * assert.equal(pageResponse(again, page).status, 304);
 * ```
 */
export function pageResponse(req: Request, page: PageParts): Response {
  return answerFor(req, renderedPage(page, req.headers.has("authorization")));
}

/**
 * A page rendered once: the document, its ETag and the site's headers (`private` when the
 * request carried credentials). The ETag is the document's own: the same page read with a
 * password has the same one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { html } from "./html.ts";
 * const page = { title: "Ashford", main: html`<h1>Ashford</h1>`, noIndex: false };
 * const answer = renderedPage(page, false);
 * assert.equal(renderedPage(page, true).etag, answer.etag);
 * const other = { ...page, main: html`<h1>Ashford Quay</h1>` };
 * assert.notEqual(renderedPage(other, false).etag, answer.etag);
 * ```
 */
export function renderedPage(page: PageParts, authorized: boolean): RenderedAnswer {
  const document = layout(page).html;
  const headers = siteHeaders({
    contentType: HTML_TYPE,
    cacheControl: authorized ? "private, no-cache" : "no-cache",
    noIndex: page.noIndex,
    varyAuthorization: true,
  });
  return renderedAnswer(document, headers);
}
