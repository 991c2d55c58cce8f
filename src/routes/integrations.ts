/**
 * The user's Core integration, stored by the Parser: connect (Core password or a ready token),
 * status and disconnect. Core URLs and tokens never appear in answers, cookies or logs.
 *
 * @module
 */
import { z } from "zod";
import { ApiError, upstreamCode } from "../http/errors.ts";
import { json } from "../http/response.ts";
import { defineRoute, type Route } from "../api/router.ts";
import { allowedBaseUrl, enforceRateLimit } from "./auth.ts";

/** The name of the ETAPI tokens the service creates in Core. */
export const CORE_TOKEN_NAME = "Lore Portal Proxy";

const coreUrl = z.url({ protocol: /^https?$/ }).max(2048);
const coreToken = z.string().trim().min(1).max(4096);

const connectBody = z.strictObject({
  password: z.string().min(1).max(1024).optional(),
  token: coreToken.optional(),
  url: coreUrl.optional(),
  baseUrl: coreUrl.optional().describe("Another name for `url` (the front end's)"),
  allcodex: z.strictObject({ url: coreUrl, token: coreToken }).optional().describe(
    "`url` and `token` in one field, alone: the older front end's form (`/api/config/connect`)",
  ),
})
  .refine(
    (b) => !b.allcodex || [b.password, b.token, b.url, b.baseUrl].every((v) => v === undefined),
    "give allcodex alone",
  )
  .refine((b) => b.url === undefined || b.baseUrl === undefined, "give url or baseUrl, not both")
  .transform(({ allcodex, baseUrl, ...b }) =>
    allcodex
      ? { password: undefined, token: allcodex.token, url: allcodex.url }
      : { password: b.password, token: b.token, url: b.url ?? baseUrl }
  )
  .refine(
    (b) => (b.password === undefined) !== (b.token === undefined),
    "give exactly one of password and token",
  );

/** Whether Core is connected for this user, and when that last changed. */
const integrationStatus = z.object({
  connected: z.boolean(),
  updatedAt: z.string().nullable().describe("ISO 8601"),
});

/** `POST /api/integrations/codex/connect` — get a Core token and store it in the Parser. */
export const connectCore = defineRoute({
  method: "POST",
  path: "/api/integrations/codex/connect",
  // the front end's names: its connect, and the older one's token and password forms
  aliases: [
    "/api/integrations/allcodex/connect",
    "/api/config/connect",
    "/api/config/allcodex-login",
  ],
  summary:
    "Connect Core: a Core password (exchanged for an ETAPI token) or a token, stored in the Parser",
  backend: "Both",
  access: "private",
  tag: "integrations",
  body: { kind: "json", schema: connectBody },
  description: "Exactly one of `password` and `token`; `url` (or `baseUrl`; default " +
    "`CORE_URL`, which this service's own origin, the `url` `GET /api/config/status` gives, " +
    "names too) must be on the allow-list (`CORE_URL` + `CORE_ALLOWED_URLS`). The older front " +
    "end's `{ allcodex: { url, token } }` is the same as `{ url, token }`. The Parser is " +
    "resolved first, so no Core " +
    "token is minted that could not be stored; should storing it fail anyway, the token stays in " +
    `Core (named "${CORE_TOKEN_NAME}" among its ETAPI tokens). The Core URL and token never ` +
    "appear in answers, cookies or logs. Rate-limited per client address with login and register.",
  responses: {
    200: {
      description: "`{ connected: true, updatedAt }`",
      schema: integrationStatus.extend({ connected: z.literal(true) }),
    },
    400: "Bad body or a `url`/`baseUrl` outside the allow-list",
    401: "`UNAUTHORIZED`: wrong Core password (`details.field`: `password`)",
    429: "Too many attempts (`Retry-After`)",
    503: "No Core URL or no Parser credentials",
  },
  handler: async (ctx) => {
    await enforceRateLimit(ctx, "connect");
    const baseUrl = allowedBaseUrl(ctx, "core", ctx.body.url);
    // resolve the Parser first: no Core token is minted that could not be stored
    const parser = await ctx.parser({ detached: true });
    let token = ctx.body.token;
    if (ctx.body.password !== undefined) {
      try {
        token = await ctx.coreAt(baseUrl).login(ctx.body.password, CORE_TOKEN_NAME);
      } catch (e) {
        if (upstreamCode(e) === "WRONG_PASSWORD" || (e instanceof ApiError && e.status === 401)) {
          throw new ApiError(401, "UNAUTHORIZED", "Wrong Core password", { field: "password" });
        }
        throw e;
      }
    }
    const { updatedAt } = await parser.connectCore(baseUrl, token!);
    // clears this browser's "Core disconnected" marker and the cached Core credentials
    await ctx.credentials.setCoreOff(false);
    return json({ connected: true, updatedAt });
  },
});

/** `GET /api/integrations/codex/status`. */
export const coreStatus = defineRoute({
  method: "GET",
  path: "/api/integrations/codex/status",
  aliases: ["/api/integrations/allcodex/status"],
  summary: "Whether Core is connected for this user",
  backend: "Parser",
  access: "private",
  tag: "integrations",
  responses: {
    200: {
      description: "`{ connected, updatedAt }`, never a URL or token",
      schema: integrationStatus,
    },
  },
  handler: async (ctx) => {
    const { connected, updatedAt } = await (await ctx.parser()).coreStatus();
    return json({ connected, updatedAt });
  },
});

/** `DELETE /api/integrations/codex` — remove the stored Core credentials. */
export const disconnectCore = defineRoute({
  method: "DELETE",
  path: "/api/integrations/codex",
  aliases: ["/api/integrations/allcodex"],
  summary: "Disconnect Core: the Parser forgets this user's Core token",
  backend: "Parser",
  access: "private",
  tag: "integrations",
  description: "This caller's cached Core credentials are dropped at once, so the next request " +
    "no longer reaches Core with them.",
  responses: {
    200: {
      description: "`{ connected: false }`",
      schema: z.object({ connected: z.literal(false) }),
    },
  },
  handler: async (ctx) => {
    await (await ctx.parser({ detached: true })).disconnectCore();
    await ctx.credentials.invalidateCore();
    return json({ connected: false });
  },
});

/** Integration routes. */
export const integrationRoutes: Route[] = [connectCore, coreStatus, disconnectCore];
