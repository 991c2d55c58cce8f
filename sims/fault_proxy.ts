/**
 * A fault-injecting HTTP proxy for the test doubles: a loopback TCP server placed between the
 * service and a double (Core or Parser) that answers each request the way a broken backend or
 * network would. Faults that `SimFault` cannot express live here because they need the raw
 * socket: refused connections, non-HTTP bytes, resets, a `Content-Length` the body never reaches.
 *
 * Every response is `Connection: close`, so each upstream call has its own connection and
 * {@linkcode FaultProxy.drained} proves the service let go of every one of them. Every byte the
 * proxy invents carries {@linkcode FAULT_MARK}, so a test can prove none reached a client.
 *
 * @example
 * ```ts
 * // Declared, not run here: it listens on a port in front of a running double.
 * async function stalledCore(coreUrl: string, run: (url: string) => Promise<void>) {
 *   const proxy = await startFaultProxy({ target: coreUrl });
 *   await proxy.setMode("stall");
 *   await run(proxy.url); // the service under test, with CORE_URL pointed at proxy.url
 *   const released = await proxy.drained(5_000); // true once every upstream connection is closed
 *   await proxy.close();
 *   return released;
 * }
 * ```
 * @module
 */
import { Buffer } from "node:buffer";
import net from "node:net";

/**
 * What the proxy does with each request:
 * - `pass`: forwards it and streams the answer back unchanged.
 * - `refuse`: nothing listens (connection refused).
 * - `hang`: accepts and reads the request, never answers.
 * - `reset`: the real answer's head and half its body, then a TCP reset (no body: reset at once).
 * - `garbage`: answers with bytes that are not HTTP, then closes.
 * - `stall`: the real answer's head, then nothing (no body: nothing at all).
 * - `truncate`: the real head with `Content-Length` of the whole body, half of it, then a close.
 * - `drip`: the real answer, one byte every `dripMs` (no body: the head drips).
 * - `oversize`: the real answer padded with whitespace to `padBytes`, length undeclared.
 * - `invalid-json`: JSON answers replaced by a body that is not JSON; others unchanged.
 * - `html-500`: a 500 with an HTML error page naming internals, without asking the double.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(FAULT_MODES.length, 10); // every mode but `pass`
 * // a test walks them all: for (const mode of FAULT_MODES) await proxy.setMode(mode);
 * ```
 */
export const FAULT_MODES = [
  "refuse",
  "hang",
  "reset",
  "garbage",
  "stall",
  "truncate",
  "drip",
  "oversize",
  "invalid-json",
  "html-500",
] as const;

/** One of {@linkcode FAULT_MODES}, or `pass`. */
export type FaultMode = typeof FAULT_MODES[number] | "pass";

/**
 * Marks every byte the proxy makes up (garbage, error pages, invalid JSON).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * // what a client got from the service while the proxy sent garbage
 * const res = Response.json({ error: "UPSTREAM_ERROR", message: "Core sent no valid response" });
 * assert.ok(!(await res.text()).includes(FAULT_MARK));
 * ```
 */
export const FAULT_MARK = "FAULTPROXY";

/** Options of {@linkcode startFaultProxy}. */
export interface FaultProxyOptions {
  /** Base URL of the double behind the proxy (or set it later with `retarget`). */
  target?: string;
  /** `drip`: milliseconds between bytes; default 50. */
  dripMs?: number;
  /** `oversize`: size the body is padded to; default 1 MiB. */
  padBytes?: number;
}

/** A running proxy. */
export interface FaultProxy {
  /** Base URL to give the service instead of the double's. */
  url: string;
  /** Changes the fault for requests that arrive from now on. */
  setMode(mode: FaultMode): Promise<void>;
  /** Points the proxy at a double (when the double starts after the service is configured). */
  retarget(url: string): void;
  /** Connections the service holds open to the proxy right now. */
  openConnections(): number;
  /** Answers whose body the service stopped reading before the end (it cancelled it). */
  cutShort(): number;
  /**
   * Connections whose answer the fault holds back right now (`hang`; `stall` after the head;
   * `drip` while it drips): only the service giving up (its deadline) ends the first two, and
   * a drip long before its end.
   */
  held(): number;
  /** Resolves true once no connection is open, false if some are still open after `timeoutMs`. */
  drained(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** A request as read off the socket. */
interface RawRequest {
  method: string;
  target: string;
  headers: [string, string][];
  body: Uint8Array;
}

/** The double's answer, read whole (fault modes) so it can be mangled. */
interface Answer {
  status: number;
  statusText: string;
  headers: [string, string][];
  body: Uint8Array;
}

const HOP_HEADERS = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "host",
  "upgrade",
]);

