/**
 * Deadlines for slow clients, which `Deno.serve` (Deno 2.9) does not have: it offers no header,
 * body or keep-alive timeout (a client that sends half a request head keeps its connection for
 * good), and a `Connection: close` response does not close the connection either.
 *
 * So the service accepts connections itself (`Deno.listen`) and relays each one's bytes,
 * unchanged, to `Deno.serve` on a private loopback port. The relay does not parse HTTP; it only
 * sees when the client sends bytes, and the server's handler tells it ({@linkcode ConnectionGuard.track})
 * when a request's head has arrived and when its response has been delivered. From that:
 *
 * - idle: a connection with no request in progress (new, or kept alive after a response) that
 *   sends nothing for `idleMs` is closed;
 * - header: once the first byte of a request has arrived, its head must be complete within
 *   `headerMs`, or the connection is closed;
 * - close after response: the connection ends once the response is delivered (used after a 408,
 *   when the service gave up on a stalled body).
 *
 * A request body gets its limits (idle, minimum rate, total) where it is read (`pacedBody` in
 * body.ts): the relay cannot tell a body byte from the next request's. A client that reads a
 * response slowly is not timed out here. Each direction reads into a buffer sized to its
 * traffic (util/read_size.ts), so thousands of slow clients do not each hold a large one.
 * The deadlines are counted by a `Deadlines` scheduler (util/deadlines.ts) like every other
 * deadline of the service, so a test runs them on a clock it moves itself.
 *
 * @module
 */
import { type CancelDeadline, type Deadlines, sharedDeadlines } from "../util/deadlines.ts";
import { MIN_READ_BYTES, nextReadSize } from "../util/read_size.ts";

/** The limits, in milliseconds. */
export interface ConnectionLimits {
  /** From a request's first byte until its head is complete. */
  headerMs: number;
  /** Silence allowed while no request is in progress. */
  idleMs: number;
  /**
   * After a response that ends its connection, how long the client may go on sending (the rest
   * of a body that was not read) before the socket is closed; default {@linkcode LINGER_MS}.
   */
  lingerMs?: number;
}

/** A relayed connection, as the handler of one of its requests sees it. */
export interface GuardedConnection {
  /** The client's address (the inner server only sees the relay's). */
  remoteAddr: Deno.NetAddr;
  /** End the connection once the current response has been delivered. */
  closeAfterResponse(): void;
}

/** The listening relay. */
export interface ConnectionGuard {
  /** Where clients connect. */
  addr: Deno.NetAddr;
  /**
   * Marks a request as started on the relayed connection the inner server saw as `innerAddr`
   * (the handler's `info.remoteAddr`); the connection counts as idle again once `completed`
   * settles. `undefined` for a connection that did not come through the relay.
   */
  track(innerAddr: Deno.NetAddr, completed: Promise<void>): GuardedConnection | undefined;
  /** Stops accepting connections; open ones carry on. */
  stopAccepting(): void;
  /** Closes every relayed connection now and waits until all relays have ended. */
  closeAll(): Promise<void>;
}

/** What {@linkcode guardConnections} needs. */
export interface GuardOptions {
  hostname: string;
  port: number;
  /** The inner `Deno.serve` address (loopback). */
  target: Deno.NetAddr;
  limits: ConnectionLimits;
  /** Where the limits are counted; default the process-wide scheduler (`AppDeps.deadlines`). */
  deadlines?: Deadlines;
  /** Called when a deadline closes a connection. */
  onDeadline?: (kind: "header" | "idle") => void;
}

/**
 * The default of {@linkcode ConnectionLimits.lingerMs}. Closing at once would reset a connection
 * with unread input, and the client could lose the response it has not read yet.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(LINGER_MS, 5_000);
 * ```
 */
export const LINGER_MS = 5_000;

/**
 * Listens on `hostname:port` and relays every connection to `target` under the deadlines.
 * Throws like `Deno.listen` (e.g. the port is taken).
 *
 * @example
 * ```ts
 * // Serves `handler` on port 8080 through the relay (declared here, not run: it listens).
 * function serveGuarded(handler: (req: Request) => Response): ConnectionGuard {
 *   let guard: ConnectionGuard | undefined;
 *   const inner = Deno.serve({ hostname: "127.0.0.1", port: 0 }, (req, info) => {
 *     const conn = guard?.track(info.remoteAddr, info.completed);
 *     return conn ? handler(req) : new Response("not through the relay", { status: 403 });
 *   });
 *   guard = guardConnections({
 *     hostname: "127.0.0.1",
 *     port: 8080,
 *     target: inner.addr,
 *     limits: { headerMs: 15_000, idleMs: 75_000 },
 *   });
 *   return guard;
 * }
 * ```
 */
