/**
 * One TCP connection to a backend and its read buffer. The buffer starts small and doubles
 * while reads fill it (up to the connection's limit): a connection waiting for the answer to a
 * slow upload, or idle in the pool, holds a few KiB, while a large answer is still read in large
 * pieces.
 *
 * @module
 */
import { MIN_READ_BYTES } from "../../util/read_size.ts";
import type { ByteWindow } from "./body_decoder.ts";
import { abortReason, connectError, invalidResponse } from "./errors.ts";

/** A TCP connection and its read buffer (its unread bytes are the window). */
export interface Connection extends ByteWindow {
  tcp: Deno.TcpConn;
  /** The origin it reaches (`host:port`): the pool's key. */
  key: string;
  /** The largest the read buffer may grow: a partial line or head must fit in it. */
  bufferLimit: number;
  /** In the pool, its read watching for a close. */
  idle: boolean;
  idleSince: number;
  /** The read started while idle: the next exchange takes its result. */
  pending: Promise<number | null> | null;
  /** Bytes received during the current exchange. */
  received: number;
  closed: boolean;
}

/** What opens a TCP connection (`Deno.connect`, or a test's stand-in). */
export type Connect = (options: Deno.ConnectOptions) => Promise<Deno.TcpConn>;

/** Where an abort reaches a connect in progress: `connectAbort` is set only while it waits. */
export interface ConnectWait {
  signal: AbortSignal | null;
  connectAbort: ((reason: unknown) => void) | null;
}

/**
 * Connects to `url`'s host and port (`connect`, or `Deno.connect` at call time). An abort
 * while connecting rejects with its reason, and a connection that arrives late is closed.
 */
export async function openConnection(
  url: URL,
  wait: ConnectWait,
  connect: Connect | undefined,
  bufferLimit: number,
): Promise<Connection> {
  const connecting = (connect ?? Deno.connect)({
    hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port ? Number(url.port) : 80,
  }).catch((e) => {
    throw connectError(e);
  });
  let tcp: Deno.TcpConn;
  try {
    tcp = wait.signal
      ? await Promise.race([
        connecting,
        new Promise<never>((_, reject) => wait.connectAbort = reject),
      ])
      : await connecting;
  } catch (e) {
    connecting.then((late) => late.close(), () => {});
    throw e;
  } finally {
    wait.connectAbort = null;
  }
  if (wait.signal?.aborted) {
    tcp.close();
    throw abortReason(wait.signal);
  }
  tcp.setNoDelay(true);
  return {
    tcp,
    key: url.host,
    bufferLimit,
    buf: new Uint8Array(Math.min(MIN_READ_BYTES, bufferLimit)),
    start: 0,
    end: 0,
    idle: false,
    idleSince: 0,
    pending: null,
    received: 0,
    closed: false,
  };
}

/** Closes a connection once; later calls, and a close the runtime already made, do nothing. */
export function destroy(c: Connection): void {
  if (c.closed) return;
  c.closed = true;
  try {
    c.tcp.close();
  } catch {
    // already closed by the runtime
  }
}

/** Reads more bytes into the window; false at the end of the stream. */
export async function fill(c: Connection): Promise<boolean> {
  let n: number | null;
  if (c.pending) {
    const pending = c.pending;
    c.pending = null;
    n = await pending;
  } else {
    if (c.start === c.end) c.start = c.end = 0;
    if (c.end === c.buf.length) {
      if (c.start > 0) {
        c.buf.copyWithin(0, c.start, c.end);
        c.end -= c.start;
        c.start = 0;
      } else if (c.buf.length < c.bufferLimit) {
        grow(c);
      } else {
        // the decoders bound every partial line below the largest buffer's size
        throw invalidResponse("line too long");
      }
    }
    n = await c.tcp.read(c.buf.subarray(c.end));
  }
  if (n === null) return false;
  c.end += n;
  // a read that took all the room: more is coming than this buffer holds at once
  if (c.end === c.buf.length && c.buf.length < c.bufferLimit) grow(c);
  c.received += n;
  return true;
}

/** Writes all of `bytes` (a socket write may take only part). */
export async function writeAll(tcp: Deno.TcpConn, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.byteLength;) at += await tcp.write(bytes.subarray(at));
}

/** Doubles the read buffer (up to its largest size), keeping the unread window. */
function grow(c: Connection): void {
  const next = new Uint8Array(Math.min(c.bufferLimit, c.buf.length * 2));
  next.set(c.buf.subarray(c.start, c.end));
  c.end -= c.start;
  c.start = 0;
  c.buf = next;
}
