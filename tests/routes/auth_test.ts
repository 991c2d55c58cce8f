/** Login, register, logout and session over HTTP, against the Parser and Core doubles. */
import assert from "node:assert/strict";
import { type Harness, withHarness } from "../helpers/harness.ts";
import {
  clears,
  cookieHeader,
  countingListener,
  login,
  sealCookie,
  setCookies,
} from "../helpers/session.ts";
import { DEFAULT_INTERNAL_SECRET, DEFAULT_OWNER } from "../../sims/parser.ts";

const withParser = (
  fn: (h: Harness) => Promise<void>,
  opts: Parameters<typeof withHarness>[1] = {},
) => withHarness(fn, { parser: true, ...opts });

const owner = { email: DEFAULT_OWNER.email, password: DEFAULT_OWNER.password };
const post = (json: unknown, headers?: HeadersInit) => ({ method: "POST", json, headers });

/** An HTTP server that records request headers and answers `status`. */
function recordingServer(status: number) {
  const headers: Headers[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    headers.push(req.headers);
    return Response.json({ code: "FORBIDDEN", message: "no" }, { status });
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, headers, close: () => server.shutdown() };
}

const credentialCalls = (h: Harness) =>
  h.parser!.requests.filter((r) => r.path === "/internal/integrations/allcodex/credentials");

Deno.test("login: sealed HttpOnly/SameSite=Lax/Path=/ cookies, the user only, no token anywhere", () =>
  withParser(async (h) => {
    for (const path of ["/api/auth/login", "/api/config/parser-login"]) {
      const res = await h.request(path, post(owner));
      const text = await res.text();
      assert.equal(res.status, 200);
      const body = JSON.parse(text);
      assert.deepEqual(Object.keys(body), ["user"]);
      assert.equal(body.user.email, DEFAULT_OWNER.email);
      const jar = setCookies(res);
      const signIn = h.parser!.requests.filter((r) => r.path === "/api/auth/sign-in/email").at(-1)!;
      assert.ok(signIn, "signed in at the Parser");
      const sessionTokens = [...h.parser!.store.sessions.keys()];
      for (const name of ["parser_url", "parser_token"]) {
        const c = jar.get(name);
        assert.ok(c, `${name} set`);
        assert.ok(c.value.startsWith("v1."), "sealed");
        assert.ok(c.attrs.has("httponly"));
        assert.equal(c.attrs.get("samesite"), "Lax");
        assert.equal(c.attrs.get("path"), "/");
        assert.equal(c.attrs.get("max-age"), String(30 * 24 * 3600));
        assert.ok(!c.attrs.has("secure"), "plain HTTP without a trusted proxy: not Secure");
        for (const t of sessionTokens) assert.ok(!c.value.includes(t), "token not readable");
        assert.ok(!c.value.includes(h.parser!.url));
      }
      for (const t of sessionTokens) assert.ok(!text.includes(t));
      for (const line of h.logs) for (const t of sessionTokens) assert.ok(!line.includes(t));
    }
  }));

Deno.test("login: Secure only behind a trusted HTTPS proxy or with COOKIE_SECURE=always", async () => {
  const secure = async (h: Harness, headers: HeadersInit) =>
    setCookies(await h.request("/api/auth/login", post(owner, headers))).get("parser_token")!
      .attrs.has("secure");
  await withParser(async (h) => {
    assert.equal(await secure(h, { "x-forwarded-proto": "https" }), false, "untrusted header");
  });
  await withParser(async (h) => {
    assert.equal(await secure(h, { "x-forwarded-proto": "https" }), true);
    assert.equal(await secure(h, {}), false);
  }, { env: { TRUST_PROXY: "true" } });
  await withParser(async (h) => {
    assert.equal(await secure(h, {}), true);
  }, { env: { COOKIE_SECURE: "always" } });
});

Deno.test("login: wrong password → 401 with our message, no cookies", () =>
  withParser(async (h) => {
    const res = await h.requestJson("/api/auth/login", post({ ...owner, password: "wrong-pass" }));
    assert.equal(res.status, 401);
    assert.equal(res.body.error, "UNAUTHORIZED");
    assert.equal(res.body.message, "Wrong email or password");
    assert.equal(res.headers.getSetCookie().length, 0);
  }));

Deno.test("login/register: a url outside the allow-list is refused without any connection", () =>
  withParser(async (h) => {
    const listener = countingListener();
    try {
      for (
        const [path, body] of [
          ["/api/auth/login", { ...owner, url: listener.url }],
          ["/api/config/parser-register", { name: "Eve", ...owner, url: listener.url + "/" }],
        ] as const
      ) {
        const res = await h.requestJson<{ error: string; details: { fields: { path: string }[] } }>(
          path,
          post(body),
        );
        assert.equal(res.status, 400);
        assert.equal(res.body.error, "INVALID_REQUEST");
        assert.equal(res.body.details.fields[0].path, "url");
      }
      assert.equal(listener.accepted, 0);
      assert.equal(h.parser!.requests.length, 0);
    } finally {
      await listener.close();
    }
  }));

