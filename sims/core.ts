/**
 * Core test double, HTTP layer: real ETAPI (`/etapi/*`) and share API (`/share/*`) wire formats
 * over the in-memory {@link CoreStore}, with fault injection and request recording.
 *
 * Behaviour copies the real Core, quirks included. Where the double does
 * not model something it fails loudly (500 with a message starting "core sim:") instead of
 * guessing, e.g. search syntax outside the modelled subset.
 *
 * @example
 * ```ts
 * const sim = await startCoreSim();
 * const res = await fetch(`${sim.url}/etapi/notes/root`, { headers: { Authorization: sim.token } });
 * console.log((await res.json()).title); // "root"
 * await sim.close();
 * ```
 * @module
 */
import { createHash, timingSafeEqual } from "node:crypto";
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
  type ShareView,
  type TokenRecord,
} from "./core_store.ts";
import { type RecordedRequest, type SimFault, startSimServer, waitForAbort } from "./sim_http.ts";
import { seedSystemNotes, seedWorld } from "./world.ts";

export type { CoreStore } from "./core_store.ts";

/**
 * Default ETAPI token of a sim: `<12 alnum id>_<44-char base64 secret>`.
 *
 * @example
 * ```ts
 * fetch(`${sim.url}/etapi/app-info`, { headers: { Authorization: DEFAULT_CORE_TOKEN } });
 * ```
 */
export const DEFAULT_CORE_TOKEN = "coreSimTok01_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
/**
 * Default Core password accepted by `POST /etapi/auth/login`.
 *
 * @example
 * ```ts
 * fetch(`${sim.url}/etapi/auth/login`, {
 *   method: "POST",
 *   headers: { "Content-Type": "application/json" },
 *   body: JSON.stringify({ password: DEFAULT_CORE_PASSWORD }),
 * });
 * ```
 */
export const DEFAULT_CORE_PASSWORD = "core-sim-password";
/** `appVersion` reported by `GET /etapi/app-info`. */
export const CORE_APP_VERSION = "0.101.3";

/** An injected failure; see {@link CoreSim.fault}. */
export type CoreFault = SimFault;
export type { RecordedRequest } from "./sim_http.ts";

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
  /**
   * Copy Core's `/share/api/*` credential failure literally: no response at all (the request
   * hangs until the client aborts). Default false: answer 401 like `/share/:id` does.
   */
  shareApiHangsOnAuth?: boolean;
  /** Injected clock for deterministic timestamps and the revision rule. */
  now?: () => Date;
}

/** A running Core double. */
export interface CoreSim {
  /** Base URL without trailing slash; ETAPI is at `url + "/etapi"`, share at `url + "/share"`. */
  url: string;
  /** A valid ETAPI token. */
  token: string;
  /** Direct data access for setup and assertions. */
  store: CoreStore;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  clearRequests(): void;
  /** Adds a fault; faults are checked in the order added, before normal handling. */
  fault(f: CoreFault): void;
  clearFaults(): void;
  /** Stops the server; hanging and delayed requests are ended first. */
  close(): Promise<void>;
}

/** Options of {@link createCoreHandler}. */
export interface CoreHandlerOptions {
  /** Password for `/etapi/auth/login`; default {@link DEFAULT_CORE_PASSWORD}. */
  password?: string;
  /** See {@link CoreSimOptions.shareApiHangsOnAuth}. */
  shareApiHangsOnAuth?: boolean;
  /** Aborting it ends requests that hang on purpose. */
  closed?: AbortSignal;
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
 * What Core shows instead of a protected note's or revision's title where it cannot decrypt it
 * (no protected session): the share API (`SNote`) and revisions (`BRevision`). ETAPI notes
 * carry the stored ciphertext instead.
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
  const known = [
    "application/json",
    "text/plain",
    "application/octet-stream",
    "application/x-www-form-urlencoded",
  ];
  if (!known.includes(type)) {
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
    case "application/x-www-form-urlencoded": {
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of new URLSearchParams(text())) {
        const prev = out[k];
        out[k] = prev === undefined ? v : [...(Array.isArray(prev) ? prev : [prev]), v];
      }
      return out;
    }
    default:
      return parseJsonStrict(text());
  }
}

