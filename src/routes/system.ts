/**
 * Operational routes: liveness, readiness and the generated API description.
 *
 * @module
 */
import { json } from "../http/response.ts";
import { openApiDocument } from "../openapi.ts";
import { defineRoute, type Route } from "../router.ts";

/** `GET /healthz`: the process is up (never touches a backend, credentials or cookies). */
export const healthz = defineRoute({
  method: "GET",
  path: "/healthz",
  summary: "Liveness: the process answers",
  backend: "None",
  access: "public",
  tag: "operations",
  responses: { 200: '`{ status: "ok" }`' },
  handler: () => json({ status: "ok" }),
});

/**
 * `GET /readyz`: each configured backend answers, checked with the server's own configuration
 * (src/readiness.ts): no caller credentials, no session, no cookie. Reports no URLs or tokens.
 */
export const readyz = defineRoute({
  method: "GET",
  path: "/readyz",
  summary: "Readiness: each configured backend (CORE_URL, PARSER_URL) answers",
  backend: "Both",
  access: "public",
  tag: "operations",
  responses: {
    200: '`{ status: "ready", core, parser, unavailable: [] }`; a backend not configured is ' +
      "`{ ok: true, configured: false }`",
    503: '`status: "not-ready"`; `unavailable` names each configured backend that does not answer',
  },
  handler: async (ctx) => {
    const report = await ctx.state.readiness.check(ctx.signal);
    return json(report, report.status === "ready" ? 200 : 503);
  },
});

/** `GET /api/openapi.json`: derived from the route table. */
export const openapi = defineRoute({
  method: "GET",
  path: "/api/openapi.json",
  summary: "OpenAPI 3.1 description of this API, generated from the route table",
  backend: "None",
  access: "public",
  tag: "operations",
  responses: { 200: "OpenAPI document" },
  handler: (ctx) =>
    json(openApiDocument(ctx.routes), 200, { "cache-control": "public, max-age=300" }),
});

/** The operational routes. */
export const systemRoutes: Route[] = [healthz, readyz, openapi];
