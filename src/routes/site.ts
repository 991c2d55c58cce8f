/**
 * The public site: server-rendered HTML built from the public share API (`src/share/
 * public_api.ts`), so it shows exactly what `/api/public/*` would, and nothing hidden. Pages run
 * no script and load nothing but our stylesheet and public images (see `src/site/headers.ts`).
 *
 * @module
 */
import { z } from "zod";
import { ApiError, invalidRequest } from "../http/errors.ts";
import { defineRoute, type PublicCtx, type Route } from "../api/router.ts";
import { errorPageResponse } from "../site/error_page.ts";
import { assetResponse, siteHeaders } from "../site/headers.ts";
import { requestOrigin } from "../http/host_check.ts";
import { SEARCH_MAX_LENGTH } from "../site/layout.ts";
import { renderedPage } from "../site/respond.ts";
import {
  type AnswerRenderer,
  keptPublicAnswer,
  type SitePage,
  type VisitorView,
} from "../share/public_api.ts";
import { answerFor, renderedAnswer } from "../share/rendered_answer.ts";
import {
  buildFeed,
  buildHome,
  buildMap,
  buildNote,
  buildSearch,
  buildSitemap,
  buildTimeline,
  buildType,
  type BuiltDocument,
  type BuiltPage,
} from "../site/world_pages.ts";
import { SITE_CSS, SITE_CSS_VERSION } from "../site/stylesheet.ts";
import { ClientAbortError } from "../upstream/fetch.ts";
import { shareFor } from "../pipeline/context.ts";

/** The answers both pages share; every error is an HTML page keeping its status. */
const PAGE_RESPONSES = {
  304: { description: "`If-None-Match` matched the page's ETag (no body)" },
  401: "The share is behind `#shareCredentials`: `WWW-Authenticate: Basic`, so the browser asks " +
    "for the password",
  404: "Missing, draft, GM-only, protected or not shared (the same page for all)",
  502: "Core failed",
  503: "Core is not configured, not reachable or refuses the service's token",
  504: "Core did not answer in time",
};

/** What both pages decide where the API is silent. */
const PAGE_NOTES = "Rendered on the server from the same module as the public share API, so a " +
  "page shows exactly what `/api/public/*` would. Pages run no script at all (a strict " +
  "Content-Security-Policy) and load only the site's stylesheet and public images. They are " +
  "`no-cache` with an ETag of the page itself (`private` with an `Authorization` header, " +
  "always `Vary: Authorization`), so unpublishing shows at once and an edit of a note the " +
  "visitor cannot see changes nothing; `noindex` (meta tag and `X-Robots-Tag`) follows the " +
  "public API and is always on search results and error pages. " +
  "Errors are HTML pages (`no-store`) that keep the status; a 401 keeps `WWW-Authenticate`.";

/**
 * Runs a page handler; every failure becomes an HTML error page with its status (a client that
 * went away is left to the app).
 */
async function htmlPage(ctx: PublicCtx, render: () => Promise<Response>): Promise<Response> {
  try {
    return await render();
  } catch (e) {
    if (e instanceof ClientAbortError) throw e;
    if (!(e instanceof ApiError)) {
      ctx.log.log("error", "unhandled error", {
        requestId: ctx.requestId,
        route: ctx.url.pathname,
        error: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
      });
    }
    return errorPageResponse(e, ctx.requestId, ctx.state.publicShare.worldName);
  }
}

/** A site page rendered once: the layout around the page's parts, the site's headers. */
const PAGE: AnswerRenderer<BuiltPage> = {
  view: "page",
  render: (r, authorized) => renderedPage(r.parts, authorized),
};

/** A machine-readable document (sitemap, feed) of the given media type. */
const documentOf = (contentType: string): AnswerRenderer<BuiltDocument> => ({
  view: contentType,
  render: (r, authorized) =>
    renderedAnswer(
      r.body,
      siteHeaders({
        contentType,
        cacheControl: authorized ? "private, no-cache" : "no-cache",
        varyAuthorization: true,
      }),
    ),
});

const SITEMAP = documentOf("application/xml; charset=utf-8");
const FEED = documentOf("application/atom+xml; charset=utf-8");

/**
 * The origin of the site's absolute URLs (canonical, Open Graph, sitemap, feed, robots.txt):
 * `PUBLIC_ORIGIN` when set, whatever the request says; else the origin the visitor reached us at
 * (the forwarded host behind a trusted proxy, `TRUST_PROXY`), whose host the app accepted before
 * routing (http/host_check.ts), so never a name someone else chose.
 */
export function siteOrigin(ctx: PublicCtx): string {
  return ctx.config.PUBLIC_ORIGIN ?? requestOrigin(ctx.req, ctx.url, ctx.config.TRUST_PROXY);
}

