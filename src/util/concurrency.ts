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
 * const notes = await mapLimit(ids, 8, (id) => core.getNote(id));
 * ```
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
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
