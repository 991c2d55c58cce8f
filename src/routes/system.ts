/**
 * Operational routes: liveness, readiness and the generated API description.
 *
 * @module
 */
import { json } from "../http/response.ts";
import { openApiDocument } from "../openapi.ts";
import { defineRoute, type Route } from "../router.ts";

/** `GET /healthz`: the process is up (never touches a backend). */
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

/** `GET /readyz`: Core answers (when configured). Reports no URLs or tokens. */
export const readyz = defineRoute({
  method: "GET",
  path: "/readyz",
  summary: "Readiness: the configured backends answer",
  backend: "Both",
  access: "public",
  tag: "operations",
  responses: { 200: "All configured backends answer", 503: "A configured backend does not" },
  handler: async (ctx) => {
    const started = performance.now();
    let core: Record<string, unknown>;
    try {
      const info = await (await ctx.core()).appInfo();
      core = {
        ok: true,
        version: info.appVersion,
        latencyMs: Math.round(performance.now() - started),
      };
    } catch (e) {
      const code = e && typeof e === "object" && "code" in e ? String(e.code) : "INTERNAL_ERROR";
      // readiness is the service's, not a caller's: no credentials here is not a failure
      core = code === "NOT_CONFIGURED" || code === "NOT_AUTHENTICATED"
        ? { ok: true, configured: false }
        : { ok: false, error: code };
    }
    const ready = core.ok === true;
    return json({ status: ready ? "ready" : "not-ready", core }, ready ? 200 : 503);
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
    json(openApiDocument(ctx.state.routes), 200, { "cache-control": "public, max-age=300" }),
});

/** The operational routes. */
export const systemRoutes: Route[] = [healthz, readyz, openapi];
