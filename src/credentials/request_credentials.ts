/**
 * The contract between the credential sources and their users (the app, the router's context,
 * test doubles): what one request's credentials offer, and what a resolver needs. Kept apart
 * from the sources so a double can implement it without pulling them in.
 *
 * @module
 */
import type { SharedStore } from "../store/shared_store.ts";
import type { Config } from "../config/service_config.ts";
import type { Logger } from "../http/log.ts";
import type { BrowserSession } from "../session/browser_session.ts";
import type { CoreCredentials } from "../upstream/core.ts";
import type { UpstreamDeps } from "../upstream/fetch.ts";
import type { ParserCredentials } from "../upstream/parser.ts";

/** How a request's Parser credentials were found. */
export type CredentialSource = "session" | "provisioned" | "env";

/** Parser credentials, with where they came from. */
export type SourcedParserCredentials = ParserCredentials & { source: CredentialSource };

/** The credentials of one request, resolved lazily and at most once. */
export interface RequestCredentials {
  /**
   * Parser credentials; when there are none, 401 UNAUTHORIZED if a login would give them,
   * else 503 NOT_CONFIGURED.
   */
  parser(): Promise<SourcedParserCredentials>;
  /** Core credentials; when there are none, 401 UNAUTHORIZED or 503 like `parser()`. */
  core(): Promise<CoreCredentials>;
  /** The browser session from the cookies (null when absent or forged). */
  session(): Promise<BrowserSession | null>;
  /** `Set-Cookie` values the response must carry. */
  readonly setCookies: string[];
  /** Starts a browser session (login/register): cookies set, cached Core credentials dropped. */
  startSession(session: BrowserSession): Promise<void>;
  /** Ends the browser session (logout): cookies cleared, cached Core credentials dropped. */
  endSession(): Promise<void>;
  /** Marks Core as disconnected (or connected again) in this browser. */
  setCoreOff(on: boolean): Promise<void>;
  /** Forget cached Core credentials of this session (connect/disconnect changed them). */
  invalidateCore(): Promise<void>;
  /** Reacts to a backend error: stale Core credentials dropped, dead Parser sessions cleared. */
  onError(e: unknown): Promise<void>;
  /** Whether `url` is an allowed Parser / Core base URL. */
  parserAllowed(url: string): boolean;
  coreAllowed(url: string): boolean;
}

/** Resolves credentials for requests. */
export interface CredentialResolver {
  forRequest(
    req: Request,
    deps: Pick<UpstreamDeps, "onTiming" | "onFailure">,
  ): RequestCredentials;
}

/** What the resolver (and the public share's Core source) needs. */
export interface ResolverDeps {
  config: Config;
  fetch: typeof fetch;
  log: Logger;
  now?: () => number;
  /** Where its backend calls' deadlines are counted (see `UpstreamDeps.deadlines`). */
  deadlines?: UpstreamDeps["deadlines"];
  /** Where logouts are kept (the app's shared store); default this resolver's memory. */
  store?: SharedStore;
}
