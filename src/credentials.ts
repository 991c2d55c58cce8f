/**
 * Which backend credentials a request may use. Today: the server's environment (`CORE_URL` +
 * `CORE_TOKEN`). The resolver is an interface so per-user resolution can replace it without
 * touching any route.
 *
 * @module
 */
import type { Config } from "./config.ts";
import type { CoreCredentials } from "./upstream/core.ts";

/** Resolves credentials for one request; `null` means "not configured". */
export interface CredentialResolver {
  core(req: Request): Promise<CoreCredentials | null>;
}

/**
 * Credentials from environment variables, the same for every caller.
 *
 * @example
 * ```ts
 * const resolver = envCredentials(config);
 * const creds = await resolver.core(req); // null when CORE_URL/CORE_TOKEN are unset
 * ```
 */
export function envCredentials(config: Config): CredentialResolver {
  const core = config.CORE_URL && config.CORE_TOKEN
    ? { baseUrl: config.CORE_URL, token: config.CORE_TOKEN }
    : null;
  return { core: () => Promise.resolve(core) };
}

/**
 * A short, non-reversible identity for a set of credentials, to partition caches per caller
 * without keeping tokens as map keys.
 *
 * @example
 * ```ts
 * await credentialIdentity({ baseUrl: "http://core", token: "t" }); // "3f1c…" (16 hex chars)
 * ```
 */
export async function credentialIdentity(creds: CoreCredentials): Promise<string> {
  const data = new TextEncoder().encode(`${creds.baseUrl}\n${creds.token}`);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  return Array.from(digest.slice(0, 8), (b) => b.toString(16).padStart(2, "0")).join("");
}
