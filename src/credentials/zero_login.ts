/**
 * Zero-login (`ZERO_LOGIN`): with no session cookie, the Parser mints a session for the
 * request from the internal secret, and the response sets its cookies. One attempt per request
 * at most, and none for `PROVISION_COOLDOWN_MS` after a failure, so a Parser that is down is not
 * asked again by every request.
 *
 * @module
 */
import type { Config } from "../config/service_config.ts";
import { ApiError } from "../http/errors.ts";
import type { Logger } from "../http/log.ts";
import type { BrowserSession } from "../session/browser_session.ts";
import type { UpstreamDeps } from "../upstream/fetch.ts";
import { createParserClient } from "../upstream/parser.ts";

/**
 * A fresh session of the zero-login user, minted by the Parser at `parserUrl`; the internal
 * secret only ever goes to the configured Parser, so callers pass `PARSER_URL`.
 */
export async function mintSession(
  parserUrl: string,
  secret: string,
  upstream: UpstreamDeps,
): Promise<BrowserSession> {
  const { token } = await createParserClient({ baseUrl: parserUrl }, upstream)
    .autoProvision(secret);
  return { parserUrl, parserToken: token };
}

/**
 * Mints a session and hands it to `keep` (which sets its cookies); null when zero-login is off,
 * cooling down, or failed (logged without details that could hold a token).
 */
export type ZeroLogin = (
  upstream: UpstreamDeps,
  keep: (s: BrowserSession) => Promise<void>,
) => Promise<BrowserSession | null>;

/**
 * The zero-login of one resolver; its cooldown is shared by all requests.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "../config/service_config.ts";
 * import { jsonLogger } from "../http/log.ts";
 * const zeroLogin = createZeroLogin(loadConfig({}), jsonLogger("silent"), () => 0);
 * // off unless ZERO_LOGIN, PARSER_URL and PARSER_INTERNAL_SECRET are all set
 * assert.equal(await zeroLogin({ fetch, timeoutMs: 1000 }, () => Promise.resolve()), null);
 * ```
 */
export function createZeroLogin(config: Config, log: Logger, now: () => number): ZeroLogin {
  let blockedUntil = 0;
  return async (upstream, keep) => {
    if (!config.ZERO_LOGIN || !config.PARSER_URL || !config.PARSER_INTERNAL_SECRET) {
      return null;
    }
    if (now() < blockedUntil) return null;
    try {
      const session = await mintSession(config.PARSER_URL, config.PARSER_INTERNAL_SECRET, upstream);
      await keep(session);
      return session;
    } catch (e) {
      blockedUntil = now() + config.PROVISION_COOLDOWN_MS;
      log.log("warn", "zero-login provisioning failed", {
        error: e instanceof ApiError ? e.code : "INTERNAL_ERROR",
      });
      return null;
    }
  };
}
