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
  siteCredentials,
  type SitePage,
  type VisitorCredentials,
  type VisitorView,
} from "../share/public_api.ts";
import { isSiteReturnPath, unlockPageResponse } from "../site/unlock_page.ts";
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
import { THEME_JS, THEME_JS_VERSION } from "../site/theme_script.ts";
import { isMapZoom, MAP_ZOOMS } from "../site/map_page.ts";
import { ClientAbortError } from "../upstream/fetch.ts";
import { shareFor } from "../pipeline/context.ts";

/** The answers both pages share; every error is an HTML page keeping its status. */
const PAGE_RESPONSES = {
  304: { description: "`If-None-Match` matched the page's ETag (no body)" },
  401: "The page is behind `#shareCredentials`: the password page, a form posting to " +
    "`POST /public/unlock` (no `WWW-Authenticate`, so the browser shows no password dialog; an " +
    "`Authorization: Basic` header is still accepted)",
  404: "Missing, draft, GM-only, protected or not shared (the same page for all)",
  502: "Core failed",
  503: "Core is not configured, not reachable or refuses the service's token",
  504: "Core did not answer in time",
};

/** What both pages decide where the API is silent. */
const PAGE_NOTES = "Rendered on the server from the same module as the public share API, so a " +
  "page shows exactly what `/api/public/*` would. Pages run no script at all (a strict " +
  "Content-Security-Policy) and load only the site's stylesheet and public images. They are " +
  "`no-cache` with an ETag of the page itself (`private` with credentials: an `Authorization` " +
  "header or the unlock cookie; always `Vary: Authorization`), so unpublishing shows at once " +
  "and an edit of a note the " +
  "visitor cannot see changes nothing; `noindex` (meta tag and `X-Robots-Tag`) follows the " +
  "public API and is always on search results and error pages. Every page's link preview " +
  "(`og:image`, Twitter card) shows a picture with its real size: the page's own (a map " +
  "page's map), else the world's card. " +
  "Errors are HTML pages (`no-store`) that keep the status.";

/**
 * Runs a page handler; every failure becomes an HTML error page with its status (a client that
 * went away is left to the app). A page answered at once (a kept one) is returned as it is: no
 * promise, no turn of the event loop.
 */
export function htmlPage(
  ctx: PublicCtx,
  render: () => Promise<Response> | Response,
): Promise<Response> | Response {
  const failed = (e: unknown) => errorPage(ctx, e);
  try {
    const res = render();
    return res instanceof Promise ? res.catch(failed) : res;
  } catch (e) {
    return failed(e);
  }
}

