/**
 * What browsers and crawlers ask every site for besides its pages: `robots.txt` (following the
 * share root's `#shareDisallowRobotIndexing`), the favicon, compiled into the service, and Core's
 * share addresses (`/share/…`), sent on to the pages.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { ApiError } from "../http/errors.ts";
import { defineRoute, type PublicCtx, type Route } from "../api/router.ts";
import type { AnswerRenderer } from "../share/public_api.ts";
import { answerFor, renderedAnswer } from "../share/rendered_answer.ts";
import { assetResponse, siteHeaders } from "../site/headers.ts";
import { ClientAbortError } from "../upstream/fetch.ts";
import { shareFor } from "../pipeline/context.ts";
import { siteOrigin } from "./site.ts";

const TEXT_TYPE = "text/plain; charset=utf-8";

/** Crawlers may read nothing: the share opts out, or there is nothing public to read. */
const DISALLOW_ALL = "User-agent: *\nDisallow: /\n";

/** The rules for a share open to indexing; the API is never for crawlers. */
function allowRules(sitemapUrl: string | null): string {
  const rules = "User-agent: *\nAllow: /\nAllow: /public/\nDisallow: /api/\n";
  return sitemapUrl ? `${rules}\nSitemap: ${sitemapUrl}\n` : rules;
}

/** What robots.txt is built from: the share root's opt-out and the sitemap's address. */
interface RobotsFacts {
  noIndex: boolean;
  sitemapUrl: string | null;
}

const ROBOTS: AnswerRenderer<RobotsFacts> = {
  view: "robots",
  render: (r) => {
    const body = r.noIndex ? DISALLOW_ALL : allowRules(r.sitemapUrl);
    return renderedAnswer(body, siteHeaders({ contentType: TEXT_TYPE, cacheControl: "no-cache" }));
  },
};

/** A plain-text answer of the site's own (no share behind it). */
function textAnswer(body: string, status: number, cacheControl: string): Response {
  return new Response(body, {
    status,
    headers: siteHeaders({ contentType: TEXT_TYPE, cacheControl }),
  });
}

/** robots.txt from the share as an anonymous visitor sees it (see the route's description). */
async function robots(ctx: PublicCtx): Promise<Response> {
  const origin = siteOrigin(ctx);
  // named only while the table serves it, so robots.txt never points at a missing page
  const sitemapUrl = ctx.routes.some((r) => r.method === "GET" && r.path === "/sitemap.xml")
    ? `${origin}/sitemap.xml`
    : null;
  try {
    const answer = await shareFor(ctx).siteAnswer(
      null,
      { subject: `robots\n${origin}` },
      ROBOTS,
      // the root's opt-out alone: its content is not needed, so it is not rendered
      (view) => Promise.resolve({ noIndex: view.summary(view.rootId).noIndex, sitemapUrl }),
    );
    return answerFor(ctx.req, answer);
  } catch (e) {
    if (e instanceof ClientAbortError || !(e instanceof ApiError)) throw e;
    // not shared, behind a password, or no lore database at all: nothing a crawler could read
    if (e.status === 401 || e.status === 404 || !ctx.config.CORE_URL) {
      return textAnswer(DISALLOW_ALL, 200, "no-cache");
    }
    // a failure crawlers know to retry (they read a 5xx robots.txt as "disallow for now")
    return textAnswer("robots.txt is unavailable right now.\n", e.status, "no-store");
  }
}

/** `GET /robots.txt` — crawler rules, from the share root's robots opt-out. */
export const robotsRoute = defineRoute({
  method: "GET",
  path: "/robots.txt",
  summary: "Crawler rules: the public site and its sitemap, or nothing when the share opts out",
  backend: "Core",
  access: "public",
  tag: "site",
  description: "When the share root carries `#shareDisallowRobotIndexing`, `Disallow: /`. " +
    "Otherwise `/` and `/public/` are allowed, `/api/` is disallowed, and the sitemap is named " +
    "by its absolute URL on `PUBLIC_ORIGIN`, else on the origin the visitor used (forwarded " +
    "host and protocol with `TRUST_PROXY`). Nothing shared, a share root behind `#shareCredentials`, or no `CORE_URL`: " +
    "`Disallow: /` (there is nothing public to read). Built from what an anonymous visitor " +
    "sees; `no-cache` with an ETag of the rules themselves. A failure reading Core keeps its " +
    "status (crawlers read a 5xx robots.txt as a temporary disallow) with a plain-text body.",
  errorMediaType: "text/plain",
  responses: {
    200: { description: "The rules (robots exclusion protocol)", mediaType: "text/plain" },
    304: { description: "`If-None-Match` matched the ETag (no body)" },
    503: "Core is not reachable or refuses the service's token",
  },
  handler: robots,
});

