/**
 * Behaviour tests of the Parser double over HTTP (the real Parser is the reference).
 * Each test starts its own sims on random ports and closes them.
 */
import assert from "node:assert/strict";
import { startCoreSim } from "./core.ts";
import {
  DEFAULT_INTERNAL_SECRET,
  DEFAULT_MODELS,
  DEFAULT_OWNER,
  type ParserSim,
  startParserSim,
} from "./parser.ts";
import { t, validate } from "./parser_kit.ts";
import { callParser, type ParserCallInit, withParserSim } from "./parser_sim_client.ts";

/** Most calls here are signed out: a call sends a bearer token only when it is given one. */
const call = (sim: ParserSim, path: string, init: ParserCallInit = {}) =>
  callParser(sim, path, { ...init, token: init.token ?? null });

const signIn = (sim: ParserSim, email: string, password: string, headers = {}) =>
  call(sim, "/api/auth/sign-in/email", { body: { email, password }, headers });

const signUp = (sim: ParserSim, body: unknown, secret: string | null = DEFAULT_INTERNAL_SECRET) =>
  call(sim, "/api/auth/sign-up/email", {
    body,
    headers: secret === null ? {} : { "X-AllCodex-Bootstrap-Secret": secret },
  });

const credentials = (sim: ParserSim, secret: string | null, token?: string) =>
  call(sim, "/internal/integrations/allcodex/credentials", {
    method: "POST",
    token,
    headers: secret === null ? {} : { "X-Portal-Internal-Secret": secret },
  });

/** A second, non-owner account created through the gated sign-up; returns its raw token. */
async function otherUser(sim: ParserSim): Promise<string> {
  const res = await signUp(sim, {
    name: "Other",
    email: "other@example.com",
    password: "password-2",
  });
  assert.equal(res.status, 200, res.text);
  return res.json.token;
}

Deno.test("bootstrap: default owner, /, /health with and without Core, helmet, 404 text", async () => {
  const core = await startCoreSim({ world: false });
  try {
    await withParserSim(async (sim) => {
      const owner = sim.store.findUserByEmail(DEFAULT_OWNER.email)!;
      assert.equal(sim.store.ownerUserId(), owner.id);
      assert.equal(sim.store.getIntegration(owner.id)?.baseUrl, core.url);

      const info = await call(sim, "/");
      assert.equal(info.json.name, "AllKnower");
      assert.equal(info.json.health, "/health");
      assert.equal(info.headers.get("x-frame-options"), "DENY");
      assert.equal(info.headers.get("x-content-type-options"), "nosniff");
      assert.equal(info.headers.get("strict-transport-security"), null);

      const health = await call(sim, "/health/"); // strictPath is false
      assert.equal(health.status, 200, health.text);
      assert.equal(health.json.status, "ok");
      assert.equal(health.json.checks.allcodex.ok, true);
      assert.equal(typeof health.json.checks.allcodex.version, "string");
      assert.deepEqual(health.json.checks.bootstrap, {
        ok: true,
        ran: true,
        userReady: true,
        etapiReady: true,
      });
      assert.equal(core.requests.at(-1)?.headers.get("authorization"), core.token);

      core.fault({ path: "/etapi/app-info", status: 401, times: 1 });
      const degraded = await call(sim, "/health");
      assert.equal(degraded.status, 503);
      assert.equal(degraded.json.status, "degraded");
      assert.match(degraded.json.checks.allcodex.error, /^ETAPI GET \/app-info → 401: /);

      const missing = await call(sim, "/no/such/route");
      assert.deepEqual([missing.status, missing.text], [404, "NOT_FOUND"]);
      assert.match(missing.headers.get("content-type")!, /^text\/plain/);
      assert.equal((await call(sim, "/health", { method: "DELETE" })).status, 404);
    }, { core: { url: core.url, token: core.token } });
  } finally {
    await core.close();
  }

  await withParserSim(async (sim) => {
    const health = await call(sim, "/health");
    assert.equal(health.status, 503);
    assert.equal(health.json.checks.allcodex.ok, false);
    assert.equal(health.json.checks.bootstrap.etapiReady, false);
  });
});

