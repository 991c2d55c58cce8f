/**
 * A credential resolver for tests that need several Core identities in one app: Core
 * credentials come from a function of the request; there is no Parser and no cookie session.
 *
 * @module
 */
import type { CredentialResolver, RequestCredentials } from "../../src/credentials.ts";
import { notConfigured } from "../../src/http/errors.ts";
import type { CoreCredentials } from "../../src/upstream/core.ts";

/**
 * Builds the resolver.
 *
 * @example
 * ```ts
 * startServer({ config, credentials: coreCredentialsFrom((req) => ({ baseUrl, token: req.headers.get("x-token")! })) });
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
