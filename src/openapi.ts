/**
 * The OpenAPI document and README's route list, both derived from the route table so they
 * cannot drift from what the service actually serves.
 *
 * @module
 */
import { z } from "zod";
import type { Route } from "./router.ts";

const toSchema = (s: z.ZodType) =>
  z.toJSONSchema(s, { io: "input", unrepresentable: "any", target: "draft-2020-12" }) as Record<
    string,
    unknown
  >;

/** What every AI route may answer (http/ai_route.ts). */
const AI_DEADLINE = "`UPSTREAM_TIMEOUT`: no progress for `AI_TIMEOUT_MS`; the Parser keeps " +
  "working and `details` (`retry`, `resultKey`, `keptSeconds`, `historyPath`) say how to get the " +
  "answer: repeat the same request";

/**
 * Builds an OpenAPI 3.1 document from the table.
 *
 * @example
 * ```ts
 * const doc = openApiDocument(app.routes);
 * Object.keys(doc.paths).length > 0;
 * ```
 */
export function openApiDocument(routes: readonly Route[]): {
  openapi: string;
  info: Record<string, string>;
  paths: Record<string, Record<string, unknown>>;
} {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.path.replace(/:([A-Za-z_]+)/g, "{$1}");
    const parameters: unknown[] = [];
    for (const [where, schema] of [["path", r.params], ["query", r.query]] as const) {
      if (!schema) continue;
      const js = toSchema(schema);
      const props = (js.properties ?? {}) as Record<string, unknown>;
      const required = new Set((js.required ?? []) as string[]);
      for (const [name, s] of Object.entries(props)) {
        parameters.push({
          name,
          in: where,
          required: where === "path" || required.has(name),
          schema: s,
        });
      }
    }
    const op: Record<string, unknown> = {
      summary: r.summary,
      tags: [r.tag],
      "x-backend": r.backend,
      security: r.access === "private" ? [{ cookieSession: [] }] : [],
      parameters,
      responses: Object.fromEntries(
        Object.entries({ ...(r.ai ? { 504: AI_DEADLINE } : {}), ...r.responses })
          .map(([code, description]) => [code, { description }]),
      ),
    };
    if (r.ai) op["x-ai-work"] = r.ai;
    if (r.body?.kind === "json") {
      op.requestBody = {
        required: true,
        content: { "application/json": { schema: toSchema(r.body.schema) } },
      };
    } else if (r.body?.kind === "text") {
      op.requestBody = {
        required: true,
        content: { "text/plain": { schema: { type: "string" } } },
      };
    } else if (r.body?.kind === "stream") {
      op.requestBody = {
        required: true,
        description: r.body.description,
        content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } },
      };
    }
    (paths[path] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: "3.1.0",
    info: { title: "Lore Portal Proxy API", version: "1.0.0" },
    paths,
  };
}

/**
 * README's route list as a Markdown table.
 *
 * @example
 * ```ts
 * console.log(routeTableMarkdown(app.routes));
 * ```
 */
export function routeTableMarkdown(routes: readonly Route[]): string {
  const rows = routes.map((r) =>
    `| ${r.method} | \`${r.path}\` | ${r.backend} | ${r.access} | ${
      r.summary.replaceAll("|", "\\|")
    } |`
  );
  return ["| Method | Path | Backend | Access | Purpose |", "|---|---|---|---|---|", ...rows].join(
    "\n",
  );
}
