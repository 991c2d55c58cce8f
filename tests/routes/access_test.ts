/**
 * A route gets only the capabilities its `access` declares: public and health routes never
 * resolve a caller's credentials, mint a zero-login session or set a cookie, and `/readyz`
 * checks each configured backend with the server's own configuration.
 */
import assert from "node:assert/strict";
import { createApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config/service_config.ts";
import { json } from "../../src/http/response.ts";
import { defineRoute } from "../../src/api/router.ts";
import { allRoutes } from "../../src/routes/index.ts";
import { type Harness, TEST_SESSION_SECRET, withHarness } from "../helpers/harness.ts";
import { W } from "../../sims/world.ts";

/** A concrete request for a route: parameters filled with a real note, a search text given. */
function sampleTarget(path: string, hasQuery: boolean): string {
  const filled = path.replace(/:id\b/g, W.guideWelcome).replace(/:filename\b/g, "x.png");
  return hasQuery ? `${filled}?q=harbor` : filled;
}

const publicTargets = allRoutes
  .filter((r) => r.access === "public")
  .map((r) => ({ method: r.method, target: sampleTarget(r.path, !!r.query) }));

/** Everything the service asked the Parser double that needs or hands out a user's credentials. */
function credentialedParserCalls(h: Harness): string[] {
  return (h.parser?.requests ?? [])
    .filter((r) =>
      r.path.startsWith("/internal/") || r.headers.has("authorization") ||
      r.headers.has("cookie")
    )
    .map((r) => `${r.method} ${r.path}`);
}

Deno.test("access: no anonymous public or health request resolves credentials or sets a cookie", () =>
  withHarness(async (h) => {
    assert.ok(publicTargets.some((t) => t.target === "/readyz"), "the table has /readyz");
    assert.ok(publicTargets.some((t) => t.target === "/healthz"), "the table has /healthz");
    h.parser!.clearRequests();
    for (const { method, target } of publicTargets) {
      for (let i = 0; i < 3; i++) { // a health check polls: no visit may pile up sessions
        // a redirect (the editor image URL) is the answer: following it would be another route
        const res = await h.request(target, { method, redirect: "manual" });
        await res.body?.cancel();
        assert.ok(res.status < 500, `${method} ${target} answered ${res.status}`);
        assert.equal(res.headers.get("set-cookie"), null, `${method} ${target} set a cookie`);
      }
    }
    // the internal routes are the only way a user's Core token reaches the service: with none
    // called, every Core call above used the server's own token
    assert.deepEqual(credentialedParserCalls(h), []);
  }, { parser: true, env: { ZERO_LOGIN: "true" } }));

Deno.test("access: a private route still mints a zero-login session (the pipeline is per route)", () =>
  withHarness(async (h) => {
    h.parser!.clearRequests();
    const res = await h.request("/api/auth/session");
    await res.body?.cancel();
    assert.equal(res.status, 200);
    assert.ok(res.headers.get("set-cookie"), "the minted session's cookies are set");
    assert.ok(credentialedParserCalls(h).includes("POST /internal/auto-provision"));
  }, { parser: true, env: { ZERO_LOGIN: "true" } }));

Deno.test("readyz: ready with each configured backend reported, version from the server's token", () =>
  withHarness(async (h) => {
    const { status, body } = await h.requestJson<Record<string, Record<string, unknown>>>(
      "/readyz",
    );
    assert.equal(status, 200);
    assert.equal(body.status as unknown, "ready");
    assert.equal(body.core.ok, true);
    assert.equal(typeof body.core.version, "string");
    assert.equal(body.parser.ok, true);
    assert.equal(body.parser.configured, true);
    assert.deepEqual(body.unavailable, []);
  }, { parser: true, env: { ZERO_LOGIN: "true" } }));

Deno.test("readyz: 503 naming the configured backend that does not answer", async () => {
  await withHarness(async (h) => {
    const { status, body } = await h.requestJson<Record<string, unknown>>("/readyz");
    assert.equal(status, 503);
    assert.deepEqual(body.unavailable, ["parser"]);
    assert.deepEqual(body.parser, {
      ok: false,
      configured: true,
      error: "UNREACHABLE",
    });
    assert.equal(body.reason, "Parser is not available (UNREACHABLE)");
    assert.doesNotMatch(JSON.stringify(body), /127\.0\.0\.1/);
  }, { env: { PARSER_URL: "http://127.0.0.1:1" } });
  await withHarness(async (h) => {
    const { status, body } = await h.requestJson<Record<string, unknown>>("/readyz");
    assert.equal(status, 503);
    assert.deepEqual(body.unavailable, ["core"]);
  }, { coreUrlOverride: "http://127.0.0.1:1" });
});

Deno.test("readyz: with no backend configured it is not ready and names what to set", () =>
  withHarness(async (h) => {
    const { status, body } = await h.requestJson<Record<string, unknown>>("/readyz");
    assert.equal(status, 503);
    assert.equal(body.status, "not-ready");
    assert.deepEqual(body.core, { ok: false, configured: false });
    assert.deepEqual(body.parser, { ok: false, configured: false });
    assert.deepEqual(body.unavailable, ["core", "parser"]);
    assert.match(String(body.reason), /set CORE_URL .*PARSER_URL/);
    assert.deepEqual(h.core.requests, [], "nothing to ask");
  }, { noCoreCredentials: true }));

Deno.test("readyz: Core alone configured and answering is ready; the Parser is optional", () =>
  withHarness(async (h) => {
    const { status, body } = await h.requestJson<Record<string, unknown>>("/readyz");
    assert.equal(status, 200);
    assert.deepEqual(body.parser, { ok: true, configured: false });
    assert.equal(body.reason, undefined);
  }));

Deno.test("access: a public handler's context carries no caller capability", async () => {
  let seen: string[] = [];
  const probe = defineRoute({
    method: "GET",
    path: "/test/public-probe",
    summary: "test",
    backend: "None",
    access: "public",
    tag: "test",
    responses: { 200: "ok" },
    handler: (ctx) => {
      seen = Object.keys(ctx);
      // @ts-expect-error a public handler has no caller's Core: this line must not type-check
      void ctx.core;
      // @ts-expect-error nor the caller's Parser
      void ctx.parser;
      // @ts-expect-error nor the session cookies
      void ctx.credentials;
      return json({ ok: true });
    },
  });
  const app = createApp({
    config: loadConfig({
      SESSION_SECRET: TEST_SESSION_SECRET,
      DATA_DIR: await Deno.makeTempDir({ prefix: "lpp-test-" }),
      LOG_LEVEL: "error",
    }),
    routes: [probe],
  });
  const res = await app.handle(new Request("http://localhost/test/public-probe"));
  assert.equal(res.status, 200);
  await res.body?.cancel();
  for (const key of ["core", "coreIdentity", "parser", "credentials", "sessionParser", "coreAt"]) {
    assert.ok(!seen.includes(key), `public context has ${key}`);
  }
  assert.ok(seen.includes("publicCore"), "the server-side share source stays available");
});
