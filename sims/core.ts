/**
 * Core test double, HTTP layer: the ETAPI (`/etapi/*`) endpoints the service and the conformance
 * suite call, in the real Core's wire format, over the in-memory {@link CoreStore}, with fault
 * injection and request recording. Core's share site and share API (`/share/*`) are not
 * modelled: the service never calls them (it reads shared notes through ETAPI).
 *
 * Behaviour copies the real Core, quirks included. Where the double does
 * not model something it fails loudly (500 with a message starting "core sim:") instead of
 * guessing, e.g. search syntax outside the modelled subset.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * // Declared, not run here: it listens on a port.
 * async function rootTitle(): Promise<void> {
 *   const sim = await startCoreSim();
 *   const res = await fetch(`${sim.url}/etapi/notes/root`, {
 *     headers: { Authorization: sim.token },
 *   });
 *   assert.equal((await res.json()).title, "root");
 *   await sim.close();
 * }
 * ```
 * @module
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Deadlines } from "../src/util/deadlines.ts";
import {
  type AttachmentRecord,
  type AttributeRecord,
  type Content,
  contentBytes,
  CoreError,
  type CoreStore,
  createCoreStore,
  NOTE_TYPES,
  type RevisionRecord,
  type SearchParams,
} from "./core_store.ts";
import { type RecordedRequest, type SimFault, startSimServer } from "./sim_http.ts";
import { seedSystemNotes, seedWorld } from "./world.ts";

export type { CoreStore } from "./core_store.ts";

/**
 * Default ETAPI token of a sim: `<12 alnum id>_<44-char base64 secret>`.
 *
 * @example
 * ```ts
 * // Declared, not run here: `sim` is a running Core double.
 * function appInfo(sim: CoreSim): Promise<Response> {
 *   return fetch(`${sim.url}/etapi/app-info`, { headers: { Authorization: DEFAULT_CORE_TOKEN } });
 * }
 * ```
 */
export const DEFAULT_CORE_TOKEN = "coreSimTok01_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
/**
 * Default Core password accepted by `POST /etapi/auth/login`.
 *
 * @example
 * ```ts
 * // Declared, not run here: `sim` is a running Core double.
 * function login(sim: CoreSim): Promise<Response> {
 *   return fetch(`${sim.url}/etapi/auth/login`, {
 *     method: "POST",
 *     headers: { "Content-Type": "application/json" },
 *     body: JSON.stringify({ password: DEFAULT_CORE_PASSWORD }),
 *   });
 * }
 * ```
 */
export const DEFAULT_CORE_PASSWORD = "core-sim-password";
/** `appVersion` reported by `GET /etapi/app-info`. */
const CORE_APP_VERSION = "0.101.3";

/** Options of {@link startCoreSim}. */
export interface CoreSimOptions {
  /** Valid ETAPI token; default {@link DEFAULT_CORE_TOKEN}. */
  token?: string;
  /** Password for `/etapi/auth/login`; default {@link DEFAULT_CORE_PASSWORD}. */
  password?: string;
  /** Seed the sample world (world.ts); default true. False gives only Core's system notes. */
  world?: boolean;
  /** Port; 0 (default) picks a free one. */
  port?: number;
  /** Default 127.0.0.1. */
  hostname?: string;
  /** Injected clock for deterministic timestamps and the revision rule. */
  now?: () => Date;
  /** The clock of fault delays (`delayMs`): a test's own; default the runtime's timers. */
  deadlines?: Deadlines;
}

