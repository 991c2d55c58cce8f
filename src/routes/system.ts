/**
 * Operational routes: liveness, readiness and the generated API description.
 *
 * @module
 */
import { z } from "zod";
import { json } from "../http/response.ts";
import { openApiDocument } from "../api/openapi.ts";
import { readinessReportSchema } from "../state/readiness.ts";
import { defineRoute, type Route } from "../api/router.ts";
import { VERSION } from "../config/version.ts";

/**
 * `GET /healthz`: the process is up, and which version it runs (never touches a backend,
 * credentials or cookies).
 */
export const healthz = defineRoute({
  method: "GET",
  path: "/healthz",
  summary: "Liveness: the process answers, with its version",
  backend: "None",
  access: "public",
  tag: "operations",
  responses: {
    200: {
      description: '`{ status: "ok", version }`',
      schema: z.object({
        status: z.literal("ok"),
        version: z.string().describe("The service's version (as `--version` prints it)"),
      }),
    },
  },
  handler: () => json({ status: "ok", version: VERSION }),
});

/**
 * `GET /readyz`: a backend is configured and each configured one answers, checked with the
 * server's own configuration (src/state/readiness.ts): no caller credentials, no session, no cookie.
 * Reports no URLs or tokens.
 */
export const readyz = defineRoute({
  method: "GET",
  path: "/readyz",
  summary: "Readiness: a backend is configured, and each configured one answers",
  backend: "Both",
  access: "public",
  tag: "operations",
  description: "Each backend is checked with the server's own configuration, never a caller's: " +
    "Core's `app-info` with `PUBLIC_CORE_TOKEN` (else `CORE_TOKEN`; a refused token is not " +
    "ready), the Parser's `/health` without credentials (any answer counts: its `degraded` " +
    "concerns its own dependencies). One backend may be left unconfigured (Core alone serves " +
    "the lore and the public site; the Parser alone serves signed-in users, whose Core it " +
    "hands out), but with neither configured the service can serve nothing: 503, with a " +
    "`reason` naming the variables to set. No URL or token appears in the answer.",
  responses: {
    200: {
      description: 'Ready: `status: "ready"`, `unavailable: []`; a backend not configured is ' +
        "`{ ok: true, configured: false }`",
      schema: readinessReportSchema.extend({ status: z.literal("ready") }),
    },
    503: {
      description: 'Not ready: `status: "not-ready"`; `unavailable` names each configured ' +
        "backend that does not answer, or both when neither is configured " +
        "(`{ ok: false, configured: false }`); `reason` says why in words",
      schema: readinessReportSchema.extend({
        status: z.literal("not-ready"),
        reason: z.string().describe("Which backend is not available, or which variables to set"),
      }),
    },
  },
  handler: async (ctx) => {
    const report = await ctx.state.readiness.check(ctx.signal);
    return json(report, report.status === "ready" ? 200 : 503);
  },
});

/** The OpenAPI document's top level; operations are described by the document itself. */
const openApiDocumentSchema = z.object({
  openapi: z.string().describe("3.1.0"),
  info: z.object({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.record(z.string(), z.unknown())).describe(
    "Path → method → operation",
  ),
  components: z.object({ schemas: z.record(z.string(), z.unknown()) }).describe(
    "`schemas.Error`: the one error shape",
  ),
});

/** `GET /api/openapi.json`: derived from the route table. */
export const openapi = defineRoute({
  method: "GET",
  path: "/api/openapi.json",
  summary: "OpenAPI 3.1 description of this API, generated from the route table",
  backend: "None",
  access: "public",
  tag: "operations",
  description: "Every route with its parameters, body, answers and their schemas; `x-backend`, " +
    "`x-ai-work` and, for server-sent events, `x-events` (each event's data) add what OpenAPI " +
    "has no words for. Cached five minutes.",
  responses: {
    200: {
      description: "The OpenAPI 3.1 document (`Cache-Control: public, max-age=300`)",
      schema: openApiDocumentSchema,
    },
  },
  handler: (ctx) =>
    json(openApiDocument(ctx.routes), 200, { "cache-control": "public, max-age=300" }),
});

/** The operational routes. */
export const systemRoutes: Route[] = [healthz, readyz, openapi];
