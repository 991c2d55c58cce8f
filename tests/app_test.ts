/**
 * The cross-cutting pipeline, exercised through `createApp` with small test routes: every route
 * gets these behaviours from the pipeline, not from its own code.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { createApp } from "../src/app.ts";
import { loadConfig } from "../src/config/service_config.ts";
import { VERSION } from "../src/config/version.ts";
import { jsonLogger } from "../src/http/log.ts";
import { json } from "../src/http/response.ts";
import { defineRoute } from "../src/api/router.ts";

const echo = defineRoute({
  method: "POST",
  path: "/api/test/echo/:id",
  summary: "echo",
  backend: "None",
  access: "private",
  tag: "test",
  params: z.object({ id: z.string().regex(/^[a-z]+$/) }),
  query: z.object({ n: z.coerce.number().int().min(1).default(1) }),
  body: { kind: "json", schema: z.strictObject({ name: z.string().min(2) }) },
  responses: { 200: "echo" },
  handler: (ctx) => json({ id: ctx.params.id, n: ctx.query.n, name: ctx.body.name }),
});
const text = defineRoute({
  method: "PUT",
  path: "/api/test/text",
  summary: "text",
  backend: "None",
  access: "private",
  tag: "test",
  body: { kind: "text" },
  responses: { 200: "length" },
  handler: (ctx) => json({ length: ctx.body.length }),
});
const literal = defineRoute({
  method: "POST",
  path: "/api/test/echo/literal",
  summary: "literal",
  backend: "None",
  access: "private",
  tag: "test",
  responses: { 200: "ok" },
  handler: () => json({ literal: true }),
});
const usesCore = defineRoute({
  method: "GET",
  path: "/api/test/core",
  summary: "core",
  backend: "Core",
  access: "private",
  tag: "test",
  responses: { 200: "ok" },
  handler: async (ctx) => json(await (await ctx.core()).appInfo()),
});
const crash = defineRoute({
  method: "GET",
  path: "/api/test/crash",
  summary: "crash",
  backend: "None",
  access: "private",
  tag: "test",
  responses: { 500: "crash" },
  handler: () => {
    throw new Error("db password is hunter2 at http://core.internal:8080");
  },
});

function makeApp(env: Record<string, string> = {}) {
  const lines: string[] = [];
  const config = loadConfig({
    MAX_JSON_BYTES: "2048",
    MAX_CONTENT_BYTES: "4096",
    ALLOWED_HOSTS: "x", // the host most requests below name
    ...env,
  });
  const app = createApp({
    config,
    log: jsonLogger("debug", (l) => lines.push(l), [config.CORE_TOKEN ?? ""].filter(Boolean)),
    routes: [literal, echo, text, usesCore, crash],
  });
  return { app, lines };
}

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  new Request(`http://127.0.0.1:8080${path}`, {
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...headers },
  });

async function read(res: Response) {
  return { status: res.status, headers: res.headers, body: await res.json() };
}

Deno.test("pipeline: a valid request reaches the handler with typed, validated input", async () => {
  const { app } = makeApp();
  const r = await read(await app.handle(post("/api/test/echo/abc?n=3", '{"name":"Aria"}')));
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { id: "abc", n: 3, name: "Aria" });
});

Deno.test("pipeline: every response carries a request id; a well-formed incoming one is kept", async () => {
  const { app } = makeApp();
  const res = await app.handle(
    new Request("http://x/api/nowhere", { headers: { "x-request-id": "trace-12345678" } }),
  );
  const r = await read(res);
  assert.equal(r.headers.get("x-request-id"), "trace-12345678");
  assert.deepEqual(r.body, {
    error: "NOT_FOUND",
    message: "No such route",
    requestId: "trace-12345678",
  });
  const res2 = await app.handle(
    new Request("http://x/api/nowhere", { headers: { "x-request-id": "bad id\n" } }),
  );
  await res2.body?.cancel();
  assert.match(res2.headers.get("x-request-id")!, /^[0-9a-f-]{36}$/);
});

Deno.test("pipeline: wrong method → 405 with Allow; a literal path shadows a parameter", async () => {
  const { app } = makeApp();
  const r = await read(await app.handle(new Request("http://x/api/test/echo/abc")));
  assert.equal(r.status, 405);
  assert.equal(r.body.error, "METHOD_NOT_ALLOWED");
  assert.equal(r.headers.get("allow"), "POST");
  const lit = await read(await app.handle(post("/api/test/echo/literal", "")));
  assert.deepEqual(lit.body, { literal: true });
});

Deno.test("pipeline: bad params, query and body give 400 INVALID_REQUEST naming each field", async () => {
  const { app } = makeApp();
  const r = await read(await app.handle(post("/api/test/echo/ABC?n=0", '{"name":"A","extra":1}')));
  assert.equal(r.status, 400);
  assert.equal(r.body.error, "INVALID_REQUEST");
  assert.deepEqual(r.body.details.fields.map((f: { path: string }) => f.path), ["path.id"]);
  const q = await read(await app.handle(post("/api/test/echo/abc?n=0", '{"name":"Aria"}')));
  assert.deepEqual(q.body.details.fields.map((f: { path: string }) => f.path), ["query.n"]);
  const b = await read(await app.handle(post("/api/test/echo/abc", '{"name":"A","extra":1}')));
  assert.deepEqual(b.body.details.fields.map((f: { path: string }) => f.path).sort(), [
    "body",
    "body.name",
  ]);
  const bad = await read(await app.handle(post("/api/test/echo/abc", "{not json")));
  assert.equal(bad.status, 400);
  assert.equal(bad.body.message, "The request body is not valid JSON");
});

Deno.test("pipeline: JSON routes need application/json (415), text routes text/plain (415)", async () => {
  const { app } = makeApp();
  const r = await read(
    await app.handle(
      post("/api/test/echo/abc", '{"name":"Aria"}', { "content-type": "text/plain" }),
    ),
  );
  assert.equal(r.status, 415);
  assert.equal(r.body.error, "UNSUPPORTED_MEDIA_TYPE");
  const put = (type: string) =>
    app.handle(
      new Request("http://x/api/test/text", {
        method: "PUT",
        body: "<p>x</p>",
        headers: { "content-type": type },
      }),
    );
  assert.equal((await read(await put("text/html"))).status, 415);
  assert.deepEqual((await read(await put("text/plain; charset=utf-8"))).body, { length: 8 });
});

Deno.test("pipeline: body limits hold for declared and for streamed (undeclared) lengths → 413", async () => {
  const { app } = makeApp();
  const big = JSON.stringify({ name: "x".repeat(3000) });
  const declared = await read(await app.handle(post("/api/test/echo/abc", big)));
  assert.equal(declared.status, 413);
  assert.equal(declared.body.error, "PAYLOAD_TOO_LARGE");
  const chunked = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < 10; i++) c.enqueue(new TextEncoder().encode("x".repeat(1000)));
      c.close();
    },
  });
  const req = new Request("http://x/api/test/text", {
    method: "PUT",
    body: chunked,
    headers: { "content-type": "text/plain" },
  });
  assert.equal((await read(await app.handle(req))).status, 413);
});

Deno.test("pipeline: cross-site unsafe requests are refused before validation or handlers", async () => {
  const { app } = makeApp();
  const r = await read(
    await app.handle(
      post("/api/test/echo/abc", '{"name":"Aria"}', { "sec-fetch-site": "cross-site" }),
    ),
  );
  assert.equal(r.status, 403);
  assert.equal(r.body.error, "CSRF_REJECTED");
});

Deno.test("pipeline: no Core credentials → 503 NOT_CONFIGURED naming the service", async () => {
  const { app } = makeApp();
  const r = await read(await app.handle(new Request("http://x/api/test/core")));
  assert.equal(r.status, 503);
  assert.equal(r.body.error, "NOT_CONFIGURED");
  assert.match(r.body.message, /Core/);
  assert.deepEqual(r.body.details, { service: "core" });
});

Deno.test("pipeline: an unexpected exception is a bare 500; the log line has it redacted", async () => {
  const { app, lines } = makeApp();
  const r = await read(await app.handle(new Request("http://x/api/test/crash")));
  assert.equal(r.status, 500);
  assert.equal(r.body.error, "INTERNAL_ERROR");
  assert.ok(!JSON.stringify(r.body).includes("hunter2"));
  const all = lines.join("\n");
  assert.ok(!all.includes("core.internal"), all);
});

Deno.test("pipeline: one JSON log line per request with route pattern, status and timings", async () => {
  const { app, lines } = makeApp();
  const res = await app.handle(post("/api/test/echo/abc?secret=1", '{"name":"Aria"}'));
  await res.body?.cancel();
  const entries = lines.map((l) => JSON.parse(l)).filter((e) => e.msg === "request");
  assert.equal(entries.length, 1);
  const e = entries[0];
  assert.equal(e.route, "/api/test/echo/:id");
  assert.equal(e.method, "POST");
  assert.equal(e.status, 200);
  assert.equal(typeof e.ms, "number");
  assert.equal(e.upstreamCalls, 0);
  assert.equal(e.requestId, res.headers.get("x-request-id"));
  assert.ok(!lines.join("\n").includes("secret=1"), "query strings are not logged");
});

Deno.test("openapi: generated from the table, with params, query and body schemas", async () => {
  const { app } = makeApp();
  const doc = await (await app.handle(new Request("http://x/api/openapi.json"))).json();
  assert.equal(doc.info.version, VERSION, "the service's version, not a constant of its own");
  const op = doc.paths["/api/test/echo/{id}"].post;
  assert.deepEqual(op.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`), [
    "path:id",
    "query:n",
  ]);
  assert.equal(op.requestBody.content["application/json"].schema.properties.name.minLength, 2);
  assert.equal(
    doc.paths["/api/test/text"].put.requestBody.content["text/plain"].schema.type,
    "string",
  );
});

Deno.test("pipeline: every kind of context has the client's signal, aborted when the client goes away", async () => {
  const seen: Record<string, AbortSignal> = {};
  const signalRoute = (access: "public" | "session" | "private") =>
    defineRoute({
      method: "GET",
      path: `/api/test/signal/${access}`,
      summary: "signal",
      backend: "None",
      access,
      tag: "test",
      responses: { 200: "ok" },
      handler: (ctx) => {
        seen[access] = ctx.signal;
        return json({ ok: true });
      },
    });
  const app = createApp({
    config: loadConfig({}),
    log: jsonLogger("silent"),
    routes: ["public", "session", "private"].map((a) => signalRoute(a as "public")),
  });
  for (const access of ["public", "session", "private"]) {
    const client = new AbortController();
    const res = await app.handle(
      new Request(`http://127.0.0.1:8080/api/test/signal/${access}`, { signal: client.signal }),
    );
    assert.equal(res.status, 200, access);
    await res.body?.cancel();
    assert.ok(seen[access] instanceof AbortSignal, access);
    assert.equal(seen[access].aborted, false, access);
    client.abort();
    assert.equal(seen[access].aborted, true, `${access}: follows the client`);
  }
});
