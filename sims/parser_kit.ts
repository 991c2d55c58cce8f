/**
 * Parser test double, shared kit: response helpers, the SSE response, TypeBox-style validation
 * with Elysia's 422, the ETAPI client, the route-row type, rate-limit groups, the relationship
 * vocabulary and what feature modules receive.
 * Feature modules (brain dump, AI tools, copilot, imports/notifications/usage) build their
 * route rows from these; parser.ts mounts them.
 *
 * @module
 */
import type { Deadlines } from "../src/util/deadlines.ts";
import type { ParserSession, ParserStore, ParserUser } from "./parser_store.ts";

/** The session a request carries, as the guards see it. */
export interface AuthState {
  session: ParserSession;
  user: ParserUser;
  /** True when `expiresAt` slid forward (better-auth then re-sets the cookie). */
  refreshed: boolean;
}

// ---------------------------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------------------------

/** `Content-Type` of the double's JSON answers. */
const JSON_TYPE = "application/json";
/** `Content-Type` of Elysia's plain-text answers (thrown errors). */
const TEXT_TYPE = "text/plain;charset=utf-8";

/**
 * A JSON answer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const res = json(404, { error: "BATCH_NOT_FOUND" });
 * assert.equal(res.headers.get("content-type"), "application/json");
 * assert.deepEqual(await res.json(), { error: "BATCH_NOT_FOUND" });
 * ```
 */
export function json(status: number, value: unknown, headers: HeadersInit = {}): Response {
  const h = new Headers(headers);
  h.set("Content-Type", JSON_TYPE);
  return new Response(JSON.stringify(value), { status, headers: h });
}

/**
 * A plain-text answer (Elysia's rendering of a thrown error is `text(500, message)`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const res = text(404, "NOT_FOUND");
 * assert.equal(res.headers.get("content-type"), "text/plain;charset=utf-8");
 * assert.equal(await res.text(), "NOT_FOUND");
 * ```
 */
export function text(status: number, body: string): Response {
  return new Response(body, { status, headers: { "Content-Type": TEXT_TYPE } });
}

/**
 * Adds elysiajs-helmet's headers, as on every response Parser itself produces.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const res = withHelmet(json(200, {}));
 * assert.equal(res.headers.get("x-frame-options"), "DENY");
 * ```
 */
export function withHelmet(res: Response): Response {
  const h = res.headers;
  h.set("X-Frame-Options", "DENY");
  h.set("X-Content-Type-Options", "nosniff");
  h.set("X-XSS-Protection", "0");
  h.set("Referrer-Policy", "no-referrer");
  h.set("Cross-Origin-Resource-Policy", "same-origin");
  h.set("Cross-Origin-Opener-Policy", "same-origin");
  h.set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'");
  h.set("Permissions-Policy", "camera=(), microphone=(), geolocation=()");
  return res;
}

// ---------------------------------------------------------------------------------------------
// Server-sent events (contract §3)
// ---------------------------------------------------------------------------------------------

/** What a stream's producer gets from {@link simEventStream}. */
export interface SimEventSink {
  /** Writes `event: <event>\ndata: <json>\n\n`; does nothing once the client has left. */
  send(event: string, data: unknown): void;
  /** True once the client has left, the stream has ended or the double is closing. */
  gone(): boolean;
  /** Abort when the client leaves or the double closes (for `sleep` and `waitForAbort`). */
  signals: (AbortSignal | undefined)[];
}

/** Options of {@link simEventStream}. */
export interface SimEventStreamOptions {
  /** Interval of `: keepalive` comments; none when unset. */
  heartbeatMs?: number;
  /** `data` of the `error` event written when the producer throws; default `{ error: message }`. */
  errorData?(e: unknown): unknown;
  /** Called once when the client leaves (abort, cancel, failed write) before the stream ended. */
  onAbandon?(): void;
}

/**
 * The double's SSE response (`text/event-stream`, `no-cache`, `keep-alive`): `produce` writes
 * events as it goes; the stream closes when it returns. A throw becomes one terminal `error`
 * event unless the client has left; the client leaving aborts `signals`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const res = simEventStream(new Request("http://parser/brain-dump/stream"), {}, ({ send }) => {
 *   send("status", { stage: "analyze" });
 *   send("done", {});
 *   return Promise.resolve();
 * });
 * assert.equal(
 *   await res.text(),
 *   'event: status\ndata: {"stage":"analyze"}\n\nevent: done\ndata: {}\n\n',
 * );
 * ```
 */