/** A running Core double. */
export interface CoreSim {
  /** Base URL without trailing slash; ETAPI is at `url + "/etapi"`. */
  url: string;
  /** A valid ETAPI token. */
  token: string;
  /** Direct data access for setup and assertions. */
  store: CoreStore;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  clearRequests(): void;
  /** Adds a fault; faults are checked in the order added, before normal handling. */
  fault(f: SimFault): void;
  clearFaults(): void;
  /** Requests a `hang` fault holds right now. */
  held(): number;
  /** Stops the server; hanging and delayed requests are ended first. */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------------------------

interface Reply {
  status: number;
  body: string | Uint8Array | null;
  headers: Headers;
}

const JSON_TYPE = "application/json; charset=utf-8";

/**
 * What Core shows instead of a protected revision's title (`BRevision` without a protected
 * session). ETAPI notes carry the stored ciphertext instead.
 */
const PROTECTED_TITLE = "[protected]";

function reply(
  status: number,
  body: string | Uint8Array | null,
  headers: Record<string, string> = {},
): Reply {
  return { status, body, headers: new Headers(headers) };
}

function json(status: number, value: unknown, headers: Record<string, string> = {}): Reply {
  return reply(status, JSON.stringify(value), { "Content-Type": JSON_TYPE, ...headers });
}

function noContent(): Reply {
  return reply(204, null);
}

function errorReply(e: CoreError): Reply {
  return e.code === null
    ? json(e.status, { message: e.message })
    : json(e.status, { status: e.status, code: e.code, message: e.message });
}

/** Express' weak ETag: `W/"<length hex>-<sha1 base64, 27 chars>"`. */
function weakEtag(bytes: Uint8Array): string {
  const hash = createHash("sha1").update(bytes).digest("base64").slice(0, 27);
  return `W/"${bytes.length.toString(16)}-${hash}"`;
}

function isFresh(req: Request, etag: string): boolean {
  const inm = req.headers.get("if-none-match");
  if (!inm || /(?:^|,)\s*no-cache\s*(?:,|$)/.test(req.headers.get("cache-control") ?? "")) {
    return false;
  }
  if (inm.trim() === "*") return true;
  const bare = (t: string) => t.trim().replace(/^W\//, "");
  return inm.split(",").some((t) => bare(t) === bare(etag));
}

/** Adds what Express adds to every `res.send` (ETag, 304 on a fresh GET) and builds a Response. */
function toResponse(req: Request, r: Reply): Response {
  let status = r.status;
  let body = r.body;
  const headers = r.headers;
  if (body !== null && status !== 204 && status !== 304) {
    const bytes = typeof body === "string" ? contentBytes(body) : body;
    if (!headers.has("ETag")) headers.set("ETag", weakEtag(bytes));
    const cacheable = req.method === "GET" || req.method === "HEAD";
    if (cacheable && status >= 200 && status < 300 && isFresh(req, headers.get("ETag")!)) {
      status = 304;
      body = null;
      headers.delete("Content-Type");
    }
  }
  if (req.method === "HEAD" || status === 204 || status === 304) body = null;
  return new Response(body as BodyInit | null, { status, headers });
}

// ---------------------------------------------------------------------------------------------
// Request bodies (app.ts: express.text / json / raw / urlencoded)
// ---------------------------------------------------------------------------------------------

function mediaType(req: Request): string {
  return (req.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
}

/** Body as Express would leave it in `req.body`; undefined when no parser matched. */
async function parseBody(req: Request): Promise<unknown> {
  if (req.method === "GET" || req.method === "HEAD") return undefined;
  const type = mediaType(req);
  if (!["application/json", "text/plain", "application/octet-stream"].includes(type)) {
    await req.body?.cancel();
    return undefined;
  }
  const bytes = new Uint8Array(await req.arrayBuffer());
  const text = () => new TextDecoder().decode(bytes);
  switch (type) {
    case "application/octet-stream":
      return bytes;
    case "text/plain":
      return text();
    default:
      return parseJson(text());
  }
}

/** body-parser's JSON: empty → {}, errors → 500 `{message}` (the service sends only objects). */
function parseJson(raw: string): unknown {
  if (raw.trim() === "") return {};
  try {
    return JSON.parse(raw);
  } catch (e) {
    throw new CoreError(500, null, (e as Error).message);
  }
}

// ---------------------------------------------------------------------------------------------
// Validators (etapi/validators.ts) and validateAndPatch
// ---------------------------------------------------------------------------------------------

type Validator = (value: unknown) => string | undefined;

const show = (v: unknown) => String(v);
const absent = (v: unknown) => v === undefined || v === null;

const notNull: Validator = (v) => v === null ? "cannot be null" : undefined;
const isString: Validator = (v) =>
  absent(v) || typeof v === "string" ? undefined : `'${show(v)}' is not a string`;
const isBoolean: Validator = (v) =>
  absent(v) || typeof v === "boolean" ? undefined : `'${show(v)}' is not a boolean`;
const isInteger: Validator = (v) =>
  absent(v) || Number.isInteger(v) ? undefined : `'${show(v)}' is not an integer`;
const isNoteType: Validator = (v) =>
  absent(v) || (NOTE_TYPES as readonly unknown[]).includes(v)
    ? undefined
    : `'${show(v)}' is not a valid note type, allowed types are: ${NOTE_TYPES.join(", ")}`;
const isAttributeType: Validator = (v) =>
  absent(v) || v === "label" || v === "relation"
    ? undefined
    : `'${show(v)}' is not a valid attribute type, allowed types are: label, relation`;
const isValidEntityId: Validator = (v) =>
  absent(v) || (typeof v === "string" && /^[A-Za-z0-9_]{4,128}$/.test(v))
    ? undefined
    : `'${
      show(v)
    }' is not a valid entityId. Only alphanumeric characters are allowed of length 4 to 32.`;

function dateValidator(re: RegExp, example: string, kind: string): Validator {
  return (v) => {
    if (!v || typeof v !== "string") return undefined;
    if (!re.test(v)) {
      return `Invalid ${kind} date time format in '${v}'. Correct format shall follow example: '${example}'`;
    }
    const iso = v.replace(" ", "T").replace(/([+-]\d{2})(\d{2})$/, "$1:$2");
    return Number.isNaN(Date.parse(iso))
      ? `Date '${v}' appears to be in the correct format, but cannot be parsed. It likely represents an invalid date.`
      : undefined;
  };
}

const isLocalDateTime = dateValidator(
  /[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}[+-][0-9]{4}/,
  "2023-08-21 23:38:51.110+0200",
  "local",
);
const isUtcDateTime = dateValidator(
  /[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z/,
  "2023-08-21 23:38:51.110Z",
  "UTC",
);

function isNoteId(store: CoreStore): Validator {
  return (v) => {
    if (absent(v)) return undefined;
    if (typeof v !== "string") return `'${show(v)}' is not a valid noteId`;
    return store.getNote(v) ? undefined : `Note '${v}' does not exist`;
  };
}

/** `Object.keys(req.body)` exactly as Core does it (strings and bytes have index keys). */
function bodyKeys(body: unknown): string[] {
  if (body === undefined || body === null) {
    throw new CoreError(500, "GENERIC", "Cannot convert undefined or null to object");
  }
  return Object.keys(body as object);
}

function validateAndPatch(
  body: unknown,
  allowed: Record<string, Validator[]>,
): Record<string, unknown> {
  const keys = bodyKeys(body);
  const source = body as Record<string, unknown>;
  for (const key of keys) {
    if (!(key in allowed)) {
      throw new CoreError(
        400,
        "PROPERTY_NOT_ALLOWED",
        `Property '${key}' is not allowed for this method.`,
      );
    }
    for (const validator of allowed[key]) {
      const problem = validator(source[key]);
      if (problem) {
        throw new CoreError(
          400,
          "PROPERTY_VALIDATION_ERROR",
          `Validation failed on property '${key}': ${problem}.`,
        );
      }
    }
  }
  return Object.fromEntries(keys.map((k) => [k, source[k]]));
}

function readProp(body: unknown, key: string): unknown {
  if (body === undefined || body === null) {
    throw new CoreError(
      500,
      "GENERIC",
      `Cannot read properties of ${body} (reading '${key}')`,
    );
  }
  return (body as Record<string, unknown>)[key];
}

// ---------------------------------------------------------------------------------------------
// Content headers (utils.formatDownloadTitle / getContentDisposition)
// ---------------------------------------------------------------------------------------------

const MIME_EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpeg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/svg+xml": "svg",
  "application/pdf": "pdf",
  "application/json": "json",
  "application/zip": "zip",
  "application/javascript": "js",
  "text/javascript": "js",
  "text/plain": "txt",
  "text/html": "html",
  "text/css": "css",
  "text/markdown": "md",
  "text/csv": "csv",
  "text/xml": "xml",
  "application/xml": "xml",
  "audio/mpeg": "mp3",
  "video/mp4": "mp4",
};
const EXTENSION_MIMES: Record<string, string> = {
  ...Object.fromEntries(Object.entries(MIME_EXTENSIONS).map(([m, e]) => [e, m])),
  jpg: "image/jpeg",
  htm: "text/html",
  js: "application/javascript",
  xml: "application/xml",
};

function downloadTitle(title: string, type: string | null, mime: string): string {
  // sanitize-filename: drop reserved and control characters
  const base = [...title].filter((ch) => {
    const code = ch.codePointAt(0)!;
    return !'/\\?<>:*|"'.includes(ch) && code > 0x1f && (code < 0x80 || code > 0x9f);
  }).join("").trim() || "untitled";
  let ext = "";
  if (type === "text") ext = ".html";
  else if (type === "relationMap" || type === "canvas" || type === "search") ext = ".json";
  else if (mime && mime.toLowerCase() !== "application/octet-stream") {
    const titleExt = /\.([A-Za-z0-9]+)$/.exec(title)?.[1]?.toLowerCase();
    if (!titleExt || EXTENSION_MIMES[titleExt] !== mime.toLowerCase()) {
      const e = MIME_EXTENSIONS[mime.toLowerCase()];
      ext = e ? `.${e}` : "";
    }
  }
  return `${base}${ext}`;
}

function contentDisposition(filename: string): string {
  // Header values must be Latin-1; the RFC 5987 parameter carries the exact name.
  const plain = filename.replace(/[^\u0020-\u007e\u00a0-\u00ff]/g, "_");
  return `file; filename="${plain}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

function contentType(content: Content, mime: string): string {
  if (typeof content !== "string") return mime || "application/octet-stream";
  const base = mime ? mime.replace(/;\s*charset=[^;]*/i, "") : "text/html";
  return `${base}; charset=utf-8`;
}

function contentReply(content: Content, mime: string, title: string, type: string): Reply {
  return reply(200, content, {
    "Content-Type": contentType(content, mime),
    "Cache-Control": "no-cache, no-store, must-revalidate",
    "Content-Disposition": contentDisposition(downloadTitle(title, type, mime)),
  });
}

// ---------------------------------------------------------------------------------------------
// Mapping records to JSON
// ---------------------------------------------------------------------------------------------

/**
 * A revision's ETAPI JSON. Core builds revisions with `new BRevision(row)`, which without a
 * protected session replaces a protected revision's (encrypted) title with "[protected]".
 */
function revisionPojo(store: CoreStore, r: RevisionRecord, withLength: boolean) {
  const pojo: Record<string, unknown> = { ...r };
  if (r.isProtected) pojo.title = PROTECTED_TITLE;
  if (withLength) {
    const c = store.getRevisionContent(r.revisionId);
    pojo.contentLength = c === undefined ? 0 : contentBytes(c).length;
  }
  return pojo;
}

function attachmentPojo(store: CoreStore, a: AttachmentRecord) {
  const c = store.getAttachmentContent(a.attachmentId);
  return {
    ...a,
    // SQLite's LENGTH(blobs.content): bytes of a binary blob, characters of a text one
    contentLength: c === undefined ? 0 : typeof c === "string" ? [...c].length : c.length,
  };
}

function attributePojo(a: AttributeRecord) {
  return { ...a };
}

// ---------------------------------------------------------------------------------------------
// Routing
// ---------------------------------------------------------------------------------------------

interface Ctx {
  req: Request;
  url: URL;
  params: Record<string, string>;
  body: unknown;
}

type RouteHandler = (c: Ctx) => Reply | Promise<Reply>;

interface Route {
  method: string;
  segments: string[];
  auth: boolean;
  handler: RouteHandler;
}

function matchRoute(route: Route, method: string, parts: string[]): Record<string, string> | null {
  if (route.method !== method || route.segments.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const seg = route.segments[i];
    if (seg.startsWith(":")) {
      if (parts[i] === "") return null;
      try {
        params[seg.slice(1)] = decodeURIComponent(parts[i]);
      } catch {
        throw new CoreError(500, null, `Failed to decode param '${parts[i]}'`);
      }
    } else if (seg !== parts[i]) return null;
  }
  return params;
}

function queryValue(url: URL, name: string): string | string[] | undefined {
  const all = url.searchParams.getAll(name);
  return all.length === 0 ? undefined : all.length === 1 ? all[0] : all;
}

function safeEqual(a: string, b: string): boolean {
  const x = contentBytes(a);
  const y = contentBytes(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The request handler of the Core double over `store`; tokens live in the store. */
function createCoreHandler(
  store: CoreStore,
  password: string,
): (req: Request) => Promise<Response> {
  const startedAt = store.now().toISOString();
  const routes: Route[] = [];
  const add = (method: string, path: string, auth: boolean, handler: RouteHandler) =>
    routes.push({ method, segments: path.split("/"), auth, handler });
  const get = (path: string, handler: RouteHandler) => add("GET", path, true, handler);
  const post = (path: string, handler: RouteHandler) => add("POST", path, true, handler);
  const patch = (path: string, handler: RouteHandler) => add("PATCH", path, true, handler);
  const put = (path: string, handler: RouteHandler) => add("PUT", path, true, handler);
  const del = (path: string, handler: RouteHandler) => add("DELETE", path, true, handler);

  const requireNote = (noteId: string) => {
    const note = store.getNote(noteId);
    if (!note) throw new CoreError(404, "NOTE_NOT_FOUND", `Note '${noteId}' not found.`);
    return note;
  };
  const notProtected = (noteId: string, action: string) => {
    if (requireNote(noteId).isProtected) {
      throw new CoreError(
        400,
        "NOTE_IS_PROTECTED",
        `Note '${noteId}' is protected and ${action} through ETAPI.`,
      );
    }
  };
  const noteIdValidator = isNoteId(store);

  // ---- ETAPI: auth, app-info -----------------------------------------------------------

  add("POST", "/etapi/auth/login", false, (c) => {
    if (c.body === undefined || c.body === null) {
      throw new CoreError(
        500,
        "GENERIC",
        `Cannot destructure property 'password' of 'req.body' as it is ${c.body}.`,
      );
    }
    const { password: given, tokenName } = c.body as Record<string, unknown>;
    if (typeof given !== "string" || !safeEqual(given, password)) {
      throw new CoreError(401, "WRONG_PASSWORD", "Wrong password.");
    }
    const name = typeof tokenName === "string" && tokenName ? tokenName : "ETAPI login";
    return json(201, { authToken: store.createToken(name) });
  });
  get("/etapi/app-info", () =>
    json(200, {
      appVersion: CORE_APP_VERSION,
      dbVersion: 233,
      nodeVersion: "v22.16.0",
      syncVersion: 36,
      buildDate: "2025-06-07T09:45:40Z",
      buildRevision: "7cbff47078012e32279c110c49b904bd24dcecb3",
      dataDirectory: "/home/node/trilium-data",
      clipperProtocolVersion: "1.0",
      utcDateTime: startedAt,
    }));

  // ---- ETAPI: attachments ----------------------------------------------------------------

  const requireAttachment = (id: string) => {
    const a = store.getAttachment(id);
    if (!a) throw new CoreError(404, "ATTACHMENT_NOT_FOUND", `Attachment '${id}' not found.`);
    return a;
  };
  get(
    "/etapi/attachments/:attachmentId",
    (c) => json(200, attachmentPojo(store, requireAttachment(c.params.attachmentId))),
  );
  get("/etapi/attachments/:attachmentId/content", (c) => {
    const att = requireAttachment(c.params.attachmentId);
    const content = store.getAttachmentContent(att.attachmentId) ?? "";
    return contentReply(content, att.mime, att.title, att.role); // formatDownloadTitle(…, role, …)
  });

  // ---- ETAPI: attributes -----------------------------------------------------------------

  const requireAttribute = (id: string) => {
    const a = store.getAttribute(id);
    if (!a) throw new CoreError(404, "ATTRIBUTE_NOT_FOUND", `Attribute '${id}' not found.`);
    return a;
  };
  post("/etapi/attributes", (c) => {
    // relation targets are checked before validation, hence 404 rather than 400
    if (readProp(c.body, "type") === "relation") requireNote(String(readProp(c.body, "value")));
    const p = validateAndPatch(c.body, {
      attributeId: [notNull, isValidEntityId],
      noteId: [notNull, noteIdValidator],
      type: [notNull, isAttributeType],
      name: [notNull, isString],
      value: [notNull, isString],
      isInheritable: [notNull, isBoolean],
      position: [notNull, isInteger],
    });
    const attr = store.createAttribute(p as Parameters<CoreStore["createAttribute"]>[0]);
    return json(201, attributePojo(attr));
  });
  get(
    "/etapi/attributes/:attributeId",
    (c) => json(200, attributePojo(requireAttribute(c.params.attributeId))),
  );
  del("/etapi/attributes/:attributeId", (c) => {
    store.deleteAttribute(c.params.attributeId);
    return noContent();
  });

  // ---- ETAPI: branches ---------------------------------------------------------------------

  post("/etapi/branches", (c) => {
    const p = validateAndPatch(c.body, {
      noteId: [notNull, noteIdValidator],
      parentNoteId: [notNull, noteIdValidator],
      notePosition: [notNull, isInteger],
      prefix: [isString],
      isExpanded: [notNull, isBoolean],
    });
    const { branch, created } = store.createBranch(p as Parameters<CoreStore["createBranch"]>[0]);
    return json(created ? 201 : 200, { ...branch });
  });
  const requireBranch = (id: string) => {
    const b = store.getBranch(id);
    if (!b) throw new CoreError(404, "BRANCH_NOT_FOUND", `Branch '${id}' not found.`);
    return b;
  };
  get("/etapi/branches/:branchId", (c) => json(200, { ...requireBranch(c.params.branchId) }));
  patch("/etapi/branches/:branchId", (c) => {
    requireBranch(c.params.branchId);
    const p = validateAndPatch(c.body, {
      notePosition: [notNull, isInteger],
      prefix: [isString],
      isExpanded: [notNull, isBoolean],
    });
    return json(200, { ...store.patchBranch(c.params.branchId, p) });
  });
  del("/etapi/branches/:branchId", (c) => {
    store.deleteBranch(c.params.branchId);
    return noContent();
  });
  // ---- ETAPI: revisions ---------------------------------------------------------------------

  const requireRevision = (id: string) => {
    const r = store.getRevision(id);
    if (!r) throw new CoreError(404, "REVISION_NOT_FOUND", `Revision '${id}' not found.`);
    if (r.isProtected) {
      throw new CoreError(
        400,
        "REVISION_IS_PROTECTED",
        `Revision '${id}' is protected and content cannot be read through ETAPI.`,
      );
    }
    return r;
  };
  get(
    "/etapi/revisions/:revisionId",
    (c) => json(200, revisionPojo(store, requireRevision(c.params.revisionId), false)),
  );
  get("/etapi/revisions/:revisionId/content", (c) => {
    const r = requireRevision(c.params.revisionId);
    const content = store.getRevisionContent(r.revisionId) ?? "";
    return contentReply(content, r.mime, r.title, r.type);
  });

  // ---- ETAPI: notes ----------------------------------------------------------------------------

  get("/etapi/notes", (c) => {
    const search = queryValue(c.url, "search");
    if (typeof search !== "string" || !search.trim()) {
      throw new CoreError(
        400,
        "SEARCH_QUERY_PARAM_MANDATORY",
        "'search' query parameter is mandatory.",
      );
    }
    const { hits } = store.search(search, parseSearchParams(c.url));
    return json(200, { results: hits.map((h) => store.notePojo(h.noteId)) });
  });
  post("/etapi/create-note", (c) => {
    const p = validateAndPatch(c.body, {
      parentNoteId: [notNull, noteIdValidator],
      title: [notNull, isString],
      type: [notNull, isNoteType],
      mime: [notNull, isString],
      content: [notNull, isString],
      notePosition: [notNull, isInteger],
      prefix: [notNull, isString],
      isExpanded: [notNull, isBoolean],
      noteId: [notNull, isValidEntityId],
      dateCreated: [notNull, isString, isLocalDateTime],
      utcDateCreated: [notNull, isString, isUtcDateTime],
    });
    const { note, branch } = store.createNote(p as Parameters<CoreStore["createNote"]>[0]);
    return json(201, { note: store.notePojo(note.noteId), branch: { ...branch } });
  });
  get(
    "/etapi/notes/:noteId",
    (c) => json(200, store.notePojo(requireNote(c.params.noteId).noteId)),
  );
  patch("/etapi/notes/:noteId", (c) => {
    notProtected(c.params.noteId, "cannot be modified");
    const p = validateAndPatch(c.body, {
      title: [notNull, isString],
      type: [notNull, isString],
      mime: [notNull, isString],
      dateCreated: [notNull, isString, isLocalDateTime],
      utcDateCreated: [notNull, isString, isUtcDateTime],
    });
    // Core snapshots before patching; a failed validation rolls the snapshot back
    store.saveRevisionIfNeeded(c.params.noteId);
    store.patchNote(c.params.noteId, p);
    return json(200, store.notePojo(c.params.noteId));
  });
  del("/etapi/notes/:noteId", (c) => {
    store.deleteNote(c.params.noteId);
    return noContent();
  });
  get("/etapi/notes/:noteId/content", (c) => {
    notProtected(c.params.noteId, "content cannot be read");
    const note = requireNote(c.params.noteId);
    const content = store.getContent(note.noteId) ?? "";
    return contentReply(content, note.mime, note.title, note.type);
  });
  put("/etapi/notes/:noteId/content", (c) => {
    notProtected(c.params.noteId, "cannot be modified");
    store.putNoteContent(c.params.noteId, c.body);
    return noContent();
  });
  post("/etapi/notes/:noteId/revision", (c) => {
    store.saveRevision(requireNote(c.params.noteId).noteId);
    return noContent();
  });
  get("/etapi/notes/:noteId/revisions", (c) => {
    const note = requireNote(c.params.noteId);
    return json(200, store.revisionsOf(note.noteId).map((r) => revisionPojo(store, r, true)));
  });
  get("/etapi/notes/:noteId/attachments", (c) => {
    const note = requireNote(c.params.noteId);
    return json(200, store.attachmentsOf(note.noteId).map((a) => attachmentPojo(store, a)));
  });

  // ---- dispatch ----------------------------------------------------------------------------

  // The service sends the raw `<id>_<secret>` token; Core's Basic and Bearer forms are not modelled.
  const authenticate = (header: string | null): boolean => {
    if (/^(Basic|Bearer) /.test(header ?? "")) {
      throw new CoreError(500, "GENERIC", "core sim: Basic and Bearer ETAPI auth are not modelled");
    }
    const chunks = (header ?? "").split("_");
    return chunks.length === 2 && store.findToken(chunks[0], chunks[1]) !== undefined;
  };

  return async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    const method = req.method === "HEAD" ? "GET" : req.method;
    try {
      const body = await parseBody(req);
      const path = url.pathname.length > 1 ? url.pathname.replace(/\/$/, "") : url.pathname;
      const parts = path.split("/");
      for (const route of routes) {
        const params = matchRoute(route, method, parts);
        if (!params) continue;
        if (route.auth && !authenticate(req.headers.get("authorization"))) {
          return toResponse(
            req,
            errorReply(new CoreError(401, "NOT_AUTHENTICATED", "Not authenticated")),
          );
        }
        const r = await route.handler({ req, url, params, body });
        return toResponse(req, r);
      }
      throw new CoreError(404, null, `Router not found for request ${req.method} ${url.pathname}`);
    } catch (e) {
      if (e instanceof CoreError) return toResponse(req, errorReply(e));
      const message = e instanceof Error ? e.message : String(e);
      return toResponse(req, errorReply(new CoreError(500, "GENERIC", message)));
    }
  };
}

/** `parseSearchParams` of etapi/notes.ts, with its messages (sic) and checking order. */
function parseSearchParams(url: URL): SearchParams {
  const raw = (name: string) => {
    const v = queryValue(url, name);
    return Array.isArray(v) ? v.join(",") : v;
  };
  const bool = (name: string) => {
    const v = raw(name);
    if (v === undefined) return undefined;
    if (v !== "true" && v !== "false") {
      throw new CoreError(
        400,
        "SEARCH_PARAM_VALIDATION_ERROR",
        `Cannot parse boolean '${name}' value '${v}, allowed values are 'true' and 'false'.`,
      );
    }
    return v === "true";
  };
  const str = (name: string) => {
    const v = queryValue(url, name);
    return typeof v === "string" ? v : undefined;
  };
  // the service sends none of Core's other options; they fail loudly rather than being ignored
  for (const name of ["orderBy", "orderDirection", "limit", "debug"]) {
    if (url.searchParams.has(name)) {
      throw new CoreError(500, "GENERIC", `core sim: unsupported search parameter ${name}`);
    }
  }
  const params: SearchParams = {};
  const fastSearch = bool("fastSearch");
  const includeArchivedNotes = bool("includeArchivedNotes");
  const ancestorNoteId = str("ancestorNoteId");
  const ancestorDepth = str("ancestorDepth");
  if (fastSearch !== undefined) params.fastSearch = fastSearch;
  if (includeArchivedNotes !== undefined) params.includeArchivedNotes = includeArchivedNotes;
  if (ancestorNoteId !== undefined) params.ancestorNoteId = ancestorNoteId;
  if (ancestorDepth !== undefined) params.ancestorDepth = ancestorDepth;
  return params;
}

