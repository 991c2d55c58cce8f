/**
 * The conformance suites' toolkit: the step and state types, a client for the service under test
 * that reads every answer whole (optionally keeping cookies like a browser and waiting out rate
 * limits), checks that fail with one short sentence (it becomes the reason column of the report),
 * the answer shapes the suites rely on (zod: the service's answers are a trust boundary here too)
 * and the test image.
 *
 * @module
 */
import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import type { Method } from "../../src/api/router.ts";
import type { DirectCore } from "./core_direct.ts";

/** Optional parts of the suite that change state outside the scratch note. */
export const FLAGS = ["share"] as const;

/** One of {@linkcode FLAGS}. */
export type Flag = typeof FLAGS[number];

/** A note the suite created: its id and current title. */
export interface NoteRef {
  noteId: string;
  title: string;
}

/** Everything a step can use; steps record what they create for later steps. */
export interface SuiteState {
  api: ServiceClient;
  /** Core's ETAPI, for the few setups the service has no route for (a revision snapshot). */
  core: DirectCore;
  /** Random token in every title the suite writes, so its notes can be told from all others. */
  tag: string;
  /** The scratch note: the lore root of the service under test and parent of everything made. */
  scratch: NoteRef;
  /** The optional parts the run may do (the suite's flags). */
  flags: ReadonlySet<string>;
  /** Values the service must never echo (backend URLs, hosts, tokens and secrets). */
  secrets: readonly string[];
  /** Notes created by earlier steps, by role ("A", "map", …). */
  notes: Map<string, NoteRef>;
  /** Other ids earlier steps produced (attribute ids, image note ids, …). */
  facts: Map<string, string>;
  /**
   * Epoch ms before which the scratch note must not be deleted: Core's image service re-reads a
   * note 5 s after a pasted image was stored in it, and Core's process dies if the note is gone.
   */
  keepUntil: number;
  /** How long after pasting an image the scratch note is kept (see `keepUntil`). */
  pasteSettleMs: number;
}

/**
 * One step of a suite: which route it drives and what it proves. `S` is the suite's state, `F`
 * its flags (the Core suite's by default).
 */
export interface Step<S = SuiteState, F extends string = Flag> {
  method: Method;
  /** The route's path exactly as in the route table, e.g. `/api/lore/:id`. */
  path: string;
  /** What a pass shows, in a few words (the report's reason column). */
  check: string;
  /** Runs only when this flag is given (it changes state outside the scratch note). */
  needs?: F;
  /**
   * Throws {@linkcode CheckFailed} (or {@linkcode Blocked}, {@linkcode Skip}) when the service
   * misbehaves; a returned text replaces `check` as the reason (what the backend was seen to do).
   */
  run(s: S): Promise<void | string>;
}

/**
 * A check that did not hold; the message is the report's reason.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const e = new CheckFailed("the label does not read back");
 * assert.equal(`${e.name}: ${e.message}`, "CheckFailed: the label does not read back");
 * ```
 */
export class CheckFailed extends Error {
  override name = "CheckFailed";
}

/**
 * A step could not run because an earlier step did not produce what it needs.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runStep } from "./report.ts";
 * const step = {
 *   method: "GET" as const,
 *   path: "/api/lore/:id",
 *   check: "reads the note",
 *   run: () => Promise.reject(new Blocked('needs note "A", which an earlier step did not create')),
 * };
 * const row = await runStep(step, { flags: new Set<string>() });
 * assert.equal(row.reason, 'blocked: needs note "A", which an earlier step did not create');
 * ```
 */
export class Blocked extends Error {
  override name = "Blocked";
}

/**
 * The step does not apply to the backend under test (the message says why); reported as skipped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runStep } from "./report.ts";
 * const step = {
 *   method: "POST" as const,
 *   path: "/api/auth/zero-login",
 *   check: "mints a session",
 *   run: () => Promise.reject(new Skip("the Parser does not provision sessions")),
 * };
 * const row = await runStep(step, { flags: new Set<string>() });
 * assert.deepEqual([row.result, row.reason], [
 *   "skipped",
 *   "skipped (the Parser does not provision sessions)",
 * ]);
 * ```
 */
