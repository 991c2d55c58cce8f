/**
 * Every answer a route can give, from its declaration: its own `responses` plus the statuses
 * the pipeline gives for any route of its kind — invalid input, another origin, a body over its
 * limit, missing credentials, backend failures, the AI deadline, an internal error — and for
 * every route alike before it is even looked up: a missing or malformed `Host` (400) and a host
 * the service does not answer to (421, http/host_check.ts). Each error body is the one error
 * shape unless the route says otherwise (a status's own schema or media type, or
 * `errorMediaType` for all of them). The OpenAPI document and the response check (tests) both
 * read answers from here, so the two cannot disagree.
 *
 * @module
 */
import type { z } from "zod";
import { errorBodySchema } from "../http/errors.ts";
import type { ResponseSpec, Route } from "./router.ts";

/**
 * One answer of a route, ready to document or check. A status may have both a `mediaType` and a
 * `schema`: a site page's 400 is its HTML page, or the JSON error of a refused `Host`.
 */
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
 * `beforeRouting` marks an answer given before the route is looked up, so on every route
 * whatever it declares: always the JSON error (`json`), or (`path`) the JSON error on the paths
 * of the API and the health checks and the site's HTML error page elsewhere
 * ({@linkcode jsonAnswerPaths}).
 */
interface Implied {
  status: number;
  code: string;
  text: string;
  details?: string;
  refusal?: boolean;
  beforeRouting?: "json" | "path";
}

/** The host rule's answers (http/request_url.ts, http/host_check.ts), before any routing. */
const HOST_RULE: Implied[] = [
  {
    status: 400,
    code: "INVALID_REQUEST",
    text: "a missing or malformed `Host` (or, with `TRUST_PROXY`, `X-Forwarded-Host`)",
    beforeRouting: "json",
  },
  {
    status: 421,
    code: "MISDIRECTED_REQUEST",
    text: "a host name the service does not answer to (see `PUBLIC_ORIGIN`, `ALLOWED_HOSTS`)",
    beforeRouting: "path",
  },
];

/** The media type of the site's error page (site/error_page.ts). */
const PAGE = "text/html";

/**
 * Where the pipeline's own answers (an unknown path, a refused host) are the JSON error: under
 * `/api` and on the health checks' paths (the `operations` routes, read by JSON clients);
 * elsewhere they are the site's HTML error page.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { allRoutes } from "../routes/index.ts";
 * const answersJson = jsonAnswerPaths(allRoutes);
 * assert.equal(answersJson("/api/no-such-route"), true);
 * assert.equal(answersJson("/healthz"), true);
 * assert.equal(answersJson("/public/no-such-page"), false);
 * ```
 */
export function jsonAnswerPaths(routes: readonly Route[]): (path: string) => boolean {
  const operations = new Set(routes.filter((r) => r.tag === "operations").map((r) => r.path));
  return (path) => path === "/api" || path.startsWith("/api/") || operations.has(path);
}