Deno.test("sign-in: raw body token and signed set-auth-token header both work as bearer", async () => {
  await withParserSim(async (sim) => {
    const res = await signIn(sim, DEFAULT_OWNER.email.toUpperCase(), DEFAULT_OWNER.password);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.redirect, false);
    assert.equal("url" in res.json, false);
    assert.equal(res.json.user.email, DEFAULT_OWNER.email);
    assert.deepEqual(Object.keys(res.json.user).sort(), [
      "createdAt",
      "email",
      "emailVerified",
      "id",
      "image",
      "name",
      "updatedAt",
    ]);
    const raw: string = res.json.token;
    assert.match(raw, /^[A-Za-z0-9]{32}$/);
    const signed = res.headers.get("set-auth-token")!;
    assert.ok(signed.startsWith(`${raw}.`));
    assert.ok(signed.endsWith("%3D"), "URL-encoded base64 signature");
    assert.match(res.headers.get("access-control-expose-headers")!, /set-auth-token/);
    assert.match(res.headers.get("set-cookie")!, /better-auth\.session_token=/);

    for (const token of [raw, signed]) {
      const who = await call(sim, "/api/auth/get-session", { token });
      assert.equal(who.json?.user?.email, DEFAULT_OWNER.email, who.text);
      assert.equal((await call(sim, "/config/models", { token })).status, 200);
    }
    // the scheme is case-insensitive
    const lower = await call(sim, "/config/models", {
      headers: { Authorization: `bearer ${raw}` },
    });
    assert.equal(lower.status, 200);
    // quirk: the bearer hook strips the first "=", so only the URL-encoded signed form works
    const decoded = await call(sim, "/config/models", { token: decodeURIComponent(signed) });
    assert.equal(decoded.status, 401);
    const forged = await call(sim, "/config/models", { token: `${raw}.${"A".repeat(43)}=` });
    assert.equal(forged.status, 401);

    const session = await call(sim, "/api/auth/get-session", { token: signed });
    assert.equal(session.json.session.token, raw);
    assert.equal(session.json.user.id, res.json.user.id);
    assert.equal(
      Date.parse(session.json.session.expiresAt) - Date.parse(session.json.session.createdAt),
      30 * 24 * 3600 * 1000,
    );
    const anonymous = await call(sim, "/api/auth/get-session");
    assert.deepEqual([anonymous.status, anonymous.text], [200, "null"]);
  });
});

Deno.test("sign-in errors: better-auth {code,message} bodies", async () => {
  await withParserSim(async (sim) => {
    const wrong = await signIn(sim, DEFAULT_OWNER.email, "not-the-password");
    assert.deepEqual([wrong.status, wrong.json], [401, {
      code: "INVALID_EMAIL_OR_PASSWORD",
      message: "Invalid email or password",
    }]);
    const unknown = await signIn(sim, "nobody@example.com", "whatever-password");
    assert.equal(unknown.status, 401);
    const invalid = await signIn(sim, "not-an-email", "whatever-password");
    assert.deepEqual([invalid.status, invalid.json.code], [400, "INVALID_EMAIL"]);
    const missing = await call(sim, "/api/auth/sign-in/email", { body: { email: "a@b.co" } });
    assert.deepEqual([missing.status, missing.json.code], [400, "VALIDATION_ERROR"]);
    assert.match(missing.json.message, /^\[body\.password\]/);
    const nowhere = await call(sim, "/api/auth/sign-in/nothing", { body: {} });
    assert.deepEqual([nowhere.status, nowhere.text], [404, ""]);
  });
});

