/**
 * The public share API (`/api/public/*`): no authentication, read-only, and only what the share
 * filter lets through (`src/share/public_api.ts`, shared with the public site). Every answer
 * carries an ETag and answers `If-None-Match` with 304.
 *
 * @module
 */
import { z } from "zod";
import { idSchema } from "../lore/ids.ts";
import { etagMatches } from "../lore/preview.ts";
import { defineRoute, type PublicCtx, type Route } from "../router.ts";
import { type PublicShare, publicShare } from "../share/public_api.ts";

/**
 * A note id or `#shareAlias` as it appears in a path segment (percent-encoded; control
 * characters never survive URL parsing unencoded).
 */
const idOrAliasSchema = z.string().min(1).max(256).regex(
  /^[^\s/\\]+$/,
  "must be a note id or share alias",
);

/**
 * The public share for one request: the server's public Core and the app's public caches.
 *
 * @example
 * ```ts
 * import type { PublicCtx } from "../router.ts";
 *
 * async function shareRootTitle(ctx: PublicCtx) {
 *   return (await shareFor(ctx).home(null)).root.title;
 * }
 * ```
 */
export function shareFor(ctx: PublicCtx): PublicShare {
  return publicShare({ ...ctx, caches: ctx.state.publicShare });
}

const COMMON_RESPONSES = {
  304: "`If-None-Match` matched the ETag",
  503: "NOT_CONFIGURED: the server has no Core credentials for the public share",
};

/**
 * JSON for visitors: revalidated on every use (`no-cache` + weak ETag) so an unpublished note
 * disappears at once; `private` when the request carried credentials; always
 * `Vary: Authorization`.
 */
function publicJson(req: Request, body: unknown, etag: string, noIndex: boolean): Response {
  const headers = new Headers({
    "cache-control": req.headers.has("authorization") ? "private, no-cache" : "public, no-cache",
    "vary": "Authorization",
    "etag": etag,
  });
  if (noIndex) headers.set("x-robots-tag", "noindex");
  if (etagMatches(req.headers.get("if-none-match"), etag)) {
    return new Response(null, { status: 304, headers });
  }
  headers.set("content-type", "application/json; charset=utf-8");
  return new Response(JSON.stringify(body), { headers });
}

/** `GET /api/public/lore/:id` — one published note by id or alias. */
export const publicLore = defineRoute({
  method: "GET",
  path: "/api/public/lore/:id",
  summary: "Published note by noteId or #shareAlias: sanitized player HTML, public relations only",
  backend: "Core",
  access: "public",
  tag: "public",
  params: z.object({ id: idOrAliasSchema }),
  responses: {
    200: "Public lore note; `Cache-Control: public, no-cache` (private with credentials), " +
      "ETag, `X-Robots-Tag: noindex` when the share asks",
    401: "Behind #shareCredentials: `WWW-Authenticate: Basic` (missing or wrong credentials)",
    404: "Missing, draft, GM-only, protected or not shared (one answer for all)",
    ...COMMON_RESPONSES,
  },
  handler: async (ctx) => {
    const authorization = ctx.req.headers.get("authorization");
    const { note, etag, noIndex } = await shareFor(ctx).note(ctx.params.id, authorization);
    return publicJson(ctx.req, note, etag, noIndex);
  },
});

/** `GET /api/public/search?q=` — search the published lore; `q=#lore` lists all of it. */
export const publicSearch = defineRoute({
  method: "GET",
  path: "/api/public/search",
  summary: "Search published notes (titles and visible text); `q=#lore` lists all published lore",
  backend: "Core",
  access: "public",
  tag: "public",
  query: z.object({ q: z.string().trim().min(1).max(200) }),
  responses: {
    200: "`{ results: [{ id, title, score, path }] }`: id is the alias when there is one; " +
      "best first, then by title; notes behind credentials only with them",
    400: "q empty or longer than 200 characters",
    ...COMMON_RESPONSES,
  },
  handler: async (ctx) => {
    const authorization = ctx.req.headers.get("authorization");
    const { result, etag } = await shareFor(ctx).search(ctx.query.q, authorization);
    return publicJson(ctx.req, result, etag, true);
  },
});

/** `GET /api/public/images/:id/:filename` — a public image note or image attachment. */
export const publicImage = defineRoute({
  method: "GET",
  path: "/api/public/images/:id/:filename",
  summary:
    "Image of a published note (image note or image attachment), streamed; file name ignored",
  backend: "Core",
  access: "public",
  tag: "public",
  params: z.object({ id: idSchema, filename: z.string().min(1).max(255) }),
  responses: {
    200: "PNG/JPEG/GIF/WebP/AVIF (declared and sniffed); `Cache-Control: public, max-age=86400` " +
      "(private behind credentials), ETag from Core's blob id",
    401: "The owning note is behind #shareCredentials",
    404: "Not an image of a published note (missing and hidden alike), or not a raster image",
    ...COMMON_RESPONSES,
  },
  handler: (ctx) =>
    shareFor(ctx).image(
      ctx.params.id,
      ctx.req.headers.get("authorization"),
      ctx.signal,
      ctx.req.headers.get("if-none-match"),
    ),
});

/** The public share routes. */
export const publicRoutes: Route[] = [publicLore, publicSearch, publicImage];
