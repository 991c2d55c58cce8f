/** Core integration (connect, status, disconnect) over HTTP, against the Parser and Core doubles. */
import assert from "node:assert/strict";
import { assertNoSecrets, type Harness, withHarness } from "../helpers/harness.ts";
import { countingListener, login, setCookies } from "../helpers/session.ts";
import { DEFAULT_CORE_PASSWORD } from "../../sims/core.ts";

const withParser = (
  fn: (h: Harness) => Promise<void>,
  opts: Parameters<typeof withHarness>[1] = {},
) => withHarness(fn, { parser: true, ...opts });

const ownerIntegration = (h: Harness) =>
  h.parser!.store.getIntegration(h.parser!.store.ownerUserId()!);

const connect = (h: Harness, cookie: string, json: unknown) =>
  h.requestJson("/api/integrations/codex/connect", {
    method: "POST",
    json,
    headers: { cookie },
  });

Deno.test("connect with the Core password: new Core token stored in the Parser and used next", () =>
  withParser(async (h) => {
    const cookie = await login(h);
    const warm = await h.request("/api/lore", { headers: { cookie } });
    await warm.body?.cancel();
    assert.equal(warm.status, 200, "Core credentials cached for this session");
    const gone = await h.requestJson("/api/integrations/codex", {
      method: "DELETE",
      headers: { cookie },
    });
    assert.deepEqual(gone.body, { connected: false });
    assert.equal(ownerIntegration(h), undefined);
    const off = await h.requestJson("/api/lore", { headers: { cookie } });
    assert.equal(off.status, 503, "disconnect takes effect at once (cache dropped)");

    const res = await h.request("/api/integrations/codex/connect", {
      method: "POST",
      json: { password: DEFAULT_CORE_PASSWORD, url: h.core.url + "/" },
      headers: { cookie },
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    const body = JSON.parse(text);
    assert.deepEqual(Object.keys(body).sort(), ["connected", "updatedAt"]);
    assert.equal(body.connected, true);
    assert.ok(!Number.isNaN(Date.parse(body.updatedAt)));

    const stored = ownerIntegration(h)!;
    assert.equal(stored.baseUrl, h.core.url);
    assert.notEqual(stored.token, h.core.token, "a new Core token");
    const login_ = h.core.requests.find((r) => r.path === "/etapi/auth/login")!;
    assert.equal(JSON.parse(login_.bodyText!).tokenName, "Lore Portal Proxy");
    assert.equal(login_.headers.has("authorization"), false);
    // the token never leaves the server
    for (const t of [text, ...res.headers.getSetCookie(), ...h.logs]) {
      assert.ok(!t.includes(stored.token));
      assertNoSecrets(h, t);
    }
    assert.ok(setCookies(res).get("codex_off")?.attrs.get("max-age") === "0");

    const next = await h.request("/api/lore", { headers: { cookie } });
    await next.body?.cancel();
    assert.equal(next.status, 200);
    assert.equal(h.core.requests.at(-1)?.headers.get("authorization"), stored.token);
  }, { noCoreCredentials: true }));

Deno.test("connect with a ready token, default CORE_URL; status shows no URL or token", () =>
  withParser(async (h) => {
    const cookie = await login(h);
    const res = await connect(h, cookie, { token: "tok_given_by_user" });
    assert.equal(res.status, 200);
    assert.equal(ownerIntegration(h)?.baseUrl, h.core.url);
    assert.equal(ownerIntegration(h)?.token, "tok_given_by_user");
    assert.equal(h.core.requests.filter((r) => r.path === "/etapi/auth/login").length, 0);
    const status = await h.requestJson<Record<string, unknown>>("/api/integrations/codex/status", {
      headers: { cookie },
    });
    assert.equal(status.status, 200);
    assert.deepEqual(Object.keys(status.body).sort(), ["connected", "updatedAt"]);
    assert.equal(status.body.connected, true);
    await h.request("/api/integrations/codex", { method: "DELETE", headers: { cookie } })
      .then((r) => r.body?.cancel());
    const after = await h.requestJson("/api/integrations/codex/status", { headers: { cookie } });
    assert.deepEqual(after.body, { connected: false, updatedAt: null });
  }));

Deno.test("Core's address as its settings show it (…/etapi) is Core's base URL everywhere", () =>
  withParser(async (h) => {
    const cookie = await login(h);
    const res = await connect(h, cookie, {
      token: "tok_given_by_user",
      url: h.core.url + "/etapi",
    });
    assert.equal(res.status, 200);
    assert.equal(ownerIntegration(h)?.baseUrl, h.core.url, "the Parser stores the base URL");
    // a Parser that hands the /etapi form back is understood the same way
    h.parser!.store.setIntegration(
      h.parser!.store.ownerUserId()!,
      h.core.url + "/etapi/",
      h.core.token,
    );
    const fresh = await login(h);
    h.core.clearRequests();
    const lore = await h.request("/api/lore", { headers: { cookie: fresh } });
    await lore.body?.cancel();
    assert.equal(lore.status, 200);
    assert.ok(h.core.requests.length > 0);
    assert.ok(h.core.requests.every((r) => !r.path.startsWith("/etapi/etapi/")));
  }, { noCoreCredentials: true }));

Deno.test("connect: wrong Core password → 401, nothing stored", () =>
  withParser(async (h) => {
    const cookie = await login(h);
    const before = ownerIntegration(h);
    const res = await connect(h, cookie, { password: "nope" });
    assert.equal(res.status, 401);
    assert.equal(res.body.error, "UNAUTHORIZED");
    assert.equal(res.body.message, "Wrong Core password");
    assert.deepEqual(ownerIntegration(h), before);
    assert.equal(h.parser!.requests.some((r) => r.path.includes("/connect")), false);
  }));

Deno.test("connect: a url outside the allow-list → 400 and no connection at all", () =>
  withParser(async (h) => {
    const listener = countingListener();
    try {
      const cookie = await login(h);
      const parserBefore = h.parser!.requests.length;
      const res = await connect(h, cookie, {
        password: DEFAULT_CORE_PASSWORD,
        url: listener.url,
      });
      assert.equal(res.status, 400);
      assert.equal((res.body.details as { fields: { path: string }[] }).fields[0].path, "url");
      assert.equal(listener.accepted, 0);
      assert.equal(h.parser!.requests.length, parserBefore);
      assert.equal(h.core.requests.length, 0);
    } finally {
      await listener.close();
    }
  }));

Deno.test("connect: bad bodies → 400 and nothing upstream", () =>
  withParser(async (h) => {
    const cookie = await login(h);
    const parserBefore = h.parser!.requests.length;
    for (
      const body of [
        {},
        { password: DEFAULT_CORE_PASSWORD, token: "t" },
        { password: "" },
        { token: "t", url: h.core.url, baseUrl: h.core.url },
        { allcodex: { url: h.core.url, token: "t" }, token: "t" },
        { token: "t", url: "not a url" },
      ]
    ) {
      const res = await connect(h, cookie, body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error, "INVALID_REQUEST");
    }
    assert.equal(h.parser!.requests.length, parserBefore);
    assert.equal(h.core.requests.length, 0);
  }));

Deno.test("connect: no Core URL anywhere → 503 NOT_CONFIGURED core", () =>
  withParser(async (h) => {
    const cookie = await login(h);
    const res = await connect(h, cookie, { token: "t" });
    assert.equal(res.status, 503);
    assert.deepEqual(res.body.details, { service: "core" });
  }, { noCoreCredentials: true }));

Deno.test("connect: rate-limited per client (11th attempt → 429)", () =>
  withParser(async (h) => {
    const cookie = await login(h);
    for (let i = 0; i < 10; i++) {
      assert.equal((await connect(h, cookie, { password: "nope" })).status, 401);
    }
    const res = await connect(h, cookie, { token: "t" });
    assert.equal(res.status, 429);
    assert.match(res.headers.get("retry-after") ?? "", /^[1-9]\d*$/);
  }));

Deno.test("integrations without a Parser session → 401 UNAUTHORIZED parser", () =>
  withParser(async (h) => {
    for (
      const [path, method] of [["/api/integrations/codex/status", "GET"], [
        "/api/integrations/codex",
        "DELETE",
      ]]
    ) {
      const res = await h.requestJson(path, { method });
      assert.equal(res.status, 401);
      assert.equal(res.body.error, "UNAUTHORIZED");
      assert.deepEqual(res.body.details, { service: "parser" });
    }
  }));

Deno.test("connect: Core failing during the password exchange → mapped error, nothing stored", async () => {
  await withParser(async (h) => {
    const cookie = await login(h);
    const before = ownerIntegration(h);
    const res = await connect(h, cookie, { password: DEFAULT_CORE_PASSWORD });
    assert.equal(res.status, 503);
    assert.equal(res.body.error, "UNREACHABLE");
    assert.deepEqual(ownerIntegration(h), before);
  }, { coreUrlOverride: "http://127.0.0.1:9" });
  await withParser(async (h) => {
    const cookie = await login(h);
    h.core.fault({ path: "/etapi/auth/login", status: 500, body: '{"message":"SQLITE /var/x"}' });
    const res = await connect(h, cookie, { password: DEFAULT_CORE_PASSWORD });
    assert.equal(res.status, 502);
    assert.equal(res.body.error, "UPSTREAM_ERROR");
    assert.ok(!JSON.stringify(res.body).includes("SQLITE"));
  });
});
