/**
 * Error paths shared by every Core-backed route, table-driven: one sample request per route, and
 * a check that no Core-backed route in the table lacks a sample. Route-specific cases live in
 * each route group's own test file.
 */
import assert from "node:assert/strict";
import { allRoutes } from "../../src/routes/index.ts";
import { login } from "../helpers/session.ts";
import {
  assertNoSecrets,
  type Harness,
  type HarnessOptions,
  startHarness,
} from "../helpers/harness.ts";
// one valid request per Core-backed route, shared with the fault suite
import { type CoreSample as Sample, samples as SAMPLES } from "./samples/core.ts";

const pattern = (path: string) => new URLPattern({ pathname: path });

Deno.test("every Core-backed route has an error-path sample", () => {
  const coreRoutes = allRoutes.filter((r) =>
    (r.backend === "Core" || r.backend === "Both") && r.path.startsWith("/api/") &&
    r.path !== "/api/config/status" && // reports backend failures as facts (config_test.ts)
    r.path !== "/api/integrations/codex/connect" && // Core password exchange (integrations_test.ts)
    !r.path.startsWith("/api/public/") // server credentials only, own matrix (public_test.ts)
  );
  for (const r of coreRoutes) {
    const route = pattern(r.path); // parsed once, tried against every sample
    const covered = SAMPLES.some((s) =>
      s.method === r.method && route.test({ pathname: s.path.split("?")[0] })
    );
    assert.ok(covered, `no error-path sample for ${r.method} ${r.path}`);
  }
});

/**
 * Sends every sample under the fault `setup` makes and checks each answer. With `atOnce` the
 * samples are sent side by side under one fault: for faults that only wait out a deadline.
 */
async function eachSample(
  opts: HarnessOptions,
  setup: (h: Harness) => void,
  check: (s: Sample, res: Response, body: Record<string, unknown> | null, h: Harness) => void,
  { atOnce = false } = {},
) {
  const h = await startHarness(opts);
  const ask = async (s: Sample) => {
    const res = await h.request(s.path, { method: s.method, ...s.init });
    return { s, res, text: await res.text() };
  };
  const verify = ({ s, res, text }: { s: Sample; res: Response; text: string }) => {
    assertNoSecrets(h, text);
    check(s, res, text ? JSON.parse(text) : null, h);
  };
  try {
    if (atOnce) {
      setup(h);
      (await Promise.all(SAMPLES.map(ask))).forEach(verify);
      h.core.clearFaults();
    } else {
      for (const s of SAMPLES) {
        setup(h);
        verify(await ask(s));
        h.core.clearFaults();
      }
    }
    assertNoSecrets(h, h.logs.join("\n"));
  } finally {
    await h.close();
  }
}

const label = (s: Sample) => `${s.method} ${s.path}`;

Deno.test("no Core credentials → 503 NOT_CONFIGURED and no call to Core", () =>
  eachSample({ noCoreCredentials: true }, () => {}, (s, res, body, h) => {
    assert.equal(res.status, 503, label(s));
    assert.equal(body?.error, "NOT_CONFIGURED", label(s));
    assert.deepEqual(body?.details, { service: "core" });
    assert.equal(h.core.requests.length, 0, label(s));
  }));

Deno.test("Core unreachable → 503 UNREACHABLE", () =>
  eachSample({ coreUrlOverride: "http://127.0.0.1:9" }, () => {}, (s, res, body) => {
    assert.equal(res.status, 503, label(s));
    assert.equal(body?.error, "UNREACHABLE", label(s));
  }));

Deno.test("Core never answers → 504 UPSTREAM_TIMEOUT", () =>
  eachSample(
    { env: { UPSTREAM_TIMEOUT_MS: "150" } },
    (h) => h.core.fault({ path: /^\/etapi\//, hang: true }),
    (s, res, body) => {
      assert.equal(res.status, 504, label(s));
      assert.equal(body?.error, "UPSTREAM_TIMEOUT", label(s));
    },
    { atOnce: true },
  ));

Deno.test("Core 401 → 401 UNAUTHORIZED (reconnect), 403 → 403", () =>
  eachSample({}, (h) => h.core.fault({ path: /^\/etapi\//, status: 401 }), (s, res, body) => {
    assert.equal(res.status, 401, label(s));
    assert.equal(body?.error, "UNAUTHORIZED", label(s));
  }));

Deno.test("Core 500 or garbage → 502 UPSTREAM_ERROR without Core's text", () =>
  eachSample(
    {},
    (h) =>
      h.core.fault({
        path: /^\/etapi\//,
        status: 500,
        body: '{"status":500,"code":"GENERIC","message":"SQLITE secret path /var/lib/core"}',
      }),
    (s, res, body) => {
      assert.equal(res.status, 502, label(s));
      assert.equal(body?.error, "UPSTREAM_ERROR", label(s));
      assert.ok(!JSON.stringify(body).includes("SQLITE"), label(s));
    },
  ));

Deno.test("Core 429 → 429 RATE_LIMITED with Retry-After", () =>
  eachSample(
    {},
    (h) =>
      h.core.fault({
        path: /^\/etapi\//,
        status: 429,
        body: "Too many requests, please try again later.",
        contentType: "text/plain",
      }),
    (s, res, body) => {
      assert.equal(res.status, 429, label(s));
      assert.equal(body?.error, "RATE_LIMITED", label(s));
      assert.equal(res.headers.get("retry-after"), "60");
    },
  ));

Deno.test("Core 404 stays 404 (or the route's documented meaning)", () =>
  eachSample(
    {},
    (h) =>
      h.core.fault({
        path: /^\/etapi\//,
        status: 404,
        body: '{"status":404,"code":"NOTE_NOT_FOUND","message":"Note \'x\' not found."}',
      }),
    (s, res, body) => {
      assert.equal(res.status, s.on404 ?? 404, label(s));
      if (res.status === 404) assert.equal(body?.error, "NOT_FOUND", label(s));
    },
  ));

Deno.test("per-user credentials: every sample reaches Core with the session's credentials, looked up once", async () => {
  const h = await startHarness({ parser: true, noCoreCredentials: true });
  try {
    const cookie = await login(h);
    h.core.clearRequests();
    h.parser!.clearRequests();
    for (const s of SAMPLES) {
      h.core.fault({ path: /^\/etapi\//, status: 404 });
      const headers = new Headers(s.init?.headers);
      headers.set("cookie", cookie);
      const res = await h.request(s.path, { method: s.method, ...s.init, headers });
      const text = await res.text();
      assertNoSecrets(h, text);
      assert.equal(res.status, s.on404 ?? 404, `${label(s)}: ${text}`);
      h.core.clearFaults();
    }
    assert.ok(h.core.requests.length >= SAMPLES.length);
    // the Parser double's owner integration holds the Core double's token
    assert.ok(h.core.requests.every((r) => r.headers.get("authorization") === h.core.token));
    const lookups = h.parser!.requests.filter((r) =>
      r.path === "/internal/integrations/allcodex/credentials"
    );
    assert.equal(lookups.length, 1, "one credential lookup for the whole session within the TTL");
  } finally {
    await h.close();
  }
});
