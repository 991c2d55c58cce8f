/**
 * Idle keep-alive connections, per origin. Reusing a connection is what makes this client
 * cheaper than the runtime's `fetch` per call, but a kept connection may die while nobody
 * watches: an idle one keeps a read pending, so a backend that closes it is noticed at once,
 * and one idle longer than the timeout is closed before the backend's own timeout could close
 * it as it is being reused.
 *
 * @module
 */
import { MIN_READ_BYTES } from "../../util/read_size.ts";
import { type Connection, destroy } from "./connection.ts";

/** Limits of a pool. */
export interface PoolOptions {
  /** Idle connections kept per origin; more are closed when released. */
  maxIdle: number;
  /** An idle connection unused this long is closed. */
  idleTimeoutMs: number;
}

/** The idle connections of one client. */
export interface Pool {
  /** Keeps a connection whose exchange ended cleanly (or closes it when the origin's is full). */
  release(c: Connection): void;
  /** The most recently released live connection to `key`, or null. */
  take(key: string): Connection | null;
  /** Closes every idle connection. */
  closeIdle(): void;
  /** How many connections wait for their next request. */
  size(): number;
}

/** An empty pool; its sweeper timer runs only while it holds a connection. */
export function createPool({ maxIdle, idleTimeoutMs }: PoolOptions): Pool {
  const idle = new Map<string, Connection[]>();
  let idleCount = 0;
  let sweeper: ReturnType<typeof setInterval> | undefined;

  function release(c: Connection): void {
    let list = idle.get(c.key);
    if (!list) idle.set(c.key, list = []);
    if (list.length >= maxIdle) return destroy(c);
    c.start = c.end = 0;
    // a buffer grown for a large answer is not kept for the wait in the pool
    if (c.buf.byteLength > MIN_READ_BYTES) c.buf = new Uint8Array(MIN_READ_BYTES);
    c.idle = true;
    c.idleSince = performance.now();
    c.tcp.unref(); // an idle connection must not keep the process alive
    const watch = c.tcp.read(c.buf);
    c.pending = watch;
    // while idle, any outcome (close, reset, unasked bytes) means the connection is unusable
    const gone = () => {
      if (c.idle) dropIdle(c);
    };
    watch.then(gone, gone);
    list.push(c);
    idleCount++;
    if (sweeper === undefined) {
      const timer = setInterval(sweep, Math.max(50, idleTimeoutMs / 2));
      Deno.unrefTimer(timer);
      sweeper = timer;
    }
  }

  function dropIdle(c: Connection): void {
    const list = idle.get(c.key);
    const at = list?.indexOf(c) ?? -1;
    if (at !== -1) {
      list!.splice(at, 1);
      idleCount--;
    }
    c.idle = false;
    destroy(c);
    stopSweeperWhenEmpty();
  }

  function take(key: string): Connection | null {
    const list = idle.get(key);
    const now = performance.now();
    for (let c = list?.pop(); c; c = list!.pop()) {
      idleCount--;
      c.idle = false;
      if (now - c.idleSince < idleTimeoutMs && !c.closed) {
        c.tcp.ref();
        stopSweeperWhenEmpty();
        return c;
      }
      destroy(c);
    }
    stopSweeperWhenEmpty();
    return null;
  }

  function sweep(): void {
    const now = performance.now();
    for (const list of idle.values()) {
      // released in time order: the oldest are first
      while (list.length && now - list[0].idleSince >= idleTimeoutMs) {
        const c = list.shift()!;
        idleCount--;
        c.idle = false;
        destroy(c);
      }
    }
    stopSweeperWhenEmpty();
  }

  function stopSweeperWhenEmpty(): void {
    if (idleCount > 0 || sweeper === undefined) return;
    clearInterval(sweeper);
    sweeper = undefined;
  }

  function closeIdle(): void {
    for (const list of idle.values()) {
      for (const c of list) {
        c.idle = false;
        destroy(c);
      }
    }
    idle.clear();
    idleCount = 0;
    stopSweeperWhenEmpty();
  }

  return { release, take, closeIdle, size: () => idleCount };
}
