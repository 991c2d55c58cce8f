/**
 * Route declarations. A route states its method, URLPattern path, backend, input schemas and
 * handler once; validation, the OpenAPI document, docs/api.md and `--print-routes` are all derived from
 * that one declaration.
 *
 * @module
 */
import type { z } from "zod";
import type { AiRoute } from "../pipeline/ai_route.ts";
import type * as context from "../pipeline/context.ts";

/** HTTP methods the table uses. */
export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** Which backend a route talks to (the route list's Backend column). */
export type Backend = "Core" | "Parser" | "Both" | "None";

/** How a route reads its body. */
export type BodySpec =
  /** `maxBytes` replaces `MAX_JSON_BYTES` for this route (e.g. map exports of a few MB). */
  | { kind: "json"; schema: z.ZodType; maxBytes?: number }
  /**
   * An HTML form (`application/x-www-form-urlencoded`, within `MAX_JSON_BYTES`): its fields, each
   * named once, as an object of strings validated by `schema`.
   */
  | { kind: "form"; schema: z.ZodType }
  /**
   * UTF-8 text, limited to `MAX_CONTENT_BYTES`; handed over as a string. `mediaTypes`: the
   * accepted `Content-Type`s, the API's own form first (default `text/plain` alone; see
   * {@linkcode textBodyTypes}).
   */
  | { kind: "text"; mediaTypes?: readonly [string, ...string[]] }
  /** Any bytes; the handler streams `ctx.req.body` itself and enforces its own limit. */
  | { kind: "stream"; description: string };

/**
 * What a route may use, and so which context its handler gets ({@linkcode CtxFor}):
 *
 * - `public`: no caller credentials at all — the pipeline never reads cookies, never mints a
 *   zero-login session and never sets a cookie; only server-side sources (`publicCore`). The
 *   public site keeps one cookie of its own, the unlock cookie of password-protected branches
 *   (share/unlock_cookie.ts), which its handlers read and set;
 * - `session`: starts or ends the browser session (login, register, logout): reads and writes
 *   the session cookies, but never mints a zero-login session;
 * - `private`: the caller's Core and Parser credentials (cookie, zero-login or environment).
 */
export type Access = "public" | "session" | "private";

// The contexts are the pipeline's (pipeline/context.ts, where they are built and documented);
// here they are bound to this table's rows, which name them in turn.
export type { SessionCredentials } from "../pipeline/context.ts";
/** {@linkcode context.PublicCtx} on this table's routes. */
export type PublicCtx<P = unknown, Q = unknown, B = unknown> = context.PublicCtx<P, Q, B, Route>;
/** {@linkcode context.SessionCtx} on this table's routes. */
export type SessionCtx<P = unknown, Q = unknown, B = unknown> = context.SessionCtx<P, Q, B, Route>;
/** {@linkcode context.Ctx} on this table's routes. */
export type Ctx<P = unknown, Q = unknown, B = unknown> = context.Ctx<P, Q, B, Route>;

/** The context a route with access `A` gets. */
export type CtxFor<A extends Access, P = unknown, Q = unknown, B = unknown> = {
  public: PublicCtx<P, Q, B>;
  session: SessionCtx<P, Q, B>;
  private: Ctx<P, Q, B>;
}[A];

/**
 * One documented answer. A string only describes it: a bodiless answer, an error (the one error
 * shape, or the route's `errorMediaType`), or a body not described yet. An object says what the
 * body is: `schema` for JSON (its zod output, checked in tests), `mediaType` for anything else
 * (SSE, images, HTML, text; an SSE stream may give each event's data schema in `events`),
 * neither for no body at all.
 */
export type ResponseSpec =
  | string
  | { description: string; schema: z.ZodType; mediaType?: never; events?: never }
  | {
    description: string;
    /** Several when the body's type varies (e.g. content passed on as Core typed it). */
    mediaType: string | readonly string[];
    events?: Record<string, z.ZodType>;
    schema?: never;
  }
  | { description: string; schema?: never; mediaType?: never; events?: never };

/**
 * A route's documented answers, status → {@linkcode ResponseSpec}. A route that writes at least
 * one answer as an object has declared its responses: in tests every answer it gives must have a
 * declared status and match its schema (route_responses.ts, pipeline/response_check.ts).
 */
export type Responses = Record<number, ResponseSpec>;

/** One row of the route table, for one access level (see {@linkcode Route}). */
export interface RouteOf<
  A extends Access = Access,
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends BodySpec | undefined = BodySpec | undefined,
> {
  method: Method;
  /** URLPattern pathname, e.g. `/api/lore/:id`. */
  path: string;
  /**
   * Other paths answered by this same row: the product-named forms the front end calls
   * (`/api/config/allknower-login` for `/api/config/parser-login`). Declared here once, never as
   * copied rows; logs and documents name `path`, the canonical form.
   */
  aliases?: readonly string[];
  summary: string;
  backend: Backend;
  /** What the handler may use; it decides the handler's context type ({@linkcode Access}). */
  access: A;
  tag: string;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * Longer Markdown: what the route does where the API leaves it open. It becomes the OpenAPI
   * operation's `description`.
   */
  description?: string;
  /**
   * The route's own answers (see {@linkcode Responses}). Statuses the pipeline gives for any
   * route of this kind (invalid input, another origin, missing credentials, backend failures,
   * the AI deadline) follow from the rest of the declaration and need not be listed.
   */
  responses: Responses;
  /**
   * The media type of the route's error answers when they are not the one error shape: the
   * public site's handlers turn every failure into an HTML page that keeps the status. Each error
   * status, listed as a string or implied (route_responses.ts), is then this type. The pipeline's
   * refusals before the handler runs (invalid input, another origin, body limits) stay JSON, so
   * they are not documented for such a route: its input must be unable to fail them.
   */
  errorMediaType?: string;
  /**
   * AI work (the Parser runs a model, or writes for minutes): the handler runs detached from the
   * client, the client waits while it makes progress (`AI_TIMEOUT_MS` without any is a 504 that
   * says how to get the result), and an answer nobody waited for is kept for a retry of the same
   * request (pipeline/ai_route.ts). Private routes only: the work runs on the caller's credentials.
   */
  ai?: A extends "private" ? AiRoute : never;
  // a property, not a method: method parameters are checked bivariantly, which would let a
  // handler typed for a private context sit on a public route
  handler: (
    ctx: CtxFor<A, z.output<P>, z.output<Q>, BodyValue<B>>,
  ) => Promise<Response> | Response;
}

/** One row of the route table: a union on `access`, so the pipeline narrows on it. */
export type Route = RouteOf<"public"> | RouteOf<"session"> | RouteOf<"private">;

/** The value of `ctx.body` for a body spec. */
export type BodyValue<B> = B extends { kind: "json" | "form"; schema: infer S extends z.ZodType }
  ? z.output<S>
  : B extends { kind: "text" } ? string
  : undefined;

/**
 * The `Content-Type`s a text body is accepted in, the canonical one first.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(textBodyTypes({ kind: "text" }), ["text/plain"]);
 * assert.deepEqual(
 *   textBodyTypes({ kind: "text", mediaTypes: ["text/plain", "text/html"] }),
 *   ["text/plain", "text/html"],
 * );
 * ```
 */
export function textBodyTypes(body: Extract<BodySpec, { kind: "text" }>): readonly string[] {
  return body.mediaTypes ?? ["text/plain"];
}

/**
 * Declares a route with full type inference for params, query and body; its `access` picks the
 * handler's context, so a `public` handler that calls `ctx.core()` does not type-check.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 * import { json } from "../http/response.ts";
 *
 * const noteSchema = z.object({ noteId: z.string(), title: z.string() });
 * const getNote = defineRoute({
 *   method: "GET",
 *   path: "/api/lore/:id",
 *   summary: "Note",
 *   backend: "Core",
 *   access: "private",
 *   tag: "lore",
 *   params: z.object({ id: z.string() }),
 *   responses: { 200: { description: "The note", schema: noteSchema }, 404: "No such note" },
 *   // ctx.params.id is a string here; on an `access: "public"` route ctx.core() would not exist
 *   handler: async (ctx) => json(await (await ctx.core()).getNote(ctx.params.id)),
 * });
 * assert.equal(getNote.access, "private");
 * ```
 */
export function defineRoute<
  A extends Access,
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends BodySpec | undefined = undefined,
>(route: RouteOf<A, P, Q, B>): Route {
  return route as unknown as Route;
}

/** A compiled row: the route plus its URLPattern. */
export interface CompiledRoute {
  route: Route;
  /** The path this row matches: the route's own or one of its aliases. */
  path: string;
  pattern: URLPattern;
  /** Path segments, `null` where a parameter stands: a cheap pre-filter before `exec`. */
  segments: (string | null)[];
  /**
   * Parameter names by segment (`undefined` at literals) when the path is plain literal and
   * `:name` segments, which match exactly one non-empty segment of an already-encoded pathname:
   * the params are then read off the segments without `exec`. `null` for any other syntax.
   */
  names: (string | undefined)[] | null;
}

/**
 * One URLPattern per path, parsed once per process: parsing is most of what building an app
 * costs (every test harness builds one), and a pattern holds no state between matches.
 */
const patterns = new Map<string, URLPattern>();

function pathPattern(path: string): URLPattern {
  let pattern = patterns.get(path);
  if (!pattern) patterns.set(path, pattern = new URLPattern({ pathname: path }));
  return pattern;
}

/**
 * Compiles a table, ordered for matching by specificity (see {@linkcode matchRoute}). Refuses
 * rows no request could tell apart — the same method with the same literal segments at the same
 * places (`/a/:x` and `/a/:y`) — so the table stays the single truth and its order never matters.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { noContent } from "../http/response.ts";
 * const route = (method: "GET" | "POST", path: string) =>
 *   defineRoute({
 *     method,
 *     path,
 *     summary: path,
 *     backend: "None",
 *     access: "public",
 *     tag: "example",
 *     responses: { 204: "Done" },
 *     handler: () => noContent(),
 *   });
 * const table = compileRoutes([route("GET", "/api/lore/:id"), route("POST", "/api/lore/move")]);
 * assert.deepEqual(table.map((r) => r.route.path), ["/api/lore/move", "/api/lore/:id"]);
 * assert.throws(() => compileRoutes([route("GET", "/a/:x"), route("GET", "/a/:y")]), /ambiguous/);
 * ```
 */
export function compileRoutes(routes: readonly Route[]): CompiledRoute[] {
  const seen = new Map<string, string>();
  const compiled = routes.flatMap((route) =>
    [route.path, ...route.aliases ?? []].map((path) => {
      const segments = path.split("/").map((seg) => (seg.startsWith(":") ? null : seg));
      const key = `${route.method} ${segments.map((seg) => seg ?? ":").join("/")}`;
      const other = seen.get(key);
      if (other !== undefined) {
        throw new Error(`ambiguous routes: ${route.method} ${other} and ${path}`);
      }
      seen.set(key, path);
      const names = SIMPLE_PATH.test(path)
        ? path.split("/").map((seg) => (seg.startsWith(":") ? seg.slice(1) : undefined))
        : null;
      return { route, path, pattern: pathPattern(path), segments, names };
    })
  );
  // Leftmost literal wins: at the first segment where two patterns differ, a literal beats a
  // parameter (`/batch/:batchId` before `/:id/diffs` for `/batch/diffs`). Paths of different
  // lengths never fit the same request, so one shape key orders the whole table.
  const shape = (r: CompiledRoute) => r.segments.map((seg) => (seg === null ? "P" : "L")).join("");
  return compiled.sort((a, b) => (shape(a) < shape(b) ? -1 : shape(a) > shape(b) ? 1 : 0));
}

/** Result of matching a request against the table. */
export type Match =
  | { kind: "found"; route: Route; params: Record<string, string | undefined> }
  | { kind: "method"; allow: Method[] }
  | { kind: "none" };

/**
 * Finds the row for a method and pathname. A literal path (`/api/lore/move`) shadows parameterised
 * ones (`/api/lore/:id`) for every method, so `GET /api/lore/move` is a 405, not a note lookup.
 * Among parameterised rows the most specific wins: the one with a literal at the first segment
 * where they differ (the table is ordered so by {@linkcode compileRoutes}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { noContent } from "../http/response.ts";
 * const route = (method: "GET" | "POST", path: string) =>
 *   defineRoute({
 *     method,
 *     path,
 *     summary: path,
 *     backend: "None",
 *     access: "public",
 *     tag: "example",
 *     responses: { 204: "Done" },
 *     handler: () => noContent(),
 *   });
 * const table = compileRoutes([route("GET", "/api/lore/:id"), route("POST", "/api/lore/move")]);
 * const found = matchRoute(table, "GET", "/api/lore/abc");
 * assert.equal(found.kind === "found" && found.params.id, "abc");
 * assert.deepEqual(matchRoute(table, "GET", "/api/lore/move"), {
 *   kind: "method",
 *   allow: ["POST"],
 * });
 * assert.deepEqual(matchRoute(table, "GET", "/api/map"), { kind: "none" });
 * ```
 */
export function matchRoute(
  table: readonly CompiledRoute[],
  method: string,
  pathname: string,
): Match {
  const m = method === "HEAD" ? "GET" : method;
  const index = indexFor(table);
  const literal = index.literal.get(pathname);
  if (literal) return pick(literal, m, pathname, undefined);
  const parts = pathname.split("/");
  const sized = index.byStart.get(parts.length);
  const candidates = sized?.get(parts[1]) ?? sized?.get(ANY_START);
  const rows = candidates?.filter((r) => fits(r.segments, parts));
  return rows?.length ? pick(rows, m, pathname, parts) : { kind: "none" };
}

/** Whether a parameterised row's segments fit the request's path segments. */
function fits(segments: readonly (string | null)[], parts: readonly string[]): boolean {
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i];
    if (seg === null ? parts[i] === "" : seg !== parts[i]) return false;
  }
  return true;
}