/** The HTML error page of a failed page handler (see {@linkcode htmlPage}). */
function errorPage(ctx: PublicCtx, e: unknown): Response {
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

/**
 * Answers a site page: the share checks access, builds it once per snapshot and visitor. The
 * visitor's credentials are an `Authorization` header or the unlock cookie; a page they do not
 * open is the password page. `anonymous` documents (sitemap, feed) read neither.
 */
function sitePage<T>(
  ctx: PublicCtx,
  page: SitePage,
  renderer: AnswerRenderer<T>,
  build: (view: VisitorView, noteId: string, origin: string) => Promise<T>,
  opts: { anonymous?: boolean } = {},
): Promise<Response> | Response {
  const origin = siteOrigin(ctx);
  const given = opts.anonymous ? null : siteCredentials(ctx.req, ctx.sealKey);
  const asked = { ...page, subject: `${page.subject}\n${origin}` };
  const locked = (e: unknown) => {
    if (opts.anonymous || !(e instanceof ApiError) || e.status !== 401) throw e;
    return passwordPage(ctx);
  };
  const answer = (credentials: VisitorCredentials | null) => {
    try {
      // a kept page is answered at once: no promise, no turn of the event loop
      const kept = keptPublicAnswer(ctx.state.publicShare, renderer.view, asked, credentials);
      if (kept) return answerFor(ctx.req, kept);
      return shareFor(ctx).siteAnswer(
        credentials,
        asked,
        renderer,
        (view, noteId) => build(view, noteId, origin),
      ).then((built) => answerFor(ctx.req, built), locked);
    } catch (e) {
      return locked(e);
    }
  };
  return given instanceof Promise ? given.then(answer) : answer(given);
}

/** The password page of the page the visitor asked for, which the form returns to. */
function passwordPage(ctx: PublicCtx): Response {
  const asked = ctx.url.pathname + ctx.url.search;
  return unlockPageResponse({
    returnTo: isSiteReturnPath(asked) ? asked : "/public",
    world: ctx.state.publicShare.worldName,
  });
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
    "attributes), content with every image sized (`width`/`height`: its own size, or the " +
    'writer\'s in its proportions but never larger; `loading="lazy"`, `alt`) and without the ' +
    "portrait when the infobox shows it (each image once, at the one URL every page uses), " +
    "relations grouped by kind, a theme song link (absolute http(s) only), the last change and " +
    "the reading time (about 220 words a minute, from 150 visible words on), the " +
    "note's visible children, the visible notes whose public content links to it, and the " +
    "previous/next sibling. Open Graph and Twitter card metadata name the note, its " +
    "`#shareDescription` or first paragraph, and a picture with its size: the portrait, else " +
    "the note's map, else the first image note its content shows, else the world's card (the " +
    "share root's `~shareCard` image note, or `GET /public/card/{file}`); `summary_large_image` " +
    "only for a picture at least 600 px wide. Absolute URLs are on " +
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
  description: "Visible notes with a promoted `#inWorldDate`, in its order (leading year as a " +
    "number, then as written), grouped by era (the timeline notes above them) when there are " +
    "two or more, else by year; each with its `#shareDateLabel` (else the date), one-line " +
    "description and the visible locations it is related to, under breadcrumbs. " + PAGE_NOTES,
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

const mapQuery = z.object({
  zoom: z.string().optional().describe(
    "`2` or `4`: the map at twice or four times the column's width, `full`: at the image's own " +
      "size, each scrolling inside its frame; absent: the map fits the column",
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
  query: mapQuery,
  description: "The note's `~mapImage` (a visible image note) with a pin linking each visible " +
    'child that has a promoted `#geolocation="x, y"` (pixels of the image), drawn as inline SVG ' +
    "over the image: pins and labels keep their screen size (a 28 px tap target, 14 px labels " +
    "kept on the map) at any image size, width and zoom. Links to the other zooms, the pins " +
    "again as a list; no script. A zoomed page is `noindex`, its canonical URL the map page's. " +
    "404 when the note has no visible map image. " + PAGE_NOTES,
  errorMediaType: "text/html",
  responses: {
    200: { description: "The map page", mediaType: "text/html" },
    400: "`zoom` is not `2`, `4` or `full` (the page says so)",
    ...PAGE_RESPONSES,
  },
  handler: (ctx) =>
    htmlPage(ctx, () => {
      const asked = ctx.query.zoom;
      // checked here, not by the schema, so a bad value gets the site's HTML page
      if (asked !== undefined && !isMapZoom(asked)) {
        throw invalidRequest(`A map's zoom is one of ${MAP_ZOOMS.join(", ")}.`);
      }
      const zoom = asked ?? "1";
      return sitePage(
        ctx,
        { subject: `map:${zoom}`, noteIdOrAlias: ctx.params.id },
        PAGE,
        (view, noteId, origin) => buildMap(view, noteId, origin, zoom),
      );
    }),
});

/** What the sitemap and the feed share: anonymous, absolute URLs, gone when robots are refused. */
const MACHINE_NOTES = "Built from what an anonymous visitor sees (credentials are ignored), " +
  "with absolute URLs on `PUBLIC_ORIGIN`, else on the origin the visitor used (forwarded host " +
  "and protocol with `TRUST_PROXY`); 404 when the share root carries `#shareDisallowRobotIndexing`, and notes " +
  "that carry it are left out. `no-cache` with an ETag of the document itself.";

/** The sitemap's and feed's 401: no password opens a document built for anonymous visitors. */
const MACHINE_401 = "The share root is behind `#shareCredentials` (an HTML error page; the " +
  "document is built for anonymous visitors, so no password opens it)";

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
    401: MACHINE_401,
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
    401: MACHINE_401,
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

/** What a compiled-in asset route declares beyond the shared parts. */
interface CompiledAsset {
  path: string;
  summary: string;
  description: string;
  /** What the 200 is, e.g. "The stylesheet". */
  what: string;
  mediaType: string;
  body: string;
  /** A digest of `body`, for its ETag. */
  version: string;
}

/**
 * A route serving a module string (no file is read): pages link it with a digest of its
 * content, so it is cached a day, with an ETag.
 */
function compiledAssetRoute(a: CompiledAsset): Route {
  const etag = `"${a.mediaType.split("/")[1]}-${a.version}"`;
  return defineRoute({
    method: "GET",
    path: a.path,
    summary: a.summary,
    backend: "None",
    access: "public",
    tag: "site",
    description: `Compiled into the service (no file is read)${a.description} Pages link it ` +
      "with a digest of its content, so it can be cached a day.",
    responses: {
      200: {
        description: `${a.what}: \`Cache-Control: public, max-age=86400\`, ETag`,
        mediaType: a.mediaType,
      },
      304: { description: "`If-None-Match` matched (no body)" },
    },
    handler: (ctx) =>
      assetResponse(ctx.req, a.body, {
        contentType: `${a.mediaType}; charset=utf-8`,
        cacheControl: "public, max-age=86400",
        etag,
      }),
  });
}

/** `GET /public/site.css` — the site's stylesheet. */
export const stylesheet = compiledAssetRoute({
  path: "/public/site.css",
  summary: "Public site stylesheet",
  description: ".",
  what: "The stylesheet",
  mediaType: "text/css",
  body: SITE_CSS,
  version: SITE_CSS_VERSION,
});

/** `GET /public/theme.js` — the site's one script, the theme switch. */
export const themeScript = compiledAssetRoute({
  path: "/public/theme.js",
  summary: "Public site theme script",
  description: ": the header's button that switches the site between the system's colour " +
    "scheme, light and dark, remembered in the browser's `localStorage`. Progressive " +
    "enhancement: without it the system's scheme applies.",
  what: "The script",
  mediaType: "text/javascript",
  body: THEME_JS,
  version: THEME_JS_VERSION,
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
  themeScript,
];
