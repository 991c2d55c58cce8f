/**
 * Structured logging: one JSON object per line, with secrets and internal URLs removed before a
 * line is written. The sink is injected so tests can read every line the service writes; the
 * default one batches lines to stdout ({@linkcode bufferedLines}) so no request waits on a write.
 *
 * @module
 */

/** Severity, lowest first. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** Where log lines go. */
export interface Logger {
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
  /** Resolves once every line logged so far is written (a buffered sink; absent otherwise). */
  flush?(): Promise<void>;
}

/** A line sink that buffers: {@linkcode bufferedLines}. */
export interface LineSink {
  write(line: string): void;
  flush(): Promise<void>;
}

const ORDER: Record<LogLevel | "silent", number> = {
  debug: 10,
  info: 20,
  warn: 30,
  error: 40,
  silent: 100,
};

/**
 * Whether a line of `level` is written when `minLevel` is the least severe one wanted.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(levelPasses("warn", "info"), true);
 * assert.equal(levelPasses("info", "silent"), false);
 * ```
 */
export function levelPasses(level: LogLevel, minLevel: LogLevel | "silent"): boolean {
  return ORDER[level] >= ORDER[minLevel];
}

/**
 * Patterns that must never appear in a log line: URLs with a scheme (internal backend addresses),
 * `Bearer`/`Basic` credentials and ETAPI-shaped tokens (`<12 alnum>_<base64>`).
 */
const SECRET_PATTERNS: RegExp[] = [
  /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi,
  /\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+/gi,
  /\b[A-Za-z0-9]{12}_[A-Za-z0-9+/]{20,}={0,2}/g,
  /\b[a-f0-9]{48,}\b/gi,
];

/**
 * Removes URLs and credential-shaped strings from a text, plus any extra literal secrets.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(redact("GET http://core:8080/etapi failed"), "GET [redacted] failed");
 * ```
 */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const s of secrets) {
    if (s.length >= 4 && out.includes(s)) out = out.split(s).join("[redacted]");
  }
  if (!mayMatchPattern(out)) return out;
  for (const re of SECRET_PATTERNS) out = out.replace(re, "[redacted]");
  return out;
}

/**
 * False only for a text none of {@linkcode SECRET_PATTERNS} can match, so most log values (ids,
 * methods, route patterns) skip the regexes. Each condition is necessary for one pattern: a URL
 * has `://`; a credential has `bearer`/`basic` then whitespace; an ETAPI token is at least 33
 * characters with a `_`; a hex run is at least 48 characters. (A request id, a UUID of 36
 * characters without `_`, passes none of them.)
 */
function mayMatchPattern(text: string): boolean {
  return text.length >= 48 || (text.length >= 33 && text.includes("_")) ||
    text.includes("://") || (/\s/.test(text) && BEARER_OR_BASIC.test(text));
}
const BEARER_OR_BASIC = /(?:bearer|basic)\s/i;

/**
 * A logger that writes JSON lines to `sink`, below `minLevel` nothing. String field values
 * are redacted; `secrets` are literal values (configured tokens) that are always masked. The
 * sink is a function, or a {@linkcode LineSink} whose `flush` the logger then offers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const lines: string[] = [];
 * const log = jsonLogger("info", (l) => lines.push(l), ["s3cret-token"]);
 * log.log("debug", "below the minimum level");
 * log.log("info", "request", { status: 200, auth: "s3cret-token" });
 * assert.equal(lines.length, 1);
 * assert.equal(JSON.parse(lines[0]).auth, "[redacted]");
 * ```
 */
export function jsonLogger(
  minLevel: LogLevel | "silent",
  sink: ((line: string) => void) | LineSink = bufferedLines(Deno.stdout),
  secrets: readonly string[] = [],
  now: () => number = Date.now,
): Logger {
  const write = typeof sink === "function" ? sink : sink.write;
  const min = ORDER[minLevel];
  const members = memberWriter(secrets);
  // Thousands of lines a second share a few timestamps: format each millisecond once.
  let lastMs = NaN;
  let lastIso = "";
  const timestamp = () => {
    const ms = now();
    if (ms !== lastMs) {
      lastMs = ms;
      lastIso = new Date(ms).toISOString();
    }
    return lastIso;
  };
  // A line's start while its millisecond, level and message repeat (every request line).
  let head = { ts: "", level: "", msg: "", text: "" };
  return {
    log(level, msg, fields = {}) {
      if (ORDER[level] < min) return;
      const ts = timestamp();
      const given = members(fields);
      if (given !== undefined) {
        // nothing to redact: the fields are written as given, after the kept start
        if (head.ts !== ts || head.level !== level || head.msg !== msg) {
          const text = JSON.stringify({ ts, level, msg: redact(msg, secrets) }).slice(0, -1);
          head = { ts, level, msg, text };
        }
        write(`${head.text}${given}}`);
        return;
      }
      const clean: Record<string, unknown> = { ts, level };
      clean.msg = redact(msg, secrets);
      for (const k in fields) {
        const v = fields[k];
        clean[k] = typeof v === "string" ? redact(v, secrets) : v;
      }
      write(JSON.stringify(clean));
    },
    flush: typeof sink === "function" ? undefined : sink.flush,
  };
}

/** What a logger keeps of one field name: its `,"name":` and the last string value written. */
interface Member {
  key: string;
  /** The last string value redaction left alone, and its member text. */
  value?: string;
  text?: string;
}