const te = new TextEncoder();

/**
 * Starts a proxy in `pass` mode on a free loopback port.
 */
export async function startFaultProxy(opts: FaultProxyOptions): Promise<FaultProxy> {
  const dripMs = opts.dripMs ?? 50;
  const padBytes = opts.padBytes ?? 1024 * 1024;
  const sockets = new Set<net.Socket>();
  const closing = new AbortController();
  let mode: FaultMode = "pass";
  let cutShort = 0;
  let held = 0;
  let server: net.Server | null = null;
  let port = 0;
  let target = opts.target ?? "";
  const forward = (req: RawRequest, signal: AbortSignal) => forwardTo(target, req, signal);

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = net.createServer((sock) => void serve(sock));
      s.once("error", reject);
      s.listen(port, "127.0.0.1", () => {
        port = (s.address() as net.AddressInfo).port;
        server = s;
        resolve();
      });
    });
  const unlisten = () =>
    new Promise<void>((resolve) => {
      const s = server;
      server = null;
      if (!s) return resolve();
      s.close(() => resolve());
      // close() waits for open connections: end them so it can finish
      for (const sock of sockets) sock.destroy();
    });

  async function serve(sock: net.Socket) {
    sockets.add(sock);
    const gone = new AbortController();
    sock.on("close", () => {
      sockets.delete(sock);
      gone.abort();
    });
    sock.on("error", () => {});
    const current = mode;
    try {
      const req = await readRequest(sock);
      if (!req || current === "refuse") return void sock.destroy();
      await respond(sock, req, current, gone.signal);
    } catch {
      sock.destroy();
    }
  }

  /** Waits until the service closes the connection (or the proxy shuts down). */
  const untilGone = (signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted || closing.signal.aborted) return resolve();
      held++;
      const done = () => {
        signal.removeEventListener("abort", done);
        closing.signal.removeEventListener("abort", done);
        held--;
        resolve();
      };
      signal.addEventListener("abort", done);
      closing.signal.addEventListener("abort", done);
    });

  async function respond(sock: net.Socket, req: RawRequest, m: FaultMode, gone: AbortSignal) {
    if (m === "hang") return await untilGone(gone);
    if (m === "garbage") {
      await write(sock, te.encode(`${FAULT_MARK} \u0000\u00ff<html>not http</html>\r\n\r\n`));
      return void sock.end();
    }
    if (m === "html-500") {
      const page = te.encode(
        `<!doctype html><html><body><h1>${FAULT_MARK} Internal Server Error</h1>` +
          `<pre>at handler (/srv/backend/app.js:42) http://127.0.0.1:${port}</pre></body></html>`,
      );
      await write(
        sock,
        head(500, "Internal Server Error", [["content-type", "text/html"]], [
          "content-length",
          String(page.byteLength),
        ]),
      );
      await write(sock, page);
      return void sock.end();
    }
    if (m === "pass") return await passThrough(sock, req, gone);
    const a = await forward(req, gone).catch((e) => {
      if (gone.aborted) return null;
      throw e;
    });
    if (!a || gone.aborted) return;
    const bodyless = a.body.byteLength === 0;
    const fixed = (body: Uint8Array) =>
      head(a.status, a.statusText, a.headers, ["content-length", String(body.byteLength)]);
    switch (m) {
      case "reset":
        if (!bodyless) {
          await write(
            sock,
            head(a.status, a.statusText, a.headers, ["transfer-encoding", "chunked"]),
          );
          await write(sock, chunk(a.body.subarray(0, Math.ceil(a.body.byteLength / 2))));
          await pause(20, gone); // let the half arrive before the reset
        }
        return void sock.resetAndDestroy();
      case "stall":
        if (!bodyless) await write(sock, fixed(a.body));
        await untilGone(gone);
        if (gone.aborted) cutShort++;
        return;
      case "truncate":
        if (!bodyless) {
          await write(sock, fixed(a.body));
          await write(sock, a.body.subarray(0, Math.floor(a.body.byteLength / 2)));
        }
        return void sock.end();
      case "drip": {
        const bytes = bodyless ? fixed(a.body) : a.body;
        if (!bodyless) await write(sock, fixed(a.body));
        held++;
        try {
          for (let i = 0; i < bytes.byteLength && !gone.aborted && !closing.signal.aborted; i++) {
            await write(sock, bytes.subarray(i, i + 1));
            await pause(dripMs, gone);
          }
        } finally {
          held--;
        }
        if (gone.aborted) cutShort++;
        return void sock.end();
      }
      case "oversize": {
        if (bodyless) {
          await write(sock, fixed(a.body));
          return void sock.end();
        }
        await write(
          sock,
          head(a.status, a.statusText, a.headers, ["transfer-encoding", "chunked"]),
        );
        await write(sock, chunk(a.body));
        const pad = new Uint8Array(64 * 1024).fill(0x20);
        for (let sent = a.body.byteLength; sent < padBytes; sent += pad.byteLength) {
          if (gone.aborted || !await write(sock, chunk(pad))) break;
        }
        if (gone.aborted || sock.destroyed) cutShort++;
        else await write(sock, te.encode("0\r\n\r\n"));
        return void sock.end();
      }
      case "invalid-json": {
        const type = a.headers.find(([k]) => k.toLowerCase() === "content-type")?.[1] ?? "";
        const body = !bodyless && /json/i.test(type)
          ? te.encode(`{"${FAULT_MARK}": [1, 2, `)
          : a.body;
        await write(sock, fixed(body));
        await write(sock, body);
        return void sock.end();
      }
    }
  }

  /** `pass`: the double's answer streamed back as it arrives. */
  async function passThrough(sock: net.Socket, req: RawRequest, gone: AbortSignal) {
    const res = await fetch(target + req.target, init(req, gone)).catch((e) => {
      if (gone.aborted) return null;
      throw e;
    });
    if (!res) return;
    await write(
      sock,
      head(res.status, res.statusText, [...res.headers], ["transfer-encoding", "chunked"]),
    );
    if (res.body) {
      for await (const part of res.body) {
        if (!await write(sock, chunk(part))) return void res.body.cancel().catch(() => {});
      }
    }
    await write(sock, te.encode("0\r\n\r\n"));
    sock.end();
  }

  await listen();
  return {
    url: `http://127.0.0.1:${port}`,
    async setMode(next) {
      if (next === "refuse" && server) await unlisten();
      if (next !== "refuse" && !server) await listen();
      mode = next;
    },
    retarget: (url) => {
      target = url;
    },
    openConnections: () => sockets.size,
    cutShort: () => cutShort,
    held: () => held,
    async drained(timeoutMs) {
      const until = Date.now() + timeoutMs;
      while (sockets.size > 0 && Date.now() < until) await pause(20);
      return sockets.size === 0;
    },
    async close() {
      closing.abort();
      for (const sock of sockets) sock.destroy();
      await unlisten();
    },
  };
}