/** The row for `method` among rows that fit the path, else the methods they allow. */
function pick(
  rows: readonly CompiledRoute[],
  method: string,
  pathname: string,
  parts: string[] | undefined,
): Match {
  const row = rows.find((r) => r.route.method === method);
  const params = row && paramsOf(row, pathname, parts);
  if (row && params) return { kind: "found", route: row.route, params };
  return { kind: "method", allow: rows.map((r) => r.route.method) };
}

function paramsOf(
  row: CompiledRoute,
  pathname: string,
  parts: string[] | undefined,
): Record<string, string | undefined> | undefined {
  if (!row.names) return row.pattern.exec({ pathname })?.pathname.groups; // URLPattern costs µs
  const params: Record<string, string> = {};
  if (!parts) return params;
  for (let i = 0; i < row.names.length; i++) {
    const name = row.names[i];
    if (name !== undefined) params[name] = parts[i];
  }
  return params;
}

/**
 * Rows by exact literal path, and parameterised rows by segment count then first segment: a
 * first segment's rows are those that start with it and those that start with a parameter
 * ({@linkcode ANY_START}'s, for a first segment no row names), both in table order.
 */
interface RouteIndex {
  literal: Map<string, CompiledRoute[]>;
  byStart: Map<number, Map<string | typeof ANY_START, CompiledRoute[]>>;
}

