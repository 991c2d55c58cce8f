/**
 * The browser's side of a session: the sealed `parser_url`/`parser_token` cookies (seed names)
 * and the sealed `codex_off` marker set by "disconnect Core". Values are sealed with AES-GCM, so
 * a forged or edited cookie reads as absent.
 *
 * @module
 */
import { type CookieAttributes, expireCookie, parseCookies, serializeCookie } from "./cookie.ts";
import { seal, type SealKey, unseal } from "./seal.ts";
import { requestOrigin } from "../http/host_check.ts";

/** Cookie names. */
export const COOKIES = {
  parserUrl: "parser_url",
  parserToken: "parser_token",
  coreOff: "codex_off",
} as const;

/** Parser sessions last 30 days; the cookies expire with them. */
export const SESSION_MAX_AGE_SECONDS = 30 * 24 * 3600;

/** A signed-in browser: which Parser, and its bearer token there. */
export interface BrowserSession {
  parserUrl: string;
  parserToken: string;
}

/** What the cookies of one request say. */
export interface CookieState {
  session: BrowserSession | null;
  /** The user disconnected Core in this browser. */
  coreOff: boolean;
}

/**
 * Reads and unseals the session cookies. Anything that does not unseal — forged, edited,
 * expired, sealed for another cookie — is treated as absent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { deriveSealKey } from "./seal.ts";
 * const key = await deriveSealKey("an example session secret of 32+ bytes");
 * const session = { parserUrl: "http://parser:3000", parserToken: "tok" };
 * // what the browser sends back after the login's Set-Cookie headers
 * const cookie = (await sessionCookies(key, session, true)).map((c) => c.split(";")[0]).join("; ");
 * const req = new Request("http://x/", { headers: { cookie } });
 * assert.deepEqual(await readCookieState(req, key), { session, coreOff: false });
 * const forged = new Request("http://x/", {
 *   headers: { cookie: "parser_url=v1.x; parser_token=v1.y" },
 * });
 * assert.deepEqual(await readCookieState(forged, key), { session: null, coreOff: false });
 * ```
 */
export async function readCookieState(req: Request, key: SealKey): Promise<CookieState> {
  const jar = parseCookies(req.headers.get("cookie"));
  const read = async (name: string) => {
    const v = jar.get(name);
    return v ? await unseal(key, name, v) : null;
  };
  const [parserUrl, parserToken, coreOff] = await Promise.all([
    read(COOKIES.parserUrl),
    read(COOKIES.parserToken),
    read(COOKIES.coreOff),
  ]);
  return {
    session: parserUrl && parserToken ? { parserUrl, parserToken } : null,
    coreOff: coreOff === "1",
  };
}

/** Attributes every session cookie gets. */
export function cookieAttributes(secure: boolean): CookieAttributes {
  return { httpOnly: true, sameSite: "Lax", path: "/", secure };
}

/**
 * `Set-Cookie` values that start a session (and clear a Core-disconnected marker).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { deriveSealKey } from "./seal.ts";
 * const key = await deriveSealKey("an example session secret of 32+ bytes");
 * const session = { parserUrl: "http://parser:3000", parserToken: "tok" };
 * const cookies = await sessionCookies(key, session, true);
 * assert.deepEqual(cookies.map((c) => c.split("=")[0]), [
 *   "parser_url",
 *   "parser_token",
 *   "codex_off",
 * ]);
 * assert.match(cookies[1], /^parser_token=v1\.[\w-]+; Path=\/; Max-Age=2592000; HttpOnly; Secure/);
 * ```
 */
export async function sessionCookies(
  key: SealKey,
  session: BrowserSession,
  secure: boolean,
): Promise<string[]> {
  const attrs = { ...cookieAttributes(secure), maxAge: SESSION_MAX_AGE_SECONDS };
  const opts = { maxAgeSeconds: SESSION_MAX_AGE_SECONDS };
  return [
    serializeCookie(
      COOKIES.parserUrl,
      await seal(key, COOKIES.parserUrl, session.parserUrl, opts),
      attrs,
    ),
    serializeCookie(
      COOKIES.parserToken,
      await seal(key, COOKIES.parserToken, session.parserToken, opts),
      attrs,
    ),
    expireCookie(COOKIES.coreOff, cookieAttributes(secure)),
  ];
}