export function guardConnections(opts: GuardOptions): ConnectionGuard {
  const listener = Deno.listen({ hostname: opts.hostname, port: opts.port, transport: "tcp" });
  const relays = new Map<string, Relay>();
  const running = new Set<Promise<void>>();
  let accepting = true;

  const accepted = (async () => {
    while (accepting) {
      let client: Deno.TcpConn;
      try {
        client = await listener.accept();
      } catch {
        if (!accepting) return;
        // out of file descriptors and the like: pause rather than spin
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      const done = relay(client, opts, relays).catch(() => {});
      running.add(done);
      void done.finally(() => running.delete(done));
    }
  })();

  const stopAccepting = () => {
    if (!accepting) return;
    accepting = false;
    listener.close();
  };
  return {
    addr: listener.addr,
    track(innerAddr, completed) {
      const r = relays.get(key(innerAddr));
      if (!r) return undefined;
      r.started(completed);
      return { remoteAddr: r.remoteAddr, closeAfterResponse: r.closeAfterResponse };
    },
    stopAccepting,
    async closeAll() {
      stopAccepting();
      await accepted;
      for (const r of relays.values()) r.close();
      await Promise.all(running);
    },
  };
}

interface Relay {
  remoteAddr: Deno.NetAddr;
  started(completed: Promise<void>): void;
  closeAfterResponse(): void;
  close(): void;
}

function key(addr: Deno.NetAddr): string {
  return `${addr.hostname}|${addr.port}`;
}

async function relay(
  client: Deno.TcpConn,
  opts: GuardOptions,
  relays: Map<string, Relay>,
): Promise<void> {
  let inner: Deno.TcpConn;
  try {
    inner = await Deno.connect({ hostname: opts.target.hostname, port: opts.target.port });
  } catch {
    client.close();
    return;
  }
  client.setNoDelay(true);
  inner.setNoDelay(true);
  const id = key(inner.localAddr);
  const { headerMs, idleMs, lingerMs = LINGER_MS } = opts.limits;
  const deadlines = opts.deadlines ?? sharedDeadlines;
  let inFlight = 0;
  let awaitingHead = false;
  let closeAfter = false;
  let closed = false;
  // the one deadline armed at a time (header, idle or linger)
  let cancel: CancelDeadline = () => {};

  const close = () => {
    if (closed) return;
    closed = true;
    cancel();
    relays.delete(id);
    for (const c of [client, inner]) {
      try {
        c.close();
      } catch { /* already closed */ }
    }
  };
  const arm = (ms: number, kind: "header" | "idle") => {
    cancel();
    cancel = deadlines.start(ms, () => {
      opts.onDeadline?.(kind);
      close();
    });
  };
  const idle = () => {
    awaitingHead = false;
    arm(idleMs, "idle");
  };
  const r: Relay = {
    remoteAddr: client.remoteAddr,
    started(completed) {
      inFlight++;
      awaitingHead = false;
      cancel();
      const ended = () => {
        if (--inFlight > 0 || closed) return;
        if (!closeAfter) return idle();
        // the server closes once its input ends; the response still drains to the client first
        inner.closeWrite().catch(close);
        arm(idleMs, "idle");
      };
      completed.then(ended, ended);
    },
    closeAfterResponse: () => closeAfter = true,
    close,
  };
  relays.set(id, r);
  idle();

  const fromClient = async () => {
    await pump(client, inner, () => {
      if (closeAfter) return false; // the rest of a body we stopped reading
      if (inFlight === 0 && !awaitingHead) {
        awaitingHead = true;
        arm(headerMs, "header");
      }
      return true;
    });
    // pass a client's half-close on, as a direct connection would (after a 408 it already was)
    if (!closeAfter) await inner.closeWrite();
  };
  // The server ending its side ends the connection (lingering when the client may still be
  // sending); a failure either way closes both.
  const fromServer = async () => {
    await pump(inner, client);
    if (!closeAfter) return close();
    arm(lingerMs, "idle");
    await client.closeWrite();
  };
  await Promise.allSettled([fromClient().catch(close), fromServer().catch(close)]);
  close();
}

/** Copies bytes until `from` ends; `onData` may say to drop a chunk instead of passing it on. */
async function pump(
  from: Deno.TcpConn,
  to: Deno.TcpConn,
  onData: () => boolean = () => true,
): Promise<void> {
  let buf = new Uint8Array(MIN_READ_BYTES);
  for (;;) {
    const n = await from.read(buf);
    if (n === null) return;
    if (onData()) {
      for (let off = 0; off < n;) off += await to.write(buf.subarray(off, n));
    }
    const size = nextReadSize(buf.byteLength, n);
    if (size !== buf.byteLength) buf = new Uint8Array(size);
  }
}
