/**
 * For the HTTP/1.1 client's tests (src/upstream/http1/): a raw TCP backend whose every byte a
 * test chooses, and the waits and reads those tests share.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createHttp1Client, type Http1Client } from "../../src/upstream/http1/client.ts";

export const enc: TextEncoder = new TextEncoder();
export const dec: TextDecoder = new TextDecoder();

// --- a raw TCP backend whose every byte a test chooses ----------------------------------------

/** One request as a raw backend read it. */
export interface RawRequest {
  head: string;
  /** Lower-cased field names. */
  fields: Map<string, string>;
  body: Uint8Array;
}

/** Reads requests off a connection one at a time (null once the client closed it). */
export function requestReader(conn: Deno.Conn): () => Promise<RawRequest | null> {
  let buf = new Uint8Array(0);
  const more = async () => {
    const chunk = new Uint8Array(64 * 1024);
    const n = await conn.read(chunk);
    if (n === null) return false;
    const next = new Uint8Array(buf.length + n);
    next.set(buf);
    next.set(chunk.subarray(0, n), buf.length);
    buf = next;
    return true;
  };
  const take = (n: number) => {
    const out = buf.slice(0, n);
    buf = buf.slice(n);
    return out;
  };
  const line = async () => {
    for (;;) {
      const at = dec.decode(buf).indexOf("\r\n");
      if (at !== -1) return dec.decode(take(at + 2)).slice(0, -2);
      if (!(await more())) throw new Error("closed mid-request");
    }
  };
  return async (): Promise<RawRequest | null> => {
    const lines: string[] = [];
    try {
      for (let l = await line(); l !== ""; l = await line()) lines.push(l);
    } catch {
      return null;
    }
    const fields = new Map(
      lines.slice(1).map((l) => {
        const at = l.indexOf(":");
        return [l.slice(0, at).toLowerCase(), l.slice(at + 1).trim()];
      }),
    );
    const parts: Uint8Array[] = [];
    const read = async (n: number) => {
      while (buf.length < n) if (!(await more())) throw new Error("closed mid-body");
      parts.push(take(n));
    };
    if (fields.get("transfer-encoding") === "chunked") {
      for (let size = parseInt(await line(), 16); size; size = parseInt(await line(), 16)) {
        await read(size);
        await line();
      }
      await line();
    } else {
      await read(Number(fields.get("content-length") ?? 0));
    }
    const body = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    parts.reduce((at, p) => (body.set(p, at), at + p.length), 0);
    return { head: lines.join("\r\n"), fields, body };
  };
}

/** A backend speaking raw TCP: `serve` handles each connection (numbered from 0). */
export interface RawBackend {
  url: string;
  /** Connections accepted so far. */
  accepted(): number;
  /** Connections the client has closed (seen as the end of the stream by `untilClosed`). */
  closedByClient: number;
}

/** Resolves when the client closes the connection (reading and dropping what it sends). */
export async function untilClosed(conn: Deno.Conn, backend: RawBackend): Promise<void> {
  const sink = new Uint8Array(64 * 1024);
  try {
    while ((await conn.read(sink)) !== null) { /* drop */ }
  } catch {
    // a reset is a close too
  }
  backend.closedByClient++;
}

export async function write(conn: Deno.Conn, data: string | Uint8Array): Promise<void> {
  const bytes = typeof data === "string" ? enc.encode(data) : data;
  for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
}

export const ok = (body: string, fields = ""): string =>
  `HTTP/1.1 200 OK\r\n${fields}Content-Length: ${enc.encode(body).length}\r\n\r\n${body}`;

/** Answers every request of every connection with `answer(request, connection index)`. */
export const answering = (answer: (req: RawRequest, index: number) => string) =>
async (
  conn: Deno.TcpConn,
  index: number,
) => {
  const next = requestReader(conn);
  for (let req = await next(); req; req = await next()) await write(conn, answer(req, index));
};

/**
 * Runs `fn` against a raw backend and a fresh client (`fetch` adds `redirect: "manual"`, as the
 * service's calls do); closes both afterwards.
 */
export async function withRaw(
  serve: (conn: Deno.TcpConn, index: number, backend: RawBackend) => Promise<void>,
  fn: (t: {
    url: string;
    backend: RawBackend;
    client: Http1Client;
    fetch: (url: string, init?: RequestInit) => Promise<Response>;
  }) => Promise<void>,
  opts: Parameters<typeof createHttp1Client>[0] = {},
): Promise<void> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.TcpConn>();
  const handlers: Promise<void>[] = [];
  let accepted = 0;
  const backend: RawBackend = {
    url: `http://127.0.0.1:${listener.addr.port}`,
    accepted: () => accepted,
    closedByClient: 0,
  };
  const loop = (async () => {
    for await (const conn of listener) {
      conns.add(conn);
      const handled = serve(conn, accepted++, backend).catch(() => {}).finally(() => {
        conns.delete(conn);
        try {
          conn.close();
        } catch {
          // the handler closed it
        }
      });
      handlers.push(handled);
    }
  })().catch(() => {});
  const client = createHttp1Client(opts);
  try {
    await fn({
      url: backend.url,
      backend,
      client,
      fetch: (url, init) => client.fetch(url, { redirect: "manual", ...init }),
    });
  } finally {
    client.closeIdle();
    listener.close();
    for (const c of conns) {
      try {
        c.close();
      } catch {
        // already closed
      }
    }
    await loop;
    await Promise.all(handlers);
  }
}

export const sleep = (ms: number): Promise<unknown> => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until `check` holds (the other side of a socket acts asynchronously), under the hang
 * guard only (`guardMs`, the tests' HANG_GUARD_MS): a busy machine makes it slower, never false.
 */
export async function waitUntil(
  check: () => boolean,
  what: string,
  guardMs: number,
): Promise<void> {
  const until = performance.now() + guardMs;
  while (!check() && performance.now() < until) await sleep(10);
  assert.ok(check(), what);
}

/** The rejection of `p` (or of reading its body), or null when both succeed. */
export async function failure(p: Promise<Response>): Promise<unknown> {
  try {
    await (await p).arrayBuffer();
    return null;
  } catch (e) {
    return e;
  }
}