Deno.test("sign-out deletes the session: both token forms are invalid at once", async () => {
  await withParserSim(async (sim) => {
    const res = await signIn(sim, DEFAULT_OWNER.email, DEFAULT_OWNER.password);
    const raw: string = res.json.token;
    const signed = res.headers.get("set-auth-token")!;
    const out = await call(sim, "/api/auth/sign-out", { method: "POST", token: signed });
    assert.deepEqual([out.status, out.json], [200, { success: true }]);
    assert.equal(sim.store.sessions.has(raw), false);
    assert.equal((await call(sim, "/config/models", { token: raw })).status, 401);
    assert.equal((await call(sim, "/integrations/allcodex/status", { token: signed })).status, 401);
    assert.equal((await call(sim, "/api/auth/get-session", { token: raw })).text, "null");

    const again = await call(sim, "/api/auth/sign-out", { method: "POST" });
    assert.deepEqual([again.status, again.json.code], [400, "FAILED_TO_GET_SESSION"]);
  });
});

Deno.test("sessions: expire after 30 days and slide forward after 1 day", async () => {
  let now = new Date("2026-06-01T00:00:00Z");
  await withParserSim(async (sim) => {
    const token = sim.ownerToken();
    now = new Date("2026-06-03T00:00:00Z");
    const res = await call(sim, "/api/auth/get-session", { token });
    assert.equal(res.json.session.expiresAt, "2026-07-03T00:00:00.000Z");
    assert.ok(res.headers.get("set-auth-token"), "a refreshed session re-sets the cookie");
    now = new Date("2026-07-03T00:00:01Z");
    assert.equal((await call(sim, "/config/models", { token })).status, 401);
  }, { now: () => now });
});

Deno.test("owner gate: 401, 403 non-owner, 503 owner not configured, 503 auth unavailable", async () => {
  await withParserSim(async (sim) => {
    const anonymous = await call(sim, "/integrations/allcodex/status");
    assert.deepEqual([anonymous.status, anonymous.json], [401, { error: "Unauthorized" }]);
    const bogus = await call(sim, "/integrations/allcodex/status", { token: "x".repeat(32) });
    assert.equal(bogus.status, 401);

    const other = await otherUser(sim);
    const forbidden = await call(sim, "/integrations/allcodex/status", { token: other });
    assert.deepEqual([forbidden.status, forbidden.json], [403, { error: "Forbidden" }]);
    // better-auth itself still serves the non-owner
    const session = await call(sim, "/api/auth/get-session", { token: other });
    assert.equal(session.json.user.email, "other@example.com");

    const owner = sim.ownerToken();
    sim.store.appConfig.delete("ownerUserId");
    const unconfigured = await call(sim, "/config/models", { token: owner });
    assert.deepEqual([unconfigured.status, unconfigured.json], [503, {
      error: "Owner not configured",
    }]);
    assert.equal((await call(sim, "/config/models")).status, 401, "session is checked first");

    sim.store.appConfig.set("ownerUserId", sim.store.findUserByEmail(DEFAULT_OWNER.email)!.id);
    sim.store.databaseDown = true;
    const down = await call(sim, "/config/models", { token: owner });
    assert.deepEqual([down.status, down.json], [503, { error: "Auth unavailable" }]);
    const health = await call(sim, "/health");
    assert.equal(health.json.checks.database.ok, false);
  });
});

Deno.test("validation runs before auth: anonymous invalid body → 422", async () => {
  await withParserSim(async (sim) => {
    const res = await call(sim, "/integrations/allcodex/connect", { body: { token: "" } });
    assert.equal(res.status, 422, res.text);
    assert.equal(res.json.type, "validation");
    assert.equal(res.json.on, "body");
    assert.equal(res.json.property, "/baseUrl");
    assert.equal(res.json.message, "Expected required property");
    assert.equal(res.json.summary, "Property 'baseUrl' is missing");
    assert.deepEqual(res.json.found, { token: "" });
    assert.deepEqual(res.json.expected, { baseUrl: " ", token: " " });
    assert.deepEqual(
      res.json.errors.map((e: { path: string; message: string }) => [e.path, e.message]),
      [
        ["/baseUrl", "Expected required property"],
        ["/baseUrl", "Expected string"],
        ["/token", "Expected string length greater or equal to 1"],
      ],
    );
    assert.equal(
      res.json.errors[1].summary,
      "Expected property 'baseUrl' to be string but found: undefined",
    );
    const noBody = await call(sim, "/integrations/allcodex/connect", { method: "POST" });
    assert.deepEqual([noBody.status, noBody.json.message], [422, "Expected object"]);
    const valid = await call(sim, "/integrations/allcodex/connect", {
      body: { baseUrl: "http://core.test", token: "tok1" },
    });
    assert.equal(valid.status, 401, "a valid body reaches the guard");
  });
});

