/**
 * A credential resolver for tests that need several Core identities in one app: Core
 * credentials come from a function of the request; there is no Parser and no cookie session.
 *
 * @module
 */
import type {
  CredentialResolver,
  RequestCredentials,
} from "../../src/credentials/request_credentials.ts";
import { notConfigured } from "../../src/http/errors.ts";
import type { CoreCredentials } from "../../src/upstream/core.ts";

/**
 * Builds the resolver.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * // each request's X-Token header picks its Core identity
 * const resolver = coreCredentialsFrom((req) => ({
 *   baseUrl: "http://core:8080",
 *   token: req.headers.get("x-token") ?? "",
 * }));
 * const creds = resolver.forRequest(
 *   new Request("http://x/", { headers: { "x-token": "alice" } }),
 *   {},
 * );
 * assert.deepEqual(await creds.core(), { baseUrl: "http://core:8080", token: "alice" });
 * await assert.rejects(creds.parser(), { code: "NOT_CONFIGURED" });
 * ```
 */
export function coreCredentialsFrom(core: (req: Request) => CoreCredentials): CredentialResolver {
  return {
    forRequest(req): RequestCredentials {
      const none = () => Promise.resolve();
      return {
        setCookies: [],
        core: () => Promise.resolve(core(req)),
        parser: () => Promise.reject(notConfigured("parser")),
        session: () => Promise.resolve(null),
        startSession: none,
        endSession: none,
        setCoreOff: none,
        invalidateCore: none,
        onError: none,
        parserAllowed: () => false,
        coreAllowed: () => true,
      };
    },
  };
}
