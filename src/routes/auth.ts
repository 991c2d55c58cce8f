/**
 * Parser accounts: login and register (each under two paths, one handler), logout and the
 * current session. Tokens stay in sealed HttpOnly cookies; answers carry the user only.
 *
 * @module
 */
import { z } from "zod";
import { backendBaseUrl } from "../config/backend_url.ts";
import { ApiError, invalidRequest, notConfigured } from "../http/errors.ts";
import { requestOrigin } from "../http/host_check.ts";
import { json } from "../http/response.ts";
import { defineRoute, type Route, type SessionCtx } from "../api/router.ts";
import type { ParserUser } from "../upstream/parser.ts";
import { credentialSourceSchema, parserUserSchema } from "./response_schemas.ts";

/**
 * Counts one attempt of `action` for this client; 429 `RATE_LIMITED` with `Retry-After` when the
 * client used up its window (login, register, connect and the public site's password form share
 * one limiter, keyed per action).
 */
export async function enforceRateLimit(
  ctx: Pick<SessionCtx, "state" | "clientKey">,
  action: "login" | "register" | "connect" | "unlock",
): Promise<void> {
  const verdict = await ctx.state.authLimiter.check(`${action}:${ctx.clientKey()}`);
  if (!verdict.allowed) {
    throw new ApiError(
      429,
      "RATE_LIMITED",
      "Too many attempts from this client: wait and try again",
      undefined,
      { "retry-after": String(verdict.retryAfterSeconds) },
    );
  }
}

/**
 * The base URL a request's optional `url` names (normalised by the rule the configured ones
 * follow, backend_url.ts) or the configured one: 400 naming `field` when it is not on the
 * allow-list, 503 `NOT_CONFIGURED` when there is none. This service's own origin
 * ({@linkcode isOwnOrigin}) names the configured one too: the front end sends back the `url`
 * `GET /api/config/status` gave it, which is ours, never a backend's.
 * Nothing is contacted before this check passes.
 */
export function allowedBaseUrl(
  ctx: Pick<SessionCtx, "config" | "credentials" | "req" | "url">,
  service: "parser" | "core",
  url: string | undefined,
  field = "url",
): string {
  if (url === undefined || isOwnOrigin(ctx, url)) {
    const configured = service === "parser" ? ctx.config.PARSER_URL : ctx.config.CORE_URL;
    if (!configured) throw notConfigured(service);
    return configured;
  }
  const normalised = backendBaseUrl(service, url);
  const allowed = normalised.ok &&
    (service === "parser"
      ? ctx.credentials.parserAllowed(normalised.url)
      : ctx.credentials.coreAllowed(normalised.url));
  if (!allowed) {
    const list = service === "parser" ? "PARSER_ALLOWED_URLS" : "CORE_ALLOWED_URLS";
    const message = `${field} is not an allowed ${
      service === "parser" ? "Parser" : "Core"
    } address (see ${list})`;
    throw invalidRequest(message, [{ path: field, message: "not allowed" }]);
  }
  return normalised.url;
}

/**
 * Whether `url` is this service's own origin, bare (no path beyond `/`, query or credentials):
 * `PUBLIC_ORIGIN`, or the origin the request came to (host_check.ts `requestOrigin`; its host
 * was accepted before routing).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "../config/service_config.ts";
 *
 * const req = new Request("http://127.0.0.1:8080/api/auth/login", { method: "POST" });
 * const ctx = { req, url: new URL(req.url), config: loadConfig({}) };
 * assert.equal(isOwnOrigin(ctx, "http://127.0.0.1:8080"), true);
 * assert.equal(isOwnOrigin(ctx, "http://127.0.0.1:8080/"), true);
 * assert.equal(isOwnOrigin(ctx, "http://127.0.0.1:8080/etapi"), false);
 * assert.equal(isOwnOrigin(ctx, "http://127.0.0.1:3001"), false);
 * ```
 */
export function isOwnOrigin(
  ctx: Pick<SessionCtx, "config" | "req" | "url">,
  url: string,
): boolean {
  let given: URL;
  try {
    given = new URL(url);
  } catch {
    return false;
  }
  if (given.pathname !== "/" || given.search || given.hash || given.username || given.password) {
    return false;
  }
  const { PUBLIC_ORIGIN, TRUST_PROXY } = ctx.config;
  const ours = [requestOrigin(ctx.req, ctx.url, TRUST_PROXY, PUBLIC_ORIGIN)];
  if (PUBLIC_ORIGIN) ours.push(new URL(PUBLIC_ORIGIN).origin);
  return ours.includes(given.origin);
}

