/**
 * The document every public page shares: language, viewport, title, the one stylesheet, the
 * robots opt-out, a skip link, a header with the search form, the page's `<main>`, a footer.
 *
 * @module
 */
import { html, type SafeHtml, trusted } from "./html.ts";
import { SITE_CSS_VERSION } from "./stylesheet.ts";

/** The site's name in the header and in every title. */
export const SITE_NAME = "Shared lore";

/** Longest search the form sends (browsers enforce `maxlength`). */
export const SEARCH_MAX_LENGTH = 200;

/** A page's own part of the document. */
export interface PageParts {
  /** The page's title, without the site name. */
  title: string;
  main: SafeHtml;
  /** Adds `<meta name="robots" content="noindex">`. */
  noIndex: boolean;
  /** The current search, shown in the search box. */
  query?: string;
}

/**
 * Wraps a page's `<main>` into the full HTML document.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { html } from "./html.ts";
 * const page = layout({ title: "Not found", main: html`<h1>Not found</h1>`, noIndex: true }).html;
 * assert.match(page, /<title>Not found · Shared lore<\/title>/);
 * assert.match(page, /<meta name="robots" content="noindex">/);
 * ```
 */
export function layout(page: PageParts): SafeHtml {
  const document = html`
    <!doctype html>
    <html lang="en">
      <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    ${page.noIndex && html`<meta name="robots" content="noindex">\n`}<title>${page
      .title} · ${SITE_NAME}</title>
    <link rel="stylesheet" href="/public/site.css?v=${SITE_CSS_VERSION}">
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        <header class="site-header">
          <a class="brand" href="/">${SITE_NAME}</a>
          <form class="search" role="search" action="/" method="get">
            <label class="visually-hidden" for="site-search">Search the lore</label>
            <input id="site-search" type="search" name="q" value="${page.query ??
              ""}" maxlength="${SEARCH_MAX_LENGTH}"
              required placeholder="Search the lore">
            <button type="submit">Search</button>
          </form>
        </header>
        <main id="main">
    ${page.main}
        </main>
        <footer class="site-footer">
          <p>Read-only, published lore.</p>
        </footer>
      </body>
    </html>
  `;
  // the template is indented like code; the document starts at its doctype
  return trusted(`${document.html.trim()}\n`);
}