/** Answers a site page: the share checks access, builds it once per snapshot and visitor. */
async function sitePage<T>(
  ctx: PublicCtx,
  page: SitePage,
  renderer: AnswerRenderer<T>,
  build: (view: VisitorView, noteId: string, origin: string) => Promise<T>,
  opts: { anonymous?: boolean } = {},
): Promise<Response> {
  const origin = siteOrigin(ctx);
  const authorization = opts.anonymous ? null : ctx.req.headers.get("authorization");
  const asked = { ...page, subject: `${page.subject}\n${origin}` };
  const answer = keptPublicAnswer(ctx.state.publicShare, renderer.view, asked, authorization) ??
    await shareFor(ctx).siteAnswer(
      authorization,
      asked,
      renderer,
      (view, noteId) => build(view, noteId, origin),
    );
  return answerFor(ctx.req, answer);
}

const homeQuery = z.object({
  q: z.string().optional().describe(
    `Search text (at most ${SEARCH_MAX_LENGTH} characters); empty shows the home page`,
  ),
});

/** `GET /` — the home page, or search results for `?q=`. */
export const home = defineRoute({
  method: "GET",
  path: "/",
  // where `/` is the front end's (the UI and this service on one origin), the home is here
  aliases: ["/public", "/public/"],
  summary:
    "Public site home: the share root's content and published lore by type; `?q=` shows search results",
  backend: "Core",
  access: "public",
  tag: "site",
  query: homeQuery,
  description: "Without `q`: the share root's own content, every published lore note grouped " +
    "by lore type (`other` for none, each type linking its page), and a search form. With `q`: " +
    "the public search's results (as `GET /api/public/search`), each with its path and the " +
    `passage of its visible text that matches. ${PAGE_NOTES}`,
  errorMediaType: "text/html",
  responses: {
    200: { description: "The home page or the search results", mediaType: "text/html" },
    400: `\`q\` longer than ${SEARCH_MAX_LENGTH} characters (the page says so)`,
    ...PAGE_RESPONSES,
  },
  handler: (ctx) =>
    htmlPage(ctx, () => {
      const q = ctx.query.q?.trim() ?? "";
      if (q.length > SEARCH_MAX_LENGTH) {
        throw invalidRequest(`A search can have at most ${SEARCH_MAX_LENGTH} characters.`);
      }
      return q
        ? sitePage(ctx, { subject: `search:${q}` }, PAGE, (view, _, origin) =>
          buildSearch(view, q, origin))
        : sitePage(ctx, { subject: "home" }, PAGE, (view, _, origin) =>
          buildHome(view, origin));
    }),
});

/** `GET /public/lore/:id` — one public note by id or `#shareAlias`. */
export const notePageRoute = defineRoute({
  method: "GET",
  path: "/public/lore/:id",
  summary: "Public site: one published note by `noteId` or `#shareAlias`",
  backend: "Core",
  access: "public",
  tag: "site",
  params: z.object({ id: z.string().describe("noteId or #shareAlias") }),
  description: "The public note (`GET /api/public/lore/{id}`) as a page: breadcrumbs from the " +
    "share root, title, an infobox (portrait thumbnail linking to the full image, the display " +
    'attributes), content with every image sized (`width`/`height`, `loading="lazy"`, `alt`), ' +
    "relations grouped by kind, a theme song link (absolute http(s) only), the last change, the " +
    "note's visible children, the visible notes whose public content links to it, and the " +
    "previous/next sibling. Open Graph and Twitter card metadata name the note, its " +
    "`#shareDescription` or first paragraph and its portrait, with absolute URLs on " +
    "`PUBLIC_ORIGIN`, else on the origin the visitor used (forwarded host and protocol with " +
    `\`TRUST_PROXY\`). ${PAGE_NOTES}`,
  errorMediaType: "text/html",
  responses: {
    200: { description: "The note's page", mediaType: "text/html" },
    ...PAGE_RESPONSES,
  },
  handler: (ctx) =>
    htmlPage(
      ctx,
      () => sitePage(ctx, { subject: "note", noteIdOrAlias: ctx.params.id }, PAGE, buildNote),
    ),
});

/** `GET /public/types/:type` — every published note of one lore type. */
export const typePageRoute = defineRoute({
  method: "GET",
  path: "/public/types/:type",
  summary: "Public site: every published note of one lore type, with its first paragraph",
  backend: "Core",
  access: "public",
  tag: "site",
  params: z.object({ type: z.string().min(1).max(100).describe("A `#loreType` value") }),
  description: "The visible `#lore` notes whose `#loreType` is `type`, by title, each with its " +
    "`#shareDescription` or first paragraph; 404 when the visitor sees none. " + PAGE_NOTES,
  errorMediaType: "text/html",
  responses: {
    200: { description: "The lore type's page", mediaType: "text/html" },
    ...PAGE_RESPONSES,
  },
  handler: (ctx) =>
    htmlPage(ctx, () =>
      sitePage(
        ctx,
        { subject: `type:${ctx.params.type}` },
        PAGE,
        (view, _, origin) => buildType(view, ctx.params.type, origin),
      )),
});

