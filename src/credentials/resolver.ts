/**
 * Which backend credentials a request may use, first found wins:
 *
 * 1. a signed-in browser (sealed `parser_url`/`parser_token` cookies, `session_cookies.ts`): its
 *    Parser token, and its Core credentials fetched from the Parser's internal credentials route,
 *    cached per session (`core_from_parser.ts`);
 * 2. zero-login (only when `ZERO_LOGIN` is on, `zero_login.ts`): a session minted by the Parser
 *    for this request, whose cookies the response then sets;
 * 3. the server's environment (`PARSER_URL`/`PARSER_TOKEN`, `CORE_URL`/`CORE_TOKEN`,
 *    `environment.ts`).
 *
 * Every URL used comes from configuration or the configured allow-lists; the internal secret is
 * only ever sent to `PARSER_URL`. This module only composes the sources; the public share uses
 * its own, server-side source (`public_core.ts`): it never reads a visitor's cookies and never
 * gives a visitor a session.
 *
 * @module
 */
import { ApiError } from "../http/errors.ts";
import type { BrowserSession } from "../session/browser_session.ts";
import type { SealKey } from "../session/seal.ts";
import type { UpstreamDeps } from "../upstream/fetch.ts";
import { allowedCoreUrls, allowedParserUrls } from "./allow_lists.ts";
import {
  coreCredentialsFromParser,
  createSessionCoreCache,
  type SessionCoreCache,
} from "./core_from_parser.ts";
import { type EnvironmentFallback, environmentFallback } from "./environment.ts";
import type {
  CredentialResolver,
  RequestCredentials,
  ResolverDeps,
  SourcedParserCredentials,
} from "./request_credentials.ts";
import {
  coreDisconnected,
  lazySealKey,
  type RequestCookies,
  requestCookies,
} from "./session_cookies.ts";
import { createZeroLogin, type ZeroLogin } from "./zero_login.ts";
import { type EndedSessions, endedSessions } from "./ended_sessions.ts";
import { memoryStore } from "../store/shared_store.ts";

/**
 * Creates the resolver of one app.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "../config/service_config.ts";
 * import { jsonLogger } from "../http/log.ts";
 * const config = loadConfig({ CORE_URL: "http://core:8080", CORE_TOKEN: "etapi-token" });
 * const resolver = createCredentialResolver({ config, fetch, log: jsonLogger("silent") });
 * const creds = resolver.forRequest(new Request("http://127.0.0.1:8080/api/lore"), {});
 * assert.deepEqual(await creds.core(), { baseUrl: "http://core:8080", token: "etapi-token" });
 * await assert.rejects(creds.parser(), { status: 503, code: "NOT_CONFIGURED" });
 * ```
 */
export function createCredentialResolver(deps: ResolverDeps): CredentialResolver {
  const { config, log } = deps;
  const now = deps.now ?? (() => Date.now());
  const sources: Sources = {
    parserUrls: allowedParserUrls(config),
    coreUrls: allowedCoreUrls(config),
    coreCache: createSessionCoreCache(config, now),
    key: lazySealKey(config, log),
    zeroLogin: createZeroLogin(config, log, now),
    fallback: environmentFallback(config),
    ended: endedSessions(deps.store ?? memoryStore({ maxKeys: 10_000, now })),
  };
  return {
    forRequest: (req, reqDeps) =>
      credentialsFor(req, sources, deps, () => credentialUpstream(deps, reqDeps)),
  };
}

/** What one resolver shares between its requests. */
interface Sources {
  parserUrls: ReadonlySet<string>;
  coreUrls: ReadonlySet<string>;
  coreCache: SessionCoreCache;
  key: () => Promise<SealKey>;
  zeroLogin: ZeroLogin;
  fallback: EnvironmentFallback;
  ended: EndedSessions;
}

/**
 * The backend calls made for credentials. They ignore the request's signal: a session's Core
 * credentials load is shared by its concurrent requests (single-flight), and an aborted
 * zero-login would count as a failure and start the cooldown for everyone.
 */
function credentialUpstream(
  deps: ResolverDeps,
  reqDeps: Pick<UpstreamDeps, "onTiming" | "onFailure">,
): UpstreamDeps {
  return {
    fetch: deps.fetch,
    timeoutMs: deps.config.UPSTREAM_TIMEOUT_MS,
    maxBodyBytes: deps.config.MAX_UPSTREAM_BODY_BYTES,
    signal: undefined,
    onTiming: reqDeps.onTiming,
    onFailure: reqDeps.onFailure,
    deadlines: deps.deadlines,
  };
}

/** The credentials of one request: the sources, tried in order, each at most once. */
function credentialsFor(
  req: Request,
  sources: Sources,
  deps: ResolverDeps,
  upstream: () => UpstreamDeps,
): RequestCredentials {
  const { parserUrls, coreUrls, coreCache, fallback } = sources;
  const { config, log } = deps;
  const cookies = requestCookies(req, {
    config,
    log,
    key: sources.key,
    parserUrls,
    ended: sources.ended,
  });
  let minted: Promise<BrowserSession | null> | undefined;
  const provision = () => minted ??= sources.zeroLogin(upstream(), cookies.start);
  const userSession = async () => (await cookies.session()) ?? (await provision());
  let parserMemo: Promise<SourcedParserCredentials> | undefined;

  const rc: RequestCredentials = {
    setCookies: cookies.setCookies,
    parserAllowed: (url) => parserUrls.has(url),
    coreAllowed: (url) => coreUrls.has(url),
    session: cookies.session,
    parser: () => parserMemo ??= parserCredentials(cookies, provision, fallback),
    async core() {
      if ((await cookies.state()).coreOff) throw coreDisconnected();
      const s = await userSession();
      if (!s) return fallback.core();
      return coreCache.get(s, () => coreCredentialsFromParser(config, coreUrls, s, upstream()));
    },
    async startSession(s) {
      await cookies.start(s);
      coreCache.drop(s);
    },
    async endSession() {
      const s = await cookies.session();
      cookies.clear();
      if (!s) return;
      coreCache.drop(s);
      // on every instance sharing the store, and even if the Parser's sign-out failed
      await sources.ended.end(s);
    },
    async setCoreOff(on) {
      await cookies.coreOff(on);
      await rc.invalidateCore();
    },
    async invalidateCore() {
      const s = await userSession();
      if (s) coreCache.drop(s);
    },
    async onError(e) {
      if (!(e instanceof ApiError)) return;
      const service = (e.details as { service?: string } | undefined)?.service;
      if (e.code === "UNAUTHORIZED" && service === "core") await rc.invalidateCore();
      const s = e.status === 401 && service === "parser" ? await cookies.session() : null;
      if (s) {
        // a dead Parser session must not keep failing every request; not a logout, though
        coreCache.drop(s);
        cookies.clear();
      }
    },
  };
  return rc;
}

/** Parser credentials: the session cookie's, else a zero-login session's, else the server's. */
async function parserCredentials(
  cookies: RequestCookies,
  provision: () => Promise<BrowserSession | null>,
  fallback: EnvironmentFallback,
): Promise<SourcedParserCredentials> {
  const cookie = await cookies.session();
  if (cookie) return { baseUrl: cookie.parserUrl, token: cookie.parserToken, source: "session" };
  const minted = await provision();
  if (minted) {
    return { baseUrl: minted.parserUrl, token: minted.parserToken, source: "provisioned" };
  }
  return fallback.parser();
}