/**
 * `Set-Cookie` values that end the session in this browser.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(clearSessionCookies(false).map((c) => c.split(";")[0]), [
 *   "parser_url=",
 *   "parser_token=",
 * ]);
 * ```
 */
export function clearSessionCookies(secure: boolean): string[] {
  return [COOKIES.parserUrl, COOKIES.parserToken].map((n) =>
    expireCookie(n, cookieAttributes(secure))
  );
}

/**
 * `Set-Cookie` for the Core-disconnected marker (`on`) or its removal.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { deriveSealKey } from "./seal.ts";
 * const key = await deriveSealKey("an example session secret of 32+ bytes");
 * assert.match(await coreOffCookie(key, true, true), /^codex_off=v1\./);
 * assert.match(await coreOffCookie(key, false, true), /^codex_off=; Path=\/; Max-Age=0/);
 * ```
 */
export async function coreOffCookie(key: SealKey, on: boolean, secure: boolean): Promise<string> {
  if (!on) return expireCookie(COOKIES.coreOff, cookieAttributes(secure));
  return serializeCookie(
    COOKIES.coreOff,
    await seal(key, COOKIES.coreOff, "1", { maxAgeSeconds: SESSION_MAX_AGE_SECONDS }),
    { ...cookieAttributes(secure), maxAge: SESSION_MAX_AGE_SECONDS },
  );
}

/**
 * Whether the browser reached us over HTTPS, so the session cookies must be `Secure`: the scheme
 * of the origin it used ({@linkcode requestOrigin}). That is `PUBLIC_ORIGIN`'s on its host,
 * whatever the hops in between say (a TLS-terminating proxy that sends no or a wrong
 * `X-Forwarded-Proto`); on any other accepted host (a LAN name, an address, `localhost`, where a
 * `Secure` cookie set over plain HTTP would be dropped) the connection's, or behind a trusted
 * proxy `X-Forwarded-Proto`'s.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const req = new Request("http://x/", { headers: { "x-forwarded-proto": "https" } });
 * // the header counts only behind a trusted proxy
 * assert.equal(isHttps(req, { TRUST_PROXY: false }), false);
 * assert.equal(isHttps(req, { TRUST_PROXY: true }), true);
 * const settings = { TRUST_PROXY: false, PUBLIC_ORIGIN: "https://lore.example.org" };
 * assert.equal(isHttps(new Request("http://lore.example.org/"), settings), true);
 * assert.equal(isHttps(new Request("http://lore.lan:8080/"), settings), false);
 * ```
 */
export function isHttps(
  req: Request,
  settings: { TRUST_PROXY: boolean; PUBLIC_ORIGIN?: string },
): boolean {
  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    return false; // the app refuses such a request before any cookie (http/request_url.ts)
  }
  return requestOrigin(req, url, settings.TRUST_PROXY, settings.PUBLIC_ORIGIN)
    .startsWith("https:");
}

/**
 * Whether the cookies of an answer to `req` are `Secure`: always with `COOKIE_SECURE=always`,
 * else when the browser came over HTTPS ({@linkcode isHttps}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const req = new Request("http://lore.lan:8080/");
 * assert.equal(secureCookies(req, { COOKIE_SECURE: "auto", TRUST_PROXY: false }), false);
 * assert.equal(secureCookies(req, { COOKIE_SECURE: "always", TRUST_PROXY: false }), true);
 * ```
 */
export function secureCookies(
  req: Request,
  settings: { COOKIE_SECURE: "auto" | "always"; TRUST_PROXY: boolean; PUBLIC_ORIGIN?: string },
): boolean {
  return settings.COOKIE_SECURE === "always" || isHttps(req, settings);
}
