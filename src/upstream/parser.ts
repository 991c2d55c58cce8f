/**
 * Client for the Parser (AI service). Like the Core client: paths are fixed or encoded, answers
 * are validated with zod, and Parser's several error shapes (`{error}`, better-auth's
 * `{code,message}`, TypeBox 422 bodies, plain-text 500s) map to the shared error shape without
 * passing Parser's text on.
 *
 * The Parser relays Core's titles as Core stores them; the schemas its answers are read with
 * declare those fields `relayedTitle` (core/titles.ts), which decodes them once (`readRelayed`).
 *
 * @module
 */
import { z } from "zod";
import { relayedTitle } from "../core/titles.ts";
import { ApiError, type ErrorCode } from "../http/errors.ts";
import {
  DEFAULT_MAX_BODY_BYTES,
  MAX_ERROR_BODY_BYTES,
  readBodyText,
  readJsonBody,
  type UpstreamDeps,
  upstreamFetch,
  type UpstreamRequest,
} from "./fetch.ts";

/** Where the Parser is and the bearer token to use there. */
export interface ParserCredentials {
  baseUrl: string;
  token: string;
}

const userSchema = z.looseObject({
  id: z.string(),
  email: z.string(),
  name: z.string().nullable().optional(),
});
/** A Parser (better-auth) user, as we pass it on. */
export type ParserUser = { id: string; email: string; name: string | null };

const signInSchema = z.looseObject({ token: z.string().nullable().optional(), user: userSchema });
const sessionSchema = z.looseObject({
  session: z.looseObject({ expiresAt: z.string().optional() }),
  user: userSchema,
}).nullable();
const credentialsSchema = z.object({ baseUrl: z.string().min(1), token: z.string().min(1) });
const provisionSchema = z.looseObject({ token: z.string().min(16) });
const integrationSchema = z.looseObject({
  connected: z.boolean(),
  updatedAt: z.string().nullable().optional(),
});
const infoSchema = z.looseObject({ version: z.string().max(100) });
const parserErrorSchema = z.looseObject({
  error: z.unknown().optional(),
  code: z.unknown().optional(),
  message: z.unknown().optional(),
  property: z.unknown().optional(),
});

/**
 * The Parser's `POST /rag/query` answer: one best chunk per note, best first. `noteTitle` is the
 * note's title as the Parser read it from Core when it indexed the note, decoded here to the
 * typed title; `content` is the chunk's text as the Parser has it. Read it with `readRelayed`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readRelayed } from "../core/titles.ts";
 *
 * const read = await readRelayed(ragQueryAnswer, {
 *   results: [{ noteId: "n1", noteTitle: "Salt &amp; Smoke", content: "Fish.", score: 0.8 }],
 * });
 * assert.equal(read.success && read.data.results[0].noteTitle, "Salt & Smoke");
 * ```
 */
export const ragQueryAnswer = z.object({
  results: z.array(z.object({
    noteId: z.string(),
    noteTitle: relayedTitle,
    content: z.string(),
    score: z.number(),
  })),
});

/** The Parser operations the service performs that are not plain pass-throughs. */
export interface ParserClient {
  /** Email/password sign-in; the bearer token to keep (the `set-auth-token` form when sent). */
  signIn(email: string, password: string): Promise<{ token: string; user: ParserUser }>;
  /** Gated sign-up (the bootstrap secret header is sent only when given). */
  signUp(
    input: { name: string; email: string; password: string },
    bootstrapSecret?: string,
  ): Promise<{ token: string; user: ParserUser }>;
  signOut(): Promise<void>;
  /** The session's user, or null when the token is no longer valid. */
  getSession(): Promise<{ user: ParserUser; expiresAt: string | null } | null>;
  /** The caller's plaintext Core credentials (internal route; needs the internal secret). */
  coreCredentials(internalSecret: string): Promise<{ baseUrl: string; token: string }>;
  /** Zero-login session minting (internal route). */
  autoProvision(internalSecret: string): Promise<{ token: string }>;
  connectCore(
    baseUrl: string,
    token: string,
  ): Promise<{ connected: boolean; updatedAt: string | null }>;
  coreStatus(): Promise<{ connected: boolean; updatedAt: string | null }>;
  disconnectCore(): Promise<void>;
  /** The Parser's `GET /` self-description: its version (public, no token needed). */
  info(): Promise<{ version: string }>;
  /** Any JSON call (pass-through routes); the answer is returned unvalidated but parsed. */
  json(
    method: string,
    path: string,
    body?: unknown,
    query?: UpstreamRequest["query"],
  ): Promise<unknown>;
  /** A call whose body is streamed back (SSE); non-2xx already mapped to an error. */
  stream(method: string, path: string, body?: unknown): Promise<Response>;
}

/**
 * Parser codes that name a condition the caller can act on, with the status they come with: they
 * keep that status but get our own code and words instead of the generic mapping.
 */