Deno.test("login: the configured Parser URL with a trailing slash is the same Parser", () =>
  withParser(async (h) => {
    const res = await h.request("/api/auth/login", post({ ...owner, url: h.parser!.url + "/" }));
    await res.body?.cancel();
    assert.equal(res.status, 200);
  }));

Deno.test("login: a url naming a Parser route is refused before any call, naming url", () =>
  withParser(async (h) => {
    h.parser!.clearRequests();
    const res = await h.requestJson<{ error: string; details: unknown }>(
      "/api/auth/login",
      post({ ...owner, url: h.parser!.url + "/api/auth" }),
    );
    assert.equal(res.status, 400);
    assert.equal(res.body.error, "INVALID_REQUEST");
    assert.deepEqual(res.body.details, { fields: [{ path: "url", message: "not allowed" }] });
    assert.deepEqual(h.parser!.requests, []);
  }));

Deno.test("login: no Parser configured → 503 NOT_CONFIGURED parser", () =>
  withHarness(async (h) => {
    const res = await h.requestJson("/api/auth/login", post(owner));
    assert.equal(res.status, 503);
    assert.equal(res.body.error, "NOT_CONFIGURED");
    assert.deepEqual(res.body.details, { service: "parser" });
  }));

Deno.test("register: 201 with cookies; the bootstrap secret goes to PARSER_URL only", async () => {
  await withParser(async (h) => {
    const res = await h.request(
      "/api/auth/register",
      post({ name: "Ada", email: "ada@example.com", password: "correct-horse" }),
    );
    const body = await res.json();
    assert.equal(res.status, 201);
    assert.deepEqual(Object.keys(body), ["user"]);
    assert.equal(body.user.email, "ada@example.com");
    assert.ok(setCookies(res).get("parser_token")?.value.startsWith("v1."));
    const signUp = h.parser!.requests.find((r) => r.path === "/api/auth/sign-up/email")!;
    assert.equal(signUp.headers.get("x-allcodex-bootstrap-secret"), DEFAULT_INTERNAL_SECRET);
    assert.ok(h.parser!.store.findUserByEmail("ada@example.com"));
    // a second account with the same email
    const again = await h.requestJson(
      "/api/config/parser-register",
      post({ name: "Ada", email: "ada@example.com", password: "correct-horse" }),
    );
    assert.equal(again.status, 409);
  });
  const other = recordingServer(403);
  try {
    await withParser(async (h) => {
      const res = await h.requestJson(
        "/api/auth/register",
        post({ name: "Eve", email: "eve@example.com", password: "correct-horse", url: other.url }),
      );
      assert.equal(res.status, 403);
      assert.equal(res.body.error, "FORBIDDEN");
      assert.equal(other.headers.length, 1, "the allowed other Parser was asked");
      for (const name of ["x-allcodex-bootstrap-secret", "x-portal-internal-secret"]) {
        assert.equal(other.headers[0].has(name), false, `${name} not sent to another Parser`);
      }
    }, { env: { PARSER_ALLOWED_URLS: other.url } });
  } finally {
    await other.close();
  }
});

Deno.test("login: the 11th attempt from one client → 429 with Retry-After", () =>
  withParser(async (h) => {
    for (let i = 0; i < 10; i++) {
      const res = await h.request("/api/auth/login", post({ ...owner, password: "wrong-pass" }));
      await res.body?.cancel();
      assert.equal(res.status, 401);
    }
    const before = h.parser!.requests.length;
    const res = await h.requestJson("/api/auth/login", post(owner));
    assert.equal(res.status, 429);
    assert.equal(res.body.error, "RATE_LIMITED");
    assert.match(res.headers.get("retry-after") ?? "", /^[1-9]\d*$/);
    assert.equal(h.parser!.requests.length, before, "not passed on to the Parser");
  }));

Deno.test("login: a cross-site POST → 403 and nothing upstream", () =>
  withParser(async (h) => {
    const crossSite: HeadersInit[] = [
      { origin: "https://evil.example" },
      { "sec-fetch-site": "cross-site" },
    ];
    for (const headers of crossSite) {
      const res = await h.requestJson("/api/auth/login", post(owner, headers));
      assert.equal(res.status, 403);
      assert.equal(res.headers.getSetCookie().length, 0);
    }
    assert.equal(h.parser!.requests.length, 0);
  }));

