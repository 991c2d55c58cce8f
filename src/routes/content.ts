/**
 * Note content: raw content for editing (streamed, sandboxed), replacing it, sanitized previews
 * for the GM and for players, and revisions.
 *
 * @module
 */
import { z } from "zod";
import { ApiError } from "../http/errors.ts";
import { json, noContent, sandboxedHtmlHeaders } from "../http/response.ts";
import { guardedResponseBody, type StreamContext } from "../http/stream_guard.ts";
import { rootImageLinksStream } from "../lore/content_links.ts";
import { idSchema } from "../lore/ids.ts";
import { contentBlobId, etagMatches, planPreview, PREVIEW_MODES } from "../lore/preview.ts";
import { refuseSystemNote } from "../lore/system_notes.ts";
import { defineRoute, type Route } from "../api/router.ts";
import { type CoreNote, mapCoreError } from "../upstream/core.ts";
import { revisionSchema } from "./lore_responses.ts";
import { idParams } from "./schemas.ts";

/** The types raw content is answered as (see {@linkcode rawContentResponse}). */
const RAW_MEDIA_TYPES = ["text/html", "text/plain", "application/json"] as const;

/** What the raw content routes decide where the API is silent. */
const RAW_NOTES = "Streamed as Core sends it, never buffered, as an inert document: " +
  "`Content-Security-Policy: sandbox; default-src 'none'`, `nosniff`, `no-store`. The type is " +
  "Core's for HTML, plain text and JSON (with its charset), `application/octet-stream` for " +
  "anything else (binaries, SVG, scripts), so a browser never renders it as our page. In " +
  'UTF-8 HTML, Core\'s relative image sources are made root-relative (`src="api/images/…"` ' +
  '→ `src="/api/images/…"`, likewise `api/attachments/…`), so they reach our image routes ' +
  "from any page; Core stores them relative again when the content is saved back.";

/** The raw content answer of both content routes. */
const rawContent = (description: string) => ({
  description,
  mediaType: [...RAW_MEDIA_TYPES, "application/octet-stream"],
});

/** `GET /api/lore/:id/content` — Core's content, streamed, as an inert sandboxed document. */
export const getContent = defineRoute({
  method: "GET",
  path: "/api/lore/:id/content",
  summary: "Raw note content for editing (streamed; sandboxed, never rendered as our page)",
  backend: "Core",
  access: "private",
  tag: "content",
  params: idParams,
  description: RAW_NOTES,
  responses: {
    200: rawContent(
      "The content: `text/html`, `text/plain` or `application/json` as Core sent it, else " +
        "`application/octet-stream`; sandbox CSP, `nosniff`, `no-store`",
    ),
    404: "No such note",
  },
  handler: async (ctx) => rawContentResponse(ctx, await (await ctx.core()).content(ctx.params.id)),
});

/** `PUT /api/lore/:id/content` — replace a text-holding note's content; 204. */
export const putContent = defineRoute({
  method: "PUT",
  path: "/api/lore/:id/content",
  summary: "Replace a note's content (body: the raw HTML/text, `Content-Type: text/plain`); 204",
  backend: "Core",
  access: "private",
  tag: "content",
  params: idParams,
  body: { kind: "text", mediaTypes: ["text/plain", "text/html"] },
  description: "The body is `text/plain` (the API's form) or `text/html` (what the portal's " +
    "editor sends), in UTF-8 (`charset` absent, or `utf-8`/`utf8` in any case; anything else, " +
    "UTF-7 included, is 415), at most `MAX_CONTENT_BYTES`, and goes to Core as `text/plain` (the " +
    "only text type Core accepts). Image and file notes hold binary content and are refused " +
    "with 409: their bytes are replaced through the upload routes.",
  responses: {
    204: { description: "Replaced" },
    400: "System notes cannot be changed",
    404: "No such note",
    409: "The note holds binary content (image or file) and cannot take text",
    413: "Body over MAX_CONTENT_BYTES",
    415: "Content-Type is neither text/plain nor text/html, or the charset is not UTF-8",
  },
  handler: async (ctx) => {
    refuseSystemNote(ctx.params.id, "changed");
    const core = await ctx.core({ detached: true });
    const note = await core.getNote(ctx.params.id);
    if (!holdsText(note)) {
      throw new ApiError(
        409,
        "CONFLICT",
        `This ${note.type} note holds binary content and cannot be replaced with text`,
        { type: note.type },
      );
    }
    // Core parses only text/plain and application/octet-stream bodies.
    await core.putContent(ctx.params.id, ctx.body, "text/plain");
    return noContent();
  },
});

