/**
 * Raw HTTP/1.1 over TCP, for tests that send what `fetch` never would: malformed request lines,
 * `Host` headers and framing, partial heads, bodies shorter than their `Content-Length`, and the
 * rest of a request sent when the test says (not after a delay).
 *
 * @module
 */

/** What came back on one connection. */
export interface RawExchange {
  /** Every byte the server sent, decoded as Latin-1 (one character per byte). */
  text: string;
  /** The status of the first response, or null when none came. */
  status: number | null;
  /** The first response's headers (lower-case names) and body. */
  headers: Headers;
  body: string;
  /** True when the server closed the connection; false when the hang guard had to. */
  closedByServer: boolean;
}

/** Options of {@linkcode rawExchange} and {@linkcode rawConnection}. */
export interface RawOptions {
  /** Stop waiting (and close) after this long: a generous guard, never a speed assertion. */
  hangGuardMs?: number;
}

/**
 * Opens a connection to `url`'s host and port, sends `request` (a string is sent as Latin-1, so
 * every character is one byte) and reads until the server closes the connection or the hang
 * guard runs out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Harness } from "./harness.ts";
 * // Declared, not run here: `h` is a running harness.
 * async function healthOverRawTcp(h: Harness): Promise<void> {
 *   const head = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
 *   assert.equal((await rawExchange(h.url, head)).status, 200);
 * }
 * ```
 */
export async function rawExchange(
  url: string,
  request: string | Uint8Array,
  opts: RawOptions = {},
): Promise<RawExchange> {
  return await (await rawConnection(url, request, opts)).done();
}

/** An open raw connection: the test sends more when it chooses and watches what comes back. */
export interface RawConnection {
  /**
   * Sends more bytes (also after the server's end of input: a client may go on sending a body
   * the server did not read); a failed write is ignored.
   */
  send(data: string | Uint8Array): Promise<void>;
  /** Every byte received so far, decoded as Latin-1. */
  text(): string;
  /** How many final responses (status 200–599) have arrived so far, counting pipelined ones. */
  responses(): number;
  /** Whether the server has ended the connection (end of input or a reset). */
  ended(): boolean;
  /** Waits until the server ends the connection (or the hang guard closes it), then closes it. */
  done(): Promise<RawExchange>;
}

/**
 * Opens a connection to `url`'s host and port and sends `request`; unlike
 * {@linkcode rawExchange} it stays open for more: a test sends the rest when what it waits for
 * has happened (a deadline armed, an answer read), never after a delay.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Harness } from "./harness.ts";
 * import { eventually } from "./manual_deadlines.ts";
 * // Declared, not run here: `h` is a running harness.
 * async function twoOnOneConnection(h: Harness): Promise<void> {
 *   const get = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
 *   const conn = await rawConnection(h.url, get);
 *   await eventually("the first answer", () => conn.responses() === 1);
 *   await conn.send(get.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n"));
 *   const r = await conn.done();
 *   assert.equal(r.status, 200);
 *   assert.equal(conn.responses(), 2);
 * }
 * ```
 */
export async function rawConnection(
  url: string,
  request: string | Uint8Array = "",
  opts: RawOptions = {},
): Promise<RawConnection> {
  const { hostname, port } = new URL(url);
  const conn = await Deno.connect({ hostname, port: Number(port) });
  let guardFired = false;
  let ended = false;
  const guard = setTimeout(() => {
    guardFired = true;
    conn.close();
  }, opts.hangGuardMs ?? 30_000);
  let text = "";
  const reading = (async () => {
    const buf = new Uint8Array(64 * 1024);
    for (;;) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) break;
      text += latin1(buf.subarray(0, n));
    }
    ended = true;
    clearTimeout(guard);
  })();
  const send = async (data: string | Uint8Array) => {
    await writeAll(conn, bytes(data)).catch(() => {});
  };
  await send(request);
  let exchange: Promise<RawExchange> | undefined;
  return {
    send,
    text: () => text,
    // a pipelined response follows the previous body directly, with no line break between
    responses: () => text.match(/HTTP\/1\.[01] [2-5]\d\d /g)?.length ?? 0,
    ended: () => ended,
    done: () =>
      exchange ??= (async () => {
        await reading;
        if (!guardFired) {
          try {
            conn.close();
          } catch { /* closed by the guard meanwhile */ }
        }
        return { text, closedByServer: !guardFired, ...parseResponse(text) };
      })(),
  };
}

/**
 * The first final response in `text` (after any `100 Continue`): status, headers and body (by
 * `Content-Length`, else the rest).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(parseResponse("HTTP/1.1 204 No Content\r\n\r\n").status, 204);
 * ```
 */
export function parseResponse(text: string): Pick<RawExchange, "status" | "headers" | "body"> {
  const interim = /^HTTP\/1\.[01] 1\d\d[^\r\n]*\r\n(?:[^\r\n]+\r\n)*\r\n/.exec(text);
  if (interim) return parseResponse(text.slice(interim[0].length));
  const m = /^HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n/.exec(text);
  const headers = new Headers();
  if (!m) return { status: null, headers, body: "" };
  const end = text.indexOf("\r\n\r\n");
  const head = text.slice(m[0].length, end < 0 ? text.length : end);
  for (const line of head.split("\r\n")) {
    const i = line.indexOf(":");
    if (i > 0) headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
  }
  const rest = end < 0 ? "" : text.slice(end + 4);
  const length = Number(headers.get("content-length") ?? NaN);
  return {
    status: Number(m[1]),
    headers,
    body: Number.isInteger(length) ? rest.slice(0, length) : rest,
  };
}

function latin1(chunk: Uint8Array): string {
  let out = "";
  for (let i = 0; i < chunk.length; i += 8192) {
    out += String.fromCharCode(...chunk.subarray(i, i + 8192));
  }
  return out;
}

function bytes(data: string | Uint8Array): Uint8Array {
  return typeof data === "string" ? Uint8Array.from(data, (c) => c.charCodeAt(0) & 0xff) : data;
}

async function writeAll(conn: Deno.Conn, data: Uint8Array): Promise<void> {
  for (let off = 0; off < data.length;) off += await conn.write(data.subarray(off));
}
