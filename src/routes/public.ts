/**
 * The public share API (`/api/public/*`): no authentication, read-only, and only what the share
 * filter lets through (`src/share/public_api.ts`, shared with the public site). Every answer
 * carries an ETag and answers `If-None-Match` with 304.
 *
 * @module
 */
import { z } from "zod";
import { idSchema } from "../lore/ids.ts";
import { RASTER_MIMES } from "../media/image_info.ts";
import { defineRoute, type Route } from "../api/router.ts";
import { shareFor } from "../pipeline/context.ts";
import { REDACTION_HTML } from "../sanitize/redaction.ts";
import {
  type AnswerRenderer,
  basicCredentials,
  keptPublicAnswer,
  type PublicNoteResult,
  type PublicSearchOutcome,
  siteCredentials,
} from "../share/public_api.ts";
import { answerFor, type RenderedAnswer, renderedAnswer } from "../share/rendered_answer.ts";
import { publicLoreNoteSchema, publicSearchResultSchema } from "../share/public_types.ts";

/**
 * A note id or `#shareAlias` as it appears in a path segment (percent-encoded; control
 * characters never survive URL parsing unencoded).
 */
const idOrAliasSchema = z.string().min(1).max(256).regex(
  /^[^\s/\\]+$/,
  "must be a note id or share alias",
);

/** The answers every public route shares. */
const COMMON_RESPONSES = {
  304: { description: "`If-None-Match` matched the ETag (no body)" },
  503: "`NOT_CONFIGURED`: the server has no Core credentials for the public share, or Core " +
    "refuses them (never a 401 that would prompt for a password)",
};

/** How the JSON answers are cached, shared by note and search. */
const JSON_CACHING = "Answers are `public, no-cache` (`private, no-cache` with an " +
  "`Authorization` header), always `Vary: Authorization`, with a weak ETag over the answer " +
  "itself (body and content headers), so it changes only when what this visitor reads does, " +
  "never with a note the visitor may not see; `If-None-Match` is answered 304 only after the " +
  "visibility and password checks.";

/**
 * JSON for visitors: revalidated on every use (`no-cache` + weak ETag) so an unpublished note
 * disappears at once; `private` when the request carried credentials; always
 * `Vary: Authorization`.
 */
function publicJson(body: unknown, noIndex: boolean, authorized: boolean): RenderedAnswer {
  const headers: [string, string][] = [
    ["cache-control", authorized ? "private, no-cache" : "public, no-cache"],
    ["vary", "Authorization"],
    ["content-type", "application/json; charset=utf-8"],
  ];
  if (noIndex) headers.push(["x-robots-tag", "noindex"]);
  return renderedAnswer(JSON.stringify(body), headers);
}

const NOTE_JSON: AnswerRenderer<PublicNoteResult> = {
  view: "api",
  render: (r, authorized) => publicJson(r.note, r.noIndex, authorized),
};

const SEARCH_JSON: AnswerRenderer<PublicSearchOutcome> = {
  view: "api",
  render: (r, authorized) => publicJson(r.result, true, authorized),
};

