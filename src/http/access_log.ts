/**
 * The access log in the format common tools read: `LOG_FORMAT=combined` writes each request line
 * in the Apache/nginx combined format (goaccess, fail2ban, any log shipper), every other line as
 * JSON to a second stream. The values pass the same redaction as JSON lines.
 *
 * @module
 */
import {
  bufferedLines,
  jsonLogger,
  levelPasses,
  type LineSink,
  type Logger,
  type LogLevel,
  redact,
} from "./log.ts";

/** Where log lines go: a function, or a buffered {@linkcode LineSink}. */
export type Sink = ((line: string) => void) | LineSink;

/** The request line's fields a combined line reads (the app's `request` log call). */
export interface AccessFields {
  /** The client's address after the `TRUST_PROXY` rules; `-` when unknown. */
  client?: string;
  method: string;
  /** The request's path, without its query. */
  path: string;
  status: number;
  /** The body's declared length, when the answer declares one. */
  bytes?: string;
  userAgent?: string;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/**
 * One line of the combined log format:
 * `host ident user [time] "request" status bytes "referer" "user-agent"`. No user is known and
 * the referer is never written (it can carry another site's address and query), the protocol is
 * always `HTTP/1.1`, and the time is UTC. Quotes, backslashes and bytes outside printable ASCII
 * are written `\xHH`, as nginx does, so a value cannot end its field.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const line = combinedLine(
 *   { client: "203.0.113.7", method: "GET", path: "/robots.txt", status: 200, userAgent: "curl/8" },
 *   new Date("2026-03-04T05:06:07Z"),
 * );
 * assert.equal(
 *   line,
 *   '203.0.113.7 - - [04/Mar/2026:05:06:07 +0000] "GET /robots.txt HTTP/1.1" 200 - "-" "curl/8"',
 * );
 * ```
 */
export function combinedLine(f: AccessFields, date: Date): string {
  return `${field(f.client)} - - [${clfTime(date)}] "${escape(f.method)} ${
    escape(f.path)
  } HTTP/1.1" ${f.status} ${field(f.bytes)} "-" "${f.userAgent ? escape(f.userAgent) : "-"}"`;
}

/**
 * The path of a request's target without its query (queries carry search text), for the log.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(requestPath(new Request("http://x:8080/public/lore/a?q=secret")), "/public/lore/a");
 * ```
 */
export function requestPath(req: Request): string {
  const url = req.url;
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const end = url.slice(start).search(/[?#]/);
  return end < 0 ? url.slice(start) : url.slice(start, start + end);
}

/**
 * The service's logger for `LOG_FORMAT`: `json` writes every line as JSON to `out`; `combined`
 * writes request lines as {@linkcode combinedLine}s to `out` and everything else as JSON to
 * `err` (see {@linkcode combinedLogger}). Sinks are made only when used.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const out: string[] = [];
 * const err: string[] = [];
 * const log = createLogger({ level: "info", format: "combined" }, [], {
 *   out: () => (l) => out.push(l),
 *   err: () => (l) => err.push(l),
 * });
 * log.log("info", "listening", { port: 8080 });
 * assert.equal(out.length, 0);
 * assert.equal(JSON.parse(err[0]).msg, "listening");
 * ```
 */
export function createLogger(
  opts: { level: LogLevel | "silent"; format: "json" | "combined" },
  secrets: readonly string[],
  sinks: { out: () => Sink; err: () => Sink } = {
    out: () => bufferedLines(Deno.stdout),
    err: () => bufferedLines(Deno.stderr),
  },
): Logger {
  if (opts.format === "json") return jsonLogger(opts.level, sinks.out(), secrets);
  return combinedLogger(
    jsonLogger(opts.level, sinks.err(), secrets),
    sinks.out(),
    opts.level,
    secrets,
  );
}

/**
 * A logger that writes each `request` line (fields: {@linkcode AccessFields}) as a combined line
 * to `access`, at or above `minLevel` like any line, and hands every other line to `json`. A
 * request line that names an upstream failure (`reason`) goes to `json` as well, so the failure's
 * class and the request id are kept where operators read diagnostics.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { jsonLogger } from "./log.ts";
 * const access: string[] = [];
 * const json: string[] = [];
 * const log = combinedLogger(jsonLogger("info", (l) => json.push(l)), (l) => access.push(l), "info");
 * log.log("warn", "request", { method: "GET", path: "/", status: 503, reason: "refused" });
 * assert.match(access[0], /"GET \/ HTTP\/1\.1" 503 /);
 * assert.equal(JSON.parse(json[0]).reason, "refused");
 * ```
 */
export function combinedLogger(
  json: Logger,
  access: Sink,
  minLevel: LogLevel | "silent",
  secrets: readonly string[] = [],
  now: () => Date = () => new Date(),
): Logger {
  const write = typeof access === "function" ? access : access.write;
  return {
    log(level, msg, fields = {}) {
      if (msg !== "request") return json.log(level, msg, fields);
      if (levelPasses(level, minLevel)) {
        const f = fields as Partial<AccessFields>;
        write(redact(
          combinedLine({
            client: f.client,
            method: f.method ?? "-",
            path: f.path ?? "-",
            status: f.status ?? 0,
            bytes: f.bytes,
            userAgent: f.userAgent,
          }, now()),
          secrets,
        ));
      }
      if (fields.reason !== undefined) json.log(level, msg, fields);
    },
    flush: async () => {
      await Promise.all([
        json.flush?.(),
        typeof access === "function" ? undefined : access.flush(),
      ]);
    },
  };
}

function field(value: string | undefined): string {
  return value ? escape(value) : "-";
}

/** `"`, `\` and bytes outside printable ASCII as `\xHH` (UTF-8 bytes for non-ASCII). */
function escape(value: string): string {
  if (/^[\x20\x21\x23-\x5b\x5d-\x7e]*$/.test(value)) return value; // the common case
  let out = "";
  for (const byte of new TextEncoder().encode(value)) {
    out += byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c
      ? String.fromCharCode(byte)
      : `\\x${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

function clfTime(d: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${pad(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${
    pad(d.getUTCHours())
  }:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +0000`;
}
