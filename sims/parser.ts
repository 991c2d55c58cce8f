/**
 * Parser test double, HTTP layer: the real Parser's wire behaviour (Bun + Elysia + better-auth,
 * the real Parser) over the in-memory {@link ParserStore}, with fault
 * injection and request recording from sim_http.ts.
 *
 * Modelled: better-auth under `/api/auth` (gated sign-up, sign-in, sign-out, get-session, both
 * bearer token forms, origin check), the owner gate, `/health`, `/`, the internal
 * auto-provision and credentials routes, the AllCodex integration routes, `/config/models` and
 * `/config/wipe`, all as a Parser outside `NODE_ENV=production` answers (the service's tests
 * never run against a production one). Elysia's lifecycle is kept: parse → validation (422) →
 * owner guard → handler; unknown routes answer 404 `NOT_FOUND` and thrown errors 500 text.
 * New features are rows in the route table of {@link createParserHandler}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * // Declared, not run here: it listens on a port.
 * async function notConnected(): Promise<void> {
 *   const sim = await startParserSim();
 *   const res = await fetch(`${sim.url}/integrations/allcodex/status`, {
 *     headers: { Authorization: `Bearer ${sim.ownerToken()}` },
 *   });
 *   assert.deepEqual(await res.json(), { connected: false, provider: "allcodex" });
 *   await sim.close();
 * }
 * ```
 * @module
 */
import { Buffer } from "node:buffer";
import { createHmac, randomBytes } from "node:crypto";
import type { Deadlines } from "../src/util/deadlines.ts";
import {
  createParserStore,
  cuid,
  type ParserSession,
  type ParserStore,
  type ParserUser,
  SESSION_EXPIRES_IN_MS,
} from "./parser_store.ts";
import { type RecordedRequest, type SimFault, startSimServer } from "./sim_http.ts";
import {
  type AuthState,
  etapi,
  ETAPI_TIMEOUT_MS,
  json,
  NOT_CONNECTED,
  type ParserFeatureDeps,
  type ParserRoute,
  type RateGroup,
  t,
  text,
  validate,
  validationReply,
  withHelmet,
} from "./parser_kit.ts";
import { type BrainDumpSimOptions, brainDumpSimRoutes } from "./parser_brain_dump.ts";
import { type AiSimOptions, aiSimRoutes } from "./parser_ai.ts";
import { type CopilotSimOptions, copilotSimRoutes } from "./parser_copilot.ts";
import { type ExtrasSimOptions, extrasSimRoutes } from "./parser_extras.ts";

export type { ParserStore } from "./parser_store.ts";
export type { RecordedRequest, SimFault } from "./sim_http.ts";
export { reindexForOwner, seedRagIndex } from "./parser_rag.ts";

/**
 * `PORTAL_INTERNAL_SECRET`'s non-production default in the real Parser.
 *
 * @example
 * ```ts
 * // Declared, not run here: `sim` is a running Parser double.
 * function autoProvision(sim: ParserSim): Promise<Response> {
 *   return fetch(`${sim.url}/internal/auto-provision`, {
 *     method: "POST",
 *     headers: { "X-Portal-Internal-Secret": DEFAULT_INTERNAL_SECRET },
 *   });
 * }
 * ```
 */
export const DEFAULT_INTERNAL_SECRET = "dev-portal-secret-32chars!!!";

/**
 * The account the real bootstrap creates (`ensureDefaultUser`) and makes owner.
 *
 * @example
 * ```ts
 * // Declared, not run here: `sim` is a running Parser double.
 * function signIn(sim: ParserSim): Promise<Response> {
 *   return fetch(`${sim.url}/api/auth/sign-in/email`, {
 *     method: "POST",
 *     headers: { "Content-Type": "application/json" },
 *     body: JSON.stringify({ email: DEFAULT_OWNER.email, password: DEFAULT_OWNER.password }),
 *   });
 * }
 * ```
 */
export const DEFAULT_OWNER = {
  email: "default@allcodex.local",
  password: "allcodex-default-password",
  name: "Default User",
} as const;

/**
 * `/config/models` answer when no `models` option is given (env.ts defaults).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(DEFAULT_MODELS["brain-dump"].models, ["deepseek/deepseek-v4-pro"]);
 * // a test with another chain passes its own: startParserSim({ models: { ...DEFAULT_MODELS, … } })
 * ```
 */
export const DEFAULT_MODELS: Readonly<Record<string, { models: string[]; autoMode: boolean }>> = {
  "brain-dump": { models: ["deepseek/deepseek-v4-pro"], autoMode: false },
};