const KNOWN_CODES: Record<string, {
  status: number;
  error: ErrorCode;
  message: string;
  details?: Record<string, string>;
}> = {
  PUSH_NOT_CONFIGURED: {
    status: 503,
    error: "NOT_CONFIGURED",
    message: "Push notifications are not configured on the Parser (it has no VAPID key)",
    details: { reason: "push-not-configured" },
  },
  INVALID_FORMAT: {
    status: 400,
    error: "INVALID_REQUEST",
    message: "The Parser does not recognise the data as a map generator export",
  },
  INVALID_DATE_RANGE: {
    status: 400,
    error: "INVALID_REQUEST",
    message: "The Parser refused the date range",
  },
  INVALID_INPUT: {
    status: 400,
    error: "INVALID_REQUEST",
    message: "The Parser found the input incomplete",
  },
};

/**
 * Maps a non-2xx Parser answer to an {@linkcode ApiError}. Parser's own code (`error` when it is
 * code-shaped, better-auth's `code`) is kept in `details.upstreamCode`; its messages are not.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   mapParserError(401, '{"error":"Unauthorized"}', new Headers()).code,
 *   "UNAUTHORIZED",
 * );
 * ```
 */
export function mapParserError(status: number, bodyText: string, headers: Headers): ApiError {
  let code: string | undefined;
  let property: string | undefined;
  try {
    const parsed = parserErrorSchema.safeParse(JSON.parse(bodyText));
    if (parsed.success) {
      for (const c of [parsed.data.code, parsed.data.error]) {
        if (typeof c === "string" && /^[A-Z][A-Z0-9_]{1,60}$/.test(c)) {
          code = c;
          break;
        }
      }
      const p = parsed.data.property;
      if (typeof p === "string" && /^[\w/[\].-]{1,100}$/.test(p)) property = p;
    }
  } catch { /* text bodies (500s, proxies): the status alone decides */ }
  // the one 500 text worth recognising: the user's Core integration is missing or refused
  if (status === 500 && /^AllCodex is not connected\b/.test(bodyText)) {
    return new ApiError(
      503,
      "NOT_CONFIGURED",
      "Core is not connected for this Parser account: connect it in settings",
      { service: "core", reason: "parser-integration" },
    );
  }
  const details = {
    service: "parser",
    ...(code ? { upstreamCode: code } : {}),
    ...(property ? { property } : {}),
  };
  const known = code ? KNOWN_CODES[code] : undefined;
  if (known && known.status === status) {
    return new ApiError(status, known.error, known.message, { ...details, ...known.details });
  }
  switch (status) {
    case 401:
      return new ApiError(
        401,
        "UNAUTHORIZED",
        "The Parser session is not valid; log in again",
        details,
      );
    case 403:
      return new ApiError(403, "UPSTREAM_FORBIDDEN", "The Parser refused access", details);
    case 404:
      return new ApiError(404, "NOT_FOUND", "Not found in the Parser", details);
    case 409:
      return new ApiError(409, "CONFLICT", "The Parser reported a conflict", details);
    case 400:
    case 422:
      return new ApiError(
        status,
        "UPSTREAM_REJECTED",
        `The Parser rejected the request${code ? ` (${code})` : ""}`,
        details,
      );
    case 429: {
      const retry = headers.get("retry-after") ?? headers.get("x-retry-after");
      const seconds = retry && /^\d{1,6}$/.test(retry) ? retry : "60";
      return new ApiError(429, "RATE_LIMITED", "The Parser is rate limiting requests", details, {
        "retry-after": seconds,
      });
    }
    case 503:
      return new ApiError(503, "UNREACHABLE", "The Parser is not ready", details);
    default:
      return new ApiError(
        502,
        "UPSTREAM_ERROR",
        "The Parser failed to handle the request",
        details,
      );
  }
}

/**
 * Maps the data of a Parser SSE `error` event (either of its shapes: `{ error, code? }` or
 * `{ code, message }`) to the {@linkcode ApiError} the same failure of the non-stream route gives:
 * the error is a thrown exception there, a 500, so it is mapped as one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   mapParserStreamError({ type: "error", error: "AllCodex is not connected: …" }).code,
 *   "NOT_CONFIGURED",
 * );
 * assert.equal(
 *   mapParserStreamError({ error: "Stream stalled", code: "TIMEOUT" }).code,
 *   "UPSTREAM_ERROR",
 * );
 * ```
 */
export function mapParserStreamError(data: unknown): ApiError {
  const text = (data as { error?: unknown } | null)?.error;
  // the message itself is what the 500 body would hold; only its code is passed on otherwise
  const body = typeof text === "string" && /^AllCodex is not connected\b/.test(text)
    ? text
    : JSON.stringify({ code: (data as { code?: unknown } | null)?.code });
  return mapParserError(500, body, new Headers());
}

