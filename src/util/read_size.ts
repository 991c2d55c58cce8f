/**
 * How large a buffer to read a byte stream into. A connection that trickles a few bytes at a
 * time must not hold a large buffer for its whole life (thousands of slow clients each pinning
 * 64 KiB add up to hundreds of MiB), while a fast transfer wants large reads. So a read buffer
 * starts small, doubles while reads fill it and halves while they use little of it.
 *
 * @module
 */

/** The smallest read buffer, bytes. */
export const MIN_READ_BYTES = 4 * 1024;
/** The largest read buffer, bytes (the runtime's own read size). */
export const MAX_READ_BYTES = 64 * 1024;

/**
 * The size of the next read buffer after a read of `read` bytes into one of `size` bytes:
 * double (up to `max`) when the read filled it, half (down to `min`) when it used less than a
 * quarter, else the same.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(nextReadSize(4096, 4096), 8192); // filled: a fast stream
 * assert.equal(nextReadSize(65536, 1), 32768); // a trickle
 * assert.equal(nextReadSize(4096, 1), 4096); // never below the minimum
 * assert.equal(nextReadSize(65536, 65536), 65536); // nor above the maximum
 * ```
 */
export function nextReadSize(
  size: number,
  read: number,
  min = MIN_READ_BYTES,
  max = MAX_READ_BYTES,
): number {
  if (read >= size) return Math.min(max, size * 2);
  if (read < size / 4) return Math.max(min, Math.floor(size / 2));
  return size;
}