export function simEventStream(
  req: Request,
  deps: Pick<ParserFeatureDeps, "closed" | "deadlines">,
  produce: (sink: SimEventSink) => Promise<void>,
  opts: SimEventStreamOptions = {},
): Response {
  const encoder = new TextEncoder();
  const left = new AbortController();
  let ended = false;
  const abandon = () => {
    if (ended || left.signal.aborted) return;
    left.abort();
    opts.onAbandon?.();
  };
  const gone = () => ended || left.signal.aborted || deps.closed?.aborted === true;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const write = (s: string) => {
        if (ended || left.signal.aborted) return;
        try {
          controller.enqueue(encoder.encode(s));
        } catch {
          abandon();
        }
      };
      const sink: SimEventSink = {
        send: (event, data) => write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`),
        gone,
        signals: [left.signal, deps.closed],
      };
      // keepalives: an interval, or on the double's clock one wait after another
      let stopHeartbeat = () => {};
      const keepalive = (ms: number) => {
        if (!deps.deadlines) {
          const id = setInterval(() => write(": keepalive\n\n"), ms);
          stopHeartbeat = () => clearInterval(id);
          return;
        }
        stopHeartbeat = deps.deadlines.start(ms, () => {
          write(": keepalive\n\n");
          if (!ended) keepalive(ms);
        });
      };
      if (opts.heartbeatMs !== undefined) keepalive(opts.heartbeatMs);
      req.signal.addEventListener("abort", abandon, { once: true });
      void (async () => {
        try {
          await produce(sink);
        } catch (e) {
          if (!gone()) {
            sink.send(
              "error",
              opts.errorData?.(e) ?? { error: e instanceof Error ? e.message : String(e) },
            );
          }
        } finally {
          stopHeartbeat();
          req.signal.removeEventListener("abort", abandon);
          ended = true;
          try {
            controller.close();
          } catch { /* cancelled */ }
        }
      })();
    },
    cancel() {
      abandon();
    },
  });
  return new Response(body, {
    status: 200,
    headers: {
      "Content-Type": "text/event-stream",
      "Cache-Control": "no-cache",
      Connection: "keep-alive",
    },
  });
}

// ---------------------------------------------------------------------------------------------
// TypeBox-style body schemas and Elysia's 422 (contract §1, §6)
// ---------------------------------------------------------------------------------------------

const OPTIONAL = Symbol("optional");

/** A JSON-Schema-like TypeBox schema; see {@link t}. */
export interface Schema {
  type?: string;
  [key: string]: unknown;
  [OPTIONAL]?: true;
}

/**
 * The subset of Elysia's `t` the double's routes use, producing TypeBox-shaped schemas.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const body = t.Object({ rawText: t.String({ minLength: 10 }), mode: t.Optional(t.String()) });
 * assert.equal(
 *   validate(body, { rawText: "short" }).errors[0].message,
 *   "Expected string length greater or equal to 10",
 * );
 * ```
 */
export const t = {
  String: (o: { minLength?: number; maxLength?: number } = {}): Schema => ({
    type: "string",
    ...o,
  }),
  Number: (o: { minimum?: number; maximum?: number } = {}): Schema => ({ type: "number", ...o }),
  Boolean: (): Schema => ({ type: "boolean" }),
  Literal: (value: string | number | boolean): Schema => ({ const: value, type: typeof value }),
  Union: (anyOf: Schema[]): Schema => ({ anyOf }),
  Array: (items: Schema, o: { minItems?: number; maxItems?: number } = {}): Schema => ({
    type: "array",
    items,
    ...o,
  }),
  Object: (properties: Record<string, Schema>): Schema => ({
    type: "object",
    properties,
    required: Object.keys(properties).filter((k) => !properties[k][OPTIONAL]),
  }),
  Optional: (s: Schema): Schema => ({ ...s, [OPTIONAL]: true }),
} as const;

/** One TypeBox `ValueError` as Elysia maps it (with `summary`). */
export interface ValueError {
  /** TypeBox `ValueErrorType` code. */
  type: number;
  schema: Schema;
  path: string;
  value: unknown;
  message: string;
  errors: unknown[];
  summary: string;
}

/** TypeBox's `ValueErrorType` codes used here. */
const VE = {
  ArrayMaxItems: 2,
  ArrayMinItems: 4,
  Array: 6,
  Boolean: 14,
  Literal: 32,
  NumberMaximum: 38,
  NumberMinimum: 39,
  Number: 41,
  ObjectRequiredProperty: 45,
  Object: 46,
  StringMaxLength: 51,
  StringMinLength: 52,
  String: 54,
  Union: 62,
} as const;

function summaryOf(type: number, path: string, message: string, value: unknown): string {
  const property = path.slice(1).replaceAll("/", ".");
  if (type === VE.ObjectRequiredProperty) {
    return path === "" ? "Value is missing" : `Property '${property}' is missing`;
  }
  if (type === VE.String) {
    // Elysia's mapValueError slices TypeBox's "Expected string" in two (sic)
    return `${message.slice(0, 9).trim()} property '${property}' to be ${
      message.slice(8).trim()
    } but found: ${String(value)}`;
  }
  return message;
}

function* visit(schema: Schema, path: string, value: unknown): Generator<ValueError> {
  const err = (type: number, message: string): ValueError => ({
    type,
    schema,
    path,
    value,
    message,
    errors: [],
    summary: summaryOf(type, path, message, value),
  });
  if (Array.isArray(schema.anyOf)) {
    const ok = (schema.anyOf as Schema[]).some((s) => visit(s, path, value).next().done);
    if (!ok) yield err(VE.Union, "Expected union value");
    return;
  }
  if ("const" in schema) {
    if (value !== schema.const) {
      const c = schema.const;
      yield err(VE.Literal, `Expected ${typeof c === "string" ? `'${c}'` : String(c)}`);
    }
    return;
  }
  switch (schema.type) {
    case "string": {
      if (typeof value !== "string") return yield err(VE.String, "Expected string");
      const { minLength, maxLength } = schema as { minLength?: number; maxLength?: number };
      if (minLength !== undefined && value.length < minLength) {
        yield err(VE.StringMinLength, `Expected string length greater or equal to ${minLength}`);
      }
      if (maxLength !== undefined && value.length > maxLength) {
        yield err(VE.StringMaxLength, `Expected string length less or equal to ${maxLength}`);
      }
      return;
    }
    case "number": {
      if (typeof value !== "number" || !Number.isFinite(value)) {
        return yield err(VE.Number, "Expected number");
      }
      const { minimum, maximum } = schema as { minimum?: number; maximum?: number };
      if (maximum !== undefined && value > maximum) {
        yield err(VE.NumberMaximum, `Expected number to be less or equal to ${maximum}`);
      }
      if (minimum !== undefined && value < minimum) {
        yield err(VE.NumberMinimum, `Expected number to be greater or equal to ${minimum}`);
      }
      return;
    }
    case "boolean":
      if (typeof value !== "boolean") yield err(VE.Boolean, "Expected boolean");
      return;
    case "array": {
      if (!Array.isArray(value)) return yield err(VE.Array, "Expected array");
      const { minItems, maxItems } = schema as { minItems?: number; maxItems?: number };
      if (minItems !== undefined && value.length < minItems) {
        yield err(VE.ArrayMinItems, `Expected array length to be greater or equal to ${minItems}`);
      }
      if (maxItems !== undefined && value.length > maxItems) {
        yield err(VE.ArrayMaxItems, `Expected array length to be less or equal to ${maxItems}`);
      }
      for (let i = 0; i < value.length; i++) {
        yield* visit(schema.items as Schema, `${path}/${i}`, value[i]);
      }
      return;
    }
    case "object": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        return yield err(VE.Object, "Expected object");
      }
      const props = schema.properties as Record<string, Schema>;
      const required = schema.required as string[];
      const record = value as Record<string, unknown>;
      for (const key of required) {
        if (key in record) continue;
        yield {
          ...err(VE.ObjectRequiredProperty, "Expected required property"),
          schema: props[key],
          path: `${path}/${key}`,
          value: undefined,
          summary: summaryOf(VE.ObjectRequiredProperty, `${path}/${key}`, "", undefined),
        };
      }
      for (const [key, prop] of Object.entries(props)) {
        if (required.includes(key) || record[key] !== undefined) {
          yield* visit(prop, `${path}/${key}`, record[key]);
        }
      }
      return;
    }
  }
}