/**
 * Creates a client bound to one Parser URL and (optionally) one bearer token.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const seen: Headers[] = [];
 * const parser = createParserClient({ baseUrl: "http://parser:3001", token: "session-token" }, {
 *   timeoutMs: 15_000,
 *   fetch: (_url, init) => { // stands in for the Parser: the session has ended
 *     seen.push(new Headers(init?.headers));
 *     return Promise.resolve(Response.json(null));
 *   },
 * });
 * assert.equal(await parser.getSession(), null);
 * assert.equal(seen[0].get("authorization"), "Bearer session-token");
 * ```
 */
export function createParserClient(
  creds: { baseUrl: string; token?: string },
  deps: UpstreamDeps,
): ParserClient {
  const maxBody = deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const call = async (req: UpstreamRequest) => {
    const headers = new Headers(req.headers);
    if (creds.token) headers.set("authorization", `Bearer ${creds.token}`);
    const up = await upstreamFetch(deps, "Parser", creds.baseUrl, { ...req, headers });
    if (up.res.status >= 200 && up.res.status < 300) return up;
    const text = await readBodyText(up, deps, "Parser", MAX_ERROR_BODY_BYTES).catch(() => "");
    throw mapParserError(up.res.status, text, up.res.headers);
  };

  const parse = <S extends z.ZodType>(
    schema: S,
    up: Awaited<ReturnType<typeof call>>,
  ): Promise<z.output<S>> => readJsonBody(up, deps, "Parser", schema, maxBody);

  const jsonReq = (
    method: string,
    path: string,
    body?: unknown,
    extra?: HeadersInit,
  ): UpstreamRequest => {
    const headers = new Headers(extra);
    if (body !== undefined) headers.set("content-type", "application/json");
    return { method, path, headers, body: body === undefined ? undefined : JSON.stringify(body) };
  };

  // better-auth refuses POSTs from untrusted origins; the Parser's own URL is always trusted
  const origin = { origin: creds.baseUrl };

  const authAnswer = async (up: Awaited<ReturnType<typeof call>>) => {
    // the Portal convention: keep the signed `set-auth-token` header value as the bearer token
    const header = up.res.headers.get("set-auth-token");
    const body = await parse(signInSchema, up);
    const token = header || body.token;
    if (!token) {
      throw new ApiError(502, "UPSTREAM_ERROR", "The Parser issued no session token", {
        service: "parser",
      });
    }
    return { token, user: toUser(body.user) };
  };

  return {
    signIn: async (email, password) =>
      authAnswer(
        await call(jsonReq("POST", "/api/auth/sign-in/email", { email, password }, origin)),
      ),
    signUp: async (input, bootstrapSecret) =>
      authAnswer(
        await call(
          jsonReq("POST", "/api/auth/sign-up/email", input, {
            ...origin,
            ...(bootstrapSecret ? { "x-allcodex-bootstrap-secret": bootstrapSecret } : {}),
          }),
        ),
      ),
    signOut: async () => {
      const up = await call(jsonReq("POST", "/api/auth/sign-out", {}, origin));
      await up.res.body?.cancel().catch(() => {}); // a body the deadline ended is gone already
      up.release();
    },
    getSession: async () => {
      const s = await parse(sessionSchema, await call({ path: "/api/auth/get-session" }));
      return s ? { user: toUser(s.user), expiresAt: s.session.expiresAt ?? null } : null;
    },
    coreCredentials: async (secret) =>
      await parse(
        credentialsSchema,
        await call(jsonReq("POST", "/internal/integrations/allcodex/credentials", undefined, {
          "x-portal-internal-secret": secret,
        })),
      ),
    autoProvision: async (secret) =>
      await parse(
        provisionSchema,
        await call(
          jsonReq("POST", "/internal/auto-provision", undefined, {
            "x-portal-internal-secret": secret,
          }),
        ),
      ),
    connectCore: async (baseUrl, token) => {
      await parse(
        z.unknown(),
        await call(jsonReq("POST", "/integrations/allcodex/connect", { baseUrl, token })),
      );
      return { connected: true, updatedAt: new Date().toISOString() };
    },
    coreStatus: async () => {
      const s = await parse(
        integrationSchema,
        await call({ path: "/integrations/allcodex/status" }),
      );
      return { connected: s.connected, updatedAt: s.updatedAt ?? null };
    },
    disconnectCore: async () => {
      await parse(z.unknown(), await call({ method: "DELETE", path: "/integrations/allcodex" }));
    },
    info: async () => {
      const r = await parse(infoSchema, await call({ path: "/" }));
      return { version: r.version };
    },
    json: async (method, path, body, query) =>
      await parse(z.unknown(), await call({ ...jsonReq(method, path, body), query })),
    stream: async (method, path, body) =>
      (await call({ ...jsonReq(method, path, body), stream: true })).res,
  };
}

function toUser(u: z.output<typeof userSchema>): ParserUser {
  return { id: u.id, email: u.email, name: u.name ?? null };
}
