/**
 * Awaiting two calls started together with a deterministic error: a route that checks its main
 * resource and a second one at once reports the same failure whichever call settles first.
 *
 * @module
 */

/**
 * Awaits two promises; with two failures, the first one's error wins.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(await inOrder(Promise.resolve(1), Promise.resolve("two")), [1, "two"]);
 * const late = new Promise((_, reject) => setTimeout(() => reject(new Error("first")), 5));
 * await assert.rejects(inOrder(late, Promise.reject(new Error("second"))), { message: "first" });
 * ```
 */
export async function inOrder<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [ra, rb] = await Promise.allSettled([a, b]);
  if (ra.status === "rejected") throw ra.reason;
  if (rb.status === "rejected") throw rb.reason;
  return [ra.value, rb.value];
}
