/**
 * Responses declared once: a route's declared answers drive the OpenAPI document and, in tests,
 * the response check that fails any answer with an undeclared status or a body off its schema.
 * Exercised with a tiny route table through `createApp`.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { createApp } from "../src/app.ts";
import { loadConfig } from "../src/config/service_config.ts";
import { ApiError } from "../src/http/errors.ts";
import { jsonLogger } from "../src/http/log.ts";
import { json } from "../src/http/response.ts";
import { responseCheck } from "../src/pipeline/response_check.ts";
import { openApiDocument } from "../src/api/openapi.ts";
import { defineRoute, type Responses, type Route } from "../src/api/router.ts";
import { declaresResponses, routeResponses } from "../src/api/route_responses.ts";
import { allRoutes } from "../src/routes/index.ts";

const thing = z.object({ id: z.string(), size: z.number().int() });

/** A public GET route at `/api/test/<name>` answering with `answer`. */
const route = (name: string, responses: Responses, answer: () => Response) =>
  defineRoute({
    method: "GET",
    path: `/api/test/${name}`,
    summary: name,
    backend: "None",
    access: "public",
    tag: "test",
    query: z.object({ n: z.coerce.number().int().optional() }),
    responses,
    handler: answer,
  });

const declared = { 200: { description: "A thing", schema: thing }, 404: "No such thing" };

/** An answer whose type varies: any of several media types. */
const textOrImage = {
  200: { description: "Text or an image", mediaType: ["text/plain", "image/*"] },
};
const typed = (type: string) => new Response("x", { headers: { "content-type": type } });

const table: Route[] = [
  route("good", declared, () => json({ id: "a", size: 3, extra: "passed on undescribed" })),
  route("wrong-body", declared, () => json({ id: "a", size: "big" })),
  route("undeclared", declared, () => json({ id: "a", size: 3 }, 202)),
  route("not-found", declared, () => {
    throw new ApiError(404, "NOT_FOUND", "No such thing");
  }),
  route("bad-error", declared, () => json({ oops: true }, 404)),
  route("bodiless", { 204: { description: "Done" } }, () => new Response(null, { status: 204 })),
  route("stream", {
    200: {
      description: "Server-sent events",
      mediaType: "text/event-stream",
      events: { progress: z.object({ percent: z.number() }) },
    },
  }, () =>
    // a stream that never ends: the check must not wait for it
    new Response(
      new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode(": hi\n\n")) }),
      {
        headers: { "content-type": "text/event-stream" },
      },
    )),
  route("stream-as-json", {
    200: { description: "Server-sent events", mediaType: "text/event-stream" },
  }, () => json({ id: "a" })),
  route("undocumented", { 200: "Not described yet" }, () => json({ anything: 1 }, 299)),
  route("either-text", textOrImage, () => typed("text/plain; charset=utf-8")),
  route("either-image", textOrImage, () => typed("image/png")),
  route("either-json", textOrImage, () => json({ id: "a" })),
];

function makeApp(check: boolean) {
  const problems: string[] = [];
  const app = createApp({
    config: loadConfig({}),
    log: jsonLogger("error", () => {}),
    routes: table,
    checkResponse: check ? responseCheck((p) => problems.push(p)) : undefined,
  });
  const get = async (path: string) => {
    const res = await app.handle(new Request(`http://127.0.0.1:8080/api/test/${path}`));
    return { status: res.status, type: res.headers.get("content-type"), res };
  };
  return { app, problems, get };
}

Deno.test("response check: an answer off its declared schema becomes a 500 naming route, status and field", async () => {
  const { get, problems } = makeApp(true);
  const { status, res } = await get("wrong-body");
  const body = await res.json();
  assert.equal(status, 500);
  assert.equal(body.error, "RESPONSE_SCHEMA");
  assert.match(body.message, /^GET \/api\/test\/wrong-body answered 200: .*size/);
  assert.deepEqual(body.details.issues.map((i: { path: string }) => i.path), ["size"]);
  assert.equal(problems.length, 1);
  assert.match(problems[0], /GET \/api\/test\/wrong-body answered 200: the body does not match/);
});

Deno.test("response check: a status the route does not declare fails, also for an error body off the error shape", async () => {
  const { get, problems } = makeApp(true);
  const undeclared = await get("undeclared");
  assert.equal(undeclared.status, 500);
  assert.match((await undeclared.res.json()).message, /answered 202: status 202 is not declared/);
  const badError = await get("bad-error");
  assert.equal(badError.status, 500);
  assert.match((await badError.res.json()).message, /answered 404: .*error/);
  assert.equal(problems.length, 2);
});

Deno.test("response check: declared answers pass unchanged (extra fields, errors, implied statuses, no body)", async () => {
  const { get, problems } = makeApp(true);
  const good = await get("good");
  assert.equal(good.status, 200);
  assert.equal((await good.res.json()).extra, "passed on undescribed");
  const notFound = await get("not-found");
  assert.equal(notFound.status, 404);
  assert.equal((await notFound.res.json()).error, "NOT_FOUND");
  // 400 is implied by the query schema, never written in the route
  const invalid = await get("good?n=x");
  assert.equal(invalid.status, 400);
  assert.equal((await invalid.res.json()).error, "INVALID_REQUEST");
  assert.equal((await get("bodiless")).status, 204);
  assert.deepEqual(problems, []);
});