/** `GET /api/public/lore/:id` — one published note by id or alias. */
export const publicLore = defineRoute({
  method: "GET",
  path: "/api/public/lore/:id",
  summary: "Published note by noteId or #shareAlias: sanitized player HTML, public relations only",
  backend: "Core",
  access: "public",
  tag: "public",
  params: z.object({ id: idOrAliasSchema }),
  description: "`contentHtml` is the note's content through the player sanitizer (`.gm-only` " +
    "removed at any depth): a link naming a note in any form (`#root/…`, Core's share URLs " +
    "`/share/<id|alias>` on any host or relative, `./<id|alias>`, `api/notes/<id>`-style, image " +
    "and attachment URLs) becomes `/public/lore/<alias or id>` when the note is public; " +
    "external http(s) and mailto links stay, other relative links and links to the backends' " +
    "hosts lose their href; a link to a note the visitor may not see loses its target, and its " +
    "text too when that text may name the target (always when the target is outside the share), " +
    `leaving in its place one fixed mark, the same whatever it named: \`${REDACTION_HTML}\`. ` +
    "An included note that is not public goes whole; images are kept only of public image notes " +
    "and the note's own image attachments (as `/api/public/images/…`). `attributes` are the " +
    "note's own non-empty labels its template promotes and the public attribute policy allows, " +
    "under the promoted alias: never `share*`, `draft`, `gmOnly`, GM-facing fields (`secrets`, " +
    "`gmNotes`, `hooks`, `truthStatus`, a quest's `consequences`, a scene's `outcome`) or fields " +
    "the GM lists in `#sharePrivateFields` on the share root or the note; a label no known " +
    "template calls player-facing only when listed in `#sharePublicFields`. Relations the GM " +
    "lists private are left out too. " +
    `${JSON_CACHING} \`X-Robots-Tag: noindex\` ` +
    "when the note or the share root carries `#shareDisallowRobotIndexing`.",
  responses: {
    200: {
      description: "The public lore note: sanitized player HTML, relations to public notes only",
      schema: publicLoreNoteSchema,
    },
    401: "`UNAUTHORIZED`: the note is behind `#shareCredentials` and the request sent no or " +
      'wrong HTTP Basic credentials (`WWW-Authenticate: Basic realm="Shared lore"`)',
    404: "`NOT_FOUND`: missing, draft, GM-only, protected or not shared (one answer for all, " +
      "message `Not found`; 404 wins over 401)",
    ...COMMON_RESPONSES,
  },
  handler: async (ctx) => {
    // the API reads HTTP Basic only: the site's unlock cookie opens pages, not this answer
    const credentials = basicCredentials(ctx.req.headers.get("authorization"));
    const kept = keptPublicAnswer(
      ctx.state.publicShare,
      NOTE_JSON.view,
      ctx.params.id,
      credentials,
    );
    return answerFor(
      ctx.req,
      kept ?? await shareFor(ctx).noteAnswer(ctx.params.id, credentials, NOTE_JSON),
    );
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
  description: "`q=#lore` lists all published lore (score 1, by title). Otherwise every word " +
    "must appear in the title or the visible text of a public note other than an image (images " +
    "are shown by the notes that use them; case and accents ignored; " +
    "at most 16 words count): per word, a title word starting with it scores 3, the title " +
    "containing it 2, the text 1. When no note holds every word, a word of five letters or " +
    "more also matches a visible word one edit away (a typo), at half the score. The text searched is what the public note shows, so a hidden " +
    "note's title is no search oracle. Notes behind `#shareCredentials` are found only with " +
    "their password. Complete, no cap; nothing shared (or several share roots) is " +
    `\`{ results: [] }\`. ${JSON_CACHING} Always \`X-Robots-Tag: noindex\`.`,
  responses: {
    200: {
      description: "`{ results: [{ id, title, score, path }] }`, best first, then by title; " +
        "`id` is the `#shareAlias` when there is one, `path` the public ancestors' titles",
      schema: publicSearchResultSchema,
    },
    400: "`INVALID_REQUEST`: `q` empty or longer than 200 characters",
    ...COMMON_RESPONSES,
  },
  handler: async (ctx) => {
    const credentials = basicCredentials(ctx.req.headers.get("authorization"));
    return answerFor(
      ctx.req,
      await shareFor(ctx).searchAnswer(ctx.query.q, credentials, SEARCH_JSON),
    );
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
  description: "`id` is a public image note, or an image attachment of a public note; the file " +
    "name is ignored. Behind `#shareCredentials`, HTTP Basic or the site's unlock cookie (`POST " +
    "/public/unlock`) opens it, since the site's pages show it. Core's declared type must be PNG, JPEG, GIF, WebP or AVIF and the bytes " +
    "must prove it, or the answer is 404. The bytes are streamed as they arrive, with " +
    "`Content-Security-Policy: default-src 'none'; sandbox` and `nosniff`.",
  responses: {
    200: {
      description: "The image; `Cache-Control: public, max-age=86400` (`private` and " +
        "`Vary: Authorization` behind `#shareCredentials`), a weak ETag from Core's blob id " +
        "(the image's bytes) alone",
      mediaType: RASTER_MIMES,
    },
    401: "`UNAUTHORIZED`: the owning note is behind `#shareCredentials` (`WWW-Authenticate: " +
      "Basic`)",
    404: "`NOT_FOUND`: not an image of a published note (missing and hidden alike), or not an " +
      "allowed raster image",
    ...COMMON_RESPONSES,
  },
  handler: async (ctx) =>
    shareFor(ctx).image(
      ctx.params.id,
      // the site's pages show these images: its unlock cookie opens them as it opens the page
      await siteCredentials(ctx.req, ctx.sealKey),
      ctx.signal,
      ctx.req.headers.get("if-none-match"),
    ),
});

/** The public share routes. */
export const publicRoutes: Route[] = [publicLore, publicSearch, publicImage];
