/**
 * Parser conformance steps: signing in and out, the session, registration refusals, zero-login,
 * the per-user Core credentials the Parser hands out (every Core call of the run uses them),
 * connectivity, and the Core integration (connect refusals; `--integration` disconnects and
 * reconnects it).
 *
 * @module
 */
import { z } from "zod";
import { check, configStatusSchema, noSecrets, same, type ServiceClient, Skip } from "./kit.ts";
import { provisioningDisabled } from "./parser_direct.ts";
import type { ParserStep, ParserSuiteState } from "./parser_suite.ts";

const userSchema = z.looseObject({ id: z.string().min(1), email: z.string() });
const sessionSchema = z.object({
  user: userSchema,
  expiresAt: z.string(),
  source: z.enum(["session", "provisioned", "env"]),
});
const statusSchema = z.object({ connected: z.boolean(), updatedAt: z.string().nullable() });
const logoutSchema = z.object({ ok: z.literal(true), parserSignedOut: z.boolean() });

/** The session cookies a login sets; both must be HttpOnly. */
const SESSION_COOKIES = ["parser_token", "parser_url"];

function sameEmail(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

/** Logs `api` in as the owner through `path` and checks the answer and its cookies. */
async function loginAs(s: ParserSuiteState, api: ServiceClient, path: string): Promise<void> {
  const a = await api.call("POST", path, {
    json: { email: s.owner.email, password: s.owner.password },
  });
  const body = z.object({ user: userSchema }).parse(JSON.parse(a.text));
  check(a.status === 200, `${path}: status ${a.status}`);
  check(sameEmail(body.user.email, s.owner.email), `${path}: signed in as ${body.user.email}`);
  const set = a.headers.getSetCookie();
  for (const name of SESSION_COOKIES) {
    const line = set.find((l) => l.startsWith(`${name}=`));
    check(line && /;\s*httponly/i.test(line), `${path}: no HttpOnly ${name} cookie`);
  }
  noSecrets(s, a.text + set.join("\n"), `${path} answer`);
}

/** Reads a Core note through the service: the Core credentials come from the Parser. */
async function coreWorks(s: ParserSuiteState, api: ServiceClient = s.api): Promise<void> {
  const note = await api.json(
    "GET",
    `/api/lore/${s.scratch.noteId}`,
    200,
    z.looseObject({ noteId: z.string() }),
  );
  same(note.noteId, s.scratch.noteId, "the scratch note read through the session");
}

/** The steps of this module, in run order. */
export const authSteps: ParserStep[] = [
  {
    method: "GET",
    path: "/api/auth/session",
    check: "before login: 401 UNAUTHORIZED naming the Parser (a client shows its login)",
    anonymous: true,
    run: async (s) => {
      const e = await s.api.error("GET", "/api/auth/session", 401, "UNAUTHORIZED");
      same((e.details as { service?: string })?.service, "parser", "service named");
    },
  },
  {
    method: "POST",
    path: "/api/auth/login",
    check: "wrong password 401 (no cookies); owner login sets HttpOnly session cookies",
    anonymous: true,
    run: async (s) => {
      await s.api.error("POST", "/api/auth/login", 401, "UNAUTHORIZED", {
        json: { email: s.owner.email, password: `wrong-${s.tag}` },
      });
      check(!s.api.cookies.size, "a failed login set cookies");
      await s.api.error("POST", "/api/auth/login", 400, "INVALID_REQUEST", {
        json: { email: "not-an-email", password: "x" },
      });
      await loginAs(s, s.api, "/api/auth/login");
    },
  },
  {
    method: "GET",
    path: "/api/auth/session",
    check: "the owner, verified by the Parser, source session, expiry ahead",
    run: async (s) => {
      const a = await s.api.call("GET", "/api/auth/session");
      const body = sessionSchema.parse(JSON.parse(a.text));
      check(sameEmail(body.user.email, s.owner.email), `session user ${body.user.email}`);
      same(body.source, "session", "source");
      check(Date.parse(body.expiresAt) > Date.now(), `expiresAt ${body.expiresAt} is not ahead`);
      noSecrets(s, a.text, "the session answer");
    },
  },
  {
    method: "GET",
    path: "/api/config/status",
    check: "Core (credentials from the Parser) and Parser reachable with versions; no URL or token",
    run: async (s) => {
      const a = await s.api.call("GET", "/api/config/status");
      const body = configStatusSchema.parse(JSON.parse(a.text));
      check(body.allcodex.ok && body.allcodex.version, "Core not reachable through the session");
      check(body.allknower.ok && body.allknower.version, "the Parser is not reported reachable");
      same(body.session.source, "session", "session source");
      noSecrets(s, a.text, "the status answer");
      await coreWorks(s);
    },
  },
  {
    method: "GET",
    path: "/readyz",
    check: "the server's own backends: Parser answering, no Core of its own; same for everyone",
    run: async (s) => {
      const schema = z.object({
        status: z.literal("ready"),
        core: z.looseObject({ ok: z.literal(true), configured: z.literal(false) }),
        parser: z.looseObject({ ok: z.literal(true), configured: z.literal(true) }),
      });
      await s.api.json("GET", "/readyz", 200, schema);
      await s.newBrowser().json("GET", "/readyz", 200, schema);
    },
  },
  {
    method: "GET",
    path: "/api/integrations/codex/status",
    check: "connected, with the time it was stored; no URL or token",
    run: async (s) => {
      const a = await s.api.call("GET", "/api/integrations/codex/status");
      const body = statusSchema.parse(JSON.parse(a.text));
      same(body.connected, true, "connected");
      check(body.updatedAt && !Number.isNaN(Date.parse(body.updatedAt)), "updatedAt missing");
      s.facts.set("coreConnectedAt", body.updatedAt);
      noSecrets(s, a.text, "the integration status");
    },
  },
  {
    method: "POST",
    path: "/api/integrations/codex/connect",
    check: "wrong Core password 401 naming it, unlisted URL 400; the stored integration unchanged",
    run: async (s) => {
      const e = await s.api.error("POST", "/api/integrations/codex/connect", 401, "UNAUTHORIZED", {
        json: { password: `wrong-${s.tag}`, url: s.before.integration!.baseUrl },
      });
      same((e.details as { field?: string })?.field, "password", "field named");
      await s.api.error("POST", "/api/integrations/codex/connect", 400, "INVALID_REQUEST", {
        json: { token: "x", url: "http://not-allowed.invalid" },
      });
      const now = await s.api.json("GET", "/api/integrations/codex/status", 200, statusSchema);
      same(now, { connected: true, updatedAt: s.facts.get("coreConnectedAt") }, "status after");
    },
  },
  {
    method: "DELETE",
    path: "/api/integrations/codex",
    check: "disconnect: status false, Core routes 503 NOT_CONFIGURED (core) for this user",
    needs: "integration",
    run: async (s) => {
      const body = await s.api.json(
        "DELETE",
        "/api/integrations/codex",
        200,
        statusSchema.pick({
          connected: true,
        }),
      );
      same(body, { connected: false }, "answer");
      const now = await s.api.json("GET", "/api/integrations/codex/status", 200, statusSchema);
      same(now.connected, false, "status after disconnect");
      const e = await s.api.error("GET", `/api/lore/${s.scratch.noteId}`, 503, "NOT_CONFIGURED");
      same((e.details as { service?: string })?.service, "core", "service named");
    },
  },
  {
    method: "POST",
    path: "/api/integrations/codex/connect",
    check: "connect with the owner's token: connected, Core works again, the same credentials",
    needs: "integration",
    run: async (s) => {
      const { baseUrl, token } = s.before.integration!;
      const body = await s.api.json("POST", "/api/integrations/codex/connect", 200, statusSchema, {
        json: { token, url: baseUrl },
      });
      same(body.connected, true, "connected");
      await coreWorks(s);
      const now = await s.api.json("GET", "/api/integrations/codex/status", 200, statusSchema);
      same(now.connected, true, "status after connect");
    },
  },
  {
    method: "POST",
    path: "/api/auth/register",
    check: "the owner's email again: 409 CONFLICT; a short password 400 before the Parser",
    run: async (s) => {
      const browser = s.newBrowser();
      await browser.error("POST", "/api/auth/register", 409, "CONFLICT", {
        json: { name: "Conformance", email: s.owner.email, password: `pw-${s.tag}-long` },
      });
      await browser.error("POST", "/api/auth/register", 400, "INVALID_REQUEST", {
        json: { name: "Conformance", email: `c-${s.tag}@example.invalid`, password: "short" },
      });
      check(!browser.cookies.size, "a refused sign-up set cookies");
    },
  },
  {
    method: "POST",
    path: "/api/config/parser-register",
    check: "same handler: the owner's email again is 409 CONFLICT",
    run: async (s) => {
      await s.newBrowser().error("POST", "/api/config/parser-register", 409, "CONFLICT", {
        json: { name: "Conformance", email: s.owner.email, password: `pw-${s.tag}-long` },
      });
    },
  },
  {
    method: "POST",
    path: "/api/config/parser-login",
    check: "same handler: a second browser signs in as the owner",
    run: async (s) => {
      const second = s.newBrowser();
      await loginAs(s, second, "/api/config/parser-login");
      const me = await second.json("GET", "/api/auth/session", 200, sessionSchema);
      check(sameEmail(me.user.email, s.owner.email), "second browser's user");
      s.facts.set("secondCookies", JSON.stringify([...second.cookies]));
    },
  },
  {
    method: "POST",
    path: "/api/auth/logout",
    check: "ends the Parser session: cookies cleared, the old cookie then 401; no session: ok",
    run: async (s) => {
      const saved = s.facts.get("secondCookies");
      check(saved, 'needs the second browser of "POST /api/config/parser-login"');
      const cookie = (JSON.parse(saved) as [string, string][]).map(([n, v]) => `${n}=${v}`)
        .join("; ");
      const second = s.newBrowser();
      const out = await second.json("POST", "/api/auth/logout", 200, logoutSchema, {
        headers: { cookie },
      });
      same(out, { ok: true, parserSignedOut: true }, "logout answer");
      await second.error("GET", "/api/auth/session", 401, "UNAUTHORIZED", { headers: { cookie } });
      const none = await s.newBrowser().json("POST", "/api/auth/logout", 200, logoutSchema);
      same(none, { ok: true, parserSignedOut: false }, "logout without a session");
      await s.api.json("GET", "/api/auth/session", 200, sessionSchema); // ours still stands
    },
  },
  {
    method: "GET",
    path: "/api/auth/session",
    check: "zero-login: a browser without cookies gets a session minted by the Parser, and Core",
    run: async (s) => {
      if (await provisioningDisabled(s.parserUrl)) {
        throw new Skip("the Parser refuses zero-login provisioning (NODE_ENV=production)");
      }
      const zero = await s.startService({ ZERO_LOGIN: "true" });
      try {
        const a = await zero.api.call("GET", "/api/auth/session");
        const body = sessionSchema.parse(JSON.parse(a.text));
        same(body.source, "provisioned", "source");
        check(zero.api.cookies.has("parser_token"), "no session cookie set for the minted session");
        noSecrets(s, a.text, "the zero-login session");
        await coreWorks(s, zero.api);
        const again = await zero.api.json("GET", "/api/auth/session", 200, sessionSchema);
        same(again.source, "session", "source once the cookie is back");
      } finally {
        await zero.stop();
      }
    },
  },
];
