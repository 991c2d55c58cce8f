/**
 * The OpenAPI document and the route list `--print-routes` prints (`deno task routes`), both
 * derived from the route table so they cannot drift from what the service actually serves:
 * parameters, bodies and every answer with its schema (route_responses.ts: the pipeline's, the
 * host rule's 400 and 421 included), the error shape declared once as `Error`.
 *
 * @module
 */
import { z } from "zod";
import { VERSION } from "../config/version.ts";
import { errorBodySchema } from "../http/errors.ts";
import { type ResponseDoc, routeResponses } from "./route_responses.ts";
import { type Route, textBodyTypes } from "./router.ts";

/** JSON Schema of what a request must send (`input`) or an answer carries (`output`). */
const toSchema = (s: z.ZodType, io: "input" | "output" = "input") => {
  const { $schema: _, ...schema } = z.toJSONSchema(s, {
    io,
    unrepresentable: "any",
    target: "draft-2020-12",
  });
  return schema as Record<string, unknown>;
};

/** Where the error shape is declared once in the document. */
const ERROR_REF = { $ref: "#/components/schemas/Error" };

/** An OpenAPI response object for one documented answer: its media types, then JSON. */
function responseObject(doc: ResponseDoc): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  if (doc.mediaType) {
    const events = doc.events &&
      Object.fromEntries(
        Object.entries(doc.events).map(([name, data]) => [name, toSchema(data, "output")]),
      );
    // OpenAPI has no words for SSE events: an extension lists each event's data
    const media = events ? { "x-events": events } : {};
    for (const type of [doc.mediaType].flat()) content[type] = media;
  }
  if (doc.schema) {
    const schema = doc.schema === errorBodySchema ? ERROR_REF : toSchema(doc.schema, "output");
    content["application/json"] = { schema };
  }
  return Object.keys(content).length
    ? { description: doc.description, content }
    : { description: doc.description };
}

/**
 * Builds an OpenAPI 3.1 document from the table.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { allRoutes } from "../routes/index.ts";
 *
 * const doc = openApiDocument(allRoutes);
 * assert.equal(doc.openapi, "3.1.0");
 * assert.ok(doc.paths["/api/lore/{id}"].get); // `:id` becomes `{id}`
 * ```
 */
export function openApiDocument(routes: readonly Route[]): {
  openapi: string;
  info: Record<string, string>;
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, Record<string, unknown>> };
} {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = openApiPath(r.path);
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
        [...routeResponses(r)].map(([status, doc]) => [status, responseObject(doc)]),
      ),
    };
    if (r.description) op.description = r.description;
    if (r.ai) op["x-ai-work"] = r.ai;
    if (r.aliases?.length) op["x-aliases"] = r.aliases;
    if (r.body?.kind === "json") {
      op.requestBody = {
        required: true,
        content: { "application/json": { schema: toSchema(r.body.schema) } },
      };
    } else if (r.body?.kind === "form") {
      op.requestBody = {
        required: true,
        content: { "application/x-www-form-urlencoded": { schema: toSchema(r.body.schema) } },
      };
    } else if (r.body?.kind === "text") {
      op.requestBody = {
        required: true,
        content: Object.fromEntries(
          textBodyTypes(r.body).map((type) => [type, { schema: { type: "string" } }]),
        ),
      };
    } else if (r.body?.kind === "stream") {
      op.requestBody = {
        required: true,
        description: r.body.description,
        content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } },
      };
    }
    (paths[path] ??= {})[r.method.toLowerCase()] = op;
    // an alias answers exactly as its route: the same operation, saying which form is canonical
    for (const alias of r.aliases ?? []) {
      (paths[openApiPath(alias)] ??= {})[r.method.toLowerCase()] = {
        ...op,
        summary: `${r.summary} (alias)`,
        description: `The same as \`${r.method} ${r.path}\` (its canonical path), under the name ` +
          "the front end uses." + (r.description ? `\n\n${r.description}` : ""),
        "x-alias-of": r.path,
        "x-aliases": undefined,
      };
    }
  }
  return {
    openapi: "3.1.0",
    info: { title: "Lore Portal Proxy API", version: VERSION },
    paths,
    components: { schemas: { Error: toSchema(errorBodySchema, "output") } },
  };
}

/** `:id` → `{id}`. */
const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, "{$1}");

/**
 * The route list as a Markdown table: what `--print-routes` prints (docs/api.md has the routes
 * in full).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { allRoutes } from "../routes/index.ts";
 *
 * const table = routeTableMarkdown(allRoutes).split("\n");
 * assert.equal(table[0], "| Method | Path | Backend | Access | Purpose |");
 * assert.equal(table.length, allRoutes.length + 2);
 * ```
 */
export function routeTableMarkdown(routes: readonly Route[]): string {
  const rows = routes.map((r) =>
    `| ${r.method} | ${
      [r.path, ...r.aliases ?? []].map((p) => `\`${p}\``).join(" or ")
    } | ${r.backend} | ${r.access} | ${r.summary.replaceAll("|", "\\|")} |`
  );
  return ["| Method | Path | Backend | Access | Purpose |", "|---|---|---|---|---|", ...rows].join(
    "\n",
  );
}