Deno.test("validate(): TypeBox order and messages, unknown properties stripped", () => {
  const schema = t.Object({
    rawText: t.String({ minLength: 10, maxLength: 20 }),
    mode: t.Optional(t.Union([t.Literal("auto"), t.Literal("review")])),
    topK: t.Optional(t.Number({ minimum: 1, maximum: 50 })),
    items: t.Optional(t.Array(t.Boolean(), { minItems: 1, maxItems: 2 })),
  });
  const ok = validate(schema, { rawText: "long enough text", extra: 1 });
  assert.deepEqual(ok, { errors: [], value: { rawText: "long enough text" } });
  const bad = validate(schema, {
    rawText: "x".repeat(21),
    mode: "inbox",
    topK: 0,
    items: [true, 1, false],
  });
  assert.deepEqual(bad.errors.map((e) => [e.path, e.type, e.message]), [
    ["/rawText", 51, "Expected string length less or equal to 20"],
    ["/mode", 62, "Expected union value"],
    ["/topK", 39, "Expected number to be greater or equal to 1"],
    ["/items", 2, "Expected array length to be less or equal to 2"],
    ["/items/1", 14, "Expected boolean"],
  ]);
  assert.equal(validate(t.Literal(3), 4).errors[0].message, "Expected 3");
  assert.equal(validate(schema, "text").errors[0].message, "Expected object");
});

Deno.test("sign-up gate: secret header required; first gated sign-up becomes owner", async () => {
  await withParserSim(async (sim) => {
    const body = { name: "First", email: "First@Example.com", password: "password-1" };
    for (const secret of [null, "wrong-secret"]) {
      const refused = await signUp(sim, body, secret);
      assert.deepEqual([refused.status, refused.json], [403, {
        error: "FORBIDDEN",
        message: "Sign-up is disabled. Use the owner account.",
      }]);
    }
    assert.equal(sim.store.users.size, 0);

    const ok = await signUp(sim, body);
    assert.equal(ok.status, 200, ok.text);
    assert.match(ok.json.token, /^[A-Za-z0-9]{32}$/);
    assert.equal(ok.json.user.email, "first@example.com");
    assert.equal(ok.json.user.emailVerified, false);
    assert.ok(ok.headers.get("set-auth-token")?.startsWith(`${ok.json.token}.`));
    assert.equal(sim.store.ownerUserId(), ok.json.user.id);
    const models = await call(sim, "/config/models", { token: ok.json.token });
    assert.equal(models.status, 200);

    const second = await otherUser(sim);
    assert.equal((await call(sim, "/config/models", { token: second })).status, 403);
    assert.equal(sim.store.ownerUserId(), ok.json.user.id, "the owner is never replaced");

    const dup = await signUp(sim, body);
    assert.deepEqual([dup.status, dup.json.code], [422, "USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL"]);
    const short = await signUp(sim, { ...body, email: "s@example.com", password: "short" });
    assert.deepEqual([short.status, short.json.code], [400, "PASSWORD_TOO_SHORT"]);
    const long = await signUp(sim, { ...body, email: "l@example.com", password: "p".repeat(129) });
    assert.deepEqual([long.status, long.json.code], [400, "PASSWORD_TOO_LONG"]);
    const email = await signUp(sim, { ...body, email: "nope" });
    assert.deepEqual([email.status, email.json.code], [400, "INVALID_EMAIL"]);
    assert.equal((await call(sim, "/config/models")).status, 401);
  }, { bootstrap: false });

  await withParserSim(async (sim) => {
    const refused = await signUp(sim, { name: "A", email: "a@b.co", password: "password-1" }, "");
    assert.equal(refused.status, 403, "no configured secret refuses every sign-up");
  }, { internalSecret: null });
});