Deno.test("login/register: bad bodies → 400 and nothing upstream", () =>
  withParser(async (h) => {
    const bad: [string, unknown][] = [
      ["/api/auth/login", { email: DEFAULT_OWNER.email }],
      ["/api/auth/login", { ...owner, extra: 1 }],
      ["/api/auth/login", { ...owner, email: "not-an-email" }],
      ["/api/auth/login", { ...owner, url: "ftp://parser" }],
      ["/api/auth/login", []],
      ["/api/auth/register", { email: "a@b.example", password: "long-enough" }],
      ["/api/auth/register", { name: "A", email: "a@b.example", password: "short" }],
    ];
    for (const [path, body] of bad) {
      const res = await h.requestJson(path, post(body));
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error, "INVALID_REQUEST");
    }
    assert.equal(h.parser!.requests.length, 0);
  }));

Deno.test("session: the signed-in user, verified by the Parser", () =>
  withParser(async (h) => {
    const cookie = await login(h);
    const res = await h.requestJson<{ user: { email: string }; expiresAt: string; source: string }>(
      "/api/auth/session",
      { headers: { cookie } },
    );
    assert.equal(res.status, 200);
    assert.equal(res.body.user.email, DEFAULT_OWNER.email);
    assert.equal(res.body.source, "session");
    assert.ok(Date.parse(res.body.expiresAt) > Date.now());
  }));

Deno.test("session: a session the Parser no longer knows → 401 and cookies cleared", () =>
  withParser(async (h) => {
    const cookie = await login(h);
    for (const token of [...h.parser!.store.sessions.keys()]) h.parser!.store.deleteSession(token);
    const res = await h.requestJson("/api/auth/session", { headers: { cookie } });
    assert.equal(res.status, 401);
    assert.equal(res.body.error, "UNAUTHORIZED");
    assert.ok(clears(res, "parser_token") && clears(res, "parser_url"));
  }));

Deno.test("session: no cookies and no env Parser token → 401 UNAUTHORIZED (log in)", () =>
  withParser(async (h) => {
    const res = await h.requestJson("/api/auth/session");
    assert.equal(res.status, 401);
    assert.equal(res.body.error, "UNAUTHORIZED");
    assert.deepEqual(res.body.details, { service: "parser" });
  }));

Deno.test("login required: no session is 401 UNAUTHORIZED, not 503; nothing reaches a backend", () =>
  withParser(async (h) => {
    h.core.clearRequests();
    for (const path of ["/api/lore", "/api/ai/gaps", "/api/config/models"]) {
      const res = await h.requestJson(path);
      assert.equal(res.status, 401, path);
      assert.equal(res.body.error, "UNAUTHORIZED", path);
    }
    assert.deepEqual(h.core.requests, []);
    assert.deepEqual(h.parser!.requests, []);
  }, { noCoreCredentials: true }));

Deno.test("login impossible: without a Parser, no credentials stays 503 NOT_CONFIGURED", () =>
  withHarness(async (h) => {
    const res = await h.requestJson("/api/lore");
    assert.equal(res.status, 503);
    assert.equal(res.body.error, "NOT_CONFIGURED");
  }, { noCoreCredentials: true }));

Deno.test("forged or edited cookies are ignored: env fallback or UNAUTHORIZED", async () => {
  const forgeries = async (h: Harness) => {
    const real = await login(h);
    const token = [...h.parser!.store.sessions.keys()][0];
    const edited = real.replace(/(parser_token=v1\.)(.)/, (_, p, c) => p + (c === "A" ? "B" : "A"));
    const otherKey = await (async () => {
      const { deriveSealKey, seal } = await import("../../src/session/seal.ts");
      const key = await deriveSealKey("another-secret-0123456789abcdefghijklmnopqrstuv");
      return `parser_url=${await seal(key, "parser_url", h.parser!.url)}; parser_token=${await seal(
        key,
        "parser_token",
        token,
      )}`;
    })();
    const swapped = `parser_url=${await sealCookie("parser_token", h.parser!.url)}; ` +
      `parser_token=${await sealCookie("parser_url", token)}`;
    const raw = `parser_url=${h.parser!.url}; parser_token=${token}`;
    return [edited, otherKey, swapped, raw];
  };
  await withParser(async (h) => {
    for (const cookie of await forgeries(h)) {
      const res = await h.requestJson("/api/lore", { headers: { cookie } });
      assert.equal(res.status, 401, cookie);
      assert.equal(res.body.error, "UNAUTHORIZED", cookie);
      assert.deepEqual(res.body.details, { service: "core" });
    }
  }, { noCoreCredentials: true });
  await withParser(async (h) => {
    for (const cookie of await forgeries(h)) {
      const before = credentialCalls(h).length;
      const res = await h.request("/api/lore", { headers: { cookie } });
      await res.body?.cancel();
      assert.equal(res.status, 200, "env Core credentials");
      assert.equal(credentialCalls(h).length, before, "no per-user lookup for a forged cookie");
      assert.equal(h.core.requests.at(-1)?.headers.get("authorization"), h.core.token);
    }
  });
});