const ANY_START = Symbol("any first segment");

// built once per table, on its first lookup: every request then costs a few map lookups
const indexes = new WeakMap<readonly CompiledRoute[], RouteIndex>();

// the app's one table, found without a WeakMap lookup on every request
let last: { table: readonly CompiledRoute[]; index: RouteIndex } | undefined;

function indexFor(table: readonly CompiledRoute[]): RouteIndex {
  if (last?.table === table) return last.index;
  const index = indexes.get(table) ?? buildIndex(table);
  last = { table, index };
  return index;
}

function buildIndex(table: readonly CompiledRoute[]): RouteIndex {
  const index: RouteIndex = { literal: new Map(), byStart: new Map() };
  for (const row of table) {
    // a literal row fits exactly one pathname: its own
    if (isLiteral(row.path)) {
      index.literal.set(row.path, [...(index.literal.get(row.path) ?? []), row]);
      continue;
    }
    let sized = index.byStart.get(row.segments.length);
    if (!sized) index.byStart.set(row.segments.length, sized = new Map([[ANY_START, []]]));
    const start = row.segments[1];
    if (start !== null && !sized.has(start)) {
      // a first segment met for the first time: the parameter-first rows so far fit it too
      sized.set(start, table.filter((r) => sized.get(ANY_START)!.includes(r)));
    }
    for (const [key, rows] of sized) {
      if (start === null || key === start) rows.push(row);
    }
  }
  indexes.set(table, index);
  return index;
}

/** Literal segments of unreserved characters and `:name` segments, nothing else. */
const SIMPLE_PATH = /^(?:\/(?:[A-Za-z0-9._~-]*|:[A-Za-z_][A-Za-z0-9_]*))*$/;

function isLiteral(path: string): boolean {
  return !/[:*(]/.test(path);
}