/** The double's `BETTER_AUTH_SECRET`: signs session cookies and `set-auth-token`. */
const AUTH_SECRET = "parser-sim-better-auth-secret-do-not-use-in-production";
const SESSION_COOKIE = "better-auth.session_token";
const SESSION_DATA_COOKIE = "better-auth.session_data";
const PREFLIGHT_TIMEOUT_MS = 5_000;

/** Options of {@link startParserSim}. */
export interface ParserSimOptions {
  /** Port; 0 (default) picks a free one. */
  port?: number;
  /** Default 127.0.0.1. */
  hostname?: string;
  /**
   * `PORTAL_INTERNAL_SECRET`; default {@link DEFAULT_INTERNAL_SECRET}. `null` = not configured:
   * the internal routes answer 503 and every sign-up is refused.
   */
  internalSecret?: string | null;
  /** `/config/wipe` works (non-production and git branch `dev` in the real server); default false. */
  wipeEnabled?: boolean;
  /**
   * Core to point at: the global `app_config` credentials (health) and, with bootstrap, the
   * default owner's integration. Its URL is also a trusted origin.
   */
  core?: { url: string; token: string } | null;
  /** Default true: the default owner exists and is owner. False: no users, no owner. */
  bootstrap?: boolean;
  /** `/config/models` answer; default {@link DEFAULT_MODELS}. */
  models?: Record<string, { models: string[]; autoMode: boolean }>;
  /** Injected clock (sessions, rate limit, timestamps). */
  now?: () => Date;
  /**
   * The clock of the double's waits: model delays, paces, keepalives, fault delays (a test's
   * own, so that "slower than the deadline" does not depend on how busy the machine is).
   */
  deadlines?: Deadlines;
  /** Brain-dump feature knobs (keepalive interval, batch worker, pacing). */
  brainDump?: BrainDumpSimOptions;
  /** RAG, consistency and suggest knobs. */
  ai?: AiSimOptions;
  /** Copilot knobs. */
  copilot?: CopilotSimOptions;
  /** Import, notifications and usage knobs (e.g. the VAPID key). */
  extras?: ExtrasSimOptions;
  /** Rate-limit overrides by group name (`brain-dump`, `consistency`, `suggest`, `copilot`). */
  rateLimits?: Record<string, { max: number; windowMs: number }>;
}

/** A running Parser double. */
export interface ParserSim {
  /** Base URL without trailing slash (also its `BETTER_AUTH_URL`). */
  url: string;
  /** The configured `PORTAL_INTERNAL_SECRET`, or null when not configured. */
  internalSecret: string | null;
  /** Direct data access for setup and assertions. */
  store: ParserStore;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  clearRequests(): void;
  /** Adds a fault; faults are checked in the order added, before normal handling. */
  fault(f: SimFault): void;
  clearFaults(): void;
  /** Requests a `hang` fault holds right now. */
  held(): number;
  /** A valid raw session token of the default owner (creates a session). */
  ownerToken(): string;
  /** Stops the server; hanging and delayed requests are ended first. */
  close(): Promise<void>;
}

/** Options of {@link createParserHandler}. */
interface ParserHandlerOptions {
  /** The server's own base URL (`BETTER_AUTH_URL`), read per request. */
  selfUrl: () => string;
  /** See {@link ParserSimOptions.internalSecret}; default {@link DEFAULT_INTERNAL_SECRET}. */
  internalSecret?: string | null;
  wipeEnabled?: boolean;
  /** `ALLCODEX_URL`: a trusted origin besides {@link selfUrl}. */
  coreUrl?: string | null;
  models?: Record<string, { models: string[]; autoMode: boolean }>;
  /** Aborting it cancels the double's own calls to Core. */
  closed?: AbortSignal;
  /** See {@link ParserSimOptions.deadlines}. */
  deadlines?: Deadlines;
  /** Brain-dump feature knobs (keepalive interval, batch worker, pacing). */
  brainDump?: BrainDumpSimOptions;
  /** RAG, consistency and suggest knobs. */
  ai?: AiSimOptions;
  /** Copilot knobs. */
  copilot?: CopilotSimOptions;
  /** Import, notifications and usage knobs (e.g. the VAPID key). */
  extras?: ExtrasSimOptions;
  /** Rate-limit overrides by group name (`brain-dump`, `consistency`, `suggest`, `copilot`). */
  rateLimits?: Record<string, { max: number; windowMs: number }>;
}

