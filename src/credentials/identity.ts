/**
 * A non-secret name for a set of credentials, so caches can be partitioned per caller without
 * keeping tokens as map keys (or in logs).
 *
 * @module
 */
import type { CoreCredentials } from "../upstream/core.ts";

/**
 * A short, non-reversible identity for a set of credentials, to partition caches per caller
 * without keeping tokens as map keys.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const id = await credentialIdentity({ baseUrl: "http://core", token: "t" });
 * assert.match(id, /^[0-9a-f]{16}$/);
 * assert.notEqual(await credentialIdentity({ baseUrl: "http://core", token: "u" }), id);
 * ```
 */
export async function credentialIdentity(creds: CoreCredentials): Promise<string> {
  const data = new TextEncoder().encode(`${creds.baseUrl}\n${creds.token}`);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  return Array.from(digest.slice(0, 8), (b) => b.toString(16).padStart(2, "0")).join("");
}
