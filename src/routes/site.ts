/**
 * The public site: server-rendered HTML built from the public share API (`src/share/
 * public_api.ts`), so it shows exactly what `/api/public/*` would, and nothing hidden. Pages run
 * no script and load nothing but our stylesheet and public images (see `src/site/headers.ts`).
 *
 * @module
 */
import { z } from "zod";
import { ApiError, invalidRequest } from "../http/errors.ts";
import { etagMatches } from "../lore/preview.ts";
import { defineRoute, type PublicCtx, type Route } from "../router.ts";
import { errorPageResponse } from "../site/error_page.ts";
import { siteHeaders } from "../site/headers.ts";
import { homePage } from "../site/home_page.ts";
import { SEARCH_MAX_LENGTH } from "../site/layout.ts";
import { notePage } from "../site/note_page.ts";
import { renderedPage } from "../site/respond.ts";
import type {
  AnswerRenderer,
  PublicHomeResult,
  PublicNoteResult,
  PublicSearchOutcome,
} from "../share/public_api.ts";
import { answerFor } from "../share/rendered_answer.ts";
import { searchPage } from "../site/search_page.ts";
import { SITE_CSS, SITE_CSS_VERSION } from "../site/stylesheet.ts";
import { ClientAbortError } from "../upstream/fetch.ts";
import { shareFor } from "./public.ts";

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
  "`no-cache` with an ETag (`private` with an `Authorization` header, always " +
  "`Vary: Authorization`), so unpublishing shows at once; `noindex` (meta tag and " +
  "`X-Robots-Tag`) follows the public API and is always on search results and error pages. " +
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
    return errorPageResponse(e, ctx.requestId);
  }
}

const NOTE_PAGE: AnswerRenderer<PublicNoteResult> = {
  view: "page",
  render: (r, authorized) => renderedPage(notePage(r.note, r.noIndex), r.etag, authorized),
};

const HOME_PAGE: AnswerRenderer<PublicHomeResult> = {
  view: "page",
  render: (r, authorized) =>
    renderedPage(homePage(r.root, r.groups, r.noIndex), r.etag, authorized),
};

const SEARCH_PAGE: AnswerRenderer<PublicSearchOutcome & { query: string }> = {
  view: "page",
  render: (r, authorized) => renderedPage(searchPage(r.query, r.result), r.etag, authorized),
};

const homeQuery = z.object({
  q: z.string().optional().describe(
    `Search text (at most ${SEARCH_MAX_LENGTH} characters); empty shows the home page`,
  ),
});

/** `GET /` — the home page, or search results for `?q=`. */
export const home = defineRoute({
  method: "GET",
  path: "/",
  summary:
    "Public site home: the share root's content and published lore by type; `?q=` shows search results",
  backend: "Core",
  access: "public",
  tag: "site",
  query: homeQuery,
  description: "Without `q`: the share root's own content, every published lore note grouped " +
    "by lore type (`other` for none), and a search form. With `q`: the public search's results " +
    `(as \`GET /api/public/search\`). ${PAGE_NOTES}`,
  errorMediaType: "text/html",
  responses: {
    200: { description: "The home page or the search results", mediaType: "text/html" },
    400: `\`q\` longer than ${SEARCH_MAX_LENGTH} characters (the page says so)`,
    ...PAGE_RESPONSES,
  },
  handler: (ctx) =>
    htmlPage(ctx, async () => {
      const share = shareFor(ctx);
      const authorization = ctx.req.headers.get("authorization");
      const q = ctx.query.q?.trim() ?? "";
      if (q.length > SEARCH_MAX_LENGTH) {
        throw invalidRequest(`A search can have at most ${SEARCH_MAX_LENGTH} characters.`);
      }
      const answer = q
        ? await share.searchAnswer(q, authorization, SEARCH_PAGE)
        : await share.homeAnswer(authorization, HOME_PAGE);
      return answerFor(ctx.req, answer);
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
  description: "The public note (`GET /api/public/lore/{id}`) as a page: title, portrait, " +
    "display attributes, relations as links to their pages, content, a theme song link " +
    `(absolute http(s) only) and the last change. ${PAGE_NOTES}`,
  errorMediaType: "text/html",
  responses: {
    200: { description: "The note's page", mediaType: "text/html" },
    ...PAGE_RESPONSES,
  },
  handler: (ctx) =>
    htmlPage(ctx, async () => {
      const authorization = ctx.req.headers.get("authorization");
      return answerFor(
        ctx.req,
        await shareFor(ctx).noteAnswer(ctx.params.id, authorization, NOTE_PAGE),
      );
    }),
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
  handler: (ctx) => {
    const headers = siteHeaders({
      contentType: "text/css; charset=utf-8",
      cacheControl: "public, max-age=86400",
      etag: CSS_ETAG,
    });
    if (etagMatches(ctx.req.headers.get("if-none-match"), CSS_ETAG)) {
      headers.delete("content-type");
      return new Response(null, { status: 304, headers });
    }
    return new Response(SITE_CSS, { headers });
  },
});

/** This group's routes. */
export const siteRoutes: Route[] = [home, notePageRoute, stylesheet];