Deno.test("credentials endpoint: 503 → 403 → 401 → 403 → 404 → 200, in that order", async () => {
  const core = { url: "http://core.test:8080", token: "etapi-token-1234" };
  await withParserSim(async (sim) => {
    const res = await credentials(sim, "anything", sim.ownerToken());
    assert.deepEqual([res.status, res.json], [503, {
      error: "PORTAL_INTERNAL_SECRET is not configured.",
    }]);
  }, { internalSecret: null, core });

  await withParserSim(async (sim) => {
    const owner = sim.ownerToken();
    const other = await otherUser(sim);
    const badSecret = await credentials(sim, "wrong", owner);
    assert.deepEqual([badSecret.status, badSecret.json], [403, { error: "Forbidden" }]);
    assert.equal((await credentials(sim, null)).status, 403, "the secret is checked first");
    const noSession = await credentials(sim, sim.internalSecret);
    assert.deepEqual([noSession.status, noSession.json], [401, { error: "Unauthorized" }]);
    const notOwner = await credentials(sim, sim.internalSecret, other);
    assert.deepEqual([notOwner.status, notOwner.json], [403, { error: "Forbidden" }]);

    const ok = await credentials(sim, sim.internalSecret, owner);
    assert.deepEqual([ok.status, ok.json], [200, { baseUrl: core.url, token: core.token }]);

    await call(sim, "/integrations/allcodex", { method: "DELETE", token: owner });
    const disconnected = await credentials(sim, sim.internalSecret, owner);
    assert.deepEqual([disconnected.status, disconnected.json], [404, {
      error: "AllCodex is not connected for this user. Reconnect AllCodex in settings.",
      code: "ALLCODEX_NOT_CONNECTED",
    }]);

    sim.store.databaseDown = true;
    assert.equal((await credentials(sim, sim.internalSecret, owner)).status, 500);
  }, { core });
});

Deno.test("auto-provision: 64-hex token reused; 503 no secret / no bootstrap", async () => {
  await withParserSim(async (sim) => {
    const provision = (secret: string | null = DEFAULT_INTERNAL_SECRET) =>
      call(sim, "/internal/auto-provision", {
        method: "POST",
        headers: secret === null ? {} : { "X-Portal-Internal-Secret": secret },
      });
    const first = await provision();
    assert.equal(first.status, 200, first.text);
    assert.match(first.json.token, /^[0-9a-f]{64}$/);
    assert.equal(first.json.url, sim.url);
    assert.equal(first.json.userId, sim.store.findUserByEmail(DEFAULT_OWNER.email)!.id);
    assert.ok(!Number.isNaN(Date.parse(first.json.expiresAt)));
    const second = await provision();
    assert.equal(second.json.token, first.json.token);
    const stored = sim.store.sessions.get(first.json.token)!;
    assert.deepEqual([stored.userAgent, stored.ipAddress], ["auto-provision", "internal"]);
    assert.match(stored.id, /^c[0-9a-z]{24}$/, "written by Prisma (cuid), not by better-auth");

    const status = await call(sim, "/integrations/allcodex/status", { token: first.json.token });
    assert.equal(status.status, 200, "the raw token works as a bearer");

    const bad = await provision("wrong");
    assert.deepEqual([bad.status, bad.json], [403, { error: "Forbidden" }]);

    sim.store.users.clear();
    const empty = await provision();
    assert.deepEqual([empty.status, empty.json], [503, { error: "No users in database." }]);
  });

  await withParserSim(async (sim) => {
    const res = await call(sim, "/internal/auto-provision", {
      method: "POST",
      headers: { "X-Portal-Internal-Secret": DEFAULT_INTERNAL_SECRET },
    });
    assert.deepEqual([res.status, res.json], [503, {
      error: "PORTAL_INTERNAL_SECRET is not configured.",
    }]);
  }, { internalSecret: null });

  await withParserSim(async (sim) => {
    const res = await call(sim, "/internal/auto-provision", {
      method: "POST",
      headers: { "X-Portal-Internal-Secret": DEFAULT_INTERNAL_SECRET },
    });
    assert.equal(res.status, 503);
    assert.equal(res.json.error, "Bootstrap not complete — no default user.");
    assert.equal(res.json.bootstrapStatus.userReady, false);
    assert.throws(() => sim.ownerToken(), /default owner does not exist/);
  }, { bootstrap: false });
});