const previewQuery = z.object({ mode: z.enum(PREVIEW_MODES).default("gm") });

/** `GET /api/lore/:id/preview` — sanitized HTML; revalidated by a content-addressed ETag. */
export const getPreview = defineRoute({
  method: "GET",
  path: "/api/lore/:id/preview",
  summary: "Sanitized HTML preview: `mode=gm` (default) or `mode=player` (GM-only parts removed)",
  backend: "Core",
  access: "private",
  tag: "content",
  params: idParams,
  query: previewQuery,
  description: "`gm` sanitizes with the lore allow-list; `player` also removes `.gm-only` " +
    "elements at any depth and is empty for a note carrying `#gmOnly` or `#draft` (own or " +
    "inherited, any value). Code notes render as escaped `<pre><code>`, image notes as an " +
    "`<img>` of the note itself, other types as nothing. Images of notes, in whatever form " +
    "the content names them, point at `/api/images/<id>/<file>` (which redirects to `GET " +
    "/api/lore/:id/image`; the portal's sanitizer keeps only this form), image attachments at " +
    "`GET /api/attachments/:attachmentId/image/:filename`, both with a URL-safe file name. The ETag derives from Core's content hash (`blobId`), so `If-None-Match` is " +
    "answered 304 without fetching the content, and sanitized output is cached by it.",
  responses: {
    200: {
      description: "Sanitized HTML; sandbox CSP, `Cache-Control: private, no-cache`, " +
        '`ETag: "<mode>-<blobId>"`; empty for players when the note is `#gmOnly`/`#draft`',
      mediaType: "text/html",
    },
    304: { description: "`If-None-Match` matched (the content is not fetched)" },
    404: "No such note",
  },
  handler: async (ctx) => {
    const { id } = ctx.params;
    const note = await (await ctx.core()).getNote(id);
    const plan = planPreview(note, ctx.query.mode);
    const headers = sandboxedHtmlHeaders("text/html; charset=utf-8");
    headers.set("cache-control", "private, no-cache");
    if (plan.etag) headers.set("etag", plan.etag);
    if (plan.etag && etagMatches(ctx.req.headers.get("if-none-match"), plan.etag)) {
      return new Response(null, { status: 304, headers });
    }
    if (plan.kind === "static") return new Response(plan.html, { headers });
    // A detached client: a cached load is shared by concurrent requests, so one caller's
    // disconnect must not fail the others (the upstream timeout still bounds it).
    let changed = false;
    const load = async () => {
      const content = await (await ctx.core({ detached: true })).contentText(id);
      changed = plan.blobId !== null && await contentBlobId(content) !== plan.blobId;
      return plan.render(content);
    };
    const { cacheKey } = plan;
    const html = cacheKey ? await ctx.state.preview.getOrLoad(cacheKey, load) : await load();
    // Saved in between: this content is not the planned blob, so it must not be kept under it.
    if (changed && cacheKey) ctx.state.preview.delete(cacheKey);
    return new Response(html, { headers });
  },
});

/** `GET /api/lore/:id/revisions` — every revision, newest first. */
export const listRevisions = defineRoute({
  method: "GET",
  path: "/api/lore/:id/revisions",
  summary: "The note's revisions, newest first (complete list)",
  backend: "Core",
  access: "private",
  tag: "content",
  params: idParams,
  responses: {
    200: {
      description: "`{ revisions: Revision[] }`: Core's revision objects, newest first",
      schema: z.object({ revisions: z.array(revisionSchema) }),
    },
    404: "No such note",
  },
  handler: async (ctx) => {
    const revisions = await (await ctx.core()).revisions(ctx.params.id);
    return json({ revisions });
  },
});

