/**
 * Seeded randomness for property tests: the same seed gives the same cases on every machine.
 *
 * @module
 */

export { prng } from "../../sims/prng.ts";

/**
 * The seed of a property test: `PROPERTY_SEED` when set (to replay a failure), else `fallback`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * // PROPERTY_SEED=<n> deno task test replays a failure
 * const seed = propertySeed(20261123);
 * assert.equal(seed, Number(Deno.env.get("PROPERTY_SEED") || 20261123) >>> 0);
 * ```
 */
export function propertySeed(fallback: number): number {
  const fromEnv = Deno.env.get("PROPERTY_SEED");
  return fromEnv ? Number(fromEnv) >>> 0 : fallback;
}