Deno.test("per-user Core credentials: one Parser lookup for many requests within the TTL", () =>
  withParser(async (h) => {
    const cookie = await login(h);
    for (let i = 0; i < 6; i++) {
      const res = await h.request("/api/lore", { headers: { cookie } });
      await res.body?.cancel();
      assert.equal(res.status, 200);
    }
    const calls = credentialCalls(h);
    assert.equal(calls.length, 1);
    assert.equal(calls[0].headers.get("x-portal-internal-secret"), DEFAULT_INTERNAL_SECRET);
  }, { noCoreCredentials: true }));

Deno.test("env fallback: no cookies → env Core credentials, no Parser lookup", () =>
  withParser(async (h) => {
    const res = await h.request("/api/lore");
    await res.body?.cancel();
    assert.equal(res.status, 200);
    assert.equal(credentialCalls(h).length, 0);
    assert.equal(h.core.requests.at(-1)?.headers.get("authorization"), h.core.token);
  }));

Deno.test("logout: Parser session ended, cookies cleared, effective on the very next request", () =>
  withParser(async (h) => {
    const cookie = await login(h);
    assert.equal(h.parser!.store.sessions.size, 1);
    const warm = await h.request("/api/lore", { headers: { cookie } });
    await warm.body?.cancel();
    assert.equal(warm.status, 200);
    const res = await h.request("/api/auth/logout", { method: "POST", headers: { cookie } });
    assert.deepEqual(await res.json(), { ok: true, parserSignedOut: true });
    assert.ok(clears(res, "parser_token") && clears(res, "parser_url"));
    assert.equal(cookieHeader(res), "", "the browser keeps no session cookie");
    assert.equal(h.parser!.store.sessions.size, 0);
    // the browser sends no cookie now
    const next = await h.requestJson("/api/lore");
    assert.equal(next.status, 401);
    // and a replayed old cookie is dead too (the cached Core credentials were dropped)
    const replay = await h.requestJson("/api/lore", { headers: { cookie } });
    assert.equal(replay.status, 401);
  }, { noCoreCredentials: true }));

Deno.test("logout: a failing Parser does not keep the browser, nor a copy of its cookie, logged in", () =>
  withParser(async (h) => {
    const cookie = await login(h);
    h.parser!.fault({ path: "/api/auth/sign-out", status: 503 });
    const res = await h.request("/api/auth/logout", { method: "POST", headers: { cookie } });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { ok: true, parserSignedOut: false });
    assert.ok(clears(res, "parser_token") && clears(res, "parser_url"));
    // the Parser still holds the session, yet a replayed cookie is not signed in: the logout is
    // kept, and neither Parser nor Core is asked on its behalf
    assert.equal(h.parser!.store.sessions.size, 1);
    const before = h.parser!.requests.length;
    const replay = await h.requestJson<{ error: string }>("/api/auth/session", {
      headers: { cookie },
    });
    assert.equal(replay.status, 401);
    assert.equal(replay.body.error, "UNAUTHORIZED");
    const lore = await h.requestJson("/api/lore", { headers: { cookie } });
    assert.equal(lore.status, 401);
    assert.equal(h.parser!.requests.length, before);
  }, { noCoreCredentials: true }));

Deno.test("logout: without a session nothing is sent to the Parser", () =>
  withParser(async (h) => {
    const res = await h.request("/api/auth/logout", { method: "POST" });
    assert.deepEqual(await res.json(), { ok: true, parserSignedOut: false });
    assert.equal(h.parser!.requests.length, 0);
  }));

Deno.test("credentials endpoint 401/403/404/503 → distinct errors; 401 clears the cookies", () =>
  withParser(async (h) => {
    const cookie = await login(h);
    const expected: Record<number, [number, string, string]> = {
      401: [401, "UNAUTHORIZED", "session-expired"],
      403: [403, "UPSTREAM_FORBIDDEN", "forbidden"],
      404: [503, "NOT_CONFIGURED", "not-found"],
      503: [502, "UPSTREAM_ERROR", "parser-misconfigured"],
    };
    const messages = new Set<string>();
    for (const [fault, [status, code, reason]] of Object.entries(expected)) {
      h.parser!.fault({
        path: "/internal/integrations/allcodex/credentials",
        status: Number(fault),
        times: 1,
      });
      const res = await h.requestJson<
        { error: string; message: string; details: { reason: string } }
      >(
        "/api/lore",
        { headers: { cookie } },
      );
      assert.equal(res.status, status, fault);
      assert.equal(res.body.error, code);
      assert.equal(res.body.details.reason, reason);
      messages.add(res.body.message);
      assert.equal(clears(res, "parser_token"), fault === "401", `cookies cleared on ${fault}`);
    }
    assert.equal(messages.size, 4);
  }, { noCoreCredentials: true }));