/** Sends a request to the double and reads its whole answer. */
async function forwardTo(target: string, req: RawRequest, signal: AbortSignal): Promise<Answer> {
  const res = await fetch(target + req.target, init(req, signal));
  return {
    status: res.status,
    statusText: res.statusText,
    headers: [...res.headers],
    body: new Uint8Array(await res.arrayBuffer()),
  };
}

function init(req: RawRequest, signal: AbortSignal): RequestInit {
  // The proxy relays bytes it frames itself: it asks the double for plain answers, so its own
  // fetch never has an encoding to decode and the client gets the bytes the headers describe.
  const headers = req.headers.filter(([k]) =>
    !HOP_HEADERS.has(k.toLowerCase()) && k.toLowerCase() !== "accept-encoding"
  );
  headers.push(["accept-encoding", "identity"]);
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return {
    method: req.method,
    headers,
    body: hasBody ? req.body as Uint8Array<ArrayBuffer> : undefined,
    redirect: "manual",
    signal,
  };
}

/** A response head: the double's headers minus hop-by-hop ones, plus `framing` and a close. */
function head(
  status: number,
  statusText: string,
  headers: [string, string][],
  framing: [string, string],
): Uint8Array {
  const lines = headers.filter(([k]) => !HOP_HEADERS.has(k.toLowerCase()))
    .map(([k, v]) => `${k}: ${v}\r\n`).join("");
  return te.encode(
    `HTTP/1.1 ${status} ${statusText || "Status"}\r\n${lines}${framing[0]}: ${
      framing[1]
    }\r\nconnection: close\r\n\r\n`,
  );
}

