/**
 * Configuration routes: disconnecting stored credentials, the portal config (lore root), a
 * connectivity check of both backends, the Parser's model list and the (dangerous) wipe.
 *
 * @module
 */
import { z } from "zod";
import { ApiError } from "../http/errors.ts";
import { json } from "../http/response.ts";
import { idSchema } from "../lore/ids.ts";
import { PORTAL_CONFIG_CACHE_MS } from "../state/portal_config_in_core.ts";
import { type Ctx, defineRoute, type Route } from "../api/router.ts";
import { credentialSourceSchema } from "./response_schemas.ts";
import { siteOrigin } from "./site.ts";

const disconnectQuery = z.object({
  service: z.enum(["codex", "parser", "all", "allcodex", "allknower"])
    // the front end's product names, accepted beside the neutral ones
    .transform((s) => s === "allcodex" ? "codex" : s === "allknower" ? "parser" : s)
    .describe(
      "`codex`, `parser` or `all`; `allcodex` and `allknower` are the front end's " +
        "names for `codex` and `parser`",
    ),
});

const backendName = z.enum(["codex", "parser"]);

/**
 * `DELETE /api/config/disconnect?service=codex|parser|all` — forget credentials in this browser
 * (`allcodex`/`allknower` accepted for `codex`/`parser`).
 */
export const disconnect = defineRoute({
  method: "DELETE",
  path: "/api/config/disconnect",
  summary:
    "Clear stored credentials in this browser: `codex` (Core off until connect), `parser` (log out), `all`",
  backend: "None",
  access: "private",
  tag: "config",
  query: disconnectQuery,
  description: "`codex` stops using Core in this browser (a sealed marker cookie) until the " +
    "next connect; `parser` logs out locally (the session cookies are cleared); `all` does both.",
  responses: {
    200: {
      description: '`{ disconnected: ("codex" | "parser")[] }`; effective from the next request',
      schema: z.object({ disconnected: z.array(backendName) }),
    },
    400: "`service` missing or not one of codex, parser, all (or allcodex, allknower)",
  },
  handler: async (ctx) => {
    const { service } = ctx.query;
    const disconnected: ("codex" | "parser")[] = [];
    if (service === "codex" || service === "all") {
      await ctx.credentials.setCoreOff(true);
      disconnected.push("codex");
    }
    if (service === "parser" || service === "all") {
      // after setCoreOff: its cookies must not outlive the clearing ones
      await ctx.credentials.endSession();
      disconnected.push("parser");
    }
    return json({ disconnected });
  },
});

/** The portal config as answered: where `loreRootNoteId` comes from is `source`. */
const portalAnswer = z.object({
  loreRootNoteId: z.string(),
  source: z.enum(["file", "env"]).describe(
    "`file`: set through this API (stored in `DATA_DIR/portal.json`, or in Core with " +
      "`PORTAL_CONFIG_STORE=core`); `env`: `LORE_ROOT_NOTE_ID`",
  ),
});

/** What the portal routes decide where the API is silent. */
const PORTAL_NOTES = "The config lives in `DATA_DIR/portal.json`, written atomically, or with " +
  "`PORTAL_CONFIG_STORE=core` in a hidden `#lorePortalConfig` note in Core, written with the " +
  `server's token and read again after ${PORTAL_CONFIG_CACHE_MS / 1000} s (last write wins); ` +
  "without one, or with a corrupt one (logged), `LORE_ROOT_NOTE_ID` is the lore root.";

/** How the Core store's failures reach a caller of the portal routes. */
const STORE_FAILURES = {
  502: "`PORTAL_CONFIG_STORE=core`: Core failed and no config was read before",
  503: "`PORTAL_CONFIG_STORE=core`: Core refused the server's token (`NOT_CONFIGURED`), or is " +
    "unreachable and no config was read before",
  504: "`PORTAL_CONFIG_STORE=core`: Core did not answer in time and no config was read before",
} as const;

/** `GET /api/config/portal` — the lore root note id and where it comes from. */
export const getPortal = defineRoute({
  method: "GET",
  path: "/api/config/portal",
  summary: "Portal config: the lore root note id (`source`: `file` once set, else `env`)",
  backend: "None",
  access: "private",
  tag: "config",
  description: PORTAL_NOTES,
  responses: {
    200: { description: '`{ loreRootNoteId, source: "file" | "env" }`', schema: portalAnswer },
    ...STORE_FAILURES,
  },
  handler: async (ctx) => json(await ctx.state.portal.get()),
});