// ---------------------------------------------------------------------------------------------
// Tokens: better-call signed cookies and the bearer plugin (contract §2.12, §4.1)
// ---------------------------------------------------------------------------------------------

function signature(value: string): string {
  return createHmac("sha256", AUTH_SECRET).update(value).digest("base64");
}

/** `set-auth-token` / cookie value: `<token>.<base64 hmac>`, URL-encoded. */
function signedToken(token: string): string {
  return encodeURIComponent(`${token}.${signature(token)}`);
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * The bearer plugin's before-hook: the cookie value it injects, or undefined. A raw token is
 * signed first; a signed one loses its first `=` (so only the URL-encoded form survives the
 * later 44-character signature check, as in better-auth).
 */
function bearerCookie(authorization: string | null): string | undefined {
  const m = /^bearer (.+)$/i.exec(authorization ?? "");
  if (!m) return undefined;
  const token = m[1];
  const signed = token.includes(".") ? token.replace("=", "") : signedToken(token);
  const [value, sig] = decode(signed).split(".");
  if (!value || !sig) return undefined;
  const norm = (s: string) => s.replace(/=+$/, "").replaceAll("-", "+").replaceAll("_", "/");
  return norm(sig) === norm(signature(value)) ? signed : undefined;
}

/** better-call `getSignedCookie`: the raw session token, or undefined. */
function unsign(cookieValue: string): string | undefined {
  const at = cookieValue.lastIndexOf(".");
  if (at < 1) return undefined;
  const value = cookieValue.slice(0, at);
  const sig = cookieValue.slice(at + 1);
  if (sig.length !== 44 || !sig.endsWith("=")) return undefined;
  return sig === signature(value) ? value : undefined;
}

/**
 * The session token a request's bearer carries. The service always sends the bearer; reading
 * better-auth's session cookie instead is not modelled.
 */
function requestToken(headers: Headers): string | undefined {
  const fromBearer = bearerCookie(headers.get("authorization"));
  return fromBearer === undefined ? undefined : unsign(decode(fromBearer));
}

/** `auth.api.getSession`: null without a valid session; throws when the database is down. */
function getSession(store: ParserStore, headers: Headers): AuthState | null {
  const token = requestToken(headers);
  if (token === undefined) return null;
  const session = store.findSession(token);
  const user = session && store.users.get(session.userId);
  if (!session || !user) return null;
  return { session, user, refreshed: store.refreshSession(session) };
}

function sessionCookies(
  state: { session: ParserSession; user: ParserUser },
  remember: boolean,
): { signed: string; cookies: string[] } {
  const signed = signedToken(state.session.token);
  // a rememberMe:false session gets a browser-session cookie (no Max-Age)
  const maxAge = remember ? `; Max-Age=${SESSION_EXPIRES_IN_MS / 1000}` : "";
  const data = Buffer.from(
    JSON.stringify({ session: { session: state.session, user: state.user } }),
  ).toString("base64url");
  return {
    signed,
    cookies: [
      `${SESSION_COOKIE}=${signed}${maxAge}; Path=/; HttpOnly; SameSite=Lax`,
      `${SESSION_DATA_COOKIE}=${data}; Max-Age=300; Path=/; HttpOnly; SameSite=Lax`,
    ],
  };
}

/** Adds what `setSessionCookie` plus the bearer after-hook add to a response. */
function withSession(
  res: Response,
  state: { session: ParserSession; user: ParserUser },
  remember = true,
): Response {
  const { signed, cookies } = sessionCookies(state, remember);
  for (const c of cookies) res.headers.append("Set-Cookie", c);
  res.headers.set("set-auth-token", signed);
  res.headers.set("Access-Control-Expose-Headers", "set-auth-token");
  return res;
}

function clearSessionCookies(res: Response): Response {
  for (const name of [SESSION_COOKIE, SESSION_DATA_COOKIE]) {
    res.headers.append("Set-Cookie", `${name}=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax`);
  }
  return res;
}

// ---------------------------------------------------------------------------------------------
// better-auth (`/api/auth/*`)
// ---------------------------------------------------------------------------------------------

/** better-auth `APIError` body. */
function authError(status: number, code: string, message: string): Response {
  return json(status, { code, message });
}

const IP_HEADERS = [
  "x-client-ip",
  "x-forwarded-for",
  "cf-connecting-ip",
  "fastly-client-ip",
  "x-real-ip",
  "x-cluster-client-ip",
  "x-forwarded",
  "forwarded-for",
  "forwarded",
];

/** better-auth `getIp` (proxy headers); the double falls back to the socket address. */
function clientIp(req: Request, info?: Deno.ServeHandlerInfo): string | null {
  for (const name of IP_HEADERS) {
    const ip = req.headers.get(name)?.split(",")[0].trim();
    if (ip) return ip;
  }
  const addr = info?.remoteAddr as Deno.NetAddr | undefined;
  return addr?.hostname ?? null;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** zod's "[body.x] Invalid input" for a missing or non-string field, in schema order. */
function requireStrings(body: Record<string, unknown>, keys: string[]): Response | null {
  for (const key of keys) {
    const v = body[key];
    if (typeof v === "string") continue;
    const got = v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
    return authError(
      400,
      "VALIDATION_ERROR",
      `[body.${key}] Invalid input: expected string, received ${got}`,
    );
  }
  return null;
}

async function readBody(req: Request): Promise<unknown> {
  if (req.method === "GET" || req.method === "HEAD") return undefined;
  const raw = await req.text();
  const type = (req.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (type === "application/x-www-form-urlencoded") {
    return Object.fromEntries(new URLSearchParams(raw));
  }
  if (raw.trim() === "") return undefined;
  if (type === "text/plain") return raw;
  return JSON.parse(raw); // a SyntaxError becomes the caller's 400
}

interface AuthDeps {
  store: ParserStore;
  internalSecret: string | null;
  trusted: () => string[];
}

function createAuthHandler(deps: AuthDeps) {
  const { store } = deps;

  const isTrusted = (url: string, allowRelative: boolean) => {
    if (allowRelative && url.startsWith("/") && !url.startsWith("//")) return true;
    try {
      const origin = new URL(url).origin;
      return deps.trusted().some((o) => new URL(o).origin === origin);
    } catch {
      return false;
    }
  };

  /** Origin (or Referer) and callbackURL against trustedOrigins; a missing Origin passes. */
  const originCheck = (req: Request, body: unknown): Response | null => {
    const origin = req.headers.get("origin") || req.headers.get("referer") || "";
    if (origin === "null") {
      return authError(403, "MISSING_OR_NULL_ORIGIN", "Missing or null Origin");
    }
    if (origin && !isTrusted(origin, false)) {
      return authError(403, "INVALID_ORIGIN", "Invalid origin");
    }
    const callbackURL = (body as Record<string, unknown> | undefined)?.callbackURL;
    if (typeof callbackURL === "string" && callbackURL && !isTrusted(callbackURL, true)) {
      return authError(403, "INVALID_CALLBACK_URL", "Invalid callbackURL");
    }
    return null;
  };

  const sessionMeta = (req: Request, info?: Deno.ServeHandlerInfo) => ({
    ipAddress: clientIp(req, info),
    userAgent: req.headers.get("user-agent"),
  });

  type AuthRoute = (
    req: Request,
    body: Record<string, unknown>,
    info?: Deno.ServeHandlerInfo,
  ) => Response;

  const routes: Record<string, AuthRoute> = {
    "POST /sign-up/email": (req, body, info) => {
      const bad = requireStrings(body, ["name", "email", "password"]);
      if (bad) return bad;
      const { name, email, password } = body as Record<string, string>;
      if (!EMAIL.test(email)) return authError(400, "INVALID_EMAIL", "Invalid email");
      if (password.length < 8) return authError(400, "PASSWORD_TOO_SHORT", "Password too short");
      if (password.length > 128) return authError(400, "PASSWORD_TOO_LONG", "Password too long");
      if (store.findUserByEmail(email)) {
        return authError(
          422,
          "USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL",
          "User already exists. Use another email.",
        );
      }
      const image = typeof body.image === "string" ? body.image : null;
      const user = store.createUser({ name, email, password, image });
      const remember = body.rememberMe !== false;
      const session = store.createSession(user.id, {
        ...sessionMeta(req, info),
        expiresInMs: remember ? undefined : 24 * 3600 * 1000,
      });
      // Parser's wrapper: the first gated sign-up becomes owner
      store.ensureOwner(store.findUserByEmail(email)!.id);
      return withSession(json(200, { token: session.token, user }), { session, user }, remember);
    },

    "POST /sign-in/email": (req, body, info) => {
      const bad = requireStrings(body, ["email", "password"]);
      if (bad) return bad;
      const { email, password } = body as Record<string, string>;
      if (!EMAIL.test(email)) return authError(400, "INVALID_EMAIL", "Invalid email");
      const user = store.findUserByEmail(email);
      if (!user || !store.verifyPassword(user.id, password)) {
        return authError(401, "INVALID_EMAIL_OR_PASSWORD", "Invalid email or password");
      }
      const remember = body.rememberMe !== false;
      const session = store.createSession(user.id, {
        ...sessionMeta(req, info),
        expiresInMs: remember ? undefined : 24 * 3600 * 1000,
      });
      // `url: undefined` disappears from the JSON
      return withSession(
        json(200, { redirect: false, token: session.token, user }),
        { session, user },
        remember,
      );
    },

    "POST /sign-out": (req) => {
      const token = requestToken(req.headers);
      if (token === undefined) {
        return clearSessionCookies(
          authError(400, "FAILED_TO_GET_SESSION", "Failed to get session"),
        );
      }
      store.deleteSession(token);
      return clearSessionCookies(json(200, { success: true }));
    },

    "GET /get-session": (req) => {
      const state = getSession(store, req.headers);
      if (!state) return json(200, null);
      const res = json(200, { session: state.session, user: state.user });
      return state.refreshed ? withSession(res, state) : res;
    },
  };

  return async (req: Request, sub: string, info?: Deno.ServeHandlerInfo): Promise<Response> => {
    // Parser's sign-up gate wraps better-auth, so it answers before anything else
    if (sub === "/sign-up/email") {
      const given = req.headers.get("x-allcodex-bootstrap-secret");
      if (!deps.internalSecret || given !== deps.internalSecret) {
        return json(403, {
          error: "FORBIDDEN",
          message: "Sign-up is disabled. Use the owner account.",
        });
      }
    }
    const route = routes[`${req.method} ${sub}`];
    if (!route) return new Response(null, { status: 404, statusText: "Not Found" });
    let body: unknown;
    try {
      body = await readBody(req);
    } catch {
      return authError(400, "VALIDATION_ERROR", "Invalid JSON body");
    }
    if (req.method === "POST") {
      const denied = originCheck(req, body);
      if (denied) return denied;
    }
    const record = typeof body === "object" && body !== null && !Array.isArray(body)
      ? body as Record<string, unknown>
      : {};
    return route(req, record, info);
  };
}

function matchPath(pattern: string, path: string): Record<string, string> | null {
  const a = pattern.split("/");
  const b = path.split("/");
  if (a.length !== b.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < a.length; i++) {
    if (a[i].startsWith(":") && b[i] !== "") params[a[i].slice(1)] = decode(b[i]);
    else if (a[i] !== b[i]) return null;
  }
  return params;
}

/**
 * elysia-rate-limit (§5): one fixed-window counter per group, keyed by the socket address (not
 * `X-Forwarded-For`), run after the guard; `RateLimit-*` headers on every counted request and
 * `Retry-After` on a 429.
 */
function createRateLimiter(
  store: ParserStore,
  overrides: Record<string, { max: number; windowMs: number }>,
) {
  const windows = new Map<string, { count: number; resetAt: number }>();
  return (group: RateGroup, _req: Request, info?: Deno.ServeHandlerInfo) => {
    const { max, windowMs } = overrides[group.name] ?? group;
    const ip = (info?.remoteAddr as Deno.NetAddr | undefined)?.hostname ?? "unknown";
    const key = `${group.name}\n${ip}`;
    const now = store.now().getTime();
    let w = windows.get(key);
    if (!w || now >= w.resetAt) {
      w = { count: 0, resetAt: now + windowMs };
      windows.set(key, w);
    }
    const reset = `${Math.max(0, Math.ceil((w.resetAt - now) / 1000))}`;
    if (w.count >= max) {
      const refused = json(429, group.body, {
        "RateLimit-Limit": `${max}`,
        "RateLimit-Remaining": "0",
        "RateLimit-Reset": reset,
        "Retry-After": `${Math.ceil(windowMs / 1000)}`,
      });
      return { refused, refund: () => {}, headers: [] as [string, string][] };
    }
    w.count++;
    const counted = w;
    return {
      refused: undefined,
      refund: () => {
        counted.count = Math.max(0, counted.count - 1);
      },
      headers: [
        ["RateLimit-Limit", `${max}`],
        ["RateLimit-Remaining", `${Math.max(0, max - counted.count)}`],
        ["RateLimit-Reset", reset],
      ] as [string, string][],
    };
  };
}

/** The Parser double's request handler over `store`. */
function createParserHandler(
  store: ParserStore,
  opts: ParserHandlerOptions,
): (req: Request, info?: Deno.ServeHandlerInfo) => Promise<Response> {
  const internalSecret = opts.internalSecret === undefined
    ? DEFAULT_INTERNAL_SECRET
    : opts.internalSecret;
  const models = opts.models ?? DEFAULT_MODELS;
  const auth = createAuthHandler({
    store,
    internalSecret,
    trusted: () => [opts.selfUrl(), ...(opts.coreUrl ? [opts.coreUrl] : [])],
  });

  /** `requireOwnerAuth` (§4.2). */
  const ownerGuard = (req: Request): AuthState | Response => {
    let state: AuthState | null;
    try {
      state = getSession(store, req.headers);
    } catch {
      return json(503, { error: "Auth unavailable" });
    }
    if (!state) return json(401, { error: "Unauthorized" });
    const owner = store.ownerUserId();
    if (!owner) return json(503, { error: "Owner not configured" });
    if (owner !== state.user.id) return json(403, { error: "Forbidden" });
    return state;
  };

  const secretProblem = (req: Request): Response | null => {
    if (!internalSecret) {
      return json(503, { error: "PORTAL_INTERNAL_SECRET is not configured." });
    }
    if (req.headers.get("x-portal-internal-secret") !== internalSecret) {
      return json(403, { error: "Forbidden" });
    }
    return null;
  };

  const integrationJson = (userId: string) => {
    const i = store.getIntegration(userId);
    return i && { baseUrl: i.baseUrl, tokenLast4: i.tokenLast4, updatedAt: i.updatedAt };
  };

  const healthChecks = async () => {
    const url = store.appConfig.get("allcodexUrl");
    const token = store.appConfig.get("allcodexToken");
    let allcodex: Record<string, unknown>;
    if (!url || !token) {
      allcodex = { ok: false, error: "AllCodex URL or ETAPI token is not configured" };
    } else {
      try {
        const r = await etapi(
          { baseUrl: url.replace(/\/$/, ""), token, deadlines: opts.deadlines },
          "GET",
          "/app-info",
          PREFLIGHT_TIMEOUT_MS,
          [opts.closed],
        );
        allcodex = { ok: true, version: JSON.parse(r.text).appVersion };
      } catch (e) {
        allcodex = { ok: false, error: (e as Error).message };
      }
    }
    const database = store.databaseDown
      ? { ok: false, error: "Can't reach database server" }
      : { ok: true };
    const b = store.bootstrap;
    return {
      allcodex,
      lancedb: { ok: true, ftsHealthy: true },
      database,
      bootstrap: { ok: b.ran && b.userReady && b.etapiReady, ...b },
    };
  };

  const features: ParserFeatureDeps = {
    store,
    selfUrl: opts.selfUrl,
    closed: opts.closed,
    deadlines: opts.deadlines,
    models: () => models,
    coreFor: (userId) => {
      const i = store.getIntegration(userId);
      if (!i) throw new Error(NOT_CONNECTED);
      return { baseUrl: i.baseUrl, token: i.token, deadlines: opts.deadlines };
    },
  };
  const limiter = createRateLimiter(store, opts.rateLimits ?? {});

  const routes: ParserRoute[] = [
    {
      method: "GET",
      path: "/",
      auth: "public",
      handler: () =>
        json(200, {
          name: "AllKnower",
          version: "0.1.0",
          description: "AI lore engine for AllCodex (parser sim)",
          docs: "/reference",
          health: "/health",
        }),
    },
    {
      method: "GET",
      path: "/health",
      auth: "public",
      handler: async () => {
        const checks = await healthChecks();
        const ok = Object.values(checks).every((c) => c.ok === true);
        return json(ok ? 200 : 503, { status: ok ? "ok" : "degraded", checks });
      },
    },
    {
      method: "POST",
      path: "/internal/auto-provision",
      auth: "public",
      handler: ({ req }) => {
        const problem = secretProblem(req);
        if (problem) return problem;
        if (!store.bootstrap.userReady) {
          return json(503, {
            error: "Bootstrap not complete — no default user.",
            bootstrapStatus: { ...store.bootstrap },
          });
        }
        const user = store.users.values().next().value; // findFirst(): not necessarily the owner
        if (!user) return json(503, { error: "No users in database." });
        const now = store.now().getTime();
        const session =
          [...store.sessions.values()].find((s) =>
            s.userId === user.id && s.userAgent === "auto-provision" && s.expiresAt.getTime() > now
          ) ?? store.createSession(user.id, {
            id: cuid(), // inserted by Prisma, not better-auth
            token: randomBytes(32).toString("hex"),
            ipAddress: "internal",
            userAgent: "auto-provision",
          });
        return json(200, {
          token: session.token,
          url: opts.selfUrl(),
          userId: user.id,
          expiresAt: session.expiresAt,
        });
      },
    },
    {
      method: "POST",
      path: "/internal/integrations/allcodex/credentials",
      auth: "public",
      handler: ({ req }) => {
        const problem = secretProblem(req);
        if (problem) return problem;
        const state = getSession(store, req.headers); // throws → 500 (not the guard's 503)
        if (!state) return json(401, { error: "Unauthorized" });
        if (store.ownerUserId() !== state.user.id) return json(403, { error: "Forbidden" });
        const i = store.getIntegration(state.user.id);
        if (!i) return json(404, { error: NOT_CONNECTED, code: "ALLCODEX_NOT_CONNECTED" });
        return json(200, { baseUrl: i.baseUrl, token: i.token });
      },
    },
    {
      method: "POST",
      path: "/integrations/allcodex/connect",
      auth: "owner",
      body: t.Object({ baseUrl: t.String({ minLength: 1 }), token: t.String({ minLength: 1 }) }),
      handler: ({ body, auth }) => {
        const { baseUrl, token } = body as { baseUrl: string; token: string };
        store.setIntegration(auth!.user.id, baseUrl, token);
        return json(200, {
          ok: true,
          connected: true,
          integration: { provider: "allcodex", ...integrationJson(auth!.user.id) },
        });
      },
    },
    {
      method: "GET",
      path: "/integrations/allcodex/status",
      auth: "owner",
      handler: ({ auth }) => {
        const i = integrationJson(auth!.user.id);
        return json(
          200,
          i ? { connected: true, provider: "allcodex", ...i } : {
            connected: false,
            provider: "allcodex",
          },
        );
      },
    },
    {
      method: "DELETE",
      path: "/integrations/allcodex",
      auth: "owner",
      handler: ({ auth }) => {
        store.deleteIntegration(auth!.user.id);
        return json(200, { ok: true, connected: false });
      },
    },
    {
      method: "GET",
      path: "/config/models",
      auth: "owner",
      handler: () => json(200, models),
    },
    {
      method: "POST",
      path: "/config/wipe",
      auth: "owner",
      handler: async ({ req, auth }) => {
        if (!opts.wipeEnabled) return json(404, { error: "Not found" });
        const i = store.getIntegration(auth!.user.id);
        if (!i) throw new Error(NOT_CONNECTED);
        const signals = [req.signal, opts.closed];
        const core = { baseUrl: i.baseUrl, token: i.token, deadlines: opts.deadlines };
        const found = await etapi(
          core,
          "GET",
          `/notes?search=${encodeURIComponent("#lore")}`,
          ETAPI_TIMEOUT_MS,
          signals,
        );
        const ids = (JSON.parse(found.text).results as { noteId: string }[]).map((n) => n.noteId);
        for (const id of ids) {
          await etapi(
            core,
            "DELETE",
            `/notes/${encodeURIComponent(id)}`,
            ETAPI_TIMEOUT_MS,
            signals,
          );
        }
        for (const hook of store.wipeHooks) hook(auth!.user.id);
        return json(200, { ok: true, coreDeleted: ids.length });
      },
    },
    ...brainDumpSimRoutes(features, opts.brainDump ?? {}),
    ...aiSimRoutes(features, opts.ai ?? {}),
    ...copilotSimRoutes(features, opts.copilot ?? {}),
    ...extrasSimRoutes(features, opts.extras ?? {}),
  ];

  return async (req: Request, info?: Deno.ServeHandlerInfo): Promise<Response> => {
    const url = new URL(req.url);
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/$/, "") : url.pathname;
    try {
      if (path === "/api/auth" || path.startsWith("/api/auth/")) {
        return withHelmet(await auth(req, path.slice("/api/auth".length), info));
      }
      let route: ParserRoute | undefined;
      let params: Record<string, string> | null = null;
      for (const r of routes) {
        if (r.method !== req.method) continue;
        params = matchPath(r.path, path);
        if (params) {
          route = r;
          break;
        }
      }
      if (!route || !params) return withHelmet(text(404, "NOT_FOUND"));
      // Elysia's lifecycle: parse → validation → guard → handler
      let body: unknown;
      try {
        body = await readBody(req);
      } catch {
        return withHelmet(text(400, "Bad Request"));
      }
      if (route.body) {
        const checked = validate(route.body, body);
        if (checked.errors.length) {
          return withHelmet(validationReply("body", route.body, body, checked.errors));
        }
        body = checked.value;
      }
      let authState: AuthState | undefined;
      if (route.auth === "owner") {
        const guarded = ownerGuard(req);
        if (guarded instanceof Response) return withHelmet(guarded);
        authState = guarded;
      }
      const limit = route.rate ? limiter(route.rate, req, info) : undefined;
      if (limit?.refused) return withHelmet(limit.refused);
      let res: Response;
      try {
        res = await route.handler({ req, url, params, body, auth: authState, info });
      } catch (e) {
        limit?.refund(); // countFailedRequest: false
        throw e;
      }
      for (const [k, v] of limit?.headers ?? []) res.headers.set(k, v);
      return withHelmet(res);
    } catch (e) {
      return withHelmet(text(500, e instanceof Error ? e.message : String(e)));
    }
  };
}

// ---------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------

function faultBody(status: number): string {
  if (status === 401) return JSON.stringify({ error: "Unauthorized" });
  if (status === 403) return JSON.stringify({ error: "Forbidden" });
  return JSON.stringify({ error: `parser sim: injected fault (HTTP ${status})` });
}

/** Seeds what `runBootstrap` leaves behind: default owner, global and owner Core credentials. */
function bootstrapStore(store: ParserStore, opts: ParserSimOptions): void {
  const core = opts.core ?? null;
  if (core) {
    store.appConfig.set("allcodexUrl", core.url);
    store.appConfig.set("allcodexToken", core.token);
  }
  if (opts.bootstrap === false) return;
  const owner = store.createUser({ ...DEFAULT_OWNER });
  store.ensureOwner(owner.id);
  if (core) store.setIntegration(owner.id, core.url, core.token);
  store.bootstrap = { ran: true, userReady: true, etapiReady: core !== null };
}

/**
 * Starts the Parser double on `Deno.serve` (random port by default), bootstrapped with the
 * default owner unless `bootstrap: false`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { startCoreSim } from "./core.ts";
 * // Declared, not run here: it listens on two ports.
 * async function coreThroughParser(): Promise<void> {
 *   const core = await startCoreSim();
 *   const parser = await startParserSim({ core: { url: core.url, token: core.token } });
 *   const res = await fetch(`${parser.url}/internal/integrations/allcodex/credentials`, {
 *     method: "POST",
 *     headers: {
 *       "X-Portal-Internal-Secret": DEFAULT_INTERNAL_SECRET,
 *       Authorization: `Bearer ${parser.ownerToken()}`,
 *     },
 *   });
 *   assert.deepEqual(await res.json(), { baseUrl: core.url, token: core.token });
 *   await parser.close();
 *   await core.close();
 * }
 * ```
 */
export function startParserSim(opts: ParserSimOptions = {}): Promise<ParserSim> {
  const store = createParserStore({ now: opts.now });
  bootstrapStore(store, opts);
  const internalSecret = opts.internalSecret === undefined
    ? DEFAULT_INTERNAL_SECRET
    : opts.internalSecret;
  let selfUrl = "";
  const http = startSimServer({
    name: "parser",
    port: opts.port,
    hostname: opts.hostname,
    faultBody,
    deadlines: opts.deadlines,
    handler: (closed) =>
      createParserHandler(store, {
        selfUrl: () => selfUrl,
        internalSecret,
        wipeEnabled: opts.wipeEnabled,
        coreUrl: opts.core?.url ?? null,
        models: opts.models,
        closed,
        deadlines: opts.deadlines,
        brainDump: opts.brainDump,
        ai: opts.ai,
        copilot: opts.copilot,
        extras: opts.extras,
        rateLimits: opts.rateLimits,
      }),
  });
  selfUrl = http.url;
  return Promise.resolve({
    url: http.url,
    internalSecret,
    store,
    requests: http.requests,
    clearRequests: http.clearRequests,
    fault: http.fault,
    clearFaults: http.clearFaults,
    held: http.held,
    ownerToken: () => {
      const owner = store.findUserByEmail(DEFAULT_OWNER.email);
      if (!owner) {
        throw new Error("parser sim: the default owner does not exist (bootstrap: false)");
      }
      return store.createSession(owner.id, { userAgent: "parser sim" }).token;
    },
    close: async () => {
      await http.close();
      await Promise.allSettled([...store.background]);
    },
  });
}
