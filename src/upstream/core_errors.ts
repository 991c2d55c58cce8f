/**
 * How Core's ETAPI error answers become the shared error shape: by status and Core's error code,
 * never Core's message text (it may echo input or internals).
 *
 * @module
 */
import { ApiError } from "../http/errors.ts";
import { coreErrorSchema } from "./core_schemas.ts";

const NOT_FOUND_MESSAGES: Record<string, string> = {
  NOTE_NOT_FOUND: "Note not found",
  BRANCH_NOT_FOUND: "Branch not found",
  ATTRIBUTE_NOT_FOUND: "Attribute not found",
  ATTACHMENT_NOT_FOUND: "Attachment not found",
  REVISION_NOT_FOUND: "Revision not found",
};

/**
 * Maps a non-2xx ETAPI answer to an {@linkcode ApiError}. Core's message text is not passed on
 * (it may echo input or internals); its error code is, when it looks like one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const body = '{"status":404,"code":"NOTE_NOT_FOUND","message":"Note \'x\' not found."}';
 * const e = mapCoreError(404, body, new Headers());
 * assert.deepEqual([e.status, e.code, e.message], [404, "NOT_FOUND", "Note not found"]);
 * assert.deepEqual(e.details, { service: "core", upstreamCode: "NOTE_NOT_FOUND" });
 * ```
 */
export function mapCoreError(status: number, bodyText: string, headers: Headers): ApiError {
  let code: string | undefined;
  try {
    const parsed = coreErrorSchema.safeParse(JSON.parse(bodyText));
    if (parsed.success && parsed.data.code && /^[A-Z_]{1,40}$/.test(parsed.data.code)) {
      code = parsed.data.code;
    }
  } catch { /* non-JSON error body (rate limiter, proxy page): status alone decides */ }
  const details = { service: "core", ...(code ? { upstreamCode: code } : {}) };
  if (status === 404) {
    return new ApiError(
      404,
      "NOT_FOUND",
      NOT_FOUND_MESSAGES[code ?? ""] ?? "Not found in Core",
      details,
    );
  }
  if (status === 401) {
    return new ApiError(
      401,
      "UNAUTHORIZED",
      "Core rejected the credentials; reconnect Core",
      details,
    );
  }
  if (status === 403) {
    return new ApiError(403, "UPSTREAM_FORBIDDEN", "Core refused access", details);
  }
  if (status === 400 && code?.endsWith("_IS_PROTECTED")) {
    return new ApiError(
      403,
      "FORBIDDEN",
      "The note is protected and cannot be used through the API",
      details,
    );
  }
  if (status === 409) return new ApiError(409, "CONFLICT", "Core reported a conflict", details);
  if (status === 400 || status === 422) {
    return new ApiError(
      status,
      "UPSTREAM_REJECTED",
      `Core rejected the request${code ? ` (${code})` : ""}`,
      details,
    );
  }
  if (status === 429) {
    const retry = headers.get("retry-after");
    const seconds = retry && /^\d{1,6}$/.test(retry) ? retry : "60";
    return new ApiError(429, "RATE_LIMITED", "Core is rate limiting requests", details, {
      "retry-after": seconds,
    });
  }
  return new ApiError(502, "UPSTREAM_ERROR", "Core failed to handle the request", details);
}

/** Core search failures a query causes, by the start of Core's message (its text stays here). */
const QUERY_FAILURES: [RegExp, string][] = [
  [/^Invalid regular expression/, "the regular expression after %= is invalid"],
  [/^Invalid tokens: empty or whitespace-only/, "an empty quoted search term is not allowed"],
];

/**
 * Core answers a search that fails on the query itself with `500 GENERIC` and the exception's
 * text (services/search: a `%=` operand `new RegExp` cannot compile, an empty quoted full-text
 * term). Those become 400 `INVALID_REQUEST` naming `query.q` with our own sentence; anything
 * else is undefined (the usual mapping applies). Core's text is only matched, never passed on.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const message = "Invalid regular expression: /[/ms: Unterminated character class";
 * const e = callerQueryError(500, JSON.stringify({ status: 500, code: "GENERIC", message }));
 * assert.equal(e?.code, "INVALID_REQUEST");
 * assert.equal(
 *   e?.message,
 *   "Core cannot run this search: the regular expression after %= is invalid",
 * );
 * assert.equal(callerQueryError(500, '{"code":"GENERIC","message":"disk full"}'), undefined);
 * ```
 */
export function callerQueryError(status: number, bodyText: string): ApiError | undefined {
  if (status !== 500) return undefined;
  let message: string | undefined;
  try {
    const parsed = coreErrorSchema.safeParse(JSON.parse(bodyText));
    if (parsed.success && parsed.data.code === "GENERIC") message = parsed.data.message;
  } catch { /* not Core's JSON error: not a query failure */ }
  const problem = QUERY_FAILURES.find(([re]) => re.test(message ?? ""))?.[1];
  if (!problem) return undefined;
  return new ApiError(400, "INVALID_REQUEST", `Core cannot run this search: ${problem}`, {
    fields: [{ path: "query.q", message: problem }],
    service: "core",
    upstreamCode: "GENERIC",
  });
}