// trimmed first: the front end sends the field as typed
const portalBody = z.strictObject({ loreRootNoteId: z.string().trim().pipe(idSchema) });

/** `PUT /api/config/portal` — set the lore root after checking the note exists in Core. */
export const putPortal = defineRoute({
  method: "PUT",
  path: "/api/config/portal",
  summary:
    "Set the lore root note id (the note must exist in Core); stored in `DATA_DIR/portal.json` or Core",
  backend: "Core",
  access: "private",
  tag: "config",
  body: { kind: "json", schema: portalBody },
  description:
    `The note must exist in Core (checked first; nothing is stored otherwise). ${PORTAL_NOTES}`,
  responses: {
    200: {
      description: '`{ loreRootNoteId, source: "file" }`',
      schema: portalAnswer.extend({ source: z.literal("file") }),
    },
    400: "Body is not exactly `{ loreRootNoteId }` with a valid id",
    404: "No such note in Core (nothing stored)",
  },
  handler: async (ctx) => {
    const core = await ctx.core();
    await core.getNote(ctx.body.loreRootNoteId);
    return json(await ctx.state.portal.set(ctx.body.loreRootNoteId));
  },
});

/**
 * What the status route says about one backend, in the front end's words (`ok`, `configured`,
 * `url`, `version`, `error`): facts only, never a backend's URL or a token.
 */
const backendStatus = z.object({
  ok: z.boolean().describe("Reachable with this caller's credentials"),
  configured: z.boolean().describe("This caller has credentials for it"),
  url: z.string().describe(
    "This service's own public origin (`PUBLIC_ORIGIN`, else the origin the request used): " +
      "the address the front end reaches the backend through, never the backend's own",
  ),
  version: z.string().optional().describe("The backend's version, when it answered"),
  latencyMs: z.number().optional().describe("How long the version check took"),
  error: z.string().optional().describe("Why it is not configured or not reachable: an error code"),
  message: z.string().optional().describe("The same in words"),
  reason: z.string().optional(),
});
type BackendStatus = z.output<typeof backendStatus>;

/**
 * Resolves a backend client and asks it for its version; any failure becomes a fact in the
 * answer instead of an error of the route.
 */
async function probe<C>(
  ctx: Ctx,
  url: string,
  client: () => Promise<C>,
  version: (c: C) => Promise<string>,
): Promise<BackendStatus> {
  const down = (e: unknown, configured: boolean): BackendStatus => {
    const known = e instanceof ApiError ? e : undefined;
    const reason = (known?.details as { reason?: unknown } | undefined)?.reason;
    return {
      ok: false,
      configured,
      url,
      error: known?.code ?? "INTERNAL_ERROR",
      message: known?.message ?? "The check failed inside the service",
      ...(typeof reason === "string" ? { reason } : {}),
    };
  };
  let c: C;
  try {
    c = await client();
  } catch (e) {
    await ctx.credentials.onError(e);
    // no credentials for this caller (none configured, or not logged in): nothing to probe
    const missing = e instanceof ApiError &&
      (e.code === "NOT_CONFIGURED" || e.code === "UNAUTHORIZED");
    return down(e, !missing);
  }
  const started = performance.now();
  try {
    const v = await version(c);
    return {
      ok: true,
      configured: true,
      url,
      version: v,
      latencyMs: Math.round(performance.now() - started),
    };
  } catch (e) {
    await ctx.credentials.onError(e);
    return down(e, true);
  }
}

