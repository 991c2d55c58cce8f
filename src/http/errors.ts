/**
 * The service's single error shape: every failure, whatever its origin, leaves as
 * `{ error, message, requestId, details? }` with an `X-Request-Id` header.
 *
 * @module
 */
import { z } from "zod";

/**
 * Machine-readable error codes. The HTTP status is part of each code's meaning. Where the front
 * end reacts to a code, the code is its own word for the case: `NOT_CONFIGURED` (503, no
 * credentials for a backend: "not connected", with a link to settings), `UNAUTHORIZED` (401, a
 * login is needed or the backend refused the credentials: "credentials expired", with a link to
 * settings) and `UNREACHABLE` (503, the backend does not answer); it shows any other code as
 * "unavailable".
 */
export const ERROR_CODES = [
  "INVALID_REQUEST",
  "NOT_FOUND",
  "METHOD_NOT_ALLOWED",
  "UNSUPPORTED_MEDIA_TYPE",
  "PAYLOAD_TOO_LARGE",
  "FORBIDDEN",
  "CSRF_REJECTED",
  "MISDIRECTED_REQUEST",
  "UNAUTHORIZED",
  "REQUEST_TIMEOUT",
  "CONFLICT",
  "RATE_LIMITED",
  "SERVICE_BUSY",
  "NOT_CONFIGURED",
  "UPSTREAM_FORBIDDEN",
  "UPSTREAM_REJECTED",
  "UPSTREAM_ERROR",
  "UNREACHABLE",
  "UPSTREAM_TIMEOUT",
  "PARTIAL_FAILURE",
  "INTERNAL_ERROR",
  // only with the response check on (tests): an answer broke its route's declaration
  "RESPONSE_SCHEMA",
] as const;

/** One of {@linkcode ERROR_CODES}. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * The body of every error answer, whatever the route (routes never restate it: the OpenAPI
 * document and the response check apply it to every 4xx and 5xx).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const body = { error: "NOT_FOUND", message: "Note not found", requestId: "req-1" };
 * assert.equal(errorBodySchema.safeParse(body).success, true);
 * assert.equal(errorBodySchema.safeParse({ ...body, error: "TEAPOT" }).success, false);
 * ```
 */
export const errorBodySchema = z.object({
  error: z.enum(ERROR_CODES),
  message: z.string(),
  requestId: z.string(),
  details: z.record(z.string(), z.unknown()).optional().describe(
    "Facts a client can act on, e.g. `fields` (failing input), `service`, `upstreamCode`",
  ),
});

/**
 * An error that maps to one HTTP answer. Throw it anywhere below a handler; the app turns it
 * into the JSON error shape.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const e = new ApiError(404, "NOT_FOUND", "Note not found");
 * assert.equal(errorResponse(e, "req-1").status, 404);
 * ```
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    readonly headers?: HeadersInit,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/**
 * The answer when a backend has no credentials configured for this caller (seed: "not
 * configured" helper).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const e = notConfigured("core");
 * assert.equal(e.status, 503);
 * assert.deepEqual(e.details, { service: "core" });
 * ```
 */
export function notConfigured(service: "core" | "parser"): ApiError {
  const name = service === "core" ? "Core (lore database)" : "Parser (AI service)";
  return new ApiError(
    503,
    "NOT_CONFIGURED",
    `${name} is not configured: connect it in settings or set its environment variables`,
    { service },
  );
}

/**
 * The answer when a backend's credentials would come from a login this caller has not done (the
 * Parser is configured, zero-login is off, the server has no credentials of its own).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const e = notAuthenticated("parser");
 * assert.equal(e.status, 401);
 * assert.equal(e.code, "UNAUTHORIZED");
 * ```
 */
export function notAuthenticated(service: "core" | "parser"): ApiError {
  return new ApiError(401, "UNAUTHORIZED", "Log in first", { service });
}

/**
 * 400 with the failing fields, for input that never reaches a backend.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const e = invalidRequest("q must have at least 2 characters", [{
 *   path: "q",
 *   message: "too short",
 * }]);
 * assert.equal(e.status, 400);
 * assert.deepEqual(e.details, { fields: [{ path: "q", message: "too short" }] });
 * ```
 */
export function invalidRequest(message: string, fields?: FieldIssue[]): ApiError {
  return new ApiError(400, "INVALID_REQUEST", message, fields ? { fields } : undefined);
}

/** One failing input field. */
export interface FieldIssue {
  path: string;
  message: string;
}

/**
 * Serialises an error to the shared JSON shape. Unknown errors become a 500 that says nothing
 * about internals (the log line carries the redacted cause).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const res = errorResponse(new ApiError(404, "NOT_FOUND", "Note not found"), "req-1");
 * assert.equal(res.status, 404);
 * assert.deepEqual(await res.json(), {
 *   error: "NOT_FOUND",
 *   message: "Note not found",
 *   requestId: "req-1",
 * });
 * ```
 */
export function errorResponse(err: unknown, requestId: string): Response {
  const e = err instanceof ApiError
    ? err
    : new ApiError(500, "INTERNAL_ERROR", "The request failed inside the service");
  const body: Record<string, unknown> = { error: e.code, message: e.message, requestId };
  if (e.details !== undefined) body.details = e.details;
  const headers = new Headers(e.headers);
  headers.set("content-type", "application/json; charset=utf-8");
  headers.set("cache-control", "no-store");
  headers.set("x-content-type-options", "nosniff");
  return new Response(JSON.stringify(body), { status: e.status, headers });
}

/**
 * The backend's own error code carried in an {@linkcode ApiError} (e.g. Core's
 * `PROPERTY_VALIDATION_ERROR`), when there is one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const e = new ApiError(400, "UPSTREAM_REJECTED", "Core rejected the request", {
 *   upstreamCode: "PROPERTY_VALIDATION_ERROR",
 * });
 * assert.equal(upstreamCode(e), "PROPERTY_VALIDATION_ERROR");
 * ```
 */
export function upstreamCode(e: unknown): string | undefined {
  if (!(e instanceof ApiError) || typeof e.details !== "object" || e.details === null) {
    return undefined;
  }
  const code = (e.details as { upstreamCode?: unknown }).upstreamCode;
  return typeof code === "string" ? code : undefined;
}

/**
 * `null` for a 404 {@linkcode ApiError}, rethrow anything else: for lookups where absence is an
 * answer, not a failure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const gone = Promise.reject(new ApiError(404, "NOT_FOUND", "Attribute not found"));
 * assert.equal(await gone.catch(nullOn404), null);
 * ```
 */
export function nullOn404(e: unknown): null {
  if (e instanceof ApiError && e.status === 404) return null;
  throw e;
}