Deno.test("response check: a streamed answer is not read or waited for; its media type is", async () => {
  const { get, problems } = makeApp(true);
  const stream = await get("stream");
  assert.equal(stream.status, 200);
  assert.equal(stream.type, "text/event-stream");
  const reader = stream.res.body!.getReader();
  assert.equal(new TextDecoder().decode((await reader.read()).value), ": hi\n\n");
  await reader.cancel();
  const asJson = await get("stream-as-json");
  assert.equal(asJson.status, 500);
  assert.match(
    (await asJson.res.json()).message,
    /Content-Type is application\/json, declared text\/event-stream/,
  );
  assert.equal(problems.length, 1);
});

Deno.test("response check: an answer of several media types may have any of them, and only those", async () => {
  const { get, problems } = makeApp(true);
  const text = await get("either-text");
  assert.equal(text.status, 200);
  assert.equal(await text.res.text(), "x");
  const image = await get("either-image");
  assert.equal(image.status, 200);
  assert.equal(image.type, "image/png");
  await image.res.body?.cancel();
  const other = await get("either-json");
  assert.equal(other.status, 500);
  assert.match(
    (await other.res.json()).message,
    /Content-Type is application\/json, declared text\/plain, image\/\*/,
  );
  assert.equal(problems.length, 1);
  const doc = openApiDocument(table).paths["/api/test/either-text"].get as {
    responses: Record<string, { content: Record<string, unknown> }>;
  };
  assert.deepEqual(Object.keys(doc.responses[200].content), ["text/plain", "image/*"]);
});

Deno.test("response check: routes without declared schemas are not held to anything yet", async () => {
  const { get, problems } = makeApp(true);
  const r = await get("undocumented");
  assert.equal(r.status, 299);
  assert.deepEqual(await r.res.json(), { anything: 1 });
  assert.deepEqual(problems, []);
});

Deno.test("response check: off unless asked for (production answers as the handler did)", async () => {
  const { get } = makeApp(false);
  const r = await get("wrong-body");
  assert.equal(r.status, 200);
  assert.deepEqual(await r.res.json(), { id: "a", size: "big" });
});

Deno.test("openapi: answers carry their schemas, media types and the one error shape", () => {
  const doc = openApiDocument(table);
  assert.ok(doc.components.schemas.Error.properties);
  const good = doc.paths["/api/test/good"].get as {
    responses: Record<string, { description: string; content?: Record<string, unknown> }>;
  };
  // 421 and a Host case of 400: the host rule's, before any route (route_responses.ts)
  assert.deepEqual(Object.keys(good.responses), ["200", "400", "404", "421", "500"]);
  const ok = good.responses[200].content!["application/json"] as {
    schema: { properties: Record<string, unknown>; required: string[] };
  };
  assert.deepEqual(Object.keys(ok.schema.properties), ["id", "size"]);
  for (const status of ["400", "404", "421", "500"]) {
    assert.deepEqual(good.responses[status].content, {
      "application/json": { schema: { $ref: "#/components/schemas/Error" } },
    }, status);
  }
  assert.match(good.responses[400].description, /INVALID_REQUEST/);
  assert.equal(good.responses[404].description, "No such thing");
  const stream = doc.paths["/api/test/stream"].get as {
    responses: Record<string, { content: Record<string, { "x-events": Record<string, unknown> }> }>;
  };
  assert.deepEqual(Object.keys(stream.responses[200].content), ["text/event-stream"]);
  assert.ok(stream.responses[200].content["text/event-stream"]["x-events"].progress);
});

Deno.test("openapi: a route's description becomes its operation's", () => {
  const described = defineRoute({
    method: "POST",
    path: "/api/test/described",
    summary: "described",
    description: "Does **this** where the API is silent.",
    backend: "Core",
    access: "private",
    tag: "test",
    ai: {},
    responses: { 200: { description: "ok", schema: thing } },
    handler: () => json({ id: "a", size: 1 }),
  });
  const op = openApiDocument([described]).paths["/api/test/described"].post as {
    description: string;
    responses: Record<string, { description: string }>;
  };
  assert.equal(op.description, "Does **this** where the API is silent.");
  // private, Core-backed, AI work: the pipeline's answers follow from the declaration
  assert.deepEqual(Object.keys(op.responses), [
    "200",
    "400",
    "401",
    "403",
    "404",
    "409",
    "421",
    "422",
    "429",
    "500",
    "502",
    "503",
    "504",
  ]);
  assert.match(op.responses[403].description, /CSRF_REJECTED.*UPSTREAM_FORBIDDEN/);
  assert.match(op.responses[504].description, /AI_TIMEOUT_MS/);
});

Deno.test("every route of the table declares its answers, so the harness checks all of them", () => {
  const undeclared = allRoutes.filter((r) => !declaresResponses(r)).map((r) =>
    `${r.method} ${r.path}`
  );
  assert.deepEqual(undeclared, [], "declare a schema or media type for each answer");
  for (const r of allRoutes) {
    const ok = [...routeResponses(r)].filter(([status]) => status < 400);
    assert.ok(ok.length > 0, `${r.method} ${r.path} declares no successful answer`);
  }
});