/** `GET /api/config/status` — can this caller reach Core and Parser? Always 200. */
export const status = defineRoute({
  method: "GET",
  path: "/api/config/status",
  summary:
    "Connectivity check of Core and Parser for this caller (never fails; no backend URLs or tokens)",
  backend: "Both",
  access: "private",
  tag: "config",
  description: "Always 200: a backend without credentials for this caller, or one that does " +
    "not answer, is a fact in the answer (`ok`, `configured`, `error`), never an error. The " +
    "fields are named as the front end reads them: `allcodex` is Core, `allknower` the Parser. " +
    "Each `url` is this service's public origin (`PUBLIC_ORIGIN`, else the origin the request " +
    "used), where the public site answers `/share/<alias|id>`; sent back as the `url` of a " +
    "login or connect, it names the configured backend.",
  responses: {
    200: {
      description: "`{ allcodex: BackendStatus, allknower: BackendStatus, session: { source: " +
        '"session" | "provisioned" | "env" | null } }`',
      schema: z.object({
        allcodex: backendStatus,
        allknower: backendStatus,
        session: z.object({ source: credentialSourceSchema.nullable() }),
      }),
    },
  },
  handler: async (ctx) => {
    const url = siteOrigin(ctx);
    const [allcodex, allknower] = await Promise.all([
      probe(ctx, url, () => ctx.core(), async (c) => (await c.appInfo()).appVersion),
      probe(ctx, url, () => ctx.parser(), async (p) => (await p.info()).version),
    ]);
    const source = await ctx.credentials.parser().then((p) => p.source, () => null);
    return json({ allcodex, allknower, session: { source } });
  },
});

const modelsSchema = z.record(
  z.string(),
  z.object({ models: z.array(z.string()), autoMode: z.boolean() }),
);

/** `GET /api/config/models` — the Parser's models per task. */
export const models = defineRoute({
  method: "GET",
  path: "/api/config/models",
  summary: "Configured parser models per task",
  backend: "Parser",
  access: "private",
  tag: "config",
  responses: {
    200: {
      description: "`{ [task]: { models: string[], autoMode: boolean } }`",
      schema: modelsSchema,
    },
  },
  handler: async (ctx) => {
    const raw = await (await ctx.parser()).json("GET", "/config/models");
    const parsed = modelsSchema.safeParse(raw);
    if (!parsed.success) {
      throw new ApiError(502, "UPSTREAM_ERROR", "The Parser sent an unexpected model list", {
        service: "parser",
      });
    }
    return json(parsed.data);
  },
});

/** The exact words a wipe must be confirmed with. */
export const WIPE_CONFIRMATION = "DELETE ALL LORE";

const wipeBody = z.strictObject({ confirm: z.literal(WIPE_CONFIRMATION) });
const wipeAnswer = z.object({ ok: z.boolean(), coreDeleted: z.number().int().min(0) });

/** `POST /api/config/wipe` — dangerous: the Parser deletes every `#lore` note and its index. */
export const wipe = defineRoute({
  method: "POST",
  path: "/api/config/wipe",
  summary:
    'Dangerous: wipe all lore and the semantic index through the Parser (`ENABLE_WIPE=true` and `{ confirm: "DELETE ALL LORE" }` required)',
  backend: "Parser",
  access: "private",
  tag: "config",
  body: { kind: "json", schema: wipeBody },
  description: "Deletes every `#lore` note and the Parser's semantic index, irreversibly. The " +
    "title index and preview caches are cleared whatever the outcome.",
  responses: {
    200: { description: "`{ ok, coreDeleted }` from the Parser", schema: wipeAnswer },
    400: 'Body is not exactly `{ confirm: "DELETE ALL LORE" }`',
    403: "`ENABLE_WIPE` is off, or the Parser refuses to wipe (production build)",
  },
  handler: async (ctx) => {
    if (!ctx.config.ENABLE_WIPE) {
      throw new ApiError(403, "FORBIDDEN", "Wiping is disabled on this service (ENABLE_WIPE)");
    }
    // detached: once started, the wipe runs to its end and the caches below are always cleared
    const parser = await ctx.parser({ detached: true });
    let raw: unknown;
    try {
      raw = await parser.json("POST", "/config/wipe");
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        throw new ApiError(403, "FORBIDDEN", "The Parser refuses to wipe (production mode)", {
          service: "parser",
          reason: "parser-wipe-disabled",
        });
      }
      throw e;
    } finally {
      ctx.state.autolink.clear();
      ctx.state.preview.clear();
    }
    const parsed = wipeAnswer.safeParse(raw);
    if (!parsed.success) {
      throw new ApiError(502, "UPSTREAM_ERROR", "The Parser sent an unexpected wipe answer", {
        service: "parser",
      });
    }
    return json(parsed.data);
  },
});

/** The configuration routes. */
export const configRoutes: Route[] = [disconnect, getPortal, putPortal, status, models, wipe];