function chunk(bytes: Uint8Array): Uint8Array {
  if (bytes.byteLength === 0) return bytes;
  const prefix = te.encode(`${bytes.byteLength.toString(16)}\r\n`);
  const out = new Uint8Array(prefix.byteLength + bytes.byteLength + 2);
  out.set(prefix);
  out.set(bytes, prefix.byteLength);
  out.set([13, 10], prefix.byteLength + bytes.byteLength);
  return out;
}

/** Writes with backpressure; false when the peer is gone. */
function write(sock: net.Socket, bytes: Uint8Array): Promise<boolean> {
  if (sock.destroyed || sock.writableEnded) return Promise.resolve(false);
  if (bytes.byteLength === 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const ok = sock.write(bytes, (err) => {
      if (err) resolve(false);
    });
    if (ok) return resolve(true);
    const done = (v: boolean) => {
      sock.off("drain", onDrain);
      sock.off("close", onClose);
      resolve(v);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    sock.once("drain", onDrain);
    sock.once("close", onClose);
  });
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
}

/**
 * Reads one HTTP/1.1 request (head plus a `Content-Length` or chunked body) off the socket;
 * null when the peer closes first.
 */
function readRequest(sock: net.Socket): Promise<RawRequest | null> {
  return new Promise((resolve) => {
    let buf = Buffer.alloc(0);
    const finish = (r: RawRequest | null) => {
      sock.off("data", onData);
      sock.off("close", onClose);
      resolve(r);
    };
    const onClose = () => finish(null);
    const onData = (data: Buffer) => {
      buf = Buffer.concat([buf, data]);
      const parsed = parseRequest(buf);
      if (parsed) finish(parsed);
    };
    sock.on("data", onData);
    sock.once("close", onClose);
  });
}

/** The request in `buf` once it is complete, else null. */
function parseRequest(buf: Buffer): RawRequest | null {
  const end = buf.indexOf("\r\n\r\n");
  if (end < 0) return null;
  const [requestLine, ...lines] = buf.subarray(0, end).toString("latin1").split("\r\n");
  const [method, target] = requestLine.split(" ");
  const headers = lines.map((l): [string, string] => {
    const at = l.indexOf(":");
    return [l.slice(0, at).trim(), l.slice(at + 1).trim()];
  });
  const get = (name: string) => headers.find(([k]) => k.toLowerCase() === name)?.[1];
  let at = end + 4;
  if (/chunked/i.test(get("transfer-encoding") ?? "")) {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = buf.indexOf("\r\n", at);
      if (lineEnd < 0) return null;
      const size = parseInt(buf.subarray(at, lineEnd).toString("latin1"), 16);
      if (size === 0) {
        return buf.indexOf("\r\n", lineEnd + 2) < 0
          ? null
          : { method, target, headers, body: new Uint8Array(Buffer.concat(parts)) };
      }
      if (buf.byteLength < lineEnd + 2 + size + 2) return null;
      parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  const length = Number(get("content-length") ?? 0);
  if (buf.byteLength < at + length) return null;
  return { method, target, headers, body: new Uint8Array(buf.subarray(at, at + length)) };
}
