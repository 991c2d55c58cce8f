/**
 * Seeded randomness shared by the generated world and the property tests: the same seed gives
 * the same numbers on every machine.
 *
 * @module
 */

/**
 * A mulberry32 pseudo-random generator: numbers in [0, 1), fully determined by `seed`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const a = prng(42);
 * const b = prng(42);
 * assert.deepEqual([a(), a(), a()], [b(), b(), b()]); // the same seed, the same cases
 * assert.equal(prng(42)() < 1, true);
 * ```
 */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 2 ** 32;
  };
}