export class Skip extends Error {
  override name = "Skip";
}

/**
 * `q` plus nine random base-36 characters: a token no other note's title contains.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.match(randomTag(), /^q[0-9a-z]{9}$/); // e.g. "q3k9x0ab7z"
 * ```
 */
export function randomTag(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(9));
  return "q" + [...bytes].map((b) => (b % 36).toString(36)).join("");
}

/**
 * Fails the step unless `cond` holds.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const body = { count: 2, results: ["a"] };
 * assert.throws(
 *   () => check(body.count === body.results.length, "count differs from the results"),
 *   {
 *     name: "CheckFailed",
 *     message: "count differs from the results",
 *   },
 * );
 * ```
 */
export function check(cond: unknown, message: string): asserts cond {
  if (!cond) throw new CheckFailed(message);
}

/**
 * Fails the step unless `actual` deep-equals `expected`, showing both.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * same(["root", "s1"], ["root", "s1"], "breadcrumb ids"); // passes
 * assert.throws(() => same(["root"], ["root", "s1"], "breadcrumb ids"), {
 *   message: 'breadcrumb ids: expected ["root","s1"], got ["root"]',
 * });
 * ```
 */
export function same(actual: unknown, expected: unknown, what: string): void {
  if (!isDeepStrictEqual(actual, expected)) {
    throw new CheckFailed(
      `${what}: expected ${short(String(JSON.stringify(expected)))}, got ${
        short(String(JSON.stringify(actual)))
      }`,
    );
  }
}

/**
 * A note an earlier step created, or {@linkcode Blocked}.
 */
export function noteOf(s: SuiteState, role: string): NoteRef {
  const n = s.notes.get(role);
  if (!n) throw new Blocked(`needs note "${role}", which an earlier step did not create`);
  return n;
}

/**
 * A value an earlier step recorded, or {@linkcode Blocked}.
 */
export function factOf(s: SuiteState, key: string): string {
  const v = s.facts.get(key);
  if (v === undefined) throw new Blocked(`needs "${key}", which an earlier step did not record`);
  return v;
}

/**
 * Text on one line, cut to a length that fits a table cell.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(short("a\n  b", 10), "a b");
 * ```
 */