const UPSTREAM: Implied[] = [
  {
    status: 400,
    code: "UPSTREAM_REJECTED",
    text: "the backend refused the request",
    details: "`details.upstreamCode`",
  },
  { status: 401, code: "UNAUTHORIZED", text: "the backend refused the credentials" },
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
  { status: 503, code: "UNREACHABLE", text: "the backend is unreachable" },
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
  if (route.body && route.body.kind !== "stream") {
    refuse(415, "UNSUPPORTED_MEDIA_TYPE", "the body's `Content-Type` is not accepted");
  }
  if (route.access === "private" && route.backend !== "None") {
    implied.push({
      status: 401,
      code: "UNAUTHORIZED",
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
  implied.push(...HOST_RULE);
  return implied;
}

/**
 * Every answer `route` can give, by status: its own, then the pipeline's. A status both name is
 * described by the route's text followed by the pipeline's cases it does not already mention
 * (by their error code), and may be the error shape besides a media type the route gives it (a
 * page); several pipeline cases of one status are listed one after another. A
 * route with an `errorMediaType` answers its errors as pages without a code: a status it lists
 * keeps its own text, any other is described by the pipeline's cases, and the pipeline's
 * refusals before the handler are left out (they would be JSON).
 *
 * `which`: every answer a client may get (`all`, what the document says), or only those of a
 * request that reached the route (`routed`, what the response check holds its answers to): the
 * host rule answers before any route is looked up, so a route that gave one would be wrong.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 * import { defineRoute } from "./router.ts";
 *
 * const route = defineRoute({
 *   method: "GET", path: "/api/x", summary: "x", backend: "None", access: "public", tag: "x",
 *   responses: { 200: { description: "ok", schema: z.object({ ok: z.boolean() }) } },
 *   handler: () => new Response(),
 * });
 * const docs = routeResponses(route);
 * assert.equal(
 *   docs.get(500)?.description,
 *   "`INTERNAL_ERROR`: the request failed inside the service",
 * );
 * assert.match(docs.get(421)?.description ?? "", /^`MISDIRECTED_REQUEST`: /);
 * assert.deepEqual([...routeResponses(route, "routed").keys()], [200, 500]);
 * ```
 */
export function routeResponses(
  route: Route,
  which: "all" | "routed" = "all",
): Map<number, ResponseDoc> {
  const pages = route.errorMediaType;
  const docs = new Map<number, ResponseDoc>();
  for (const [status, spec] of Object.entries(route.responses)) {
    docs.set(Number(status), ownDoc(Number(status), spec, pages));
  }
  const own = new Set(docs.keys());
  for (const implied of impliedResponses(route)) {
    if (implied.beforeRouting) {
      if (which === "all") addBeforeRouting(docs, implied, route);
      continue;
    }
    const { status, code, text, details, refusal } = implied;
    const doc = docs.get(status);
    if (pages) {
      if (refusal || own.has(status)) continue;
      if (!doc) docs.set(status, { description: text, mediaType: pages });
      else doc.description += `; ${text}`;
      continue;
    }
    const line = `\`${code}\`: ${text}${details ? ` (${details})` : ""}`;
    if (!doc) {
      docs.set(status, { description: line, schema: errorBodySchema });
      continue;
    }
    if (!doc.description.includes(own.has(status) ? code : line)) {
      doc.description += `; ${line}`;
    }
    // the route's own answer at this status is a page: the pipeline's is still the JSON error
    doc.schema ??= errorBodySchema;
  }
  return new Map([...docs].sort(([a], [b]) => a - b));
}

/**
 * Adds an answer given before routing to `route`'s documented ones: always, whatever the route
 * says of the status (its own text never covers it), and in the media type the pipeline answers
 * it in, besides the status's own when they differ.
 */
function addBeforeRouting(docs: Map<number, ResponseDoc>, implied: Implied, route: Route): void {
  const page = implied.beforeRouting === "path" && !jsonAnswerPaths([route])(route.path);
  const line = page ? implied.text : `\`${implied.code}\`: ${implied.text}`;
  const doc = docs.get(implied.status);
  if (!doc) {
    docs.set(
      implied.status,
      page
        ? { description: line, mediaType: PAGE }
        : { description: line, schema: errorBodySchema },
    );
    return;
  }
  if (!doc.description.includes(line)) doc.description += `; ${line}`;
  const types = doc.mediaType === undefined ? [] : [doc.mediaType].flat();
  if (page && !types.includes(PAGE)) doc.mediaType = [...types, PAGE];
  if (!page && !doc.schema) doc.schema = errorBodySchema;
}

/**
 * Whether `route` has declared its responses (at least one written as an object): only then
 * does the response check hold its answers to them, so routes can adopt schemas one at a time.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defineRoute } from "./router.ts";
 *
 * const route = defineRoute({
 *   method: "DELETE", path: "/api/x", summary: "x", backend: "None", access: "private",
 *   tag: "x", responses: { 204: { description: "Deleted" } }, handler: () => new Response(null),
 * });
 * assert.equal(declaresResponses(route), true);
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