/** body-parser's strict JSON: empty → {}, only objects/arrays, errors → 500 `{message}`. */
function parseJsonStrict(raw: string): unknown {
  const str = raw.trim();
  if (str === "") return {};
  const first = str[0];
  try {
    if (first !== "{" && first !== "[") {
      // body-parser masks the text with '#' to get V8's message, then puts the text back
      const at = raw.indexOf(first);
      JSON.parse(raw.slice(0, at) + "#".repeat(raw.length - at));
    }
    return JSON.parse(raw);
  } catch (e) {
    let message = (e as Error).message;
    if (first !== "{" && first !== "[") {
      const at = raw.indexOf(first);
      message = message.replace(/#+/g, (m) => raw.substring(at, at + m.length));
    }
    throw new CoreError(500, null, message);
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

function contentReply(
  content: Content,
  mime: string,
  title: string,
  type: string | null,
  disposition = true,
): Reply {
  const headers: Record<string, string> = {
    "Content-Type": contentType(content, mime),
    "Cache-Control": "no-cache, no-store, must-revalidate",
  };
  if (disposition) {
    headers["Content-Disposition"] = contentDisposition(downloadTitle(title, type, mime));
  }
  return reply(200, content, headers);
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

function attachmentPojo(store: CoreStore, a: AttachmentRecord, full: boolean) {
  const { utcDateScheduledForErasureSince, ...rest } = a;
  if (!full) return rest; // POST response: both keys are undefined on a fresh entity
  const c = store.getAttachmentContent(a.attachmentId);
  return {
    ...rest,
    utcDateScheduledForErasureSince,
    // SQLite's LENGTH(blobs.content): bytes of a binary blob, characters of a text one
    contentLength: c === undefined ? 0 : typeof c === "string" ? [...c].length : c.length,
  };
}

function attributePojo(a: AttributeRecord) {
  return { ...a };
}

// ---------------------------------------------------------------------------------------------
// Share rendering (share/content_renderer.ts) on a tiny HTML tree
// ---------------------------------------------------------------------------------------------

interface HText {
  kind: "text";
  raw: string;
}
interface HRaw {
  kind: "raw";
  raw: string;
}
interface HElem {
  kind: "elem";
  tag: string;
  /** [name, raw (entity-encoded) value or null for a bare attribute] */
  attrs: [string, string | null][];
  /** Original opening tag; null once an attribute changed. */
  open: string | null;
  children: HNode[];
  isVoid: boolean;
}
type HNode = HText | HRaw | HElem;

const VOID_TAGS = new Set([
  "area",
  "base",
  "br",
  "col",
  "embed",
  "hr",
  "img",
  "input",
  "link",
  "meta",
  "source",
  "track",
  "wbr",
]);
const RAW_TEXT_TAGS = new Set(["script", "style", "textarea", "title"]);
const OPEN_TAG =
  /<([A-Za-z][A-Za-z0-9:-]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*(\/?)>/y;
const CLOSE_TAG = /<\/\s*([A-Za-z][A-Za-z0-9:-]*)\s*>/y;
const ATTRIBUTE = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;

function parseHtml(html: string): HNode[] {
  const root: HElem = {
    kind: "elem",
    tag: "#root",
    attrs: [],
    open: null,
    children: [],
    isVoid: false,
  };
  const stack: HElem[] = [root];
  const top = () => stack[stack.length - 1];
  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf("<", i);
    if (lt === -1) {
      top().children.push({ kind: "text", raw: html.slice(i) });
      break;
    }
    if (lt > i) top().children.push({ kind: "text", raw: html.slice(i, lt) });
    if (html.startsWith("<!--", lt)) {
      const end = html.indexOf("-->", lt + 4);
      const stop = end === -1 ? html.length : end + 3;
      top().children.push({ kind: "raw", raw: html.slice(lt, stop) });
      i = stop;
      continue;
    }
    if (html[lt + 1] === "!" || html[lt + 1] === "?") {
      const end = html.indexOf(">", lt);
      const stop = end === -1 ? html.length : end + 1;
      top().children.push({ kind: "raw", raw: html.slice(lt, stop) });
      i = stop;
      continue;
    }
    CLOSE_TAG.lastIndex = lt;
    const close = CLOSE_TAG.exec(html);
    if (close) {
      const tag = close[1].toLowerCase();
      const at = stack.findLastIndex((e) => e.tag === tag);
      if (at > 0) stack.length = at;
      i = lt + close[0].length;
      continue;
    }
    OPEN_TAG.lastIndex = lt;
    const open = OPEN_TAG.exec(html);
    if (!open) {
      top().children.push({ kind: "text", raw: "<" });
      i = lt + 1;
      continue;
    }
    const tag = open[1].toLowerCase();
    const el: HElem = {
      kind: "elem",
      tag,
      attrs: [...open[2].matchAll(ATTRIBUTE)].map((m) => [
        m[1].toLowerCase(),
        m[2] ?? m[3] ?? m[4] ?? null,
      ]),
      open: open[0],
      children: [],
      isVoid: VOID_TAGS.has(tag) || open[3] === "/",
    };
    top().children.push(el);
    i = lt + open[0].length;
    if (el.isVoid) continue;
    if (RAW_TEXT_TAGS.has(tag)) {
      const end = html.toLowerCase().indexOf(`</${tag}`, i);
      const stop = end === -1 ? html.length : end;
      if (stop > i) el.children.push({ kind: "text", raw: html.slice(i, stop) });
      i = stop;
      continue;
    }
    stack.push(el);
  }
  return root.children;
}

function serializeHtml(nodes: HNode[]): string {
  return nodes.map((n) => {
    if (n.kind !== "elem") return n.raw;
    const open = n.open ??
      `<${n.tag}${
        n.attrs.map(([k, v]) => v === null ? ` ${k}` : ` ${k}="${v.replaceAll('"', "&quot;")}"`)
          .join("")
      }>`;
    return n.isVoid ? open : `${open}${serializeHtml(n.children)}</${n.tag}>`;
  }).join("");
}

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos|nbsp);/gi, (_, e: string) => {
    const lower = e.toLowerCase();
    if (lower.startsWith("#x")) return String.fromCodePoint(parseInt(lower.slice(2), 16));
    if (lower.startsWith("#")) return String.fromCodePoint(parseInt(lower.slice(1), 10));
    return { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" }[lower] ?? _;
  });
}

/** Escapes text for HTML, like the escape-html package Core uses. */
function escapeHtml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

function getAttr(el: HElem, name: string): string | undefined {
  const found = el.attrs.find(([k]) => k === name);
  return found ? decodeEntities(found[1] ?? "") : undefined;
}

function setAttr(el: HElem, name: string, value: string): void {
  const encoded = value.replace(/&/g, "&amp;").replace(/"/g, "&quot;");
  const found = el.attrs.find(([k]) => k === name);
  if (found) found[1] = encoded;
  else el.attrs.push([name, encoded]);
  el.open = null;
}

function removeAttr(el: HElem, name: string): void {
  el.attrs = el.attrs.filter(([k]) => k !== name);
  el.open = null;
}

function classesOf(el: HElem): string[] {
  return (getAttr(el, "class") ?? "").split(/\s+/).filter(Boolean);
}

function addClass(el: HElem, cls: string): void {
  const list = classesOf(el);
  if (!list.includes(cls)) setAttr(el, "class", [...list, cls].join(" "));
}

/** Replaces elements for which `fn` returns nodes; recurses into the others. */
function mapElements(nodes: HNode[], fn: (el: HElem) => HNode[] | null): HNode[] {
  return nodes.flatMap((n) => {
    if (n.kind !== "elem") return [n];
    const replacement = fn(n);
    if (replacement) return replacement;
    n.children = mapElements(n.children, fn);
    return [n];
  });
}

function textOf(nodes: HNode[]): string {
  return nodes.map((n) => n.kind === "text" ? n.raw : n.kind === "elem" ? textOf(n.children) : "")
    .join("");
}

function someElement(nodes: HNode[], pred: (el: HElem) => boolean): boolean {
  return nodes.some((n) => n.kind === "elem" && (pred(n) || someElement(n.children, pred)));
}

function mapTexts(nodes: HNode[], fn: (raw: string) => string): HNode[] {
  return nodes.map((n) => {
    if (n.kind === "text") return { kind: "text", raw: fn(n.raw) };
    if (n.kind === "elem" && !RAW_TEXT_TAGS.has(n.tag)) n.children = mapTexts(n.children, fn);
    return n;
  });
}

const TYPE_ICONS: Record<string, string> = {
  code: "bx bx-code",
  file: "bx bx-file",
  image: "bx bx-image",
  search: "bx bx-file-find",
  relationMap: "bx bxs-network-chart",
  book: "bx bx-book",
  noteMap: "bx bxs-network-chart",
  mermaid: "bx bx-selection",
  canvas: "bx bx-pen",
  webView: "bx bx-globe-alt",
  launcher: "bx bx-link",
  doc: "bx bxs-file-doc",
  contentWidget: "bx bxs-widget",
  mindMap: "bx bx-sitemap",
  render: "bx bx-extension",
};

interface RenderCtx {
  store: CoreStore;
  share: ShareView;
}

function iconOf(ctx: RenderCtx, noteId: string): string {
  const label = ctx.share.labelValue(noteId, "iconClass");
  if (label !== undefined) return label;
  const note = ctx.store.getNote(noteId)!;
  if (note.type === "text") {
    return ctx.share.childrenOf(noteId).length > 0 ? "bx bx-folder" : "bx bx-note";
  }
  return TYPE_ICONS[note.type] ?? "bx bx-note";
}

/** `getContent` of the share renderer: string HTML or raw bytes. */
function renderShareContent(ctx: RenderCtx, noteId: string, depth = 0): Content {
  const note = ctx.store.getNote(noteId)!;
  if (note.isProtected) return "<p>Protected note cannot be displayed</p>";
  // AllCodex: gmOnly, then draft, blank the rendered content (any value, inherited too)
  if (ctx.share.labelValue(noteId, "gmOnly") !== undefined) return "";
  if (ctx.share.labelValue(noteId, "draft") !== undefined) return "";
  const content = ctx.store.getContent(noteId) ?? "";
  const imgSrc = `api/images/${noteId}/${encodeURIComponent(note.title)}?${note.utcDateModified}`;
  switch (note.type) {
    case "text":
      return typeof content === "string" ? renderText(ctx, noteId, content, depth) : content;
    case "code":
      return typeof content === "string" && content.trim() ? `<pre>${content}</pre>` : content;
    case "mermaid":
      return typeof content !== "string" ? content : `
<img src="${imgSrc}">
<hr>
<details>
    <summary>Chart source</summary>
    <pre>${escapeHtml(content)}</pre>
</details>`;
    case "image":
    case "canvas":
    case "mindMap":
      return `<img src="${imgSrc}">`;
    case "file":
      return note.mime === "application/pdf"
        ? `<iframe class="pdf-view" src="../pdfjs/web/viewer.html?file=../../../share/api/notes/${noteId}/view"></iframe>`
        : `<button type="button" onclick="location.href='api/notes/${noteId}/download'">Download file</button>`;
    case "book":
      return content;
    case "webView": {
      const src = ctx.share.labelValue(noteId, "webViewSrc");
      if (!src) return content;
      const safe = /^\s*(javascript|data|vbscript):/i.test(src) ? "about:blank" : src;
      return `<iframe class="webview" src="${safe}" sandbox="allow-same-origin allow-scripts allow-popups"></iframe>`;
    }
    default:
      return "<p>This note type cannot be displayed.</p>";
  }
}

function renderText(ctx: RenderCtx, noteId: string, html: string, depth: number): string {
  const { share } = ctx;
  let doc = parseHtml(html);
  // 1. include-note sections are replaced by the rendered included note (if shared)
  doc = mapElements(doc, (el) => {
    if (el.tag !== "section" || !classesOf(el).includes("include-note")) return null;
    const id = getAttr(el, "data-note-id");
    if (!id || !share.notes.has(id) || depth > 8) return null;
    const included = renderShareContent(ctx, id, depth + 1);
    return typeof included === "string" ? parseHtml(included) : null;
  });
  // 2. AllCodex: every `.gm-only` element goes, at any depth, whatever other classes it has
  doc = mapElements(doc, (el) => classesOf(el).includes("gm-only") ? [] : null);
  // 3. AllCodex world variables from shared #worldVariables notes
  const vars: Record<string, string> = {};
  for (const id of share.notes) {
    if (share.labelValue(id, "worldVariables") === undefined) continue;
    try {
      const parsed = JSON.parse(String(ctx.store.getContent(id) ?? ""));
      if (parsed && typeof parsed === "object") Object.assign(vars, parsed);
    } catch {
      // Core logs invalid JSON and skips the note
    }
  }
  if (Object.keys(vars).length > 0) {
    doc = mapTexts(doc, (raw) =>
      raw.replace(/\{\{([^{}]+?)\}\}/g, (whole, name: string) => {
        const value = vars[name.trim()];
        return value === undefined ? whole : escapeHtml(String(value));
      }));
  }
  const isEmpty = textOf(doc).trim() === "" && !someElement(doc, (el) => el.tag === "img");
  if (isEmpty) return serializeHtml(doc);
  // 4./5. link rewriting and reference-link clean-up
  doc = mapElements(doc, (el) => el.tag === "a" ? [rewriteLink(ctx, el)] : null);
  let out = serializeHtml(doc);
  if (share.labelValue(noteId, "shareIndex") !== undefined) out += renderIndex(ctx);
  return out;
}

function rewriteLink(ctx: RenderCtx, el: HElem): HNode {
  const { share, store } = ctx;
  const href = getAttr(el, "href");
  if (href?.startsWith("#") && !href.startsWith("#fn")) {
    const attachmentId = /attachmentId=([a-zA-Z0-9_]+)/.exec(href)?.[1];
    if (attachmentId) {
      const att = share.hasAttachment(attachmentId) ? store.getAttachment(attachmentId) : undefined;
      if (att) {
        setAttr(el, "href", `api/attachments/${attachmentId}/download`);
        addClass(el, "attachment-link");
        addClass(el, `role-${att.role}`);
        el.children = [{ kind: "text", raw: att.title }];
      } else {
        removeAttr(el, "href");
      }
    } else {
      const linked = href.split("?")[0].split("/").at(-1) ?? "";
      if (share.notes.has(linked)) {
        const external = share.labelValue(linked, "shareExternalLink");
        const target = external !== undefined ? external : `./${share.shareIdOf(linked)}`;
        if (target) setAttr(el, "href", target);
        if (external !== undefined) {
          setAttr(el, "target", "_blank");
          setAttr(el, "rel", "noopener noreferrer");
        }
        addClass(el, `type-${store.getNote(linked)!.type}`);
      } else {
        removeAttr(el, "href");
      }
    }
  }
  if (!classesOf(el).includes("reference-link")) return el;
  if (classesOf(el).includes("attachment-link")) {
    el.children = [{
      kind: "raw",
      raw: `<span><span class="tn-icon bx bx-download"></span>${
        escapeHtml(textOf(el.children))
      }</span>`,
    }];
    return el;
  }
  // Core looks the note up by the last segment of the (already rewritten) href, so links to
  // aliased notes and to the share root turn into plain text, like in Core.
  const target = (getAttr(el, "href") ?? "").split("/").at(-1) ?? "";
  if (!share.notes.has(target)) return { kind: "text", raw: textOf(el.children) };
  const note = store.getNote(target)!;
  el.children = [{
    kind: "raw",
    raw: note.isProtected
      ? "[protected]"
      : `<span><span class="${iconOf(ctx, target)}"></span>${escapeHtml(note.title)}</span>`,
  }];
  return el;
}

function renderIndex(ctx: RenderCtx): string {
  const items = ctx.share.childrenOf("_share").map((id) => {
    const note = ctx.store.getNote(id)!;
    const external = ctx.share.labelValue(id, "shareExternalLink");
    const href = external ?? `./${ctx.share.shareIdOf(id)}`;
    const target = external !== undefined ? `target="_blank" rel="noopener noreferrer"` : "";
    return `<li><a class="${note.type}" href="${href}" ${target}>${
      escapeHtml(note.title)
    }</a></li>`;
  });
  return `<ul id="index">${items.join("")}</ul>`;
}

// ---------------------------------------------------------------------------------------------
// Routing
// ---------------------------------------------------------------------------------------------

interface Ctx {
  req: Request;
  url: URL;
  params: Record<string, string>;
  body: unknown;
  token: TokenRecord | null;
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

/**
 * Builds the request handler of the Core double (ETAPI + share API) over `store`, e.g. to mount
 * it in-process without a socket. Tokens live in the store: register one first.
 *
 * @example
 * ```ts
 * const store = createCoreStore();
 * seedWorld(store);
 * store.addToken(DEFAULT_CORE_TOKEN);
 * const handler = createCoreHandler(store);
 * const res = await handler(new Request("http://core/etapi/app-info", {
 *   headers: { Authorization: DEFAULT_CORE_TOKEN },
 * }));
 * ```
 */
export function createCoreHandler(
  store: CoreStore,
  opts: CoreHandlerOptions = {},
): (req: Request) => Promise<Response> {
  const password = opts.password ?? DEFAULT_CORE_PASSWORD;
  const startedAt = store.now().toISOString();
  const failedLogins: number[] = [];
  const routes: Route[] = [];
  const add = (method: string, path: string, auth: boolean, handler: RouteHandler) =>
    routes.push({ method, segments: path.split("/"), auth, handler });
  const get = (path: string, handler: RouteHandler) => add("GET", path, true, handler);
  const post = (path: string, handler: RouteHandler) => add("POST", path, true, handler);
  const patch = (path: string, handler: RouteHandler) => add("PATCH", path, true, handler);
  const put = (path: string, handler: RouteHandler) => add("PUT", path, true, handler);
  const del = (path: string, handler: RouteHandler) => add("DELETE", path, true, handler);
  const share = (path: string, handler: RouteHandler) => add("GET", path, false, handler);
  const unsupported = (method: string, path: string, auth = true) =>
    add(method, path, auth, (c) => {
      throw new CoreError(
        500,
        "GENERIC",
        `core sim: unsupported endpoint ${c.req.method} ${c.url.pathname}`,
      );
    });

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

  // ---- share API (registered first, no ETAPI token) ------------------------------------

  const ctxOf = (): RenderCtx => ({ store, share: store.share() });

  /** checkNoteAccess: the note, or the reply (404/403/401) — "hang" for the api flavour. */
  const shareAccess = (
    c: Ctx,
    noteId: string,
    flavour: "page" | "api",
  ): Reply | "hang" | null => {
    const sv = store.share();
    if (!sv.notes.has(noteId)) {
      return flavour === "page"
        ? json(404, { message: "Not found" })
        : json(404, { message: `Note '${noteId}' not found.` });
    }
    if (noteId === "_share" && !sv.shareIndexEnabled) {
      return json(403, { message: "Accessing share index is forbidden." });
    }
    const credentials = sv.attributesOf(noteId).filter((a) =>
      a.type === "label" && a.name === "shareCredentials"
    );
    if (credentials.length === 0) return null;
    const header = c.req.headers.get("authorization");
    if (header?.startsWith("Basic ")) {
      let decoded = "";
      try {
        decoded = new TextDecoder().decode(
          Uint8Array.from(atob(header.slice(6).trim()), (ch) => ch.charCodeAt(0)),
        );
      } catch {
        decoded = "";
      }
      if (credentials.some((a) => safeEqual(decoded, a.value))) return null;
    }
    // Core's share API handlers return without writing anything on this failure; copying that
    // (a hung request) is opt-in because it stalls clients. Otherwise answer like the pages do.
    if (flavour === "api" && opts.shareApiHangsOnAuth) return "hang";
    return reply(401, "Unauthorized", {
      "Content-Type": "text/plain; charset=utf-8",
      "WWW-Authenticate": 'Basic realm="User Visible Realm", charset="UTF-8"',
    });
  };

  const hang = async (c: Ctx): Promise<Reply> => {
    await waitForAbort([c.req.signal, opts.closed]);
    return reply(503, "core sim closed", { "Content-Type": "text/plain; charset=utf-8" });
  };

  const noIndex = (noteId: string, headers: Headers) => {
    if (store.share().isLabelTruthy(noteId, "shareDisallowRobotIndexing")) {
      headers.set("X-Robots-Tag", "noindex");
    }
  };

  const renderNote = (c: Ctx, noteId: string | undefined): Reply => {
    if (!noteId) return json(404, { message: "Not found" });
    const denied = shareAccess(c, noteId, "page");
    if (denied && denied !== "hang") return denied;
    const note = store.getNote(noteId)!;
    const sv = store.share();
    let out: Reply;
    if (sv.isLabelTruthy(noteId, "shareRaw") || c.url.searchParams.has("raw")) {
      const content = store.getContent(noteId) ?? "";
      out = reply(200, content, { "Content-Type": contentType(content, note.mime) });
    } else {
      const content = renderShareContent(ctxOf(), noteId);
      out = json(200, {
        noteId: note.noteId,
        title: note.title,
        type: note.type,
        mime: note.mime,
        header: "",
        content: typeof content === "string" ? content : new TextDecoder().decode(content),
      });
    }
    noIndex(noteId, out.headers);
    return out;
  };

  const withShareNote = async (
    c: Ctx,
    noteId: string,
    fn: () => Reply,
  ): Promise<Reply> => {
    const denied = shareAccess(c, noteId, "api");
    if (denied === "hang") return await hang(c);
    if (denied) return denied;
    const out = fn();
    noIndex(noteId, out.headers);
    return out;
  };

  share("/share", (c) => {
    if (!c.url.pathname.endsWith("/")) {
      return reply(302, "Found. Redirecting to ../share/", {
        "Content-Type": "text/plain; charset=utf-8",
        "Location": "../share/",
      });
    }
    const rootId = store.share().shareRootNoteId;
    if (!rootId) return json(404, { message: "Share root note not found" });
    return renderNote(c, rootId);
  });
  share("/share/:shareId", (c) => {
    const sv = store.share();
    const id = c.params.shareId;
    return renderNote(c, sv.aliasToNote.get(id) ?? (sv.notes.has(id) ? id : undefined));
  });
  share("/share/api/notes/:noteId", (c) =>
    withShareNote(c, c.params.noteId, () => {
      const id = c.params.noteId;
      const note = store.getNote(id)!;
      const sv = store.share();
      return json(200, {
        noteId: note.noteId,
        title: note.isProtected ? PROTECTED_TITLE : note.title,
        type: note.type,
        mime: note.mime,
        utcDateModified: note.utcDateModified,
        attributes: sv.attributesOf(id)
          .filter((a) => a.type === "label" && a.name !== "shareCredentials")
          .map((a) => ({
            attributeId: a.attributeId,
            noteId: a.noteId,
            type: a.type,
            name: a.name,
            position: a.position,
            value: a.value,
            isInheritable: a.isInheritable,
          })),
        attachments: store.attachmentsOf(id).map((a) => ({
          attachmentId: a.attachmentId,
          role: a.role,
          mime: a.mime,
          title: a.title,
          blobId: a.blobId,
          utcDateModified: a.utcDateModified,
        })),
        parentNoteIds: sv.parentsOf(id),
        childNoteIds: sv.childrenOf(id),
      });
    }));
  share("/share/api/notes/:noteId/download", (c) =>
    withShareNote(c, c.params.noteId, () => {
      const note = store.getNote(c.params.noteId)!;
      const content = store.getContent(note.noteId) ?? "";
      return contentReply(content, note.mime, note.title, note.type);
    }));
  share("/share/api/notes/:noteId/view", (c) =>
    withShareNote(c, c.params.noteId, () => {
      const note = store.getNote(c.params.noteId)!;
      const content = store.getContent(note.noteId) ?? "";
      return contentReply(content, note.mime, note.title, note.type, false);
    }));
  share("/share/api/images/:noteId/:filename", (c) =>
    withShareNote(c, c.params.noteId, () => {
      const note = store.getNote(c.params.noteId)!;
      if (note.type === "image") {
        const content = store.getContent(note.noteId) ?? new Uint8Array();
        return reply(200, content, { "Content-Type": contentType(content, note.mime) });
      }
      const svgName = {
        canvas: "canvas-export.svg",
        mermaid: "mermaid-export.svg",
        mindMap: "mindmap-export.svg",
      }[
        note.type
      ];
      if (svgName) {
        const att = store.attachmentsOf(note.noteId).find((a) => a.title === svgName);
        if (!att) {
          // Core returns without sending anything (the request hangs); fail loudly instead
          return json(500, {
            message: `core sim: no ${svgName} attachment (Core would not answer)`,
          });
        }
        const svg = store.getAttachmentContent(att.attachmentId) ?? "<svg/>";
        return reply(200, typeof svg === "string" ? svg : new TextDecoder().decode(svg), {
          "Content-Type": "image/svg+xml; charset=utf-8",
          "Cache-Control": "no-cache, no-store, must-revalidate",
        });
      }
      return json(400, { message: "Requested note is not a shareable image" });
    }));
  const shareAttachment = (c: Ctx, fn: (a: AttachmentRecord) => Reply): Promise<Reply> | Reply => {
    const id = c.params.attachmentId;
    const att = store.share().hasAttachment(id) ? store.getAttachment(id) : undefined;
    if (!att) return json(404, { message: `Attachment '${id}' not found.` });
    return withShareNote(c, att.ownerId, () => fn(att));
  };
  share("/share/api/attachments/:attachmentId/image/:filename", (c) =>
    shareAttachment(c, (att) => {
      if (att.role !== "image") {
        return json(400, { message: "Requested attachment is not a shareable image" });
      }
      const content = store.getAttachmentContent(att.attachmentId) ?? new Uint8Array();
      return reply(200, content, { "Content-Type": contentType(content, att.mime) });
    }));
  share("/share/api/attachments/:attachmentId/download", (c) =>
    shareAttachment(c, (att) => {
      const content = store.getAttachmentContent(att.attachmentId) ?? "";
      return contentReply(content, att.mime, att.title, null);
    }));
  share("/share/api/notes", async (c) => {
    const ancestor = queryValue(c.url, "ancestorNoteId") ?? "_share";
    if (typeof ancestor !== "string") {
      return json(400, { message: "'ancestorNoteId' parameter is mandatory." });
    }
    const denied = shareAccess(c, ancestor, "api");
    if (denied === "hang") return await hang(c);
    if (denied) return denied;
    const search = queryValue(c.url, "search");
    if (typeof search !== "string" || !search.trim()) {
      return json(400, { message: "'search' parameter is mandatory." });
    }
    const sv = store.share();
    let hits;
    try {
      hits = store.search(search, { ancestorNoteId: ancestor }).hits;
    } catch (e) {
      if (e instanceof CoreError) throw new CoreError(e.status, null, e.message);
      throw e;
    }
    const paths = sharePaths(sv, ancestor);
    const shareTitle = (id: string) => {
      const note = store.getNote(id)!;
      return note.isProtected ? PROTECTED_TITLE : note.title; // SNote's title
    };
    return json(200, {
      results: hits.filter((h) => sv.notes.has(h.noteId)).map((h) => ({
        id: sv.shareIdOf(h.noteId),
        title: shareTitle(h.noteId),
        score: h.score,
        path: (paths.get(h.noteId) ?? []).map(shareTitle).join(" / "),
      })),
    });
  });

  // ---- ETAPI: auth, app-info -----------------------------------------------------------

  add("POST", "/etapi/auth/login", false, (c) => {
    const windowStart = store.now().getTime() - 15 * 60_000;
    while (failedLogins.length > 0 && failedLogins[0] < windowStart) failedLogins.shift();
    if (failedLogins.length >= 10) {
      // express-rate-limit: 10 failed attempts per 15 minutes, plain-text 429
      return reply(429, "Too many requests, please try again later.", {
        "Content-Type": "text/html; charset=utf-8",
      });
    }
    if (c.body === undefined || c.body === null) {
      failedLogins.push(store.now().getTime());
      throw new CoreError(
        500,
        "GENERIC",
        `Cannot destructure property 'password' of 'req.body' as it is ${c.body}.`,
      );
    }
    const { password: given, tokenName } = c.body as Record<string, unknown>;
    if (typeof given !== "string" || !safeEqual(given, password)) {
      failedLogins.push(store.now().getTime());
      throw new CoreError(401, "WRONG_PASSWORD", "Wrong password.");
    }
    const name = typeof tokenName === "string" && tokenName ? tokenName : "ETAPI login";
    return json(201, { authToken: store.createToken(name) });
  });
  post("/etapi/auth/logout", (c) => {
    if (!c.token || c.token.etapiTokenId.startsWith("legacy")) {
      throw new CoreError(400, "GENERIC", "Cannot logout this token.");
    }
    store.deleteToken(c.token.etapiTokenId);
    return noContent();
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
  post("/etapi/attachments", (c) => {
    const p = validateAndPatch(c.body, {
      ownerId: [notNull, noteIdValidator],
      role: [notNull, isString],
      mime: [notNull, isString],
      title: [notNull, isString],
      position: [notNull, isInteger],
      content: [isString],
    });
    const att = store.createAttachment(p as Parameters<CoreStore["createAttachment"]>[0]);
    return json(201, attachmentPojo(store, att, false));
  });
  get(
    "/etapi/attachments/:attachmentId",
    (c) => json(200, attachmentPojo(store, requireAttachment(c.params.attachmentId), true)),
  );
  patch("/etapi/attachments/:attachmentId", (c) => {
    requireAttachment(c.params.attachmentId);
    const p = validateAndPatch(c.body, {
      role: [notNull, isString],
      mime: [notNull, isString],
      title: [notNull, isString],
      position: [notNull, isInteger],
    });
    const att = store.patchAttachment(c.params.attachmentId, p);
    return json(200, attachmentPojo(store, att, true));
  });
  del("/etapi/attachments/:attachmentId", (c) => {
    store.deleteAttachment(c.params.attachmentId);
    return noContent();
  });
  get("/etapi/attachments/:attachmentId/content", (c) => {
    const att = requireAttachment(c.params.attachmentId);
    const content = store.getAttachmentContent(att.attachmentId) ?? "";
    return contentReply(content, att.mime, att.title, att.role); // formatDownloadTitle(…, role, …)
  });
  put("/etapi/attachments/:attachmentId/content", (c) => {
    requireAttachment(c.params.attachmentId);
    store.putAttachmentContent(c.params.attachmentId, c.body);
    return noContent();
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
  patch("/etapi/attributes/:attributeId", (c) => {
    const attr = requireAttribute(c.params.attributeId);
    let p: Record<string, unknown>;
    if (attr.type === "label") {
      p = validateAndPatch(c.body, { value: [notNull, isString], position: [notNull, isInteger] });
    } else {
      // Core checks `value` as a note first, then allows only `position`: never patchable
      requireNote(String(readProp(c.body, "value")));
      p = validateAndPatch(c.body, { position: [notNull, isInteger] });
    }
    return json(200, attributePojo(store.patchAttribute(attr.attributeId, p)));
  });
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
  post("/etapi/refresh-note-ordering/:parentNoteId", (c) => {
    requireNote(c.params.parentNoteId);
    return noContent();
  });

  // ---- ETAPI: revisions (registered before notes, so /notes/history is not a noteId) -----

  unsupported("GET", "/etapi/notes/history");
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
    const { hits, debugInfo } = store.search(search, parseSearchParams(c.url));
    const body: Record<string, unknown> = { results: hits.map((h) => store.notePojo(h.noteId)) };
    if (debugInfo) body.debugInfo = debugInfo;
    return json(200, body);
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
  unsupported("GET", "/etapi/notes/:noteId/export");
  unsupported("POST", "/etapi/notes/:noteId/import");
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
    return json(200, store.attachmentsOf(note.noteId).map((a) => attachmentPojo(store, a, true)));
  });
  unsupported("POST", "/etapi/notes/:noteId/undelete");

  // ---- ETAPI: the rest of Core's surface, not modelled ----------------------------------

  for (
    const path of [
      "/etapi/inbox/:date",
      "/etapi/calendar/days/:date",
      "/etapi/calendar/week-first-day/:date",
      "/etapi/calendar/weeks/:week",
      "/etapi/calendar/months/:month",
      "/etapi/calendar/years/:year",
      "/etapi/metrics",
    ]
  ) unsupported("GET", path);
  unsupported("PUT", "/etapi/backup/:backupName");
  unsupported("GET", "/etapi/etapi.openapi.yaml", false);
  unsupported("GET", "/etapi/openapi.json", false);

  // ---- dispatch ----------------------------------------------------------------------------

  const authenticate = (header: string | null): TokenRecord | null => {
    if (!header) return null;
    let auth = header;
    if (auth.startsWith("Basic ")) {
      let decoded: string;
      try {
        decoded = new TextDecoder().decode(
          Uint8Array.from(atob(auth.slice(6).trim()), (ch) => ch.charCodeAt(0)),
        );
      } catch {
        return null;
      }
      const parts = decoded.split(":");
      // the username must be exactly "etapi" (the spec says arbitrary; the code disagrees)
      if (parts.length !== 2 || parts[0] !== "etapi") return null;
      auth = parts[1];
    } else if (auth.startsWith("Bearer ")) {
      auth = auth.slice(7);
    }
    const chunks = auth.split("_");
    if (chunks.length === 1) return store.findToken(undefined, auth) ?? null;
    if (chunks.length === 2) return store.findToken(chunks[0], chunks[1]) ?? null;
    return null;
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
        const token = authenticate(req.headers.get("authorization"));
        if (route.auth && !token) {
          return toResponse(
            req,
            errorReply(new CoreError(401, "NOT_AUTHENTICATED", "Not authenticated")),
          );
        }
        const r = await route.handler({ req, url, params, body, token });
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
  const params: SearchParams = {};
  const fastSearch = bool("fastSearch");
  const includeArchivedNotes = bool("includeArchivedNotes");
  const ancestorNoteId = str("ancestorNoteId");
  const ancestorDepth = str("ancestorDepth");
  const orderBy = str("orderBy");
  const direction = raw("orderDirection");
  if (direction !== undefined && direction !== "asc" && direction !== "desc") {
    throw new CoreError(
      400,
      "SEARCH_PARAM_VALIDATION_ERROR",
      `Cannot parse order direction value '${direction}, allowed values are 'asc' and 'desc'.`,
    );
  }
  const limitRaw = raw("limit");
  let limit: number | undefined;
  if (limitRaw !== undefined) {
    limit = parseInt(limitRaw);
    if (Number.isNaN(limit)) {
      throw new CoreError(
        400,
        "SEARCH_PARAM_VALIDATION_ERROR",
        `Cannot parse integer 'limit' value '${limitRaw}'.`,
      );
    }
  }
  const debug = bool("debug");
  if (fastSearch !== undefined) params.fastSearch = fastSearch;
  if (includeArchivedNotes !== undefined) params.includeArchivedNotes = includeArchivedNotes;
  if (ancestorNoteId !== undefined) params.ancestorNoteId = ancestorNoteId;
  if (ancestorDepth !== undefined) params.ancestorDepth = ancestorDepth;
  if (orderBy !== undefined) params.orderBy = orderBy;
  // parseOrderDirection returns parseInt("asc") = NaN, so the direction never reaches the sort
  if (limit) params.limit = limit;
  if (debug !== undefined) params.debug = debug;
  return params;
}

/** Shortest share-tree path (ancestor excluded) from `ancestor` to each note of its subtree. */
function sharePaths(sv: ShareView, ancestor: string): Map<string, string[]> {
  const paths = new Map<string, string[]>([[ancestor, []]]);
  const queue = [ancestor];
  while (queue.length > 0) {
    const current = queue.shift()!;
    for (const child of sv.childrenOf(current)) {
      if (paths.has(child)) continue;
      paths.set(child, [...paths.get(current)!, child]);
      queue.push(child);
    }
  }
  return paths;
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
 * const sim = await startCoreSim({ world: true });
 * sim.fault({ path: "/etapi/app-info", status: 503, times: 1 });
 * const res = await fetch(`${sim.url}/etapi/app-info`, { headers: { Authorization: sim.token } });
 * await res.body?.cancel(); // 503
 * await sim.close();
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
    handler: (closed) =>
      createCoreHandler(store, {
        password: opts.password,
        shareApiHangsOnAuth: opts.shareApiHangsOnAuth,
        closed,
      }),
  });
  return Promise.resolve({
    url: http.url,
    token,
    store,
    requests: http.requests,
    clearRequests: http.clearRequests,
    fault: http.fault,
    clearFaults: http.clearFaults,
    close: http.close,
  });
}
