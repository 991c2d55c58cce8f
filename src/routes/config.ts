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
import { PORTAL_CONFIG_CACHE_MS } from "../portal_config_core.ts";
import { type Ctx, defineRoute, type Route } from "../router.ts";
import { credentialSourceSchema } from "./response_schemas.ts";

const disconnectQuery = z.object({ service: z.enum(["codex", "parser", "all"]) });

const backendName = z.enum(["codex", "parser"]);

/** `DELETE /api/config/disconnect?service=codex|parser|all` — forget credentials in this browser. */
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
    400: "`service` missing or not one of codex, parser, all",
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

const portalBody = z.strictObject({ loreRootNoteId: idSchema });

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

/** What the status route says about one backend: facts only, never a URL or a token. */
const backendStatus = z.object({
  configured: z.boolean(),
  reachable: z.boolean(),
  latencyMs: z.number().nullable(),
  version: z.string().nullable(),
  error: z.string().optional().describe("Why it is not configured or not reachable (error code)"),
  reason: z.string().optional(),
});
type BackendStatus = z.output<typeof backendStatus>;

/**
 * Resolves a backend client and asks it for its version; any failure becomes a fact in the
 * answer instead of an error of the route.
 */
async function probe<C>(
  ctx: Ctx,
  client: () => Promise<C>,
  version: (c: C) => Promise<string>,
): Promise<BackendStatus> {
  const down = (e: unknown, configured: boolean): BackendStatus => {
    const reason = e instanceof ApiError
      ? (e.details as { reason?: unknown } | undefined)?.reason
      : undefined;
    return {
      configured,
      reachable: false,
      latencyMs: null,
      version: null,
      error: e instanceof ApiError ? e.code : "INTERNAL_ERROR",
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
      (e.code === "NOT_CONFIGURED" || e.code === "NOT_AUTHENTICATED");
    return down(e, !missing);
  }
  const started = performance.now();
  try {
    const v = await version(c);
    return {
      configured: true,
      reachable: true,
      latencyMs: Math.round(performance.now() - started),
      version: v,
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
  summary: "Connectivity check of Core and Parser for this caller (never fails; no URLs or tokens)",
  backend: "Both",
  access: "private",
  tag: "config",
  description: "Always 200: a backend without credentials for this caller, or one that does " +
    "not answer, is a fact in the answer (`configured`, `reachable`, `error`), never an error.",
  responses: {
    200: {
      description:
        '`{ core: BackendStatus, parser: BackendStatus, session: { source: "session" | "provisioned" | "env" | null } }`',
      schema: z.object({
        core: backendStatus,
        parser: backendStatus,
        session: z.object({ source: credentialSourceSchema.nullable() }),
      }),
    },
  },
  handler: async (ctx) => {
    const [core, parser] = await Promise.all([
      probe(ctx, () => ctx.core(), async (c) => (await c.appInfo()).appVersion),
      probe(ctx, () => ctx.parser(), async (p) => (await p.info()).version),
    ]);
    const source = await ctx.credentials.parser().then((p) => p.source, () => null);
    return json({ core, parser, session: { source } });
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