const urlField = z.url({ protocol: /^https?$/ }).max(2048).optional();
const emailField = z.string().trim().max(320).pipe(z.email());

const loginBody = z.strictObject({
  email: emailField,
  password: z.string().min(1).max(1024),
  url: urlField,
});

const registerBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  email: emailField,
  // better-auth's default bounds: refusing here saves the round trip
  password: z.string().min(8).max(128),
  url: urlField,
});

/** The answer of login and register: the user, never the token (it stays in the cookie). */
const signedInAnswer = z.object({ user: parserUserSchema });

/** What login and register decide where the API is silent. */
const SIGN_IN_NOTES = "Without `url`, or with this service's own origin (the `url` " +
  "`GET /api/config/status` gives), the configured Parser (`PARSER_URL`) is used. A `url` " +
  "naming another Parser must be on the allow-list (`PARSER_URL` + " +
  "`PARSER_ALLOWED_URLS`), or the request is refused before any connection. The Parser's token " +
  "and address go into sealed HttpOnly cookies (`parser_token`, `parser_url`); the answer " +
  "carries the user only. Rate-limited per client address with connect (`AUTH_RATE_LIMIT` per " +
  "`AUTH_RATE_WINDOW_MS`).";

/** Starts the browser session for a freshly issued Parser token; the token stays in the cookie. */
async function startSession(
  ctx: SessionCtx,
  parserUrl: string,
  signedIn: { token: string; user: ParserUser },
  status: number,
): Promise<Response> {
  await ctx.credentials.startSession({ parserUrl, parserToken: signedIn.token });
  return json({ user: signedIn.user }, status);
}

/** One handler for `/api/auth/login` and `/api/config/parser-login`. */
const login = {
  summary: "Sign in to the Parser with email and password; sets the sealed session cookies",
  backend: "Parser",
  access: "session",
  tag: "auth",
  body: { kind: "json", schema: loginBody },
  description: `${SIGN_IN_NOTES} A failed login does not end an existing session.`,
  responses: {
    200: {
      description: "`{ user }`; sets `parser_url`/`parser_token` cookies",
      schema: signedInAnswer,
    },
    400: "Bad body or a `url` outside the allow-list",
    401: "Wrong email or password",
    429: "Too many attempts (`Retry-After`)",
    503: "No Parser configured",
  },
  handler: async (ctx: SessionCtx<unknown, unknown, z.output<typeof loginBody>>) => {
    await enforceRateLimit(ctx, "login");
    const parserUrl = allowedBaseUrl(ctx, "parser", ctx.body.url);
    let signedIn;
    try {
      signedIn = await ctx.parserAt(parserUrl).signIn(ctx.body.email, ctx.body.password);
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) {
        throw new ApiError(401, "UNAUTHORIZED", "Wrong email or password");
      }
      throw e;
    }
    return await startSession(ctx, parserUrl, signedIn, 200);
  },
} as const;

/** One handler for `/api/auth/register` and `/api/config/parser-register`. */
const register = {
  summary: "Create a Parser account (gated sign-up) and sign in; sets the sealed session cookies",
  backend: "Parser",
  access: "session",
  tag: "auth",
  body: { kind: "json", schema: registerBody },
  description: `${SIGN_IN_NOTES} The sign-up bootstrap secret (\`PARSER_INTERNAL_SECRET\`) ` +
    "is sent only to `PARSER_URL`; an account that already exists is 409.",
  responses: {
    201: {
      description: "`{ user }`; sets `parser_url`/`parser_token` cookies",
      schema: signedInAnswer,
    },
    400: "Bad body or a `url` outside the allow-list",
    403: "The Parser does not accept sign-ups",
    409: "An account with this email exists",
    429: "Too many attempts (`Retry-After`)",
    503: "No Parser configured",
  },
  handler: async (ctx: SessionCtx<unknown, unknown, z.output<typeof registerBody>>) => {
    await enforceRateLimit(ctx, "register");
    const parserUrl = allowedBaseUrl(ctx, "parser", ctx.body.url);
    const { name, email, password } = ctx.body;
    // the bootstrap (= internal) secret is only ever sent to the configured Parser
    const secret = parserUrl === ctx.config.PARSER_URL
      ? ctx.config.PARSER_INTERNAL_SECRET
      : undefined;
    let signedUp;
    try {
      signedUp = await ctx.parserAt(parserUrl).signUp({ name, email, password }, secret);
    } catch (e) {
      if (e instanceof ApiError && e.status === 403) {
        throw new ApiError(403, "FORBIDDEN", "This Parser does not accept new accounts");
      }
      if (e instanceof ApiError && e.status === 422) {
        throw new ApiError(409, "CONFLICT", "An account with this email already exists");
      }
      throw e;
    }
    return await startSession(ctx, parserUrl, signedUp, 201);
  },
} as const;

