/**
 * Sessions ended by a logout. A logout clears the browser's cookies, but a copy of them (another
 * tab's request in flight, a stolen cookie) would still unseal, and every instance that cached the
 * session's Core credentials would go on using them. So the logout is written to the store: a
 * session found there reads as no session at all, on every instance sharing the store, at once,
 * and even when the Parser's own sign-out failed. Kept as long as the session's cookies could
 * live; keyed by a digest, so the store never holds a token.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { type BrowserSession, SESSION_MAX_AGE_SECONDS } from "../session/browser_session.ts";
import type { SharedStore } from "../store/shared_store.ts";

/** Logouts, as the store keeps them. */
export interface EndedSessions {
  /** Records the logout of `s`. */
  end(s: BrowserSession): Promise<void>;
  /** Whether `s` logged out. */
  ended(s: BrowserSession): Promise<boolean>;
}

/** The store key of a session: a digest of its Parser and token. */
function sessionKey(s: BrowserSession): string {
  const digest = createHash("sha256").update(`${s.parserUrl}\n${s.parserToken}`).digest(
    "base64url",
  );
  return `ended-session:${digest}`;
}

/**
 * Logouts kept in `store`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { memoryStore } from "../store/shared_store.ts";
 * const store = memoryStore({ maxKeys: 10 });
 * const logouts = endedSessions(store);
 * const session = { parserUrl: "http://parser:3000", parserToken: "t0ken" };
 * assert.equal(await logouts.ended(session), false);
 * await logouts.end(session);
 * assert.equal(await logouts.ended(session), true);
 * assert.equal(await logouts.ended({ ...session, parserToken: "another" }), false);
 * ```
 */
export function endedSessions(store: SharedStore): EndedSessions {
  return {
    async end(s) {
      await store.set(sessionKey(s), "1", SESSION_MAX_AGE_SECONDS * 1000);
    },
    async ended(s) {
      return (await store.get(sessionKey(s))) !== null;
    },
  };
}