/** Elysia's `normalize`: unknown object properties are dropped, not rejected. */
function clean(schema: Schema, value: unknown): unknown {
  if (schema.type === "object" && typeof value === "object" && value !== null) {
    const props = schema.properties as Record<string, Schema>;
    return Object.fromEntries(
      Object.entries(value).filter(([k]) => k in props).map(([k, v]) => [k, clean(props[k], v)]),
    );
  }
  if (schema.type === "array" && Array.isArray(value)) {
    return value.map((v) => clean(schema.items as Schema, v));
  }
  return value;
}

/** TypeBox `Value.Create`: the `expected` example of a 422. */
function example(schema: Schema): unknown {
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.anyOf)) return example((schema.anyOf as Schema[])[0]);
  switch (schema.type) {
    case "string":
      return " ".repeat((schema.minLength as number | undefined) ?? 0);
    case "number":
      return (schema.minimum as number | undefined) ?? 0;
    case "boolean":
      return false;
    case "array":
      return Array.from(
        { length: (schema.minItems as number | undefined) ?? 0 },
        () => example(schema.items as Schema),
      );
    case "object":
      return Object.fromEntries(
        (schema.required as string[]).map((
          k,
        ) => [k, example((schema.properties as Record<string, Schema>)[k])]),
      );
    default:
      return {};
  }
}

