/**
 * Structured logging: one JSON object per line, with secrets and internal URLs removed before a
 * line is written. The sink is injected so tests can read every line the service writes.
 *
 * @module
 */

/** Severity, lowest first. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** Where log lines go. */
export interface Logger {
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
}

const ORDER: Record<LogLevel | "silent", number> = {
  debug: 10,
  info: 20,
  warn: 30,
  error: 40,
  silent: 100,
};

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
    if (s.length >= 4) out = out.split(s).join("[redacted]");
  }
  for (const re of SECRET_PATTERNS) out = out.replace(re, "[redacted]");
  return out;
}

/**
 * A logger that writes JSON lines through `write`, below `minLevel` nothing. String field values
 * are redacted; `secrets` are literal values (configured tokens) that are always masked.
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
  write: (line: string) => void = (l) => console.log(l),
  secrets: readonly string[] = [],
  now: () => Date = () => new Date(),
): Logger {
  return {
    log(level, msg, fields = {}) {
      if (ORDER[level] < ORDER[minLevel]) return;
      const clean: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(fields)) {
        clean[k] = typeof v === "string" ? redact(v, secrets) : v;
      }
      write(
        JSON.stringify({ ts: now().toISOString(), level, msg: redact(msg, secrets), ...clean }),
      );
    },
  };
}
