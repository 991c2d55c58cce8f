/**
 * Every answer a route can give, from its declaration: its own `responses` plus the statuses
 * the pipeline gives for any route of its kind — invalid input, another origin, a body over its
 * limit, missing credentials, backend failures, the AI deadline, an internal error. Each error
 * body is the one error shape unless the route says otherwise. The OpenAPI document and the
 * response check (tests) both read answers from here, so the two cannot disagree.
 *
 * @module
 */
import type { z } from "zod";
import { errorBodySchema } from "./http/errors.ts";
import type { ResponseSpec, Route } from "./router.ts";

/** One answer of a route, ready to document or check. */
export interface ResponseDoc {
  description: string;
  /** The JSON body's schema: the route's own, or the error shape for a 4xx/5xx. */
  schema?: z.ZodType;
  /** A body that is not JSON (SSE, image, HTML, text). */
  mediaType?: string;
  /** SSE: each event's data schema. */
  events?: Record<string, z.ZodType>;
}

/** An answer the pipeline gives: its status, error code and when. */
type Implied = [status: number, code: string, text: string];

const UPSTREAM: Implied[] = [
  [400, "UPSTREAM_REJECTED", "the backend refused the request (`details.upstreamCode`)"],
  [401, "UPSTREAM_UNAUTHORIZED", "the backend refused the credentials"],
  [403, "UPSTREAM_FORBIDDEN", "the backend refused access (`FORBIDDEN`: a protected note)"],
  [404, "NOT_FOUND", "the backend does not have it"],
  [409, "CONFLICT", "the backend reported a conflict"],
  [422, "UPSTREAM_REJECTED", "the backend refused the request (`details.upstreamCode`)"],
  [429, "RATE_LIMITED", "the backend is rate limiting (`Retry-After`)"],
  [502, "UPSTREAM_ERROR", "the backend failed, or sent a malformed or oversized answer"],
  [503, "UPSTREAM_UNAVAILABLE", "the backend is unreachable"],
  [504, "UPSTREAM_TIMEOUT", "the backend did not answer in time"],
];

/** The answers the pipeline gives for `route` (app.ts, http/*.ts, upstream/*.ts). */
function impliedResponses(route: Route): Implied[] {
  const implied: Implied[] = [];
  if (route.params || route.query || route.body) {
    implied.push([400, "INVALID_REQUEST", "invalid input (`details.fields` lists each field)"]);
  }
  if (route.access === "private" || route.method !== "GET") {
    implied.push([403, "CSRF_REJECTED", "a request from another origin"]);
  }
  if (route.body) {
    implied.push([408, "REQUEST_TIMEOUT", "the request body stalled"]);
    implied.push([413, "PAYLOAD_TOO_LARGE", "the request body is over its limit"]);
  }
  if (route.body?.kind === "json" || route.body?.kind === "text") {
    implied.push([415, "UNSUPPORTED_MEDIA_TYPE", "the body's `Content-Type` is not accepted"]);
  }
  if (route.access === "private" && route.backend !== "None") {
    implied.push([401, "NOT_AUTHENTICATED", "no credentials for the backend: log in first"]);
    implied.push([503, "NOT_CONFIGURED", "no credentials for the backend (`details.service`)"]);
  }
  if (route.backend !== "None") implied.push(...UPSTREAM);
  if (route.ai) {
    implied.push([
      504,
      "UPSTREAM_TIMEOUT",
      "no progress for `AI_TIMEOUT_MS`; the Parser keeps working and `details` (`retry`, " +
      "`resultKey`, `keptSeconds`, `historyPath`) say how to get the answer: repeat the request",
    ]);
  }
  implied.push([500, "INTERNAL_ERROR", "the request failed inside the service"]);
  return implied;
}

/**
 * Every answer `route` can give, by status: its own, then the pipeline's. A status both name is
 * described by the route's text followed by the pipeline's cases it does not already mention
 * (by their error code); several pipeline cases of one status are listed one after another.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { defineRoute } from "./router.ts";
 *
 * const route = defineRoute({
 *   method: "GET", path: "/api/x", summary: "x", backend: "None", access: "public", tag: "x",
 *   responses: { 200: { description: "ok", schema: z.object({ ok: z.boolean() }) } },
 *   handler: () => new Response(),
 * });
 * routeResponses(route).get(500)?.description; // "`INTERNAL_ERROR`: the request failed inside the service"
 * ```
 */
export function routeResponses(route: Route): Map<number, ResponseDoc> {
  const docs = new Map<number, ResponseDoc>();
  for (const [status, spec] of Object.entries(route.responses)) {
    docs.set(Number(status), ownDoc(Number(status), spec));
  }
  const own = new Set(docs.keys());
  for (const [status, code, text] of impliedResponses(route)) {
    const doc = docs.get(status);
    const line = `\`${code}\`: ${text}`;
    if (!doc) docs.set(status, { description: line, schema: errorBodySchema });
    else if (!doc.description.includes(own.has(status) ? code : line)) {
      doc.description += `; ${line}`;
    }
  }
  return new Map([...docs].sort(([a], [b]) => a - b));
}

/**
 * Whether `route` has declared its responses (at least one written as an object): only then
 * does the response check hold its answers to them, so routes can adopt schemas one at a time.
 *
 * @example
 * ```ts
 * import { defineRoute } from "./router.ts";
 *
 * const route = defineRoute({
 *   method: "DELETE", path: "/api/x", summary: "x", backend: "None", access: "private",
 *   tag: "x", responses: { 204: { description: "Deleted" } }, handler: () => new Response(null),
 * });
 * declaresResponses(route); // true
 * ```
 */
export function declaresResponses(route: Route): boolean {
  return Object.values(route.responses).some((spec) => typeof spec !== "string");
}

function ownDoc(status: number, spec: ResponseSpec): ResponseDoc {
  const error = status >= 400 ? { schema: errorBodySchema } : {};
  if (typeof spec === "string") return { description: spec, ...error };
  const { description, schema, mediaType, events } = spec;
  if (schema) return { description, schema };
  if (mediaType) return { description, mediaType, ...(events ? { events } : {}) };
  return { description, ...error };
}