/**
 * Checks `value` against `schema` the way TypeBox reports it (errors in TypeBox's order) and
 * returns the value with unknown properties stripped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const { errors, value } = validate(t.Object({ a: t.String() }), { a: "x", b: 1 });
 * assert.deepEqual(errors, []);
 * assert.deepEqual(value, { a: "x" });
 * ```
 */
export function validate(schema: Schema, value: unknown): { errors: ValueError[]; value: unknown } {
  const errors = [...visit(schema, "", value)];
  return { errors, value: errors.length ? value : clean(schema, value) };
}

/**
 * Elysia's 422 answer for a failed TypeBox validation (its development shape: the service's
 * tests run against a Parser outside `NODE_ENV=production`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const schema = t.Object({ text: t.String() });
 * const body = { text: 42 };
 * const { errors } = validate(schema, body);
 * const res = validationReply("body", schema, body, errors);
 * assert.equal(res.status, 422);
 * assert.equal((await res.json()).property, "/text");
 * ```
 */
export function validationReply(
  on: string,
  schema: Schema,
  found: unknown,
  errors: ValueError[],
): Response {
  const first = errors[0];
  return json(422, {
    type: "validation",
    on,
    property: first.path || "root",
    message: first.message,
    summary: first.summary,
    expected: example(schema),
    found,
    errors,
  });
}

// ---------------------------------------------------------------------------------------------
// Calls to Core (ETAPI)
// ---------------------------------------------------------------------------------------------

/** A Core to call: base URL (no `/etapi`) and the raw ETAPI token. */
export interface EtapiTarget {
  baseUrl: string;
  token: string;
  /** The clock of the call's timeout (the double's own, see `ParserFeatureDeps.deadlines`). */
  deadlines?: Deadlines;
}

/**
 * One ETAPI call the way the real Parser's client makes it (raw token in `Authorization`, a
 * per-call timeout). Non-2xx answers throw `ETAPI <METHOD> <path> → <status>: <body>`, which a
 * route turns into Elysia's 500 text, like the real one.
 *
 * @example
 * ```ts
 * // Declared, not run here: it calls a live Core.
 * async function createMira(target: EtapiTarget, signal: AbortSignal): Promise<number> {
 *   const r = await etapi(target, "POST", "/create-note", ETAPI_TIMEOUT_MS, [signal], {
 *     json: { parentNoteId: "root", title: "Mira", type: "text", content: "<p></p>" },
 *   });
 *   return r.status; // 201; any non-2xx answer throws
 * }
 * ```
 */