/** `GET /public/timeline` — every published note with an in-world date, in order. */
export const timelineRoute = defineRoute({
  method: "GET",
  path: "/public/timeline",
  summary: "Public site: the timeline of published notes with an in-world date",
  backend: "Core",
  access: "public",
  tag: "site",
  description: "Visible notes with a promoted `#inWorldDate`, ordered by it as written " +
    "(numbers compared as numbers). " + PAGE_NOTES,
  errorMediaType: "text/html",
  responses: {
    200: { description: "The timeline page", mediaType: "text/html" },
    ...PAGE_RESPONSES,
  },
  handler: (ctx) =>
    htmlPage(
      ctx,
      () =>
        sitePage(ctx, { subject: "timeline" }, PAGE, (view, _, origin) =>
          buildTimeline(view, origin)),
    ),
});

/** `GET /public/maps/:id` — a published note's map with its pins. */
export const mapPageRoute = defineRoute({
  method: "GET",
  path: "/public/maps/:id",
  summary: "Public site: a published note's map image with its published pins as links",
  backend: "Core",
  access: "public",
  tag: "site",
  params: z.object({ id: z.string().describe("noteId or #shareAlias of the map note") }),
  description: "The note's `~mapImage` (a visible image note) drawn as inline SVG at its own " +
    'size, with a pin linking each visible child that has a promoted `#geolocation="x, y"` ' +
    "(pixels of the image), and the pins again as a list; no script. 404 when the note has no " +
    "visible map image. " + PAGE_NOTES,
  errorMediaType: "text/html",
  responses: {
    200: { description: "The map page", mediaType: "text/html" },
    ...PAGE_RESPONSES,
  },
  handler: (ctx) =>
    htmlPage(
      ctx,
      () => sitePage(ctx, { subject: "map", noteIdOrAlias: ctx.params.id }, PAGE, buildMap),
    ),
});

/** What the sitemap and the feed share: anonymous, absolute URLs, gone when robots are refused. */
const MACHINE_NOTES = "Built from what an anonymous visitor sees (credentials are ignored), " +
  "with absolute URLs on `PUBLIC_ORIGIN`, else on the origin the visitor used (forwarded host " +
  "and protocol with `TRUST_PROXY`); 404 when the share root carries `#shareDisallowRobotIndexing`, and notes " +
  "that carry it are left out. `no-cache` with an ETag of the document itself.";

/** `GET /sitemap.xml` — every public page, for search engines. */
export const sitemapRoute = defineRoute({
  method: "GET",
  path: "/sitemap.xml",
  summary: "Sitemap of the public site",
  backend: "Core",
  access: "public",
  tag: "site",
  description: "The home page, every visible note page, the lore type pages, the map pages and " +
    `the timeline. ${MACHINE_NOTES}`,
  errorMediaType: "text/html",
  responses: {
    200: { description: "The sitemap (sitemaps.org 0.9)", mediaType: "application/xml" },
    ...PAGE_RESPONSES,
  },
  handler: (ctx) =>
    htmlPage(
      ctx,
      () =>
        sitePage(ctx, { subject: "sitemap" }, SITEMAP, (view, _, origin) =>
          buildSitemap(view, origin), { anonymous: true }),
    ),
});

/** `GET /public/feed.atom` — recently changed public notes. */
export const feedRoute = defineRoute({
  method: "GET",
  path: "/public/feed.atom",
  summary: "Atom feed of recently changed public notes",
  backend: "Core",
  access: "public",
  tag: "site",
  description: "The 20 most recently modified visible notes, newest first, each with its " +
    `\`#shareDescription\` or first paragraph. ${MACHINE_NOTES}`,
  errorMediaType: "text/html",
  responses: {
    200: { description: "The Atom feed", mediaType: "application/atom+xml" },
    ...PAGE_RESPONSES,
  },
  handler: (ctx) =>
    htmlPage(
      ctx,
      () =>
        sitePage(ctx, { subject: "feed" }, FEED, (view, _, origin) => buildFeed(view, origin), {
          anonymous: true,
        }),
    ),
});

const CSS_ETAG = `"css-${SITE_CSS_VERSION}"`;

/** `GET /public/site.css` — the site's stylesheet (a module string; no file is read). */
export const stylesheet = defineRoute({
  method: "GET",
  path: "/public/site.css",
  summary: "Public site stylesheet",
  backend: "None",
  access: "public",
  tag: "site",
  description: "Compiled into the service (no file is read); pages link it with a digest of " +
    "its content, so it can be cached a day.",
  responses: {
    200: {
      description: "The stylesheet: `Cache-Control: public, max-age=86400`, ETag",
      mediaType: "text/css",
    },
    304: { description: "`If-None-Match` matched (no body)" },
  },
  handler: (ctx) =>
    assetResponse(ctx.req, SITE_CSS, {
      contentType: "text/css; charset=utf-8",
      cacheControl: "public, max-age=86400",
      etag: CSS_ETAG,
    }),
});

/** This group's routes. */
export const siteRoutes: Route[] = [
  home,
  notePageRoute,
  typePageRoute,
  timelineRoute,
  mapPageRoute,
  sitemapRoute,
  feedRoute,
  stylesheet,
];
