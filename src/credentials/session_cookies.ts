/**
 * A signed-in browser's credentials: its sealed `parser_url`/`parser_token` cookies (and the
 * "Core disconnected" cookie). Cookies are read at most once per request, a session for a Parser
 * that is no longer allowed is ignored, and every cookie written is sealed with the service's key.
 *
 * @module
 */
import type { Config } from "../config/service_config.ts";
import { ApiError } from "../http/errors.ts";
import type { Logger } from "../http/log.ts";
import {
  type BrowserSession,
  clearSessionCookies,
  type CookieState,
  coreOffCookie,
  readCookieState,
  secureCookies,
  sessionCookies,
} from "../session/browser_session.ts";
import { deriveSealKey, type SealKey } from "../session/seal.ts";
import type { EndedSessions } from "./ended_sessions.ts";
import { loadOrCreateSessionSecret } from "../session/secret.ts";

/**
 * The cookie seal key of one resolver, loaded on first use: it is only needed once a cookie is
 * read or written, and no secret file is created before that.
 */
export function lazySealKey(config: Config, log: Logger): () => Promise<SealKey> {
  let sealKey: Promise<SealKey> | undefined;
  return () =>
    sealKey ??= loadOrCreateSessionSecret({
      fromEnv: config.SESSION_SECRET,
      dataDir: config.DATA_DIR,
      log: (msg) => log.log("warn", msg),
    }).then(deriveSealKey);
}

/** One request's cookies: what they say, and the `Set-Cookie` values its response must carry. */
export interface RequestCookies {
  readonly setCookies: string[];
  /** The unsealed cookies, read once; nothing (and no key) when the request has no cookie. */
  state(): Promise<CookieState>;
  /** The session from the cookies, if its Parser URL is still allowed and it did not log out. */
  session(): Promise<BrowserSession | null>;
  /** Sets the session cookies. */
  start(s: BrowserSession): Promise<void>;
  /** Clears the session cookies. */
  clear(): void;
  /** Sets the "Core disconnected" cookie (or clears the mark). */
  coreOff(on: boolean): Promise<void>;
}

/** What {@linkcode requestCookies} needs from its resolver. */
export interface CookieDeps {
  config: Config;
  log: Logger;
  key: () => Promise<SealKey>;
  parserUrls: ReadonlySet<string>;
  /** Logouts: a session found there reads as none. */
  ended: EndedSessions;
}

/** The cookies of `req`. */
export function requestCookies(req: Request, deps: CookieDeps): RequestCookies {
  const { config, log, key, parserUrls, ended } = deps;
  const setCookies: string[] = [];
  // asked only when a cookie is set: most requests set none
  const secure = () => secureCookies(req, config);
  let cookies: Promise<CookieState> | undefined;
  let session: Promise<BrowserSession | null> | undefined;
  const state = () =>
    cookies ??= req.headers.has("cookie")
      ? key().then((k) => readCookieState(req, k))
      : Promise.resolve({ session: null, coreOff: false });
  return {
    setCookies,
    state,
    session: () =>
      session ??= state().then(async ({ session }) => {
        if (!session) return null;
        if (!parserUrls.has(session.parserUrl)) {
          log.log("warn", "ignoring a session cookie for a Parser URL that is no longer allowed");
          return null;
        }
        return (await ended.ended(session)) ? null : session;
      }),
    async start(s) {
      const k = await key();
      setCookies.push(...await sessionCookies(k, s, secure()));
    },
    clear() {
      setCookies.push(...clearSessionCookies(secure()));
    },
    async coreOff(on) {
      setCookies.push(await coreOffCookie(await key(), on, secure()));
    },
  };
}

/** 503 for Core in a browser whose user disconnected it. */
export function coreDisconnected(): ApiError {
  return new ApiError(
    503,
    "NOT_CONFIGURED",
    "Core is disconnected in this browser: connect it in settings",
    { service: "core", reason: "disconnected" },
  );
}