// ---------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------

function faultBody(status: number): string {
  if (status === 401) {
    return JSON.stringify({ status, code: "NOT_AUTHENTICATED", message: "Not authenticated" });
  }
  return JSON.stringify({
    status,
    code: "GENERIC",
    message: `core sim: injected fault (HTTP ${status})`,
  });
}

/**
 * Starts the Core double on `Deno.serve` (random port by default) with the sample world.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * // Declared, not run here: it listens on a port.
 * async function unavailableOnce(): Promise<void> {
 *   const sim = await startCoreSim({ world: true });
 *   sim.fault({ path: "/etapi/app-info", status: 503, times: 1 });
 *   const res = await fetch(`${sim.url}/etapi/app-info`, {
 *     headers: { Authorization: sim.token },
 *   });
 *   await res.body?.cancel();
 *   assert.equal(res.status, 503);
 *   await sim.close();
 * }
 * ```
 */
export function startCoreSim(opts: CoreSimOptions = {}): Promise<CoreSim> {
  const store = createCoreStore({ now: opts.now });
  if (opts.world ?? true) seedWorld(store);
  else seedSystemNotes(store);
  const token = opts.token ?? DEFAULT_CORE_TOKEN;
  store.addToken(token, "core sim");
  const http = startSimServer({
    name: "core",
    port: opts.port,
    hostname: opts.hostname,
    faultBody,
    deadlines: opts.deadlines,
    handler: () => createCoreHandler(store, opts.password ?? DEFAULT_CORE_PASSWORD),
    compress: true, // Core runs Express's compression() on every answer
  });
  return Promise.resolve({
    url: http.url,
    token,
    store,
    requests: http.requests,
    clearRequests: http.clearRequests,
    fault: http.fault,
    clearFaults: http.clearFaults,
    held: http.held,
    close: http.close,
  });
}
