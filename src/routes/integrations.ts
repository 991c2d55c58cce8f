/**
 * The user's Core integration, stored by the Parser: connect (Core password or a ready token),
 * status and disconnect. Core URLs and tokens never appear in answers, cookies or logs.
 *
 * @module
 */
import { z } from "zod";
import { ApiError, upstreamCode } from "../http/errors.ts";
import { json } from "../http/response.ts";
import { defineRoute, type Route } from "../router.ts";
import { allowedBaseUrl, enforceRateLimit } from "./auth.ts";

/** The name of the ETAPI tokens the service creates in Core. */
export const CORE_TOKEN_NAME = "Lore Portal Proxy";

const connectBody = z.strictObject({
  password: z.string().min(1).max(1024).optional(),
  token: z.string().trim().min(1).max(4096).optional(),
  url: z.url({ protocol: /^https?$/ }).max(2048).optional(),
}).refine(
  (b) => (b.password === undefined) !== (b.token === undefined),
  "give exactly one of password and token",
);

/** `POST /api/integrations/codex/connect` — get a Core token and store it in the Parser. */
export const connectCore = defineRoute({
  method: "POST",
  path: "/api/integrations/codex/connect",
  summary:
    "Connect Core: a Core password (exchanged for an ETAPI token) or a token, stored in the Parser",
  backend: "Both",
  access: "private",
  tag: "integrations",
  body: { kind: "json", schema: connectBody },
  responses: {
    200: "`{ connected: true, updatedAt }`",
    400: "Bad body or a `url` outside the allow-list",
    401: "Wrong Core password",
    429: "Too many attempts (`Retry-After`)",
    503: "No Core URL or no Parser credentials",
  },
  handler: async (ctx) => {
    enforceRateLimit(ctx, "connect");
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
  summary: "Whether Core is connected for this user",
  backend: "Parser",
  access: "private",
  tag: "integrations",
  responses: { 200: "`{ connected, updatedAt }`" },
  handler: async (ctx) => {
    const { connected, updatedAt } = await (await ctx.parser()).coreStatus();
    return json({ connected, updatedAt });
  },
});

/** `DELETE /api/integrations/codex` — remove the stored Core credentials. */
export const disconnectCore = defineRoute({
  method: "DELETE",
  path: "/api/integrations/codex",
  summary: "Disconnect Core: the Parser forgets this user's Core token",
  backend: "Parser",
  access: "private",
  tag: "integrations",
  responses: { 200: "`{ connected: false }`" },
  handler: async (ctx) => {
    await (await ctx.parser({ detached: true })).disconnectCore();
    await ctx.credentials.invalidateCore();
    return json({ connected: false });
  },
});

/** Integration routes. */
export const integrationRoutes: Route[] = [connectCore, coreStatus, disconnectCore];
