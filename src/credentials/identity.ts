/**
 * A non-secret name for a set of credentials, so caches can be partitioned per caller without
 * keeping tokens as map keys (or in logs).
 *
 * @module
 */
import type { CoreCredentials } from "../upstream/core.ts";
import { sha256Hex } from "../util/sha256.ts";

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
  return await sha256Hex(`${creds.baseUrl}\n${creds.token}`, 8);
}