/** `GET /api/lore/:id/revisions/:revId/content` — one revision's content, if it is this note's. */
export const getRevisionContent = defineRoute({
  method: "GET",
  path: "/api/lore/:id/revisions/:revId/content",
  summary: "Content of one revision of this note (streamed; sandboxed like raw content)",
  backend: "Core",
  access: "private",
  tag: "content",
  params: z.object({ id: idSchema, revId: idSchema }),
  description: `${RAW_NOTES} A revision of another note answers exactly like a missing one.`,
  responses: {
    200: rawContent(
      "The revision's content, with the same headers as `GET /api/lore/:id/content`",
    ),
    404: "No such revision of this note (a revision of another note is not found either)",
  },
  handler: async (ctx) => {
    const core = await ctx.core();
    const { id, revId } = ctx.params;
    // Both calls at once; the content is only passed on once the revision proves to be this note's.
    const [revision, content] = await Promise.allSettled([
      core.getRevision(revId),
      core.revisionContent(revId),
    ]);
    const owned = revision.status === "fulfilled" && revision.value.noteId === id;
    if (!owned || content.status === "rejected") {
      // (a body the deadline or the client ended is gone already: cancelling it fails)
      if (content.status === "fulfilled") await content.value.body?.cancel().catch(() => {});
      if (revision.status === "rejected") throw revision.reason;
      if (!owned) throw revisionNotFound();
      throw (content as PromiseRejectedResult).reason;
    }
    return rawContentResponse(ctx, content.value);
  },
});

/**
 * Core's content passed through unbuffered, as an inert document: text types keep their charset,
 * anything else (binaries, SVG, scripts) becomes `application/octet-stream`. The body has the
 * streamed-body deadlines: a stalled or endless one is cut off (the client sees it fail).
 */
function rawContentResponse(ctx: StreamContext, upstream: Response): Response {
  const type = rawContentType(upstream.headers.get("content-type"));
  const guarded = upstream.body && guardedResponseBody(ctx, upstream.body, "Core");
  // Only UTF-8 HTML is read as text (Core sends every string content so).
  const html = /^text\/html(?:; charset=utf-?8)?$/.test(type);
  const body = guarded && html ? guarded.pipeThrough(rootImageLinksStream()) : guarded;
  return new Response(body, { headers: sandboxedHtmlHeaders(type) });
}

function rawContentType(header: string | null): string {
  const [type, ...params] = (header ?? "").split(";");
  const media = type.trim().toLowerCase();
  if (!(RAW_MEDIA_TYPES as readonly string[]).includes(media)) return "application/octet-stream";
  const charset = params.map((p) => p.trim()).find((p) => /^charset=/i.test(p))
    ?.slice("charset=".length).replace(/"/g, "").trim().toLowerCase();
  return charset && /^[a-z0-9._-]{1,40}$/.test(charset) ? `${media}; charset=${charset}` : media;
}

// Core's string-typed notes; image and file notes hold binary blobs.
const STRING_TYPES: ReadonlySet<string> = new Set([
  "text",
  "code",
  "relationMap",
  "search",
  "render",
  "book",
  "mermaid",
  "canvas",
  "webView",
  "mindMap",
  "aiChat",
]);
const STRING_MIMES: ReadonlySet<string> = new Set([
  "application/json",
  "application/javascript",
  "application/x-javascript",
  "application/x-sql",
]);

/** Whether Core stores this note's content as a string (so a text body cannot corrupt it). */
function holdsText(note: Pick<CoreNote, "type" | "mime">): boolean {
  if (note.type === "image" || note.type === "file") return false;
  return STRING_TYPES.has(note.type) || note.mime.startsWith("text/") ||
    STRING_MIMES.has(note.mime);
}

/** Exactly the answer Core's own REVISION_NOT_FOUND produces, so ownership is not revealed. */
function revisionNotFound(): ApiError {
  return mapCoreError(404, JSON.stringify({ code: "REVISION_NOT_FOUND" }), new Headers());
}

/** The content and revision routes. */
export const contentRoutes: Route[] = [
  getContent,
  putContent,
  getPreview,
  listRevisions,
  getRevisionContent,
];