Deno.test("integrations: connect strips the trailing slash, status, idempotent delete", async () => {
  let now = new Date("2026-06-01T12:00:00Z");
  await withParserSim(async (sim) => {
    const token = sim.ownerToken();
    const before = await call(sim, "/integrations/allcodex/status", { token });
    assert.deepEqual(before.json, { connected: false, provider: "allcodex" });

    now = new Date("2026-06-02T08:30:00Z");
    const connected = await call(sim, "/integrations/allcodex/connect", {
      token,
      body: { baseUrl: "http://core.test:8080/", token: "secret-etapi-WXYZ", extra: true },
    });
    assert.equal(connected.status, 200, connected.text);
    assert.deepEqual(connected.json, {
      ok: true,
      connected: true,
      integration: {
        provider: "allcodex",
        baseUrl: "http://core.test:8080",
        tokenLast4: "WXYZ",
        updatedAt: "2026-06-02T08:30:00.000Z",
      },
    });
    const status = await call(sim, "/integrations/allcodex/status", { token });
    assert.deepEqual(status.json, {
      connected: true,
      provider: "allcodex",
      baseUrl: "http://core.test:8080",
      tokenLast4: "WXYZ",
      updatedAt: "2026-06-02T08:30:00.000Z",
    });
    const creds = await credentials(sim, sim.internalSecret, token);
    assert.deepEqual(creds.json, { baseUrl: "http://core.test:8080", token: "secret-etapi-WXYZ" });

    for (let i = 0; i < 2; i++) {
      const del = await call(sim, "/integrations/allcodex", { method: "DELETE", token });
      assert.deepEqual([del.status, del.json], [200, { ok: true, connected: false }]);
    }
    const after = await call(sim, "/integrations/allcodex/status", { token });
    assert.equal(after.json.connected, false);
  }, { now: () => now });
});

Deno.test("config: models, the default chain or the configured one", async () => {
  await withParserSim(async (sim) => {
    const models = await call(sim, "/config/models", { token: sim.ownerToken() });
    assert.deepEqual(models.json, DEFAULT_MODELS);
  });
  const custom = { "brain-dump": { models: ["openrouter/auto"], autoMode: true } };
  await withParserSim(async (sim) => {
    const models = await call(sim, "/config/models", { token: sim.ownerToken() });
    assert.deepEqual(models.json, custom);
  }, { models: custom });
});

Deno.test("wipe: 404 unless enabled; deletes every #lore note via ETAPI", async () => {
  const core = await startCoreSim();
  const lore = async () => {
    const res = await fetch(`${core.url}/etapi/notes?search=${encodeURIComponent("#lore")}`, {
      headers: { Authorization: core.token },
    });
    return (await res.json()).results.length as number;
  };
  try {
    const coreOpt = { url: core.url, token: core.token };
    await withParserSim(async (sim) => {
      assert.equal((await call(sim, "/config/wipe", { method: "POST" })).status, 401);
      const res = await call(sim, "/config/wipe", { method: "POST", token: sim.ownerToken() });
      assert.deepEqual([res.status, res.json], [404, { error: "Not found" }]);
    }, { core: coreOpt });

    const count = await lore();
    assert.ok(count > 0, "the sample world has lore notes");
    await withParserSim(async (sim) => {
      const token = sim.ownerToken();
      core.clearRequests();
      const res = await call(sim, "/config/wipe", { method: "POST", token });
      assert.deepEqual([res.status, res.json], [200, { ok: true, coreDeleted: count }]);
      assert.equal(core.requests[0].method, "GET");
      assert.equal(core.requests.filter((r) => r.method === "DELETE").length, count);
      assert.ok(core.requests.every((r) => r.headers.get("authorization") === core.token));
      assert.equal(await lore(), 0);

      await call(sim, "/integrations/allcodex", { method: "DELETE", token });
      const disconnected = await call(sim, "/config/wipe", { method: "POST", token });
      assert.deepEqual([disconnected.status, disconnected.text], [
        500,
        "AllCodex is not connected for this user. Reconnect AllCodex in settings.",
      ]);
    }, { core: coreOpt, wipeEnabled: true });
  } finally {
    await core.close();
  }
});