export function short(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

// ---------------------------------------------------------------------------------------------
// The service under test
// ---------------------------------------------------------------------------------------------

/** One answer of the service, its body read whole. */
export interface Answer {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
  text: string;
}

/** A request body: JSON, `text/plain`, or bytes (type from `headers`, default `image/png`). */
export interface CallOptions {
  json?: unknown;
  text?: string;
  bytes?: Uint8Array<ArrayBuffer>;
  headers?: Record<string, string>;
}

/** What a {@linkcode serviceClient} does beyond sending requests. */
export interface ClientOptions {
  /**
   * Keep the cookies the service sets and send them back, like a browser (default off: the
   * service uses its env credentials). An explicit `cookie` header in a call wins.
   */
  cookies?: boolean;
  /**
   * On a 429 with `Retry-After` (a backend's rate limit), wait and send the request again, for
   * at most this long in all per call (default 0: the 429 is the answer).
   */
  rateLimitWaitMs?: number;
  /** How the client waits out a `Retry-After` (default a real timer; a test may record it). */
  sleep?: (ms: number) => Promise<void>;
}

/** Calls the service like a browser would. */
export interface ServiceClient {
  /** The cookies held, by name (always empty without {@linkcode ClientOptions.cookies}). */
  readonly cookies: Map<string, string>;
  call(method: string, path: string, opts?: CallOptions): Promise<Answer>;
  /** A JSON answer with exactly `status`, parsed with `schema`. */
  json<S extends z.ZodType>(
    method: string,
    path: string,
    status: number,
    schema: S,
    opts?: CallOptions,
  ): Promise<z.output<S>>;
  /** An error answer with `status` and `code` in the shared error shape. */
  error(
    method: string,
    path: string,
    status: number,
    code: string,
    opts?: CallOptions,
  ): Promise<ErrorBody>;
}

/** Per call, so a hanging service fails one step instead of the run. */
const CALL_TIMEOUT_MS = 60_000;

/**
 * A client for the service at `baseUrl`.
 *
 * @example
 * ```ts
 * // Declared, not run here: it calls a running service.
 * async function loreCount(): Promise<number> {
 *   const api = serviceClient("http://127.0.0.1:8080");
 *   const notes = await api.json("GET", "/api/lore", 200, loreListSchema);
 *   return notes.length;
 * }
 * ```
 */
export function serviceClient(baseUrl: string, options: ClientOptions = {}): ServiceClient {
  const cookies = new Map<string, string>();
  const sleep = options.sleep ??
    ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const send = async (method: string, path: string, opts: CallOptions): Promise<Answer> => {
    const headers = new Headers(opts.headers);
    if (options.cookies && cookies.size && !headers.has("cookie")) {
      headers.set("cookie", [...cookies].map(([name, value]) => `${name}=${value}`).join("; "));
    }
    let body: BodyInit | undefined;
    if (opts.json !== undefined) {
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
      body = JSON.stringify(opts.json);
    } else if (opts.text !== undefined) {
      if (!headers.has("content-type")) headers.set("content-type", "text/plain");
      body = opts.text;
    } else if (opts.bytes !== undefined) {
      if (!headers.has("content-type")) headers.set("content-type", "image/png");
      body = opts.bytes;
    }
    const res = await fetch(baseUrl + path, {
      method,
      headers,
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (options.cookies) keepCookies(cookies, res.headers);
    return {
      status: res.status,
      headers: res.headers,
      bytes,
      text: new TextDecoder().decode(bytes),
    };
  };
  const call = async (method: string, path: string, opts: CallOptions = {}): Promise<Answer> => {
    const budget = Date.now() + (options.rateLimitWaitMs ?? 0);
    for (;;) {
      const a = await send(method, path, opts);
      const wait = Number(a.headers.get("retry-after")) * 1000;
      if (a.status !== 429 || !(wait > 0) || Date.now() + wait > budget) return a;
      await sleep(wait);
    }
  };
  const parsed = <S extends z.ZodType>(a: Answer, schema: S, what: string): z.output<S> => {
    let raw: unknown;
    try {
      raw = JSON.parse(a.text);
    } catch {
      throw new CheckFailed(`${what}: not JSON: ${short(a.text, 80)}`);
    }
    const r = schema.safeParse(raw);
    if (!r.success) {
      const i = r.error.issues[0];
      throw new CheckFailed(`${what}: body ${i.path.join(".") || "(root)"}: ${i.message}`);
    }
    return r.data;
  };
  return {
    cookies,
    call,
    async json(method, path, status, schema, opts) {
      const a = await call(method, path, opts);
      expectStatus(a, status, `${method} ${path}`);
      return parsed(a, schema, `${method} ${path}`);
    },
    async error(method, path, status, code, opts) {
      const a = await call(method, path, opts);
      expectStatus(a, status, `${method} ${path}`);
      const body = parsed(a, errorBodySchema, `${method} ${path}`);
      check(body.error === code, `${method} ${path}: error ${body.error}, expected ${code}`);
      check(
        a.headers.get("x-request-id") === body.requestId,
        `${method} ${path}: requestId differs from the X-Request-Id header`,
      );
      return body;
    },
  };
}

/** Applies an answer's `Set-Cookie` headers to the jar (an expired cookie is dropped). */
function keepCookies(jar: Map<string, string>, headers: Headers): void {
  for (const line of headers.getSetCookie()) {
    const [pair, ...attrs] = line.split(";");
    const eq = pair.indexOf("=");
    if (eq < 1) continue;
    const name = pair.slice(0, eq).trim();
    const expired = attrs.some((a) => /^\s*max-age\s*=\s*0\s*$/i.test(a));
    if (expired) jar.delete(name);
    else jar.set(name, pair.slice(eq + 1).trim());
  }
}

/**
 * Fails unless the answer has `status`; the reason quotes our error code when there is one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const answer = (status: number, text: string): Answer => ({
 *   status,
 *   headers: new Headers(),
 *   bytes: new TextEncoder().encode(text),
 *   text,
 * });
 * expectStatus(answer(204, ""), 204, "delete"); // passes
 * assert.throws(() => expectStatus(answer(500, "boom"), 204, "delete"), { name: "CheckFailed" });
 * ```
 */
export function expectStatus(a: Answer, status: number, what: string): void {
  if (a.status === status) return;
  const type = a.headers.get("content-type") ?? "";
  // an image's bytes would garble the report: name what came instead
  let detail = a.bytes.length === 0 || /^(?:text\/|application\/json)/.test(type)
    ? short(a.text, 100)
    : `${a.bytes.length} bytes of ${type || "no declared type"}`;
  try {
    const e = errorBodySchema.parse(JSON.parse(a.text));
    detail = `${e.error}: ${e.message}`;
  } catch {
    // not our error shape: the raw start of the body says more
  }
  throw new CheckFailed(
    `${what}: status ${a.status}, expected ${status}${detail ? ` (${detail})` : ""}`,
  );
}

/**
 * Fails if the text contains any of the secrets (a backend's URL, host or token).
 */
export function noSecrets(s: SuiteState, text: string, what: string): void {
  for (const secret of s.secrets) {
    check(!text.includes(secret), `${what} reveals a backend address or token`);
  }
}

// ---------------------------------------------------------------------------------------------
// Shapes of the service's answers the suite relies on (loose: extra fields are fine)
// ---------------------------------------------------------------------------------------------

/** Our error shape (extra keys are kept, so a check can see everything an error answer said). */
export const errorBodySchema = z.looseObject({
  error: z.string().regex(/^[A-Z_]+$/),
  message: z.string().min(1),
  requestId: z.string().min(1),
  details: z.unknown().optional(),
});

/** An error answer. */
export type ErrorBody = z.output<typeof errorBodySchema>;

/** Core's attribute as the service passes it on. */
export const attributeSchema = z.looseObject({
  attributeId: z.string().min(1),
  noteId: z.string().min(1),
  type: z.enum(["label", "relation"]),
  name: z.string(),
  value: z.string(),
  isInheritable: z.boolean(),
});

/** Core's note as the service passes it on. */
export const noteSchema = z.looseObject({
  noteId: z.string().min(1),
  title: z.string(),
  type: z.string(),
  mime: z.string(),
  isProtected: z.boolean(),
  parentNoteIds: z.array(z.string()),
  childNoteIds: z.array(z.string()),
  attributes: z.array(attributeSchema),
});

/** A Core note. */
export type NoteBody = z.output<typeof noteSchema>;

/** `GET /api/lore`: a bare array of Core's notes. */
export const loreListSchema = z.array(noteSchema);

/** `GET /api/lore/:id`. */
export const loreNoteSchema = noteSchema.extend({
  loreType: z.string().nullable(),
  resolvedRelations: z.array(z.looseObject({
    attributeId: z.string(),
    name: z.string(),
    targetNoteId: z.string(),
    targetTitle: z.string(),
    loreType: z.string().nullable(),
  })),
  portraitImageNoteId: z.string().nullable(),
  themeSongUrl: z.string().nullable(),
});

/** `POST /api/lore`. */
export const createdSchema = z.object({
  note: noteSchema,
  branch: z.looseObject({ branchId: z.string(), noteId: z.string(), parentNoteId: z.string() }),
});

/**
 * The note's own attributes as `type:name=value` strings (inherited ones belong to others).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const attr = (noteId: string, name: string, value: string) => ({
 *   attributeId: name,
 *   noteId,
 *   type: "label" as const,
 *   name,
 *   value,
 *   isInheritable: false,
 * });
 * const note = noteSchema.parse({
 *   noteId: "mira",
 *   title: "Mira",
 *   type: "text",
 *   mime: "text/html",
 *   isProtected: false,
 *   parentNoteIds: ["root"],
 *   childNoteIds: [],
 *   attributes: [attr("mira", "loreType", "character"), attr("world", "gmOnly", "")],
 * });
 * assert.deepEqual(ownAttrs(note), ["label:loreType=character"]);
 * ```
 */
export function ownAttrs(note: NoteBody): string[] {
  return note.attributes.filter((a) => a.noteId === note.noteId)
    .map((a) => `${a.type}:${a.name}=${a.value}`);
}

/**
 * Reads a note through `GET /api/lore/:id`.
 */
export function readLore(s: SuiteState, noteId: string) {
  return s.api.json("GET", `/api/lore/${noteId}`, 200, loreNoteSchema);
}

/**
 * Creates a lore note through `POST /api/lore`, checks the answer and records it under `role`.
 * `parent` is sent as `parentNoteId`; null sends none, and the note must then land under
 * `defaultParentId` (the lore root; the scratch note unless a step changed it).
 */
export async function createLore(
  s: SuiteState,
  role: string,
  body: Record<string, unknown> & { title: string },
  parent: NoteRef | null = s.scratch,
  defaultParentId: string = s.scratch.noteId,
): Promise<NoteBody> {
  const created = await s.api.json("POST", "/api/lore", 201, createdSchema, {
    json: parent ? { parentNoteId: parent.noteId, ...body } : body,
  });
  const { note } = created;
  s.notes.set(role, { noteId: note.noteId, title: note.title });
  same(note.title, body.title, `title of new note "${role}"`);
  const parentId = parent?.noteId ?? defaultParentId;
  same(note.parentNoteIds, [parentId], `parents of new note "${role}"`);
  same(created.branch.parentNoteId, parentId, `branch parent of new note "${role}"`);
  return note;
}

/** A 3×2 RGB PNG (86 bytes) in base64: small, valid, and its size is checkable. */
export const TEST_PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAHUlEQVR4nGPQiFqQErVgQdQCBo1VC1JWLViwagEA" +
  "UpQJJXbZKKMAAAAASUVORK5CYII=";

/** {@linkcode TEST_PNG_BASE64} as bytes. */
export const TEST_PNG: Uint8Array<ArrayBuffer> = Uint8Array.from(
  atob(TEST_PNG_BASE64),
  (c) => c.charCodeAt(0),
);

/** A 1×1 JPEG (134 bytes) in base64: Core stores pasted JPEGs as `image/jpg`. */
export const TEST_JPEG_BASE64 = "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP" + "/".repeat(86) +
  "wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=";

/** Width and height of {@linkcode TEST_PNG}. */
export const TEST_PNG_SIZE = { width: 3, height: 2 } as const;

/**
 * Routes of `backends` in the table that no step covers, and steps naming routes that do not exist:
 * both must be empty for a suite to speak for every route.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const routes = [
 *   { method: "GET", path: "/api/lore", backend: "Core" },
 *   { method: "GET", path: "/api/ai/models", backend: "Parser" },
 * ];
 * const covered = new Set(["GET /api/lore", "GET /api/old"]);
 * assert.deepEqual(routeCoverage(covered, routes, ["Core"]), {
 *   missing: [],
 *   unknown: ["GET /api/old"],
 * });
 * ```
 */
export function routeCoverage(
  covered: ReadonlySet<string>,
  routes: readonly { method: string; path: string; backend: string }[],
  backends: readonly string[],
): { missing: string[]; unknown: string[] } {
  const key = (r: { method: string; path: string }) => `${r.method} ${r.path}`;
  const known = new Set(routes.map(key));
  return {
    missing: routes.filter((r) => backends.includes(r.backend)).map(key)
      .filter((k) => !covered.has(k)),
    unknown: [...covered].filter((k) => !known.has(k)),
  };
}

/** One backend in `GET /api/config/status`, in the front end's words. */
const backendStatusSchema = z.looseObject({
  ok: z.boolean(),
  configured: z.boolean(),
  url: z.string(),
  version: z.string().optional(),
});

/** `GET /api/config/status`: `allcodex` is Core, `allknower` the Parser (the front end's names). */
export const configStatusSchema = z.looseObject({
  allcodex: backendStatusSchema,
  allknower: backendStatusSchema,
  session: z.object({ source: z.string().nullable() }),
});
