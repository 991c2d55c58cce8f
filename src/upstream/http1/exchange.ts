/**
 * One request on its way, as the state an abort must stop and the facts that decide whether its
 * connection may be reused. A connection goes back to the pool only once its response came off
 * the wire whole and the request body went out whole: a body cancelled or aborted midway, or
 * bytes nobody asked for, close it instead, since the next answer on it could not be trusted.
 *
 * @module
 */
import { type Connection, type ConnectWait, destroy } from "./connection.ts";
import { abortReason } from "./errors.ts";

/** One request on its way: what an abort must stop, and what decides reuse. */
export interface Exchange extends ConnectWait {
  conn: Connection | null;
  /** The request, body included, went out whole. */
  sent: boolean;
  /** The caller's body stream failed while being sent. */
  bodyError: unknown;
  bodyReader: ReadableStreamDefaultReader<Uint8Array> | null;
  controller: ReadableStreamDefaultController<Uint8Array> | null;
  done: boolean;
  onAbort: () => void;
  /** Where the connection goes when the exchange ends cleanly (the pool). */
  release: (c: Connection) => void;
}

/** An exchange listening to `signal` (already checked not to be aborted). */
export function startExchange(
  signal: AbortSignal | null,
  release: (c: Connection) => void,
): Exchange {
  const x: Exchange = {
    signal,
    conn: null,
    sent: false,
    bodyError: undefined,
    bodyReader: null,
    controller: null,
    connectAbort: null,
    done: false,
    onAbort: () => abortExchange(x),
    release,
  };
  signal?.addEventListener("abort", x.onAbort, { once: true });
  return x;
}

/**
 * Ends an exchange once: its connection is released when `reusable` and nothing is left
 * unsent or unread on it, else closed.
 */
export function finish(x: Exchange, reusable: boolean): void {
  if (x.done) return;
  x.done = true;
  x.signal?.removeEventListener("abort", x.onAbort);
  const c = x.conn;
  if (!c) return;
  if (reusable && x.sent && c.start === c.end && !c.closed) x.release(c);
  else destroy(c);
}

/** Stops whatever the exchange is doing: connecting, sending a body, or streaming an answer. */
function abortExchange(x: Exchange): void {
  const reason = abortReason(x.signal!);
  x.connectAbort?.(reason);
  x.bodyReader?.cancel(reason).catch(() => {});
  try {
    x.controller?.error(reason);
  } catch {
    // the body stream already ended
  }
  finish(x, false);
}