Deno.test("better-auth origin check: untrusted Origin/Referer/callbackURL → 403", async () => {
  const coreUrl = "http://core.test:8080";
  await withParserSim(async (sim) => {
    const creds = { email: DEFAULT_OWNER.email, password: DEFAULT_OWNER.password };
    const post = (headers: Record<string, string>, body: unknown = creds) =>
      call(sim, "/api/auth/sign-in/email", { body, headers });
    const untrusted = await post({ Origin: "https://evil.example" });
    assert.deepEqual([untrusted.status, untrusted.json], [403, {
      code: "INVALID_ORIGIN",
      message: "Invalid origin",
    }]);
    assert.equal((await post({ Referer: "https://evil.example/page" })).status, 403);
    assert.equal((await post({ Origin: "null" })).status, 403);
    assert.equal((await post({ Origin: sim.url })).status, 200);
    assert.equal((await post({ Origin: coreUrl })).status, 200);
    assert.equal((await post({})).status, 200, "a missing Origin is allowed");
    const callback = await post({}, { ...creds, callbackURL: "https://evil.example/cb" });
    assert.deepEqual([callback.status, callback.json.code], [403, "INVALID_CALLBACK_URL"]);
    assert.equal((await post({}, { ...creds, callbackURL: "/after" })).status, 200);
    // GET is never origin-checked
    const get = await call(sim, "/api/auth/get-session", {
      headers: { Origin: "https://evil.example" },
    });
    assert.equal(get.status, 200);
  }, { core: { url: coreUrl, token: "t" } });
});

Deno.test("faults and recording: status, default body, delay, hang, close", async () => {
  const sim = await startParserSim();
  try {
    sim.fault({ path: "/health", status: 503, times: 1 });
    const faulted = await call(sim, "/health");
    assert.equal(faulted.status, 503);
    assert.match(faulted.json.error, /injected fault/);
    sim.fault({ method: "POST", path: /^\/api\/auth\//, status: 401 });
    const denied = await signIn(sim, DEFAULT_OWNER.email, DEFAULT_OWNER.password);
    assert.deepEqual([denied.status, denied.json], [401, { error: "Unauthorized" }]);
    sim.clearFaults();

    sim.fault({ path: "/", delayMs: 100, times: 1 });
    const started = performance.now();
    assert.equal((await call(sim, "/")).status, 200);
    assert.ok(performance.now() - started >= 90);

    sim.fault({ path: "/config/models", hang: true });
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), 50);
    await assert.rejects(call(sim, "/config/models", { signal: ac.signal }));
    clearTimeout(timer);

    sim.clearRequests();
    await call(sim, "/integrations/allcodex/connect", {
      token: "tok",
      body: { baseUrl: "http://x", token: "y" },
      headers: { "X-Trace": "t1" },
    });
    assert.equal(sim.requests.length, 1);
    assert.equal(sim.requests[0].method, "POST");
    assert.equal(sim.requests[0].path, "/integrations/allcodex/connect");
    assert.equal(sim.requests[0].headers.get("x-trace"), "t1");
    assert.equal(sim.requests[0].headers.get("authorization"), "Bearer tok");
    assert.deepEqual(JSON.parse(sim.requests[0].bodyText!), { baseUrl: "http://x", token: "y" });

    const pending = call(sim, "/config/models");
    // until the double holds it (a guard, however slow the machine: the loop only looks)
    for (let i = 0; i < 6_000 && sim.held() === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(sim.held(), 1);
    await sim.close();
    assert.equal((await pending).status, 503);
  } finally {
    await sim.close().catch(() => {});
  }
});
