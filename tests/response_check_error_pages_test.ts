/**
 * Routes whose errors are pages (`errorMediaType`, the public site): every error status they list
 * or the pipeline implies is documented and checked as that media type, and the pipeline's JSON
 * refusals before the handler are not documented for them. Exercised with a tiny route table
 * through `createApp`.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { createApp } from "../src/app.ts";
import { loadConfig } from "../src/config/service_config.ts";
import { ApiError, errorResponse } from "../src/http/errors.ts";
import { jsonLogger } from "../src/http/log.ts";
import { openApiDocument } from "../src/api/openapi.ts";
import { responseCheck } from "../src/pipeline/response_check.ts";
import { routeResponses } from "../src/api/route_responses.ts";
import { defineRoute, type Route } from "../src/api/router.ts";
import { errorPageResponse } from "../src/site/error_page.ts";

/** A public page at `/test/<name>` whose failures are HTML pages, like the site's. */
const page = (name: string, fail: (requestId: string) => Response) =>
  defineRoute({
    method: "GET",
    path: `/test/${name}`,
    summary: name,
    backend: "Core",
    access: "public",
    tag: "test",
    query: z.object({ n: z.coerce.number().int().optional() }),
    errorMediaType: "text/html",
    responses: {
      200: { description: "The page", mediaType: "text/html" },
      404: "Not found (the same page for all)",
    },
    handler: (ctx) => fail(ctx.requestId),
  });

const table: Route[] = [
  page("missing", (id) => errorPageResponse(new ApiError(404, "NOT_FOUND", "Not found"), id)),
  page("crash", (id) => errorPageResponse(new Error("boom"), id)),
  page("json-error", (id) => errorResponse(new ApiError(404, "NOT_FOUND", "Not found"), id)),
];

function makeApp() {
  const problems: string[] = [];
  const app = createApp({
    config: loadConfig({}),
    log: jsonLogger("error", () => {}),
    routes: table,
    checkResponse: responseCheck((p) => problems.push(p)),
  });
  const get = async (path: string) => {
    const res = await app.handle(new Request(`http://127.0.0.1:8080/test/${path}`));
    return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
  };
  return { problems, get };
}

Deno.test("error pages: a listed and an implied error status pass as HTML pages", async () => {
  const { get, problems } = makeApp();
  const missing = await get("missing");
  assert.equal(missing.status, 404);
  assert.match(missing.type ?? "", /^text\/html/);
  const crash = await get("crash");
  assert.equal(crash.status, 500);
  assert.match(crash.type ?? "", /^text\/html/);
  assert.deepEqual(problems, []);
});

Deno.test("error pages: a JSON error from such a route fails the check", async () => {
  const { get, problems } = makeApp();
  const r = await get("json-error");
  assert.equal(r.status, 500);
  assert.match(
    JSON.parse(r.text).message,
    /Content-Type is application\/json, declared text\/html/,
  );
  assert.equal(problems.length, 1);
});

Deno.test("error pages: the pipeline's JSON refusal of bad input fails the check", async () => {
  // such a route must take no input the pipeline can refuse: its refusals are JSON
  const { get, problems } = makeApp();
  const r = await get("missing?n=x");
  assert.equal(r.status, 500);
  assert.match(JSON.parse(r.text).message, /answered 400: Content-Type is application\/json/);
  assert.equal(problems.length, 1);
});

Deno.test("error pages: documented as the page's media type, without error codes", () => {
  // what the route itself can answer (the host rule answers before any route: below)
  const docs = routeResponses(table[0], "routed");
  // the query would allow 400 INVALID_REQUEST, a JSON refusal: left out; 400 stays as Core's
  assert.equal(docs.get(400)?.description, "the backend refused the request");
  assert.equal(docs.get(404)?.description, "Not found (the same page for all)");
  for (const [status, doc] of docs) {
    if (status < 400) continue;
    assert.equal(doc.mediaType, "text/html", String(status));
    assert.equal(doc.schema, undefined, String(status));
  }
  const op = openApiDocument(table).paths["/test/missing"].get as {
    responses: Record<string, { content?: Record<string, unknown> }>;
  };
  assert.deepEqual(op.responses[500].content, { "text/html": {} });
  // before routing: a refused host is the site's page, a missing Host the JSON error
  assert.deepEqual(op.responses[421].content, { "text/html": {} });
  assert.deepEqual(op.responses[400].content, {
    "text/html": {},
    "application/json": { schema: { $ref: "#/components/schemas/Error" } },
  });
  assert.match(
    (op.responses[400] as { description: string }).description,
    /^the backend refused the request; `INVALID_REQUEST`: a missing or malformed `Host`/,
  );
});
