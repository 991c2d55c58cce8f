/**
 * Sniffing an image stream without buffering it: read just the head, decide, then hand back a
 * stream of every byte (head first). Used for downloads (verify what Core sends) and uploads
 * (verify what the client sends).
 *
 * @module
 */
import { type RasterMime, SNIFF_BYTES, sniffImageMime } from "./image_info.ts";

/** The head of a byte stream, sniffed, and a stream that re-emits head + rest. */
export interface ImageHead {
  /** The raster type the first bytes prove, or null. */
  mime: RasterMime | null;
  /** Everything read so far (at least {@linkcode SNIFF_BYTES} unless the stream was shorter). */
  head: Uint8Array;
  /** The whole stream again, head first; cancelling it cancels the source. */
  stream: ReadableStream<Uint8Array>;
}

/**
 * Reads just enough of a stream to sniff it, then hands back a stream of all its bytes. Nothing
 * beyond the head is buffered, and cancelling the returned stream cancels the source (so a
 * client abort reaches an upstream body). When `signal` aborts before the head is complete, the
 * source is cancelled and the promise rejects with the signal's reason; a failing source rejects
 * with its error (and is cancelled too). `until`, when given, keeps reading past
 * {@linkcode SNIFF_BYTES} until it holds for the head (or the stream ends).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const gif = new Uint8Array([...new TextEncoder().encode("GIF89a"), 1, 0, 1, 0, 0, 0, 0]);
 * const { mime, stream } = await readImageHead(new Response(gif).body!);
 * assert.equal(mime, "image/gif");
 * assert.deepEqual(await new Response(stream).bytes(), gif); // every byte, head first
 * ```
 */
export async function readImageHead(
  source: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
  until?: (head: Uint8Array) => boolean,
): Promise<ImageHead> {
  const reader = source.getReader();
  const stop = () => void reader.cancel(signal?.reason).catch(() => {});
  signal?.addEventListener("abort", stop, { once: true });
  // One buffer, doubled when full: a client sending its head a byte at a time must cost neither
  // a joined copy per byte (`until` looks at the whole head each time) nor a buffer per byte.
  let buf: Uint8Array = new Uint8Array(0);
  let length = 0;
  let ended = false;
  try {
    signal?.throwIfAborted();
    while (length < SNIFF_BYTES || (until && !until(buf.subarray(0, length)))) {
      const r = await reader.read();
      signal?.throwIfAborted(); // a cancelled read looks like the end: it is not
      if (r.done) {
        ended = true;
        break;
      }
      const n = r.value.byteLength;
      if (length === 0) {
        buf = r.value; // the usual case: the first chunk holds the whole head (never written to)
      } else {
        if (length + n > buf.byteLength) {
          const grown = new Uint8Array(Math.max(2 * buf.byteLength, length + n));
          grown.set(buf.subarray(0, length));
          buf = grown;
        }
        buf.set(r.value, length);
      }
      length += n;
    }
  } catch (e) {
    await reader.cancel(e).catch(() => {});
    throw e;
  } finally {
    signal?.removeEventListener("abort", stop);
  }
  const head = buf.subarray(0, length);
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      if (head.byteLength) controller.enqueue(head);
      if (ended) controller.close();
    },
    async pull(controller) {
      const r = await reader.read();
      if (r.done) controller.close();
      else controller.enqueue(r.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return { mime: sniffImageMime(head), head, stream };
}
