/**
 * The document every public page shares: language, viewport, title, description, the preview
 * metadata (Open Graph, Twitter card, canonical URL), the one stylesheet, the robots opt-out, a
 * skip link, a header with the world's name, a Contents link (on a phone, the navigation waits
 * behind it) and the search form, the page's `<main>`, the world's navigation and a footer.
 * The one script, theme_script.ts, loads in `<head>` and adds its button to the header.
 *
 * @module
 */
import { html, type SafeHtml, trusted } from "./html.ts";
import { NAV_ID, siteNavigation } from "./navigation.ts";
import type { SiteFrame } from "./site_model.ts";
import { type PreviewImage, twitterCard } from "./preview_image.ts";
import { SITE_CSS_VERSION } from "./stylesheet.ts";
import { THEME_JS_VERSION } from "./theme_script.ts";
import { lockControl } from "./lock_control.ts";

/** The name in the header and titles of pages that belong to no world (error pages). */
export const SITE_NAME = "Shared lore";

/** Longest search the form sends (browsers enforce `maxlength`). */
export const SEARCH_MAX_LENGTH = 200;

/** What a page says about itself to link previews and search engines. */
export interface PageMeta {
  /** The page's own site-relative URL (the canonical URL is the origin plus this). */
  path: string;
  /** Falls back to the world's description. */
  description?: string;
  /** Falls back to the world's card. */
  image?: PreviewImage | null;
  /** `article` for a note, `website` otherwise. */
  type?: "website" | "article";
}

/** A page's own part of the document. */
export interface PageParts {
  /** The page's title, without the world's name (`null`: the world's home page). */
  title: string | null;
  main: SafeHtml;
  /** Adds `<meta name="robots" content="noindex">`. */
  noIndex: boolean;
  /** The current search, shown in the search box. */
  query?: string;
  /** The world the page belongs to; error pages have none. */
  site?: SiteFrame;
  /** The world's name where there is no frame (error pages), when it is known. */
  world?: string;
  /** The noteId the page shows (marked in the navigation). */
  current?: string;
  meta?: PageMeta;
}

function metadata(page: PageParts, site: SiteFrame, fullTitle: string): SafeHtml {
  const meta = page.meta;
  if (!meta) return html``;
  const url = site.origin + meta.path;
  const description = meta.description || site.description;
  const image = meta.image ?? site.card;
  return html`${description && html`<meta name="description" content="${description}">\n`}
<link rel="canonical" href="${url}">
<meta property="og:site_name" content="${site.title}">
<meta property="og:type" content="${meta.type ?? "website"}">
<meta property="og:title" content="${page.title ?? site.title}">
<meta property="og:url" content="${url}">
${
    description && html`<meta property="og:description" content="${description}">\n`
  }<meta property="og:image" content="${site.origin + image.path}">
<meta property="og:image:alt" content="${image.alt}">
${image.width && html`<meta property="og:image:width" content="${image.width}">\n`}${
    image.height && html`<meta property="og:image:height" content="${image.height}">\n`
  }<meta name="twitter:card" content="${twitterCard(image)}">
<meta name="twitter:title" content="${fullTitle}">
${
    description && html`<meta name="twitter:description" content="${description}">\n`
  }<meta name="twitter:image" content="${site.origin + image.path}">
<meta name="twitter:image:alt" content="${image.alt}">
${
    !page.noIndex &&
    html`
      <link rel="alternate" type="application/atom+xml" href="/public/feed.atom"
        title="${site.title}: recent changes">
    `
  }`;
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
  const site = page.site;
  const world = site?.title ?? page.world ?? SITE_NAME;
  const fullTitle = page.title === null ? world : `${page.title} · ${world}`;
  const document = html`
    <!doctype html>
    <html lang="en">
      <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    ${page.noIndex && html`<meta name="robots" content="noindex">\n`}<title>${fullTitle}</title>
    ${site &&
      metadata(
        page,
        site,
        fullTitle,
      )}<link rel="stylesheet" href="/public/site.css?v=${SITE_CSS_VERSION}">
    <link rel="icon" href="/favicon.svg" type="image/svg+xml">
    <script src="/public/theme.js?v=${THEME_JS_VERSION}"></script>
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        <header class="site-header">
          <a class="brand" href="/">${world}</a>
          ${site && html`<a class="menu-link" href="#${NAV_ID}">Contents</a>`}
          <form class="search" role="search" action="/" method="get">
            <label class="visually-hidden" for="site-search">Search the lore</label>
            <input id="site-search" type="search" name="q" value="${page.query ??
              ""}" maxlength="${SEARCH_MAX_LENGTH}"
              required placeholder="Search the lore">
            <button type="submit">Search</button>
          </form>
        </header>
        <div class="shell${site ? "" : " single"}">
        <main id="main">
    ${page.main}
        </main>
        ${site && siteNavigation(site, page.current)}
        </div>
        <footer class="site-footer">
          <p>${site
            ? html`${site.title} — read-only, published lore.`
            : "Read-only, published lore."}</p>
          ${site?.unlocked && lockControl()}
        </footer>
      </body>
    </html>
  `;
  // the template is indented like code; the document starts at its doctype
  return trusted(`${document.html.trim()}\n`);
}