export async function etapi(
  base: EtapiTarget,
  method: string,
  path: string,
  timeoutMs: number,
  signals: (AbortSignal | undefined)[],
  body?: { json?: unknown; text?: string },
): Promise<{ status: number; text: string }> {
  const ac = new AbortController();
  const timedOut = () => ac.abort(new Error(`ETAPI ${method} ${path} timed out`));
  const timer = base.deadlines ? undefined : setTimeout(timedOut, timeoutMs);
  const cancelDeadline = base.deadlines?.start(timeoutMs, timedOut);
  const live = signals.filter((s): s is AbortSignal => s !== undefined);
  const abort = () => ac.abort(new Error("parser sim closed"));
  for (const s of live) s.addEventListener("abort", abort, { once: true });
  const headers: Record<string, string> = { Authorization: base.token };
  let payload: string | undefined;
  if (body?.json !== undefined) {
    headers["Content-Type"] = "application/json";
    payload = JSON.stringify(body.json);
  } else if (body?.text !== undefined) {
    headers["Content-Type"] = "text/plain";
    payload = body.text;
  }
  try {
    const res = await fetch(`${base.baseUrl}/etapi${path}`, {
      method,
      headers,
      body: payload,
      signal: ac.signal,
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`ETAPI ${method} ${path} → ${res.status}: ${text}`);
    return { status: res.status, text };
  } finally {
    clearTimeout(timer);
    cancelDeadline?.();
    for (const s of live) s.removeEventListener("abort", abort);
  }
}

// ---------------------------------------------------------------------------------------------
// Parser routes
// ---------------------------------------------------------------------------------------------

/** What a Parser route handler receives. */
export interface ParserCtx {
  req: Request;
  url: URL;
  params: Record<string, string>;
  /** The validated body (unknown properties stripped), or the raw parsed body without schema. */
  body: unknown;
  /** Set for `owner` routes. */
  auth?: AuthState;
  info?: Deno.ServeHandlerInfo;
}

/** One row of the route table. */
export interface ParserRoute {
  method: string;
  /** Elysia path, `:name` for params. */
  path: string;
  /** `owner` = `requireOwnerAuth`; `public` = none (secret checks live in the handler). */
  auth: "owner" | "public";
  body?: Schema;
  /** elysia-rate-limit group (§5): counted after the guard, per client IP, fixed window. */
  rate?: RateGroup;
  handler(c: ParserCtx): Response | Promise<Response>;
}

/** One elysia-rate-limit instance: its own counter, limit, window and 429 body. */
export interface RateGroup {
  name: string;
  max: number;
  windowMs: number;
  /** The 429 JSON body. */
  body: unknown;
}

/**
 * The real rate-limit groups (§5), with the default limits.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const route: ParserRoute = {
 *   method: "POST",
 *   path: "/consistency/check",
 *   auth: "owner",
 *   rate: RATE_GROUPS.consistency,
 *   handler: () => json(200, { issues: [] }),
 * };
 * assert.equal(route.rate?.name, RATE_GROUPS.consistency.name);
 * ```
 */
export const RATE_GROUPS = {
  brainDump: {
    name: "brain-dump",
    max: 10,
    windowMs: 60_000,
    body: {
      error: "Rate limit exceeded. Brain dump is limited to 10 requests per minute.",
      code: "RATE_LIMITED",
    },
  },
  consistency: {
    name: "consistency",
    max: 20,
    windowMs: 60_000,
    body: { error: "Rate limit exceeded for AI tools.", code: "RATE_LIMITED" },
  },
  suggest: {
    name: "suggest",
    max: 20,
    windowMs: 60_000,
    body: { error: "Rate limit exceeded for AI tools.", code: "RATE_LIMITED" },
  },
  copilot: {
    name: "copilot",
    max: 20,
    windowMs: 60_000,
    body: { error: "Rate limit exceeded for AI tools.", code: "RATE_LIMITED" },
  },
} as const satisfies Record<string, RateGroup>;

/**
 * The 17 relationship types (§2.5), in the Parser's order. The double keeps its own copy of the
 * vocabulary so that a change on the Portal's side cannot silently pass its own tests.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal((RELATIONSHIP_TYPES as readonly string[]).includes("member_of"), true);
 * ```
 */
export const RELATIONSHIP_TYPES = [
  "ally",
  "enemy",
  "rival",
  "family",
  "member_of",
  "leader_of",
  "serves",
  "located_in",
  "originates_from",
  "participated_in",
  "caused",
  "created",
  "owns",
  "wields",
  "worships",
  "inhabits",
  "related_to",
] as const;

/**
 * The Core relation name the Parser stores a relationship type under (`rel<Pascal>`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(coreRelationName("member_of"), "relMemberOf");
 * ```
 */
export function coreRelationName(type: string): string {
  return "rel" + type.split("_").map((w) => w[0].toUpperCase() + w.slice(1)).join("");
}

/** The message of Parser's 500 when the caller has no Core integration. */
export const NOT_CONNECTED =
  "AllCodex is not connected for this user. Reconnect AllCodex in settings.";

/** Per-call ETAPI timeout of the real Parser (30 s). */
export const ETAPI_TIMEOUT_MS = 30_000;

/** What every feature module of the double gets from the server. */
export interface ParserFeatureDeps {
  store: ParserStore;
  /** The server's own base URL. */
  selfUrl(): string;
  /** Aborts when the double closes (ends background work and open streams). */
  closed?: AbortSignal;
  /** The clock of the double's own waits (model delays, paces, keepalives); default real time. */
  deadlines?: Deadlines;
  /** `/config/models`: the configured model chain per task (`INVALID_MODEL` checks). */
  models(): Record<string, { models: string[]; autoMode: boolean }>;
  /**
   * The user's own Core integration (`resolveAllCodexCredentials`); throws
   * {@link NOT_CONNECTED} (→ 500 text) when there is none, as the real one does.
   */
  coreFor(userId: string): EtapiTarget;
}