/** `POST /api/auth/login`. */
export const authLogin = defineRoute({ method: "POST", path: "/api/auth/login", ...login });
/**
 * `POST /api/config/parser-login` (the front end: `/api/config/allknower-login`) — the same
 * handler as `/api/auth/login`.
 */
export const parserLogin = defineRoute({
  method: "POST",
  path: "/api/config/parser-login",
  aliases: ["/api/config/allknower-login"],
  ...login,
});
/** `POST /api/auth/register`. */
export const authRegister = defineRoute({
  method: "POST",
  path: "/api/auth/register",
  ...register,
});
/**
 * `POST /api/config/parser-register` (the front end: `/api/config/allknower-register`) — the same
 * handler as `/api/auth/register`.
 */
export const parserRegister = defineRoute({
  method: "POST",
  path: "/api/config/parser-register",
  aliases: ["/api/config/allknower-register"],
  ...register,
});

/** `POST /api/auth/logout` — signs out at the Parser (best effort) and always clears cookies. */
export const authLogout = defineRoute({
  method: "POST",
  path: "/api/auth/logout",
  summary: "Sign out: ends the Parser session when there is one and clears the session cookies",
  backend: "Parser",
  access: "session",
  tag: "auth",
  description: "Signs out at the Parser only for a cookie session (best effort: a failure is " +
    "logged and `parserSignedOut` is false) and always clears the session cookies.",
  responses: {
    200: {
      description: "`{ ok: true, parserSignedOut }` (cookies cleared either way)",
      schema: z.object({ ok: z.literal(true), parserSignedOut: z.boolean() }),
    },
  },
  handler: async (ctx) => {
    let parserSignedOut = false;
    const parser = await ctx.sessionParser({ detached: true });
    if (parser) {
      try {
        await parser.signOut();
        parserSignedOut = true;
      } catch (e) {
        ctx.log.log("warn", "Parser sign-out failed; cookies cleared anyway", {
          requestId: ctx.requestId,
          error: e instanceof ApiError ? e.code : "INTERNAL_ERROR",
        });
      }
    }
    await ctx.credentials.endSession();
    return json({ ok: true, parserSignedOut });
  },
});

/** `GET /api/auth/session` — the signed-in user, checked with the Parser. */
export const authSession = defineRoute({
  method: "GET",
  path: "/api/auth/session",
  summary: "The current user (cookie, zero-login or environment session), verified by the Parser",
  backend: "Parser",
  access: "private",
  tag: "auth",
  description: "`source` says where the session comes from: the browser's login " +
    "(`session`), a zero-login session (`provisioned`) or the environment (`env`). A session " +
    "the Parser no longer knows is 401 and its cookies are cleared.",
  responses: {
    200: {
      description: "`{ user, expiresAt, source }` (`source`: session, provisioned or env)",
      schema: z.object({
        user: parserUserSchema,
        expiresAt: z.string().nullable(),
        source: credentialSourceSchema,
      }),
    },
    401: "`UNAUTHORIZED`: the session is no longer valid (cookies cleared)",
    503: "No Parser credentials",
  },
  handler: async (ctx) => {
    const { source } = await ctx.credentials.parser();
    const session = await (await ctx.parser()).getSession();
    if (!session) {
      await ctx.credentials.endSession();
      throw new ApiError(401, "UNAUTHORIZED", "Not signed in: log in again");
    }
    return json({ user: session.user, expiresAt: session.expiresAt, source });
  },
});

/** Auth routes. */
export const authRoutes: Route[] = [
  authLogin,
  parserLogin,
  authRegister,
  parserRegister,
  authLogout,
  authSession,
];
