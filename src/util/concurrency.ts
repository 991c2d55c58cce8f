/**
 * Bounded parallelism for independent upstream calls: fast like `Promise.all`, without opening
 * hundreds of connections to a homelab backend at once.
 *
 * @module
 */

/**
 * Maps `items` through `fn` with at most `limit` calls in flight; results keep input order. The
 * first rejection rejects the whole call (remaining items are not started).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * let inFlight = 0;
 * let most = 0;
 * const double = async (n: number) => {
 *   most = Math.max(most, ++inFlight);
 *   await new Promise((r) => setTimeout(r, 1));
 *   inFlight--;
 *   return n * 2;
 * };
 * assert.deepEqual(await mapLimit([1, 2, 3, 4, 5], 2, double), [2, 4, 6, 8, 10]);
 * assert.equal(most, 2);
 * ```
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  // nothing to do takes no turn of the event loop (a note without relations, say)
  if (items.length === 0) return [];
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i], i);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  const n = Math.max(1, Math.min(limit, items.length));
  await Promise.all(Array.from({ length: n }, worker));
  return results;
}