/** The site's icon: an open book, in the site's colours. */
const FAVICON_SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">' +
  '<rect width="32" height="32" rx="6" fill="#2f2a3d"/>' +
  '<path d="M6 9.5c3-1.3 6.5-1.3 9 .8V24c-2.5-2-6-2-9-.8zM26 9.5c-3-1.3-6.5-1.3-9 .8V24' +
  'c2.5-2 6-2 9-.8z" fill="#f2e6c9"/></svg>\n';

const FAVICON_ETAG = `"icon-${
  createHash("sha256").update(FAVICON_SVG).digest("base64url").slice(0, 16)
}"`;

/** The favicon's answer: cached a week, revalidated by ETag after that. */
function favicon(ctx: PublicCtx): Response {
  return assetResponse(ctx.req, FAVICON_SVG, {
    contentType: "image/svg+xml",
    cacheControl: "public, max-age=604800",
    etag: FAVICON_ETAG,
  });
}

const FAVICON_RESPONSES = {
  200: {
    description: "The icon (SVG): `Cache-Control: public, max-age=604800`, ETag",
    mediaType: "image/svg+xml",
  },
  304: { description: "`If-None-Match` matched (no body)" },
};

/** `GET /favicon.svg` — the site's icon, which every page links. */
export const faviconSvgRoute = defineRoute({
  method: "GET",
  path: "/favicon.svg",
  summary: "The site's icon (SVG)",
  backend: "None",
  access: "public",
  tag: "site",
  description: "Compiled into the service (no file is read); every page links it.",
  responses: FAVICON_RESPONSES,
  handler: favicon,
});

/** `GET /favicon.ico` — the same icon where browsers and tools look without a link. */
export const faviconIcoRoute = defineRoute({
  method: "GET",
  path: "/favicon.ico",
  summary: "The site's icon at the address browsers try by default (the same SVG)",
  backend: "None",
  access: "public",
  tag: "site",
  description: "The same SVG as `/favicon.svg` (`image/svg+xml`, not an ICO), so the request " +
    "browsers and feed readers make without a link is not a 404.",
  responses: FAVICON_RESPONSES,
  handler: favicon,
});

/**
 * Core's share addresses on our public site: `/share/<alias|id>` is the note's page,
 * `/share` the site's home. The target is built from the path alone, the same for every note
 * (whether it exists or is hidden is for the page to say: the same 404), on the site's origin.
 */
function shareRedirect(ctx: PublicCtx, idOrAlias: string | undefined): Response {
  // the segment as the request named it (still percent-encoded): one segment, never a path
  // `/public` is the home also where `/` is the front end's (one origin for both)
  const target = idOrAlias === undefined ? "/public" : `/public/lore/${idOrAlias}`;
  return new Response(null, {
    status: 302,
    headers: { location: siteOrigin(ctx) + target, "cache-control": "no-store" },
  });
}

const SHARE_NOTES = "Links written for Core's own share (`<url>/share/<alias|id>`, as the front " +
  "end builds them from `GET /api/config/status`) land on this site: the redirect is built " +
  "from the path alone, on `PUBLIC_ORIGIN`, else on the origin the visitor used, so it says " +
  "nothing about the note; a missing, draft, GM-only or protected note is then the page's 404.";

/** `GET /share/:id` — Core's share address of a note, sent to its page on the public site. */
export const shareNoteRoute = defineRoute({
  method: "GET",
  path: "/share/:id",
  summary: "Core's share address of a note: redirects to its public page `/public/lore/{id}`",
  backend: "None",
  access: "public",
  tag: "site",
  params: z.object({ id: z.string().describe("noteId or #shareAlias") }),
  description: SHARE_NOTES,
  responses: {
    302: { description: "`Location: <origin>/public/lore/{id}` (`Cache-Control: no-store`)" },
  },
  handler: (ctx) => shareRedirect(ctx, ctx.params.id),
});

/** `GET /share` — Core's share address of the root, sent to the public site's home. */
export const shareRootRoute = defineRoute({
  method: "GET",
  path: "/share",
  aliases: ["/share/"],
  summary: "Core's share address of the share root: redirects to the public site's home",
  backend: "None",
  access: "public",
  tag: "site",
  description: SHARE_NOTES,
  responses: {
    302: { description: "`Location: <origin>/public` (`Cache-Control: no-store`)" },
  },
  handler: (ctx) => shareRedirect(ctx, undefined),
});

/** This group's routes. */
export const siteEdgeRoutes: Route[] = [
  robotsRoute,
  faviconSvgRoute,
  faviconIcoRoute,
  shareNoteRoute,
  shareRootRoute,
];