/**
 * A logger's writer of fields as JSON writes them after the line's own members (each with its
 * leading comma). Undefined when they cannot be written as they are: not a plain object, a
 * string value that redaction changes, a value that is an object, or a key naming one of the
 * line's own (which it would overwrite in place) or starting with a digit (an index key, which
 * JSON puts first); the line is then written the long way. Request lines repeat most values
 * (method, route, client) from one line to the next: a value equal to its field's last one is
 * neither checked nor quoted again.
 */
function memberWriter(
  secrets: readonly string[],
): (fields: Record<string, unknown>) => string | undefined {
  const names = new Map<string, Member | null>();
  const member = (k: string): Member | null => {
    let m = names.get(k);
    if (m === undefined) {
      m = k === "ts" || k === "level" || k === "msg" || DIGIT.test(k)
        ? null
        : { key: `,${JSON.stringify(k)}:` };
      // field names come from the code, a few dozen; a bound all the same
      if (names.size < 1_000) names.set(k, m);
    }
    return m;
  };
  return (fields) => {
    if (Object.getPrototypeOf(fields) !== Object.prototype) return undefined;
    let out = "";
    for (const k in fields) {
      const m = member(k);
      if (m === null) return undefined;
      const v = fields[k];
      switch (typeof v) {
        case "string":
          if (v !== m.value) {
            if (redact(v, secrets) !== v) return undefined;
            m.value = v;
            m.text = PLAIN.test(v) ? `${m.key}"${v}"` : m.key + JSON.stringify(v);
          }
          out += m.text;
          break;
        case "number":
          out += m.key + (Number.isFinite(v) ? String(v) : "null");
          break;
        case "boolean":
          out += m.key + v;
          break;
        case "undefined":
          break;
        default:
          if (v !== null) return undefined;
          out += `${m.key}null`;
      }
    }
    return out;
  };
}

/** Printable ASCII but `"` and `\\`: a string JSON writes as it is, between quotes. */
const PLAIN = /^[ !#-[\]-~]*$/;

const DIGIT = /^\d/;

/** Where {@linkcode bufferedLines} writes: `Deno.stdout`, or any writer like it. */
export interface ByteWriter {
  write(bytes: Uint8Array): Promise<number>;
}

/**
 * Batches lines for `out`: they go out, in order, in one write when `maxBytes` have gathered
 * or `flushMs` after the first of a batch, whichever comes first, so logging never makes a
 * request wait for a write. `flush()` writes what is buffered and resolves once every line so
 * far is out; the server's stop calls it before the process exits. A failed write (stdout
 * closed) drops its batch: there is nowhere else to report it. When the reader stops reading
 * (a blocked pipe), at most `maxPendingBytes` wait; later lines are dropped and counted, and a
 * `log lines dropped` line says how many once writing catches up, so a stuck log reader costs a
 * bounded amount of memory.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const chunks: string[] = [];
 * const out = {
 *   write: (bytes: Uint8Array) => {
 *     chunks.push(new TextDecoder().decode(bytes));
 *     return Promise.resolve(bytes.length);
 *   },
 * };
 * const sink = bufferedLines(out);
 * sink.write("one");
 * sink.write("two");
 * await sink.flush();
 * assert.deepEqual(chunks, ["one\ntwo\n"]); // one write for the batch
 * ```
 */
export function bufferedLines(
  out: ByteWriter,
  opts: { flushMs?: number; maxBytes?: number; maxPendingBytes?: number } = {},
): LineSink {
  const { flushMs = 50, maxBytes = 64 * 1024, maxPendingBytes = 8 * 1024 * 1024 } = opts;
  const encoder = new TextEncoder();
  // Lines are encoded straight into a byte chunk: no batch string to grow, flatten and encode.
  let chunk = new Uint8Array(maxBytes);
  let used = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // writes run one after another, so batches never interleave or overtake each other
  let written: Promise<void> = Promise.resolve();
  /** Bytes handed to `out` (or queued for it) and not yet written. */
  let pending = 0;
  let dropped = 0;

  const send = (bytes: Uint8Array) => {
    pending += bytes.length;
    written = written.then(() => writeAll(out, bytes)).catch(() => {}).finally(() => {
      pending -= bytes.length;
    });
  };
  const flush = (): Promise<void> => {
    clearTimeout(timer);
    timer = undefined;
    if (used > 0) {
      send(chunk.subarray(0, used));
      chunk = new Uint8Array(maxBytes);
      used = 0;
    }
    return written;
  };
  const append = (line: string) => {
    // UTF-8 needs at most 3 bytes per UTF-16 unit, plus the newline
    const worst = line.length * 3 + 1;
    if (worst > maxBytes - used) {
      void flush();
      if (worst > maxBytes) return send(encoder.encode(line + "\n")); // a line bigger than a chunk
    }
    used += encoder.encodeInto(line, chunk.subarray(used)).written;
    chunk[used++] = 10;
  };
  return {
    write(line) {
      if (pending + used >= maxPendingBytes) {
        dropped++;
        return;
      }
      if (dropped) {
        append(JSON.stringify({
          ts: new Date().toISOString(),
          level: "warn",
          msg: "log lines dropped",
          count: dropped,
          reason: "the log reader did not keep up",
        }));
        dropped = 0;
      }
      append(line);
      if (used >= maxBytes) void flush();
      else timer ??= setTimeout(flush, flushMs);
    },
    flush,
  };
}

async function writeAll(out: ByteWriter, bytes: Uint8Array): Promise<void> {
  for (let off = 0; off < bytes.length;) off += await out.write(bytes.subarray(off));
}
