/**
 * Every answer a route can give, from its declaration: its own `responses` plus the statuses
 * the pipeline gives for any route of its kind — invalid input, another origin, a body over its
 * limit, missing credentials, backend failures, the AI deadline, an internal error. Each error
 * body is the one error shape unless the route says otherwise (a status's own schema or media
 * type, or `errorMediaType` for all of them). The OpenAPI document and the response check (tests)
 * both read answers from here, so the two cannot disagree.
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
  mediaType?: string | readonly string[];
  /** SSE: each event's data schema. */
  events?: Record<string, z.ZodType>;
}

/**
 * An answer the pipeline gives: its status, error code and when; `details` is what only the JSON
 * error body says, and `refusal` marks a refusal before the handler runs (always JSON).
 */
interface Implied {
  status: number;
  code: string;
  text: string;
  details?: string;
  refusal?: boolean;
}

const UPSTREAM: Implied[] = [
  {
    status: 400,
    code: "UPSTREAM_REJECTED",
    text: "the backend refused the request",
    details: "`details.upstreamCode`",
  },
  { status: 401, code: "UPSTREAM_UNAUTHORIZED", text: "the backend refused the credentials" },
  {
    status: 403,
    code: "UPSTREAM_FORBIDDEN",
    text: "the backend refused access",
    details: "`FORBIDDEN`: a protected note",
  },
  { status: 404, code: "NOT_FOUND", text: "the backend does not have it" },
  { status: 409, code: "CONFLICT", text: "the backend reported a conflict" },
  {
    status: 422,
    code: "UPSTREAM_REJECTED",
    text: "the backend refused the request",
    details: "`details.upstreamCode`",
  },
  { status: 429, code: "RATE_LIMITED", text: "the backend is rate limiting (`Retry-After`)" },
  {
    status: 502,
    code: "UPSTREAM_ERROR",
    text: "the backend failed, or sent a malformed or oversized answer",
  },
  { status: 503, code: "UPSTREAM_UNAVAILABLE", text: "the backend is unreachable" },
  { status: 504, code: "UPSTREAM_TIMEOUT", text: "the backend did not answer in time" },
];

/** The answers the pipeline gives for `route` (app.ts, http/*.ts, upstream/*.ts). */
function impliedResponses(route: Route): Implied[] {
  const implied: Implied[] = [];
  const refuse = (status: number, code: string, text: string, details?: string) =>
    implied.push({ status, code, text, details, refusal: true });
  if (route.params || route.query || route.body) {
    refuse(400, "INVALID_REQUEST", "invalid input", "`details.fields` lists each field");
  }
  if (route.access === "private" || route.method !== "GET") {
    refuse(403, "CSRF_REJECTED", "a request from another origin");
  }
  if (route.body) {
    refuse(408, "REQUEST_TIMEOUT", "the request body stalled, trickled or took too long");
    refuse(413, "PAYLOAD_TOO_LARGE", "the request body is over its limit");
    refuse(
      429,
      "RATE_LIMITED",
      "this client is sending `MAX_BODIES_PER_CLIENT` bodies already (`Retry-After`)",
    );
    refuse(
      503,
      "SERVICE_BUSY",
      "`MAX_BODIES_IN_FLIGHT` bodies are being received already (`Retry-After`)",
    );
  }
  if (route.body?.kind === "json" || route.body?.kind === "text") {
    refuse(415, "UNSUPPORTED_MEDIA_TYPE", "the body's `Content-Type` is not accepted");
  }
  if (route.access === "private" && route.backend !== "None") {
    implied.push({
      status: 401,
      code: "NOT_AUTHENTICATED",
      text: "no credentials for the backend: log in first",
    });
    implied.push({
      status: 503,
      code: "NOT_CONFIGURED",
      text: "no credentials for the backend",
      details: "`details.service`",
    });
  }
  if (route.backend !== "None") implied.push(...UPSTREAM);
  if (route.ai) {
    implied.push({
      status: 504,
      code: "UPSTREAM_TIMEOUT",
      text: "no progress for `AI_TIMEOUT_MS`; the Parser keeps working and `details` (`retry`, " +
        "`resultKey`, `keptSeconds`, `historyPath`) say how to get the answer: repeat the request",
    });
  }
  implied.push({
    status: 500,
    code: "INTERNAL_ERROR",
    text: "the request failed inside the service",
  });
  return implied;
}

/**
 * Every answer `route` can give, by status: its own, then the pipeline's. A status both name is
 * described by the route's text followed by the pipeline's cases it does not already mention
 * (by their error code); several pipeline cases of one status are listed one after another. A
 * route with an `errorMediaType` answers its errors as pages without a code: a status it lists
 * keeps its own text, any other is described by the pipeline's cases, and the pipeline's
 * refusals before the handler are left out (they would be JSON).
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
  const pages = route.errorMediaType;
  const docs = new Map<number, ResponseDoc>();
  for (const [status, spec] of Object.entries(route.responses)) {
    docs.set(Number(status), ownDoc(Number(status), spec, pages));
  }
  const own = new Set(docs.keys());
  for (const { status, code, text, details, refusal } of impliedResponses(route)) {
    const doc = docs.get(status);
    if (pages) {
      if (refusal || own.has(status)) continue;
      if (!doc) docs.set(status, { description: text, mediaType: pages });
      else doc.description += `; ${text}`;
      continue;
    }
    const line = `\`${code}\`: ${text}${details ? ` (${details})` : ""}`;
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

function ownDoc(status: number, spec: ResponseSpec, pages: string | undefined): ResponseDoc {
  const error = status < 400 ? {} : pages ? { mediaType: pages } : { schema: errorBodySchema };
  if (typeof spec === "string") return { description: spec, ...error };
  const { description, schema, mediaType, events } = spec;
  if (schema) return { description, schema };
  if (mediaType) return { description, mediaType, ...(events ? { events } : {}) };
  return { description, ...error };
}
