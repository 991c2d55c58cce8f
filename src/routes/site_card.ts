/**
 * The world's generated preview card (`src/site/world_card.ts`) at a URL naming a digest of its
 * bytes, for link previews of pages without a picture of their own. It is drawn from the share
 * root's title as the visitor's view shows it, after the same 404 and 401 checks as the home page.
 *
 * @module
 */
import { z } from "zod";
import { defineRoute, type Route } from "../api/router.ts";
import { type AnswerRenderer, publicNotFound, siteCredentials } from "../share/public_api.ts";
import { renderedAnswer } from "../share/rendered_answer.ts";
import { assetResponse } from "../site/headers.ts";
import { siteFrame } from "../site/site_model.ts";
import { worldCard, worldCardPath } from "../site/world_card.ts";
import { shareFor } from "../pipeline/context.ts";
import { htmlPage } from "./site.ts";

/** The world's name as the visitor's view shows it: all the card is drawn from. */
const WORLD_NAME: AnswerRenderer<string> = {
  view: "world-name",
  render: (name) => renderedAnswer(name, []),
};

/** `GET /public/card/:file` — the world's generated preview card. */
export const worldCardRoute = defineRoute({
  method: "GET",
  path: "/public/card/:file",
  summary: "Public site: the world's generated preview card (PNG, 1200 × 630)",
  backend: "Core",
  access: "public",
  tag: "site",
  params: z.object({ file: z.string().describe("`<digest>.png`, as the pages name it") }),
  description: "The picture link previews show for a page without one of its own (`og:image`, " +
    "`twitter:image`), when the share root names no image note with `~shareCard`: the world's " +
    "name (the share root's title, nothing else) in the site's colours. The file name is a " +
    "digest of the PNG's bytes, so it is cached for a year; any other name is a 404. The share " +
    "root's `#shareCredentials` guard it like every page.",
  errorMediaType: "text/html",
  responses: {
    200: {
      description: "The card: `Cache-Control: public, max-age=31536000, immutable` (`private` " +
        "for a visitor who gave the share's password), a strong ETag",
      mediaType: "image/png",
    },
    304: { description: "`If-None-Match` matched the ETag (no body)" },
    401: "The share is behind `#shareCredentials` (an HTML error page, no `WWW-Authenticate`)",
    404: "Not the card of this world's name, or nothing is shared",
    502: "Core failed",
    503: "Core is not configured, not reachable or refuses the service's token",
    504: "Core did not answer in time",
  },
  handler: (ctx) =>
    htmlPage(ctx, async () => {
      const credentials = await siteCredentials(ctx.req, ctx.sealKey);
      const { body: name } = await shareFor(ctx).siteAnswer(
        credentials,
        { subject: "world-name" },
        WORLD_NAME,
        async (view) => (await siteFrame(view, "")).title,
      );
      const card = worldCard(name);
      if (ctx.url.pathname !== worldCardPath(card)) throw publicNotFound();
      return assetResponse(ctx.req, card.png, {
        contentType: "image/png",
        cacheControl: `${credentials ? "private" : "public"}, max-age=31536000, immutable`,
        etag: `"${card.key}"`,
        varyAuthorization: true,
      });
    }),
});

/** This group's routes. */
export const siteCardRoutes: Route[] = [worldCardRoute];
