/**
 * In-memory data model of Core (a TriliumNext fork) for the Core test double.
 *
 * Pure data + rules, no HTTP: notes, branches, attributes (with inheritance), revisions,
 * attachments, blobs, ETAPI tokens and the subset of the search language the service's queries
 * and the caller-query tests use. Behaviour follows the real Core, quirks included; see core.ts
 * for the wire layer. Rule violations throw {@link CoreError} carrying the status/code Core would answer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const store = createCoreStore({ now: () => new Date("2026-01-01T00:00:00Z") });
 * const { note } = store.createNote({
 *   parentNoteId: "root",
 *   title: "A",
 *   type: "text",
 *   content: "",
 * });
 * store.createAttribute({ noteId: note.noteId, type: "label", name: "lore" });
 * assert.deepEqual(store.search("#lore").hits.map((h) => h.noteId), [note.noteId]);
 * ```
 * @module
 */
import { Buffer } from "node:buffer";
import { createHash, randomBytes } from "node:crypto";
// the version Core pins (2.17.0); later ones parse `<textarea>`, `<style>` and nested links apart
// @ts-types="@types/sanitize-html"
import sanitizeHtml from "core-sanitize-html";
import { lexSearch, type SearchToken } from "../src/core/search_lex.ts";

// ---------------------------------------------------------------------------------------------
// Records and errors
// ---------------------------------------------------------------------------------------------

/** Note row; keys in ETAPI emission order (see {@link CoreStore.notePojo} for the full JSON). */
export interface NoteRecord {
  noteId: string;
  isProtected: boolean;
  title: string;
  type: string;
  mime: string;
  blobId: string;
  dateCreated: string;
  dateModified: string;
  utcDateCreated: string;
  utcDateModified: string;
}

/** Branch row = ETAPI Branch JSON (`prefix` is null when blank). */
export interface BranchRecord {
  branchId: string;
  noteId: string;
  parentNoteId: string;
  prefix: string | null;
  notePosition: number;
  isExpanded: boolean;
  utcDateModified: string;
}

/** Attribute row = ETAPI Attribute JSON. A relation's `value` is the target noteId. */
export interface AttributeRecord {
  attributeId: string;
  noteId: string;
  type: "label" | "relation";
  name: string;
  value: string;
  position: number;
  isInheritable: boolean;
  utcDateModified: string;
}

/** Revision row (ETAPI JSON minus `contentLength`). */
export interface RevisionRecord {
  revisionId: string;
  noteId: string;
  type: string;
  mime: string;
  isProtected: boolean;
  title: string;
  blobId: string;
  dateLastEdited: string;
  dateCreated: string;
  utcDateLastEdited: string;
  utcDateCreated: string;
  utcDateModified: string;
}

/** Attachment row (ETAPI JSON minus `contentLength`). */
export interface AttachmentRecord {
  attachmentId: string;
  ownerId: string;
  role: string;
  mime: string;
  title: string;
  position: number;
  blobId: string;
  dateModified: string;
  utcDateModified: string;
  utcDateScheduledForErasureSince: string | null;
}

/** ETAPI token; only the sha256 of the secret is kept, like Core. */
export interface TokenRecord {
  etapiTokenId: string;
  name: string;
  tokenHash: string;
  utcDateCreated: string;
}

/** Note JSON as ETAPI emits it (`mapNoteToPojo`). */
export interface NotePojo extends NoteRecord {
  parentNoteIds: string[];
  childNoteIds: string[];
  parentBranchIds: string[];
  childBranchIds: string[];
  attributes: AttributeRecord[];
}

/** Note content: strings for "string" notes, bytes for image/file and other binary mimes. */
export type Content = string | Uint8Array;

/**
 * An error Core would report. `code: null` means Express' generic handler shape `{message}`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const store = createCoreStore();
 * // the handler answers Core's JSON error with this status and code
 * assert.throws(() => store.deleteNote("root"), {
 *   name: "CoreError",
 *   status: 500,
 *   code: "GENERIC",
 * });
 * ```
 */
export class CoreError extends Error {
  constructor(readonly status: number, readonly code: string | null, message: string) {
    super(message);
    this.name = "CoreError";
  }
}

/** The 17 note types Core accepts on create (`isNoteType`). */
export const NOTE_TYPES = [
  "text",
  "code",
  "render",
  "file",
  "image",
  "search",
  "relationMap",
  "book",
  "noteMap",
  "mermaid",
  "canvas",
  "webView",
  "launcher",
  "doc",
  "contentWidget",
  "mindMap",
  "aiChat",
] as const;

/** Automatic link relations maintained by the content link scan. */
const LINK_RELATION_NAMES = [
  "internalLink",
  "imageLink",
  "relationMapLink",
  "includeNoteLink",
] as const;

/** Seconds a note must be old (and revision-free) before a content change snapshots it. */
const REVISION_SNAPSHOT_INTERVAL_S = 600;

const WEAK_PARENTS = new Set(["_share", "_lbBookmarks"]);
const STRING_TYPES = new Set([
  "text",
  "code",
  "relationMap",
  "search",
  "render",
  "book",
  "mermaid",
  "canvas",
  "webView",
]);
const STRING_MIMES = new Set([
  "application/json",
  "application/javascript",
  "application/x-javascript",
  "application/x-sql",
  "image/svg+xml",
]);
const CONTENT_SEARCH_TYPES = new Set(["text", "code", "mermaid", "canvas", "mindMap"]);
/** Note types an empty note of which takes its new template's type (services/handlers.ts). */
const TEMPLATE_TAKING_TYPES = new Set([
  "text",
  "code",
  "mermaid",
  "canvas",
  "relationMap",
  "mindMap",
  "webView",
]);
const MAX_SEARCH_CONTENT = 2 * 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Small pure helpers
// ---------------------------------------------------------------------------------------------

/** Local timestamp `YYYY-MM-DD HH:mm:ss.SSS+ZZZZ` for a UTC offset in minutes. */
function formatLocalDateTime(date: Date, utcOffsetMinutes = 0): string {
  const iso = new Date(date.getTime() + utcOffsetMinutes * 60_000).toISOString();
  const abs = Math.abs(utcOffsetMinutes);
  const sign = utcOffsetMinutes < 0 ? "-" : "+";
  const zone = `${sign}${pad2(Math.floor(abs / 60))}${pad2(abs % 60)}`;
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}${zone}`;
}

/** UTC timestamp `YYYY-MM-DD HH:mm:ss.SSSZ` (ISO with a space). */
function formatUtcDateTime(date: Date): string {
  return date.toISOString().replace("T", " ");
}

function pad2(n: number): string {
  return String(n).padStart(2, "0");
}

function parseUtcDateTime(s: string): Date {
  return new Date(s.replace(" ", "T"));
}

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** Random 12-character alphanumeric id, like Core's `newEntityId()`. */
function randomEntityId(length = 12): string {
  let out = "";
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      // 248 = 4 * 62: rejection keeps the distribution uniform
      if (b < 248 && out.length < length) out += ALNUM[b % 62];
    }
  }
  return out;
}

/**
 * Core's content-addressed blob id: sha512 base64, `+`→`X`, `/`→`Y`, first 20 characters.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(blobIdOf(""), "z4PhNX7vuL3xVChQ1m2A");
 * ```
 */
export function blobIdOf(content: Content): string {
  return createHash("sha512").update(content).digest("base64").replaceAll("+", "X")
    .replaceAll("/", "Y").slice(0, 20);
}

/** Whether Core keeps a note's content as a string (`utils.isStringNote`). */
function isStringNote(type: string | undefined, mime: string): boolean {
  return (type !== undefined && STRING_TYPES.has(type)) || mime.startsWith("text/") ||
    STRING_MIMES.has(mime);
}

/** Default mime for a note type (`getDefaultMimeForNoteType`). */
function defaultMimeForType(type: string): string {
  switch (type) {
    case "text":
      return "text/html";
    case "code":
      return "text/plain";
    case "file":
      return "application/octet-stream";
    case "mermaid":
      return "text/vnd.mermaid";
    case "relationMap":
    case "canvas":
    case "mindMap":
    case "aiChat":
      return "application/json";
    default:
      return "";
  }
}

/** The `allowedHtmlTags` option's default (`SANITIZER_DEFAULT_ALLOWED_TAGS` in Core's commons). */
const CORE_ALLOWED_TAGS = [
  ..."h1 h2 h3 h4 h5 h6 blockquote p a ul ol li b i strong em strike s del abbr code hr br div"
    .split(" "),
  ..."table thead caption tbody tfoot tr th td pre section img figure figcaption span label input"
    .split(" "),
  ..."details summary address aside footer header hgroup main nav dl dt menu bdi bdo dfn kbd mark"
    .split(" "),
  ..."q time var wbr area map track video audio picture ins en-media acronym article big button"
    .split(" "),
  ..."cite col colgroup data dd fieldset form legend meter noscript option progress rp samp small"
    .split(" "),
  ..."sub sup template textarea tt".split(" "),
];

/** The URL schemes Core's sanitizer lets through (`ALLOWED_PROTOCOLS`). */
const CORE_ALLOWED_SCHEMES = (
  "http https ftp ftps mailto data evernote file facetime gemini git gopher imap irc irc6 jabber " +
  "jar lastfm ldap ldaps magnet message mumble nfs onenote pop rmi s3 sftp skype sms spotify " +
  "steam svn udp view-source vlc vnc ws wss xmpp jdbc slack tel smb zotero geo logseq mid obsidian"
).split(" ");

const CSS_COLOR_SOURCES = [
  String.raw`#(0x)?[0-9a-f]+`,
  String.raw`rgb\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\)`,
  String.raw`hsl\(\s*(\d{1,3})\s*,\s*(\d{1,3})%\s*,\s*(\d{1,3})%\s*\)`,
];
// Core's hex colour pattern is case-insensitive only where it stands alone
const CSS_COLOR = CSS_COLOR_SOURCES.map((src, i) => new RegExp(`^${src}$`, i === 0 ? "i" : ""));
const CSS_SIZE = [/^\d+\.?\d*(?:px|em|%)$/];
const BORDER_STYLES = "none|hidden|dotted|dashed|solid|double|groove|ridge|inset|outset";
const TD_BORDER = new RegExp(
  String.raw`^\s*\d+(?:px|em|%)\s*(${BORDER_STYLES})\s*(${
    ["#(0x)?[0-9a-fA-F]+", ...CSS_COLOR_SOURCES.slice(1)].join("|")
  })\s*$`,
);

/**
 * Core's `html_sanitizer.sanitize` with its options as a fresh Core has them: the default
 * `allowedHtmlTags`, its attribute, style and scheme allow-lists, only `<head>` dropped with its
 * text (so a `<script>`'s text stays, as text), and headings demoted one level per level present
 * (`<h1` → `h2`, and `h2` → `h3` when there is also an `<h2`, …). Core runs it over a title on
 * create-note only: `Tom & Jerry` is stored as `Tom &amp; Jerry`, `Salt & Smoke <Tide>` as
 * `Salt &amp; Smoke ` (`<tide>` is no allowed tag).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(sanitizeLikeCore("Salt & Smoke <Tide>"), "Salt &amp; Smoke ");
 * assert.equal(sanitizeLikeCore("<h1>Big</h1><script>x</script>"), "<h2>Big</h2>x");
 * ```
 */
export function sanitizeLikeCore(dirty: string): string {
  if (!dirty) return dirty;
  const lower = dirty.toLowerCase();
  const transformTags: Record<string, string> = {};
  for (let level = 1; level < 6 && lower.includes(`<h${level}`); level++) {
    transformTags[`h${level}`] = `h${level + 1}`;
  }
  return sanitizeHtml(dirty, {
    allowedTags: CORE_ALLOWED_TAGS,
    allowedAttributes: {
      "*": "class style title src href hash disabled align alt center data-*".split(" "),
      input: ["type", "checked"],
      img: ["width", "height"],
      code: ["spellcheck"],
    },
    allowedStyles: {
      "*": { color: CSS_COLOR, "background-color": CSS_COLOR },
      figure: { float: [/^\s*(left|right|none)\s*$/], width: CSS_SIZE, height: CSS_SIZE },
      img: { "aspect-ratio": [/^\d+\/\d+$/], width: CSS_SIZE, height: CSS_SIZE },
      table: {
        "border-color": CSS_COLOR,
        "border-style": [new RegExp(String.raw`^\s*(${BORDER_STYLES})\s*$`)],
      },
      td: { border: [TD_BORDER] },
      col: { width: CSS_SIZE },
    },
    selfClosing: ["img", "br", "hr", "area", "base", "basefont", "input", "link", "meta", "col"],
    allowedSchemes: CORE_ALLOWED_SCHEMES,
    nonTextTags: ["head"],
    transformTags,
  });
}

/** Core's attribute name sanitising: anything outside `[\p{L}\p{N}_:]` becomes `_`. */
function sanitizeAttributeName(name: string): string {
  return name.replace(/[^\p{L}\p{N}_:]/gu, "_");
}

/** Lowercase and strip diacritics, as Core normalises search text. */
function normalizeSearchText(s: string): string {
  return s.toLowerCase().normalize("NFD").replace(/\p{Diacritic}/gu, "");
}

const TEXT_ENCODER = new TextEncoder();
const TEXT_DECODER = new TextDecoder();

/**
 * Content as bytes (strings are UTF-8 encoded).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(contentBytes("é").length, 2);
 * ```
 */
export function contentBytes(content: Content): Uint8Array {
  return typeof content === "string" ? TEXT_ENCODER.encode(content) : content;
}

function contentString(content: Content): string {
  return typeof content === "string" ? content : TEXT_DECODER.decode(content);
}

// is-svg, roughly: an XML prolog, comments or an SVG doctype may precede the root element.
const SVG_START =
  /^\s*(?:<\?xml[^>]*>\s*)?(?:<!--[\s\S]*?-->\s*)*(?:<!doctype svg[^>]*>\s*)?<svg[\s>]/i;

/**
 * The extension Core's `image.getImageType` gives an image it saves: `svg` for SVG text, else
 * the format's magic bytes (the raster types the proxy meets, plus BMP), else an optimistic
 * `jpg`. Core stores the mime as `image/<ext>` (`image/jpg` for JPEG, `image/svg+xml` for SVG).
 */
function imageExtension(bytes: Uint8Array): string {
  if (SVG_START.test(TEXT_DECODER.decode(bytes.subarray(0, 4096)))) return "svg";
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  if (ascii(0, 8) === "\x89PNG\r\n\x1a\n") return "png";
  if (ascii(0, 3) === "\xff\xd8\xff") return "jpg";
  if (ascii(0, 6) === "GIF87a" || ascii(0, 6) === "GIF89a") return "gif";
  if (ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP") return "webp";
  if (ascii(4, 12) === "ftypavif" || ascii(4, 12) === "ftypavis") return "avif";
  if (ascii(0, 2) === "BM") return "bmp";
  return "jpg";
}

function sha256Base64(s: string): string {
  return createHash("sha256").update(s).digest("base64");
}

/** Removes tags and decodes the common entities, for full-text matching of text notes. */
function htmlToText(html: string): string {
  return html.replace(/<[^>]*>/g, " ").replace(/&nbsp;/g, " ").replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");
}

// ---------------------------------------------------------------------------------------------
// Store interface
// ---------------------------------------------------------------------------------------------

/** Options of {@link createCoreStore}. All injectable for deterministic tests. */
export interface CoreStoreOptions {
  /** Clock; default `() => new Date()`. */
  now?: () => Date;
  /** Offset used for local timestamps (`+ZZZZ`); default 0 (a UTC container). */
  utcOffsetMinutes?: number;
  /** Entity id factory; default random 12-char alphanumeric. */
  newId?: () => string;
}

/** `POST /etapi/create-note` parameters after ETAPI validation (plus seeding-only fields). */
export interface CreateNoteParams {
  parentNoteId?: string;
  title?: string;
  type?: string;
  mime?: string;
  content?: string | Uint8Array;
  notePosition?: number;
  prefix?: string;
  isExpanded?: boolean;
  noteId?: string;
  dateCreated?: string;
  utcDateCreated?: string;
  /** Seeding only (ETAPI rejects it): stores the note as protected. */
  isProtected?: boolean;
}

/** Create-note behaviour switches for seeding system notes. */
export interface CreateNoteOptions {
  /** Allow parents such as `_hidden` (Core does this for its own hidden subtree). */
  ignoreForbiddenParents?: boolean;
  /** Store the title exactly as given, not sanitised (seeding: system titles, legacy data). */
  rawTitle?: boolean;
}

/** `POST /etapi/attributes` parameters after validation. */
export interface CreateAttributeParams {
  attributeId?: string;
  noteId?: string;
  type?: string;
  name?: string;
  value?: string;
  isInheritable?: boolean;
  position?: number;
}

/** `POST /etapi/branches` parameters after validation. */
export interface CreateBranchParams {
  noteId?: string;
  parentNoteId?: string;
  notePosition?: number;
  prefix?: string | null;
  isExpanded?: boolean;
}

/** `POST /etapi/attachments` parameters after validation. */
export interface CreateAttachmentParams {
  /** Seeding only (ETAPI has no forced attachment ids). */
  attachmentId?: string;
  ownerId?: string;
  role?: string;
  mime?: string;
  title?: string;
  position?: number;
  content?: Content;
}

/** Search parameters of `GET /etapi/notes` (already parsed and validated). */
export interface SearchParams {
  fastSearch?: boolean;
  includeArchivedNotes?: boolean;
  ancestorNoteId?: string;
  ancestorDepth?: string;
}

/** One search hit: the note, a score, and the note path used for ranking. */
export interface SearchHit {
  noteId: string;
  score: number;
  notePath: string[];
}

/** Search outcome, hits ranked as Core ranks them. */
export interface SearchOutcome {
  hits: SearchHit[];
}

/**
 * The in-memory Core. Reads return live records: treat them as read-only and change data through
 * the mutating methods so caches stay right.
 */
export interface CoreStore {
  /** Current time of the injected clock. */
  now(): Date;
  /** Local timestamp of {@link now}. */
  localNow(): string;
  /** UTC timestamp of {@link now}. */
  utcNow(): string;
  /** Runs `fn` with the clock pinned to `at` (used to seed data with fixed dates). */
  withTime<T>(at: Date, fn: () => T): T;

  // notes and tree
  /** All live noteIds in creation order. */
  noteIds(): string[];
  getNote(noteId: string): NoteRecord | undefined;
  /** Note content (string for string notes, bytes for binary notes). */
  getContent(noteId: string): Content | undefined;
  /** Effective attributes as ETAPI shows them: own, inherited, then template attributes. */
  attributesOf(noteId: string): AttributeRecord[];
  /** Attributes the note owns, in creation order. */
  ownAttributes(noteId: string): AttributeRecord[];
  /** First effective label value, or undefined. */
  labelValue(noteId: string, name: string): string | undefined;
  /** Effective label present. */
  hasLabel(noteId: string, name: string): boolean;
  /** Parent branches, archived/completely-hidden parents last (the `parentBranchIds` order). */
  branchesOf(noteId: string): BranchRecord[];
  /** Child branches ordered by notePosition. */
  childBranchesOf(noteId: string): BranchRecord[];
  getBranch(branchId: string): BranchRecord | undefined;
  getAttribute(attributeId: string): AttributeRecord | undefined;
  /** Relations (owned by any note) pointing to `noteId`. */
  targetRelationsOf(noteId: string): AttributeRecord[];
  /** ETAPI note JSON. */
  notePojo(noteId: string): NotePojo;

  // revisions, attachments, blobs
  getRevision(revisionId: string): RevisionRecord | undefined;
  /** Revisions of a note, newest first. */
  revisionsOf(noteId: string): RevisionRecord[];
  getAttachment(attachmentId: string): AttachmentRecord | undefined;
  /** Attachments of a note ordered by position. */
  attachmentsOf(noteId: string): AttachmentRecord[];
  /** Revision content typed by its type/mime. */
  getRevisionContent(revisionId: string): Content | undefined;
  /** Attachment content typed by its mime. */
  getAttachmentContent(attachmentId: string): Content | undefined;

  // mutations (ETAPI semantics; errors are CoreError)
  createNote(
    params: CreateNoteParams,
    opts?: CreateNoteOptions,
  ): { note: NoteRecord; branch: BranchRecord };
  /** Applies an already-validated PATCH (title/type/mime/dates); always bumps dateModified. */
  patchNote(noteId: string, patch: Partial<NoteRecord>): NoteRecord;
  /**
   * ETAPI `PUT /notes/:id/content` semantics: coerces `body` by note type, snapshots a revision
   * when due, stores the blob and, for text notes, runs the link scan.
   * `body === undefined` (an unparsed request body) fails like Core.
   */
  putNoteContent(noteId: string, body: unknown): void;
  /** Stores content without side effects (seeding), optionally running the link scan. */
  setNoteContent(noteId: string, content: Content, opts?: { scanLinks?: boolean }): void;
  /** Snapshot of the current note (`POST /notes/:id/revision`). */
  saveRevision(noteId: string): RevisionRecord;
  /** Snapshot only when older than 600 s and no revision in that window. */
  saveRevisionIfNeeded(noteId: string): RevisionRecord | null;
  /** Deletes the note through all its parent branches (cascade as in Core). */
  deleteNote(noteId: string): void;
  createAttribute(params: CreateAttributeParams): AttributeRecord;
  deleteAttribute(attributeId: string): void;
  /** Creates (created=true) or overwrites the existing parent–child branch. */
  createBranch(params: CreateBranchParams): { branch: BranchRecord; created: boolean };
  patchBranch(
    branchId: string,
    patch: { notePosition?: number; prefix?: string | null; isExpanded?: boolean },
  ): BranchRecord;
  /** Deletes a branch; the note goes too when it was its last strong branch. */
  deleteBranch(branchId: string): void;
  createAttachment(params: CreateAttachmentParams): AttachmentRecord;
  /** ETAPI `PUT /attachments/:id/content` semantics. */
  putAttachmentContent(attachmentId: string, body: unknown): void;
  /** Inserts a revision row directly (seeding history with fixed dates). */
  insertRevision(
    row: Omit<RevisionRecord, "revisionId" | "blobId"> & { content: Content; revisionId?: string },
  ): RevisionRecord;

  // tokens
  /** Registers a full token `<id>_<secret>`. */
  addToken(token: string, name?: string): TokenRecord;
  /** Issues a new token like `POST /auth/login` and returns it. */
  createToken(name: string): string;
  /** Token for (id, secret). */
  findToken(tokenId: string, secret: string): TokenRecord | undefined;

  // search
  /**
   * Runs a search like `GET /etapi/notes`. Syntax outside the modelled subset throws
   * CoreError 500 "core sim: unsupported search syntax: <part>".
   */
  search(query: string, params?: SearchParams): SearchOutcome;
}

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

interface Index {
  children: Map<string, BranchRecord[]>;
  parents: Map<string, BranchRecord[]>;
  owned: Map<string, AttributeRecord[]>;
  targets: Map<string, AttributeRecord[]>;
}

/**
 * Creates an empty store holding only `root` (branch `none_root`). Use world.ts to add Core's
 * system notes (`_hidden`, `_share`, templates) and the sample world.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const store = createCoreStore();
 * assert.equal(store.getNote("root")?.title, "root");
 * ```
 */
export function createCoreStore(opts: CoreStoreOptions = {}): CoreStore {
  const clock = opts.now ?? (() => new Date());
  const offset = opts.utcOffsetMinutes ?? 0;
  const newId = opts.newId ?? (() => randomEntityId());
  let pinned: Date | null = null;

  const notes = new Map<string, NoteRecord>();
  const branches = new Map<string, BranchRecord>();
  const attributes = new Map<string, AttributeRecord>();
  const revisions = new Map<string, RevisionRecord>();
  const attachments = new Map<string, AttachmentRecord>();
  const blobs = new Map<string, Content>();
  const tokens = new Map<string, TokenRecord>();

  // Derived data, rebuilt lazily after any mutation.
  let index: Index | null = null;
  let effCache = new Map<string, AttributeRecord[]>();

  const now = () => pinned ?? clock();
  const localNow = () => formatLocalDateTime(now(), offset);
  const utcNow = () => formatUtcDateTime(now());

  function touch(): void {
    index = null;
    effCache = new Map();
  }

  // Additions keep a built index up to date in place, in the order a rebuild would give: seeding
  // a world adds hundreds of rows, and rebuilding the index after each one made it quadratic.
  function noteAdded(): void {
    effCache = new Map(); // the index holds branches and attributes only
  }
  function branchAdded(b: BranchRecord): void {
    if (index) {
      // children stay sorted by position, equal positions in insertion order (a stable sort)
      const siblings = index.children.get(b.parentNoteId);
      if (!siblings) index.children.set(b.parentNoteId, [b]);
      else {
        let at = siblings.length;
        while (at > 0 && siblings[at - 1].notePosition > b.notePosition) at--;
        siblings.splice(at, 0, b);
      }
      pushTo(index.parents, b.noteId, b);
    }
    effCache = new Map();
  }
  function attributeAdded(a: AttributeRecord): void {
    if (index) {
      pushTo(index.owned, a.noteId, a);
      if (a.type === "relation") pushTo(index.targets, a.value, a);
    }
    effCache = new Map();
  }

  function uniqueId(taken: (id: string) => boolean): string {
    for (;;) {
      const id = newId();
      if (!taken(id)) return id;
    }
  }

  function idx(): Index {
    if (index) return index;
    const children = new Map<string, BranchRecord[]>();
    const parents = new Map<string, BranchRecord[]>();
    for (const b of branches.values()) {
      pushTo(children, b.parentNoteId, b);
      pushTo(parents, b.noteId, b);
    }
    for (const list of children.values()) list.sort((a, b) => a.notePosition - b.notePosition);
    const owned = new Map<string, AttributeRecord[]>();
    const targets = new Map<string, AttributeRecord[]>();
    for (const a of attributes.values()) {
      pushTo(owned, a.noteId, a);
      if (a.type === "relation") pushTo(targets, a.value, a);
    }
    index = { children, parents, owned, targets };
    return index;
  }

  const rawParentBranches = (id: string) => idx().parents.get(id) ?? [];
  const childBranchesOf = (id: string) => idx().children.get(id) ?? [];
  const ownAttributes = (id: string) => idx().owned.get(id) ?? [];

  function requireNote(noteId: string): NoteRecord {
    const note = notes.get(noteId);
    if (!note) throw new CoreError(404, "NOTE_NOT_FOUND", `Note '${noteId}' not found.`);
    return note;
  }

  // --- attributes with inheritance (BNote.__getAttributes) ---------------------------------

  function computeAttributes(
    noteId: string,
    path: string[],
    parentsOf: (id: string) => string[],
    ownedOf: (id: string) => AttributeRecord[],
    templateOk: (id: string) => boolean,
    cache: Map<string, AttributeRecord[]>,
  ): AttributeRecord[] {
    if (path.includes(noteId)) return [];
    const cached = cache.get(noteId);
    if (cached) return cached;
    const newPath = [...path, noteId];
    const collected = [...ownedOf(noteId)];
    for (const parentId of parentsOf(noteId)) {
      // root and _hidden pass nothing down
      if (parentId === "root" || parentId === "_hidden") continue;
      const inherited = computeAttributes(parentId, newPath, parentsOf, ownedOf, templateOk, cache);
      collected.push(...inherited.filter((a) => a.isInheritable));
    }
    const fromTemplates: AttributeRecord[] = [];
    for (const attr of collected) {
      if (attr.type !== "relation" || (attr.name !== "template" && attr.name !== "inherit")) {
        continue;
      }
      if (!notes.has(attr.value) || !templateOk(attr.value)) continue;
      const templateAttrs = computeAttributes(
        attr.value,
        newPath,
        parentsOf,
        ownedOf,
        templateOk,
        cache,
      );
      fromTemplates.push(
        ...templateAttrs.filter((a) =>
          !(a.type === "label" && (a.name === "template" || a.name === "workspacetemplate"))
        ),
      );
    }
    const seen = new Set<string>();
    const result: AttributeRecord[] = [];
    for (const attr of [...collected, ...fromTemplates]) {
      if (seen.has(attr.attributeId)) continue;
      seen.add(attr.attributeId);
      result.push(attr);
    }
    cache.set(noteId, result);
    return result;
  }

  const rawParentIds = (id: string) => rawParentBranches(id).map((b) => b.parentNoteId);

  function attributesOf(noteId: string): AttributeRecord[] {
    if (!notes.has(noteId)) return [];
    return computeAttributes(noteId, [], rawParentIds, ownAttributes, () => true, effCache);
  }

  function labelValue(noteId: string, name: string): string | undefined {
    return attributesOf(noteId).find((a) => a.type === "label" && a.name === name)?.value;
  }

  const hasLabel = (noteId: string, name: string) => labelValue(noteId, name) !== undefined;

  function isLabelTruthy(noteId: string, name: string): boolean {
    const value = labelValue(noteId, name);
    return value !== undefined && value !== "false";
  }

  // --- tree helpers ---------------------------------------------------------------------

  function isHiddenCompletely(noteId: string, seen = new Set<string>()): boolean {
    if (noteId === "_hidden") return true;
    if (noteId === "root") return false;
    if (seen.has(noteId)) return true;
    seen.add(noteId);
    for (const parentId of rawParentIds(noteId)) {
      if (parentId === "root") return false;
      if (parentId === "_hidden") continue;
      if (!isHiddenCompletely(parentId, seen)) return false;
    }
    return true;
  }

  const isArchived = (noteId: string) => hasLabel(noteId, "archived");

  function branchesOf(noteId: string): BranchRecord[] {
    const list = rawParentBranches(noteId);
    const demoted = (b: BranchRecord) =>
      isArchived(b.parentNoteId) || isHiddenCompletely(b.parentNoteId);
    return [...list.filter((b) => !demoted(b)), ...list.filter(demoted)];
  }

  function subtreeDepths(noteId: string): Map<string, number> {
    const depths = new Map<string, number>();
    if (!notes.has(noteId)) return depths;
    depths.set(noteId, 0);
    const queue = [noteId];
    while (queue.length > 0) {
      const current = queue.shift()!;
      const depth = depths.get(current)!;
      for (const child of childBranchesOf(current)) {
        if (depths.has(child.noteId)) continue;
        depths.set(child.noteId, depth + 1);
        queue.push(child.noteId);
      }
    }
    return depths;
  }

  function notePath(noteId: string): string[] {
    const path: string[] = [];
    const seen = new Set<string>();
    let current: string | undefined = noteId;
    while (current && !seen.has(current)) {
      seen.add(current);
      path.unshift(current);
      if (current === "root") break;
      current = branchesOf(current)[0]?.parentNoteId;
    }
    return path;
  }

  function notePojo(noteId: string): NotePojo {
    const n = requireNote(noteId);
    const parents = branchesOf(noteId);
    const children = childBranchesOf(noteId);
    return {
      noteId: n.noteId,
      isProtected: n.isProtected,
      title: n.title,
      type: n.type,
      mime: n.mime,
      blobId: n.blobId,
      dateCreated: n.dateCreated,
      dateModified: n.dateModified,
      utcDateCreated: n.utcDateCreated,
      utcDateModified: n.utcDateModified,
      parentNoteIds: parents.map((b) => b.parentNoteId),
      childNoteIds: children.map((b) => b.noteId),
      parentBranchIds: parents.map((b) => b.branchId),
      childBranchIds: children.map((b) => b.branchId),
      attributes: attributesOf(noteId).map((a) => ({ ...a })),
    };
  }

  // --- blobs and content -----------------------------------------------------------------

  function saveBlob(content: Content): string {
    const blobId = blobIdOf(content);
    if (!blobs.has(blobId)) blobs.set(blobId, content);
    return blobId;
  }

  function typedContent(content: Content | undefined, stringy: boolean): Content | undefined {
    if (content === undefined) return undefined;
    if (stringy) return contentString(content);
    return contentBytes(content);
  }

  function getContent(noteId: string): Content | undefined {
    const n = notes.get(noteId);
    if (!n) return undefined;
    return typedContent(blobs.get(n.blobId), isStringNote(n.type, n.mime));
  }

  /** Body → stored content, as Core's `setContent` coerces it (string notes `toString()`). */
  function coerceBody(body: unknown, stringy: boolean, what: string): Content {
    if (body === undefined || body === null) {
      throw new CoreError(500, "GENERIC", `Cannot set null content to ${what}`);
    }
    if (stringy) return body instanceof Uint8Array ? contentString(body) : String(body);
    if (typeof body === "string" || body instanceof Uint8Array) return contentBytes(body);
    throw new CoreError(
      500,
      "GENERIC",
      "The first argument must be of type string or an instance of Buffer, ArrayBuffer, or " +
        "Array or an Array-like Object. Received an instance of Object",
    );
  }

  function writeNoteContent(note: NoteRecord, content: Content): void {
    const blobId = saveBlob(content);
    if (blobId === note.blobId) return;
    note.blobId = blobId;
    note.dateModified = localNow();
    note.utcDateModified = utcNow();
    touch();
  }

  // --- link scan (services/notes.ts saveLinks) --------------------------------------------

  function scanLinks(note: NoteRecord, content: string): string {
    const found: { name: string; value: string }[] = [];
    let html = content;
    if (note.type === "text") {
      // AllCodex: Portal image URLs are rewritten to Core's image route
      html = html.replace(
        /src="[^"]*\/api\/lore\/([A-Za-z0-9_]+)\/image(?:\?[^"]*)?"/g,
        'src="api/images/$1/image"',
      );
      html = inlineImagesToAttachments(note.noteId, html);
      html = html.replace(/src="[^"]*\/api\/attachments\//g, 'src="api/attachments/');
      for (const m of html.matchAll(/src="[^"]*api\/images\/([a-zA-Z0-9_]+)\//g)) {
        found.push({ name: "imageLink", value: m[1] });
      }
      html = html.replace(/src="[^"]*\/api\/images\//g, 'src="api/images/');
      for (const m of html.matchAll(/href="[^"]*#root[a-zA-Z0-9_/]*\/([a-zA-Z0-9_]+)\/?"/g)) {
        found.push({ name: "internalLink", value: m[1] });
      }
      html = html.replace(/href="[^"]*#root/g, 'href="#root');
      for (
        const m of html.matchAll(
          /<section class="include-note[^>]+data-note-id="([a-zA-Z0-9_]+)"[^>]*>/g,
        )
      ) {
        found.push({ name: "includeNoteLink", value: m[1] });
      }
      scheduleUnusedAttachments(note.noteId, html);
    } else if (note.type === "relationMap") {
      try {
        const parsed = JSON.parse(html) as { notes?: { noteId?: string }[] };
        for (const n of parsed.notes ?? []) {
          if (n.noteId) found.push({ name: "relationMapLink", value: n.noteId });
        }
      } catch {
        // Core only logs unparsable relation maps
      }
    } else {
      return content;
    }
    const linkNames = new Set<string>(LINK_RELATION_NAMES);
    const existing = ownAttributes(note.noteId).filter((a) =>
      a.type === "relation" && linkNames.has(a.name)
    );
    const kept = new Set<string>();
    for (const link of found) {
      if (!notes.has(link.value)) continue;
      const match = existing.find((a) => a.name === link.name && a.value === link.value);
      if (match) {
        kept.add(match.attributeId);
        continue;
      }
      const created = createAttribute({
        noteId: note.noteId,
        type: "relation",
        name: link.name,
        value: link.value,
      });
      existing.push(created);
      kept.add(created.attributeId);
    }
    const stale = existing.filter((a) => !kept.has(a.attributeId));
    for (const a of stale) attributes.delete(a.attributeId);
    if (stale.length) touch(); // what was created is in the index already
    return html;
  }

  /**
   * downloadImages, for pasted images: every `<img>` whose src is `data:image/<letters>;base64,`
   * becomes an image attachment (position 10, title `inline image.<ext>`), and the tag from
   * `<img` to the end of its src becomes `<img src="api/attachments/<id>/image/inline%20image"`
   * (the title when the src was written; attributes before src are lost). Core's regex keeps
   * its offset into the now shorter HTML, so an image soon after a converted one is skipped
   * until the next save. Core sets type, title and bytes a moment later (mime "unknown"
   * meanwhile); here that has already happened, with the bytes as sent (Core's JPEG
   * recompression keeps them whenever it would not make them smaller, as with small images).
   */
  function inlineImagesToAttachments(noteId: string, content: string): string {
    const imageRe = /<img[^>]*?\ssrc=['"]([^'">]+)['"]/gi;
    let html = content;
    let m;
    while ((m = imageRe.exec(html))) {
      const inline = /^data:image\/[a-z]+;base64,/.exec(m[1]);
      if (!inline) continue;
      const bytes = new Uint8Array(Buffer.from(m[1].slice(inline[0].length), "base64"));
      const ext = imageExtension(bytes);
      const att = createAttachment({
        ownerId: noteId,
        role: "image",
        mime: `image/${ext === "svg" ? "svg+xml" : ext}`,
        title: `inline image.${ext}`,
        content: bytes,
      });
      html = `${html.slice(0, m.index)}<img src="api/attachments/${att.attachmentId}/image/${
        encodeURIComponent("inline image")
      }"${html.slice(m.index + m[0].length)}`;
    }
    return html;
  }

  /** checkImageAttachments: attachments no longer referenced get scheduled for erasure. */
  function scheduleUnusedAttachments(noteId: string, html: string): void {
    const referenced = new Set<string>();
    for (const m of html.matchAll(/src="[^"]*api\/attachments\/([a-zA-Z0-9_]+)\/image/g)) {
      referenced.add(m[1]);
    }
    for (const m of html.matchAll(/href="[^"]+attachmentId=([a-zA-Z0-9_]+)/g)) referenced.add(m[1]);
    for (const att of attachmentsOf(noteId)) {
      const used = referenced.has(att.attachmentId);
      if (att.utcDateScheduledForErasureSince && used) att.utcDateScheduledForErasureSince = null;
      else if (!att.utcDateScheduledForErasureSince && !used) {
        att.utcDateScheduledForErasureSince = utcNow();
      }
    }
  }

  // --- revisions ---------------------------------------------------------------------------

  function revisionsOf(noteId: string): RevisionRecord[] {
    const list = [...revisions.values()].filter((r) => r.noteId === noteId);
    return list.reverse().sort((a, b) =>
      a.utcDateCreated < b.utcDateCreated ? 1 : a.utcDateCreated > b.utcDateCreated ? -1 : 0
    );
  }

  function saveRevision(noteId: string): RevisionRecord {
    const n = requireNote(noteId);
    const rev: RevisionRecord = {
      revisionId: uniqueId((id) => revisions.has(id)),
      noteId,
      type: n.type,
      mime: n.mime,
      isProtected: n.isProtected,
      title: n.title,
      blobId: n.blobId,
      dateLastEdited: n.dateModified,
      dateCreated: localNow(),
      utcDateLastEdited: n.utcDateModified,
      utcDateCreated: utcNow(),
      utcDateModified: utcNow(),
    };
    revisions.set(rev.revisionId, rev);
    return rev;
  }

  function saveRevisionIfNeeded(noteId: string): RevisionRecord | null {
    const n = requireNote(noteId);
    if (n.type === "file" || n.type === "image" || isLabelTruthy(noteId, "disableVersioning")) {
      return null;
    }
    const intervalMs = REVISION_SNAPSHOT_INTERVAL_S * 1000;
    const cutoff = formatUtcDateTime(new Date(now().getTime() - intervalMs));
    const recent = revisionsOf(noteId).some((r) => r.utcDateCreated >= cutoff);
    const age = now().getTime() - parseUtcDateTime(n.utcDateCreated).getTime();
    return !recent && age >= intervalMs ? saveRevision(noteId) : null;
  }

  // --- notes -------------------------------------------------------------------------------

  function newNotePosition(parentId: string): number {
    const siblings = childBranchesOf(parentId).filter((b) => b.noteId !== "_hidden");
    if (isLabelTruthy(parentId, "newNotesOnTop")) {
      return siblings.reduce((min, b) => Math.min(min, b.notePosition), 0) - 10;
    }
    return siblings.reduce((max, b) => Math.max(max, b.notePosition), 0) + 10;
  }

  function createNote(
    params: CreateNoteParams,
    options: CreateNoteOptions = {},
  ): { note: NoteRecord; branch: BranchRecord } {
    const parentId = params.parentNoteId;
    if (parentId === undefined || !notes.has(parentId)) {
      throw new CoreError(500, "GENERIC", `Parent note '${parentId}' was not found.`);
    }
    if (
      !options.ignoreForbiddenParents &&
      (["_lbRoot", "_hidden"].includes(parentId) || parentId.startsWith("_lbTpl") ||
        parentId.startsWith("_help") || parentId.startsWith("_options"))
    ) {
      throw new CoreError(
        500,
        "GENERIC",
        `Creating child notes into '${parentId}' is not allowed.`,
      );
    }
    let title = params.title;
    if (title === undefined || title === null) {
      const template = labelValue(parentId, "titleTemplate");
      if (template?.includes("${")) {
        throw new CoreError(500, "GENERIC", "core sim: titleTemplate expressions are not modelled");
      }
      title = template ?? "new note";
    }
    if (!options.rawTitle) title = sanitizeLikeCore(title);
    if (params.content === undefined || params.content === null) {
      throw new CoreError(500, "GENERIC", "Note content must be set");
    }
    if (!params.type) throw new CoreError(500, "GENERIC", "Note type is a required param");
    if (params.noteId !== undefined && notes.has(params.noteId)) {
      throw new CoreError(
        500,
        "GENERIC",
        `core sim: forced noteId '${params.noteId}' already exists (Core's upsert is not modelled)`,
      );
    }
    const type = params.type;
    const mime = params.mime || defaultMimeForType(type);
    const noteId = params.noteId ?? uniqueId((id) => notes.has(id));
    const content = isStringNote(type, mime)
      ? contentString(params.content)
      : contentBytes(params.content);
    const note: NoteRecord = {
      noteId,
      isProtected: params.isProtected ?? false,
      title,
      type,
      mime,
      blobId: saveBlob(content),
      dateCreated: params.dateCreated ?? localNow(),
      dateModified: localNow(),
      utcDateCreated: params.utcDateCreated ?? utcNow(),
      utcDateModified: utcNow(),
    };
    notes.set(noteId, note);
    noteAdded();
    const branch = insertBranch({
      noteId,
      parentNoteId: parentId,
      notePosition: params.notePosition,
      prefix: params.prefix,
      isExpanded: params.isExpanded,
    });
    copyChildAttributes(parentId, noteId);
    return { note, branch };
  }

  function copyChildAttributes(parentId: string, childId: string): void {
    for (const attr of attributesOf(parentId)) {
      if (!attr.name.startsWith("child:")) continue;
      createAttribute({
        noteId: childId,
        type: attr.type,
        name: attr.name.slice("child:".length),
        value: attr.value,
        isInheritable: attr.isInheritable,
        position: attr.position,
      });
    }
  }

  function patchNote(noteId: string, patch: Partial<NoteRecord>): NoteRecord {
    const n = requireNote(noteId);
    for (const key of ["title", "type", "mime", "dateCreated", "utcDateCreated"] as const) {
      const value = patch[key];
      if (typeof value === "string") n[key] = value;
    }
    n.dateModified = localNow();
    n.utcDateModified = utcNow();
    touch();
    return n;
  }

  function putNoteContent(noteId: string, body: unknown): void {
    const n = requireNote(noteId);
    const stringy = isStringNote(n.type, n.mime);
    const content = coerceBody(body, stringy, `noteId '${noteId}'`);
    saveRevisionIfNeeded(noteId);
    writeNoteContent(n, content);
    if (n.type === "text" || n.type === "relationMap") {
      const scanned = scanLinks(n, contentString(content));
      if (scanned !== contentString(content)) writeNoteContent(n, scanned);
    }
  }

  function setNoteContent(noteId: string, content: Content, o: { scanLinks?: boolean } = {}) {
    const n = requireNote(noteId);
    const typed = typedContent(content, isStringNote(n.type, n.mime))!;
    writeNoteContent(n, typed);
    if (o.scanLinks && (n.type === "text" || n.type === "relationMap")) {
      const scanned = scanLinks(n, contentString(typed));
      if (scanned !== contentString(typed)) writeNoteContent(n, scanned);
    }
  }

  // --- branches and deletion ---------------------------------------------------------------

  function insertBranch(p: CreateBranchParams & { noteId: string; parentNoteId: string }) {
    const branch: BranchRecord = {
      branchId: `${p.parentNoteId}_${p.noteId}`,
      noteId: p.noteId,
      parentNoteId: p.parentNoteId,
      prefix: p.prefix && p.prefix.trim() ? p.prefix : null,
      notePosition: p.notePosition ?? newNotePosition(p.parentNoteId),
      isExpanded: !!p.isExpanded,
      utcDateModified: utcNow(),
    };
    const replaced = branches.has(branch.branchId);
    branches.set(branch.branchId, branch);
    if (replaced) touch();
    else branchAdded(branch);
    return branch;
  }

  function createBranch(params: CreateBranchParams): { branch: BranchRecord; created: boolean } {
    const { noteId, parentNoteId } = params;
    if (!noteId || !parentNoteId) {
      throw new CoreError(
        400,
        "GENERIC",
        "noteId and parentNoteId are mandatory properties for Branch",
      );
    }
    const existing = branches.get(`${parentNoteId}_${noteId}`);
    if (existing) {
      // overwrite semantics: unspecified values are reset, not kept
      existing.notePosition = params.notePosition ?? newNotePosition(parentNoteId);
      existing.prefix = params.prefix && params.prefix.trim() ? params.prefix : null;
      existing.isExpanded = !!params.isExpanded;
      existing.utcDateModified = utcNow();
      touch();
      return { branch: existing, created: false };
    }
    return { branch: insertBranch({ ...params, noteId, parentNoteId }), created: true };
  }

  function patchBranch(
    branchId: string,
    patch: { notePosition?: number; prefix?: string | null; isExpanded?: boolean },
  ): BranchRecord {
    const b = branches.get(branchId);
    if (!b) throw new CoreError(404, "BRANCH_NOT_FOUND", `Branch '${branchId}' not found.`);
    if (patch.notePosition !== undefined) b.notePosition = patch.notePosition;
    if ("prefix" in patch) b.prefix = patch.prefix && patch.prefix.trim() ? patch.prefix : null;
    if (patch.isExpanded !== undefined) b.isExpanded = patch.isExpanded;
    b.utcDateModified = utcNow();
    touch();
    return b;
  }

  function removeBranchCascade(branch: BranchRecord): void {
    if (branch.noteId === "root") {
      throw new CoreError(500, "GENERIC", "Can't delete root or hoisted branch/note");
    }
    branches.delete(branch.branchId);
    touch();
    const noteId = branch.noteId;
    const strong = rawParentBranches(noteId).filter((b) => !WEAK_PARENTS.has(b.parentNoteId));
    if (strong.length > 0) return;
    for (const weak of [...rawParentBranches(noteId)]) branches.delete(weak.branchId);
    touch();
    for (const child of [...childBranchesOf(noteId)]) {
      if (branches.has(child.branchId)) removeBranchCascade(child);
    }
    for (const rel of [...(idx().targets.get(noteId) ?? [])]) attributes.delete(rel.attributeId);
    for (const attr of [...ownAttributes(noteId)]) attributes.delete(attr.attributeId);
    for (const att of [...attachments.values()]) {
      if (att.ownerId === noteId) attachments.delete(att.attachmentId);
    }
    notes.delete(noteId);
    touch();
  }

  function deleteBranch(branchId: string): void {
    const b = branches.get(branchId);
    if (b) removeBranchCascade(b);
  }

  function deleteNote(noteId: string): void {
    if (noteId === "root") {
      throw new CoreError(500, "GENERIC", "Can't delete root or hoisted branch/note");
    }
    for (const b of [...rawParentBranches(noteId)]) {
      if (branches.has(b.branchId)) removeBranchCascade(b);
    }
  }

  // --- attributes --------------------------------------------------------------------------

  function createAttribute(params: CreateAttributeParams): AttributeRecord {
    const noteId = params.noteId;
    if (noteId === undefined || !notes.has(noteId)) {
      throw new CoreError(500, "GENERIC", `core sim: attribute owner note '${noteId}' is missing`);
    }
    const attributeId = params.attributeId ?? uniqueId((id) => attributes.has(id));
    if (params.attributeId !== undefined && attributes.has(params.attributeId)) {
      throw new CoreError(
        500,
        "GENERIC",
        `core sim: forced attributeId '${params.attributeId}' already exists`,
      );
    }
    if (params.type !== "label" && params.type !== "relation") {
      throw new CoreError(
        500,
        "GENERIC",
        `Invalid attribute type '${params.type}' in attribute '${attributeId}' of note '${noteId}'`,
      );
    }
    const name = sanitizeAttributeName(params.name ?? "");
    if (!name.trim()) {
      throw new CoreError(
        500,
        "GENERIC",
        `Invalid empty name in attribute '${attributeId}' of note '${noteId}'`,
      );
    }
    const value = params.value ?? "";
    if (params.type === "relation" && !notes.has(value)) {
      throw new CoreError(
        500,
        "GENERIC",
        `Cannot save relation '${name}' of note '${noteId}' since it targets not existing note '${value}'.`,
      );
    }
    const position = params.position ??
      attributesOf(noteId).reduce((max, a) => Math.max(max, a.position), 0) + 10;
    const attr: AttributeRecord = {
      attributeId,
      noteId,
      type: params.type,
      name,
      value,
      position,
      isInheritable: params.isInheritable ?? false,
      utcDateModified: utcNow(),
    };
    attributes.set(attributeId, attr);
    attributeAdded(attr);
    if (attr.type === "relation" && attr.name === "template") {
      try {
        applyNewTemplate(noteId, value);
      } catch (e) {
        attributes.delete(attributeId); // Core's request transaction rolls back
        touch();
        throw e;
      }
    }
    return attr;
  }

  /**
   * Core's handler for a newly created `~template` relation (services/handlers.ts): a note of
   * type text, code, mermaid, canvas, relationMap, mindMap or webView whose (string) content is
   * empty or blank takes a string-typed template's content (when it has any), type and mime.
   * So an empty code note linked to a text template becomes a text note. Core also copies the
   * template's children into a note that has none; that is not modelled (it fails loudly).
   */
  function applyNewTemplate(noteId: string, templateId: string): void {
    const copiesChildren = childBranchesOf(noteId).length === 0 &&
      childBranchesOf(templateId).length > 0 && !subtreeDepths(templateId).has(noteId);
    if (copiesChildren) {
      throw new CoreError(
        500,
        "GENERIC",
        "core sim: copying a template's children is not modelled",
      );
    }
    const note = notes.get(noteId)!;
    const template = notes.get(templateId)!;
    const content = getContent(noteId);
    if (
      TEMPLATE_TAKING_TYPES.has(note.type) && typeof content === "string" &&
      content.trim() === "" && isStringNote(template.type, template.mime)
    ) {
      const templateContent = getContent(templateId);
      if (templateContent) writeNoteContent(note, templateContent);
      note.type = template.type;
      note.mime = template.mime;
      note.dateModified = localNow();
      note.utcDateModified = utcNow();
      touch();
    }
  }

  // --- attachments -------------------------------------------------------------------------

  function attachmentsOf(noteId: string): AttachmentRecord[] {
    return [...attachments.values()].filter((a) => a.ownerId === noteId).sort((a, b) =>
      a.position - b.position
    );
  }

  function createAttachment(params: CreateAttachmentParams): AttachmentRecord {
    if (!params.ownerId) throw new CoreError(500, "GENERIC", "Missing owner ID.");
    requireNote(params.ownerId);
    for (const key of ["role", "mime", "title"] as const) {
      if (params[key] === undefined) {
        throw new CoreError(500, "GENERIC", `NOT NULL constraint failed: attachments.${key}`);
      }
    }
    const mime = params.mime!;
    const stringy = isStringNote(undefined, mime);
    const content = typedContent(params.content ?? "", stringy)!;
    const att: AttachmentRecord = {
      attachmentId: params.attachmentId ?? uniqueId((id) => attachments.has(id)),
      ownerId: params.ownerId,
      role: params.role!,
      mime,
      title: params.title!,
      // Core's MAX(position) query runs with an undefined id, so the default is always 10
      position: params.position ?? 10,
      blobId: saveBlob(content),
      dateModified: localNow(),
      utcDateModified: utcNow(),
      utcDateScheduledForErasureSince: null,
    };
    attachments.set(att.attachmentId, att);
    touch();
    return att;
  }

  function requireAttachment(attachmentId: string): AttachmentRecord {
    const a = attachments.get(attachmentId);
    if (!a) {
      throw new CoreError(404, "ATTACHMENT_NOT_FOUND", `Attachment '${attachmentId}' not found.`);
    }
    return a;
  }

  function putAttachmentContent(attachmentId: string, body: unknown): void {
    const a = requireAttachment(attachmentId);
    const content = coerceBody(
      body,
      isStringNote(undefined, a.mime),
      `attachment '${attachmentId}'`,
    );
    const blobId = saveBlob(content);
    if (blobId === a.blobId) return;
    a.blobId = blobId;
    a.dateModified = localNow();
    a.utcDateModified = utcNow();
    touch();
  }

  // --- tokens ------------------------------------------------------------------------------

  function addToken(token: string, name = "ETAPI token"): TokenRecord {
    const parts = token.split("_");
    if (parts.length !== 2) throw new Error(`core sim: token '${token}' is not <id>_<secret>`);
    const [tokenId, secret] = parts;
    const record: TokenRecord = {
      etapiTokenId: tokenId,
      name,
      tokenHash: sha256Base64(secret),
      utcDateCreated: utcNow(),
    };
    tokens.set(tokenId, record);
    return record;
  }

  function createToken(name: string): string {
    const tokenId = uniqueId((id) => tokens.has(id));
    const secret = randomBytes(32).toString("base64");
    addToken(`${tokenId}_${secret}`, name);
    return `${tokenId}_${secret}`;
  }

  function findToken(tokenId: string, secret: string): TokenRecord | undefined {
    const t = tokens.get(tokenId);
    return t && t.tokenHash === sha256Base64(secret) ? t : undefined;
  }

  // --- search --------------------------------------------------------------------------------

  function search(query: string, params: SearchParams = {}): SearchOutcome {
    return runSearch(query, params, searchEnv);
  }

  const searchEnv: SearchEnv = {
    noteIds: () => [...notes.keys()],
    note: (id) => notes.get(id),
    attributesOf,
    prefixesOf: (id) => rawParentBranches(id).map((b) => b.prefix ?? "").filter(Boolean),
    content: (id) => getContent(id),
    isHiddenCompletely: (id) => isHiddenCompletely(id),
    isArchived,
    subtreeDepths,
    notePath,
    childIds: (id) => childBranchesOf(id).map((b) => b.noteId),
  };

  // --- root ----------------------------------------------------------------------------------

  const rootDate = now();
  notes.set("root", {
    noteId: "root",
    isProtected: false,
    title: "root",
    type: "text",
    mime: "text/html",
    blobId: saveBlob(""),
    dateCreated: formatLocalDateTime(rootDate, offset),
    dateModified: formatLocalDateTime(rootDate, offset),
    utcDateCreated: formatUtcDateTime(rootDate),
    utcDateModified: formatUtcDateTime(rootDate),
  });
  branches.set("none_root", {
    branchId: "none_root",
    noteId: "root",
    parentNoteId: "none",
    prefix: null,
    notePosition: 0,
    isExpanded: true,
    utcDateModified: formatUtcDateTime(rootDate),
  });

  return {
    now,
    localNow,
    utcNow,
    withTime<T>(at: Date, fn: () => T): T {
      const previous = pinned;
      pinned = at;
      try {
        return fn();
      } finally {
        pinned = previous;
      }
    },
    noteIds: () => [...notes.keys()],
    getNote: (id) => notes.get(id),
    getContent,
    attributesOf,
    ownAttributes: (id) => [...ownAttributes(id)],
    labelValue,
    hasLabel,
    branchesOf,
    childBranchesOf: (id) => [...childBranchesOf(id)],
    getBranch: (id) => branches.get(id),
    getAttribute: (id) => attributes.get(id),
    targetRelationsOf: (id) => [...(idx().targets.get(id) ?? [])],
    notePojo,
    getRevision: (id) => revisions.get(id),
    revisionsOf,
    getAttachment: (id) => attachments.get(id),
    attachmentsOf,
    getRevisionContent: (id) => {
      const r = revisions.get(id);
      return r ? typedContent(blobs.get(r.blobId), isStringNote(r.type, r.mime)) : undefined;
    },
    getAttachmentContent: (id) => {
      const a = attachments.get(id);
      return a ? typedContent(blobs.get(a.blobId), isStringNote(undefined, a.mime)) : undefined;
    },
    createNote,
    patchNote,
    putNoteContent,
    setNoteContent,
    saveRevision,
    saveRevisionIfNeeded,
    deleteNote,
    createAttribute,
    deleteAttribute: (id) => {
      if (attributes.delete(id)) touch();
    },
    createBranch,
    patchBranch,
    deleteBranch,
    createAttachment,
    putAttachmentContent,
    insertRevision: (row) => {
      const { content, revisionId, ...rest } = row;
      const rev: RevisionRecord = {
        ...rest,
        revisionId: revisionId ?? uniqueId((id) => revisions.has(id)),
        blobId: saveBlob(content),
      };
      const ordered: RevisionRecord = {
        revisionId: rev.revisionId,
        noteId: rev.noteId,
        type: rev.type,
        mime: rev.mime,
        isProtected: rev.isProtected,
        title: rev.title,
        blobId: rev.blobId,
        dateLastEdited: rev.dateLastEdited,
        dateCreated: rev.dateCreated,
        utcDateLastEdited: rev.utcDateLastEdited,
        utcDateCreated: rev.utcDateCreated,
        utcDateModified: rev.utcDateModified,
      };
      revisions.set(ordered.revisionId, ordered);
      return ordered;
    },
    addToken,
    createToken,
    findToken,
    search,
  };
}

function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

// ---------------------------------------------------------------------------------------------
// Search: lexer, parser, evaluator
// ---------------------------------------------------------------------------------------------

/** What the search evaluator needs from the store. */
interface SearchEnv {
  noteIds(): string[];
  note(id: string): NoteRecord | undefined;
  attributesOf(id: string): AttributeRecord[];
  prefixesOf(id: string): string[];
  content(id: string): Content | undefined;
  isHiddenCompletely(id: string): boolean;
  isArchived(id: string): boolean;
  subtreeDepths(id: string): Map<string, number>;
  notePath(id: string): string[];
  childIds(id: string): string[];
}

type Tree = (SearchToken | Tree)[];

/**
 * The modelled subset: labels, `note.noteId`/`note.title`/`note.content` comparisons, and/or,
 * parentheses, and `note.children.…` (a note with a child matching the rest: Core's ParentOfExp).
 */
type Exp =
  | { kind: "and"; subs: Exp[] }
  | { kind: "or"; subs: Exp[] }
  | { kind: "exists"; name: string }
  | { kind: "labelCmp"; name: string; op: string; value: string }
  | { kind: "prop"; prop: string; op: string; value: string }
  | { kind: "content"; op: string; value: string }
  | { kind: "children"; sub: Exp };

interface ParsedQuery {
  fulltext: string[];
  expression: Exp | null;
}

/** The operators the service's queries and the caller-query tests use. */
const MODELLED_OPERATORS = new Set(["=", "!=", "*=*", "%="]);
/** Every operator Core knows: one outside the modelled set fails loudly instead of misparsing. */
const ALL_OPERATORS = new Set([
  ...MODELLED_OPERATORS,
  "=*",
  "*=",
  ">",
  ">=",
  "<",
  "<=",
  "~=",
  "~*",
]);
const MATCH_PROPS = new Set(["noteid", "title"]);
/** The `note.content` operators of the modelled subset (the conformance suite's `%=` among them). */
const CONTENT_OPERATORS = new Set(["*=*", "%="]);

/**
 * A plain word Core's parser cannot place in an expression and drops: no attribute, operator
 * or punctuation character in it (those stay loud: `#race=half-elf` silently losing `-elf` is
 * a bug to notice) and not a keyword Core reads otherwise.
 */
function isStrayWord(word: string): boolean {
  return !/[#~=*><!%+\-,.()]/.test(word) && !["not", "orderby", "limit"].includes(word);
}

function unsupported(part: string): never {
  throw new CoreError(500, "GENERIC", `core sim: unsupported search syntax: ${part}`);
}

function isTok(t: SearchToken | Tree | undefined): t is SearchToken {
  return t !== undefined && !Array.isArray(t);
}

/**
 * Core's handleParens: any token that is exactly "(" or ")" is a parenthesis, even quoted, and a
 * ")" with no open "(" stays a plain token (a `%=` operand ")" then fails to compile). A "("
 * left open makes Core drop the whole expression and answer the broad list (`#a %= '('`); a
 * quoted ")" closes an open group, silently regrouping the query (`#b (#c = ')')`): refused.
 */
function groupParens(tokens: SearchToken[]): Tree {
  const root: Tree = [];
  const stack: Tree[] = [root];
  for (const t of tokens) {
    const open = t.token === "(";
    const close = t.token === ")" && stack.length > 1;
    if ((open || close) && t.inQuotes) {
      unsupported(`quoted "${t.token}" (Core reads it as a parenthesis)`);
    }
    if (open) {
      const group: Tree = [];
      stack[stack.length - 1].push(group);
      stack.push(group);
    } else if (close) {
      stack.pop();
    } else {
      stack[stack.length - 1].push(t);
    }
  }
  if (stack.length !== 1) unsupported(`unclosed "(" (Core drops the whole expression)`);
  return root;
}

function show(t: SearchToken | Tree | undefined): string {
  if (t === undefined) return "<end of query>";
  if (Array.isArray(t)) return `(${t.map(show).join(" ")})`;
  return t.inQuotes ? JSON.stringify(t.token) : t.token;
}

/**
 * Parses a query into the modelled subset; anything else (relations, `not()`, `#!label`,
 * other properties, `orderBy`/`limit`, …) throws CoreError 500 "core sim: unsupported search
 * syntax: …".
 */
function parseQuery(query: string): ParsedQuery {
  // Core's own lexer, shared with the service: the double models what comes after it
  const lex = lexSearch(query);
  if (lex.leadingOperator) unsupported(`exact-match prefix "${lex.leadingOperator}"`);
  // Core silently discards a full-text word glued to the first `#`/`~` (e.g. "(#a")
  if (lex.discarded !== null) unsupported(`"${lex.discarded}" directly before # or ~`);
  const fulltext: string[] = [];
  for (const t of lex.fulltext) {
    if (!t.inQuotes && t.token.startsWith("=")) unsupported(`exact-match prefix "${t.token}"`);
    if (!t.inQuotes && /[()]/.test(t.token)) unsupported(`parenthesis in full-text "${t.token}"`);
    fulltext.push(normalizeSearchText(t.token));
  }
  const expression = lex.expression.length > 0
    ? parseSequence(groupParens(lex.expression), 0)
    : null;
  return { fulltext, expression };
}

function parseSequence(tokens: Tree, level: number): Exp {
  const exps: Exp[] = [];
  let op: "and" | "or" | null = null;
  let expectOperand = true;
  let i = 0;

  const constant = (t: SearchToken | Tree | undefined, context: string): string => {
    if (!isTok(t)) unsupported(`${context} ${show(t)}`);
    if (!t.inQuotes && (t.token.startsWith("#") || t.token.startsWith("~") || t.token === "note")) {
      unsupported(`${context} ${t.token}`);
    }
    if (!t.inQuotes && ["now", "today", "month", "year"].includes(t.token)) {
      unsupported(`date constant ${t.token}`);
    }
    return t.token;
  };

  const parseProperty = (): Exp => {
    // tokens[i] must be "."
    const dot = tokens[i];
    if (!isTok(dot) || dot.token !== "." || dot.inQuotes) unsupported(`note${show(dot)}`);
    i++;
    const prop = tokens[i];
    if (isTok(prop) && !prop.inQuotes && prop.token === "children") {
      // Core's ParentOfExp: the rest of the path is matched against the note's children
      i++;
      return { kind: "children", sub: parseProperty() };
    }
    if (isTok(prop) && !prop.inQuotes && prop.token === "content") {
      // Core takes the next word as it is here: no date constants, no `#`/`~` check
      const operator = tokens[i + 1];
      const value = tokens[i + 2];
      if (!isTok(operator) || operator.inQuotes || !CONTENT_OPERATORS.has(operator.token)) {
        unsupported(`note.content ${show(operator)}`);
      }
      if (!isTok(value)) unsupported(`note.content ${operator.token} ${show(value)}`);
      i += 3;
      return { kind: "content", op: operator.token, value: value.token };
    }
    if (!isTok(prop) || prop.inQuotes || !MATCH_PROPS.has(prop.token)) {
      unsupported(`note.${show(prop)}`);
    }
    const operator = tokens[i + 1];
    if (!isTok(operator) || operator.inQuotes || !MODELLED_OPERATORS.has(operator.token)) {
      unsupported(`note.${prop.token} ${show(operator)}`);
    }
    const value = constant(tokens[i + 2], `note.${prop.token} ${operator.token}`);
    i += 3;
    return { kind: "prop", prop: prop.token, op: operator.token, value };
  };

  const parseLabel = (raw: string): Exp => {
    const name = raw.slice(1);
    if (!/^[\p{L}\p{N}_:]+$/u.test(name)) unsupported(raw);
    const next = tokens[i + 1];
    if (isTok(next) && !next.inQuotes && ALL_OPERATORS.has(next.token)) {
      if (!MODELLED_OPERATORS.has(next.token)) unsupported(`${raw} ${next.token}`);
      const value = constant(tokens[i + 2], `${raw}${next.token}`);
      i += 3;
      return { kind: "labelCmp", name, op: next.token, value };
    }
    i += 1;
    return { kind: "exists", name };
  };

  while (i < tokens.length) {
    const t = tokens[i];
    if (Array.isArray(t)) {
      if (!expectOperand) implicitAnd();
      exps.push(parseSequence(t, level + 1));
      i++;
      expectOperand = false;
      continue;
    }
    const word = t.token;
    if (t.inQuotes) unsupported(`misplaced quoted value ${show(t)}`);
    if (word.startsWith("#")) {
      if (!expectOperand) implicitAnd();
      exps.push(parseLabel(word));
      expectOperand = false;
    } else if (word === "note") {
      if (!expectOperand) implicitAnd();
      i++;
      exps.push(parseProperty());
      expectOperand = false;
    } else if (word === "and" || word === "or") {
      if (expectOperand) unsupported(`misplaced ${word}`);
      if (op !== null && op !== word) unsupported(`mixed and/or without parentheses: ${word}`);
      op = word;
      expectOperand = true;
      i++;
    } else if (isStrayWord(word)) {
      // Core notes "Unrecognized expression" (only in debug info), drops the word and answers
      // the rest: `#statblock eel` lists every statblock
      i++;
    } else {
      // Core's lexer splits `~*`, `~=` after a bare `~`: name the part as the caller wrote it
      const next = tokens[i + 1];
      unsupported(word === "~" && isTok(next) && !next.inQuotes ? `~${next.token}` : word);
    }
  }
  if (expectOperand && exps.length > 0) unsupported(`dangling ${op}`);
  if (exps.length === 0) unsupported(`empty expression${level > 0 ? " ()" : ""}`);
  return op === "or" ? { kind: "or", subs: exps } : { kind: "and", subs: exps };

  function implicitAnd(): void {
    if (op === "or") unsupported("mixed and/or without parentheses: implicit and after or");
    op = "and";
  }
}

// --- evaluation ----------------------------------------------------------------------------

/**
 * A `%=` operand compiled as Core does it (`new RegExp`, only once a value is tested): a pattern
 * JavaScript rejects fails the whole search with 500 GENERIC and the SyntaxError's text, e.g.
 * "Invalid regular expression: /[/: Unterminated character class".
 */
function searchRegex(source: string, flags: string): RegExp {
  try {
    return new RegExp(source, flags);
  } catch (e) {
    throw new CoreError(500, "GENERIC", e instanceof Error ? e.message : String(e));
  }
}

function compareString(op: string, raw: string | undefined, comparedRaw: string): boolean {
  const compared = comparedRaw.toLowerCase();
  const val = raw?.toLowerCase();
  switch (op) {
    case "=":
    case "!=": {
      let equal: boolean;
      if (!val && !compared) equal = true;
      else if (!val || !compared) equal = false;
      else {
        const v = normalizeSearchText(val);
        const c = normalizeSearchText(compared);
        // word match; a phrase with spaces matches as a substring
        equal = c.includes(" ") ? v.includes(c) : v.split(/\s+/).includes(c);
      }
      return op === "=" ? equal : !equal;
    }
    case "*=*":
      return !!val && val.includes(compared);
    case "%=":
      return !!val && searchRegex(compared, "").test(val);
    default:
      return false;
  }
}

interface EvalCtx {
  env: SearchEnv;
  attrs(id: string): AttributeRecord[];
}

function matches(exp: Exp, noteId: string, ctx: EvalCtx): boolean {
  switch (exp.kind) {
    case "and":
      return exp.subs.every((s) => matches(s, noteId, ctx));
    case "or":
      return exp.subs.some((s) => matches(s, noteId, ctx));
    case "exists":
      return ctx.attrs(noteId).some((a) => a.type === "label" && a.name.toLowerCase() === exp.name);
    case "labelCmp":
      return ctx.attrs(noteId).some((a) =>
        a.type === "label" && a.name.toLowerCase() === exp.name &&
        compareString(exp.op, a.value, exp.value)
      );
    case "prop": {
      const note = ctx.env.note(noteId)!;
      return compareString(exp.op, exp.prop === "noteid" ? note.noteId : note.title, exp.value);
    }
    case "content": {
      // NoteContentFulltextExp: processed content (lowercased, tags stripped), regex flags "ms"
      const text = searchableContent(noteId, ctx).trim();
      if (!text) return false;
      return exp.op === "%=" ? searchRegex(exp.value, "ms").test(text) : text.includes(exp.value);
    }
    case "children":
      return ctx.env.childIds(noteId).some((c) => matches(exp.sub, c, ctx));
  }
}

function flatText(noteId: string, ctx: EvalCtx): string {
  const n = ctx.env.note(noteId)!;
  let text = `${n.noteId} ${n.type} ${n.mime} `;
  for (const prefix of ctx.env.prefixesOf(noteId)) text += `${prefix} `;
  text += `${n.title} `;
  for (const a of ctx.attrs(noteId)) {
    text += `${a.type === "label" ? "#" : "~"}${a.name}${a.value ? `=${a.value}` : ""} `;
  }
  return normalizeSearchText(text);
}

function searchableContent(noteId: string, ctx: EvalCtx): string {
  const n = ctx.env.note(noteId)!;
  if (n.isProtected || !CONTENT_SEARCH_TYPES.has(n.type)) return "";
  const content = ctx.env.content(noteId);
  if (typeof content !== "string" || content.length >= MAX_SEARCH_CONTENT) return "";
  return normalizeSearchText(n.type === "text" ? htmlToText(content) : content);
}

function scoreOf(noteId: string, tokens: string[], ctx: EvalCtx): number {
  if (tokens.length === 0) return 0;
  const n = ctx.env.note(noteId)!;
  const query = tokens.join(" ");
  const title = normalizeSearchText(n.title);
  let score = n.noteId.toLowerCase() === query ? 1000 : 0;
  if (title === query) score += 2000;
  else if (title.startsWith(query)) score += 500;
  else if (` ${title} `.includes(` ${query} `)) score += 300;
  for (const chunk of title.split(" ")) {
    for (const token of tokens) {
      if (chunk === token) score += 4 * token.length;
      else if (chunk.startsWith(token)) score += 2 * token.length;
      else if (chunk.includes(token)) score += token.length;
    }
  }
  return score;
}

function runSearch(query: string, params: SearchParams, env: SearchEnv): SearchOutcome {
  const parsed = parseQuery(query);
  // the content part of a full-text search refuses blank terms (validateFuzzySearchTokens) while
  // the query is parsed, outside Core's parse-error handling: the whole request fails
  if (!params.fastSearch && parsed.fulltext.some((t) => t.trim() === "")) {
    throw new CoreError(
      500,
      "GENERIC",
      "Invalid tokens: empty or whitespace-only tokens are not allowed",
    );
  }
  const cache = new Map<string, AttributeRecord[]>();
  const ctx: EvalCtx = {
    env,
    attrs: (id) => {
      let list = cache.get(id);
      if (!list) {
        list = env.attributesOf(id);
        cache.set(id, list);
      }
      return list;
    },
  };

  // candidate set: subtree of a non-root ancestor (hidden included) or everything not hidden;
  // a query that names its notes by id only looks at those (the same hits, found faster)
  const named = namedIds(parsed.expression);
  const all = named
    ? env.noteIds().filter((id) => named.has(normalizeSearchText(id)))
    : env.noteIds();
  const ancestor = params.ancestorNoteId;
  let candidates: string[];
  if (ancestor && ancestor !== "root") {
    if (!env.note(ancestor)) return { hits: [] };
    const depths = env.subtreeDepths(ancestor);
    const depthOk = depthComparator(params.ancestorDepth);
    candidates = all.filter((id) => depths.has(id) && depthOk(depths.get(id)!));
  } else {
    candidates = all.filter((id) => !env.isHiddenCompletely(id));
  }
  if (!params.includeArchivedNotes) candidates = candidates.filter((id) => !env.isArchived(id));

  const tokens = parsed.fulltext;
  const ids = candidates.filter((id) => {
    if (tokens.length > 0) {
      const flat = flatText(id, ctx);
      const content = params.fastSearch ? "" : searchableContent(id, ctx);
      if (!tokens.every((t) => flat.includes(t) || content.includes(t))) return false;
    }
    return parsed.expression === null || matches(parsed.expression, id, ctx);
  });

  const hits = ids.map((noteId) => ({
    noteId,
    score: scoreOf(noteId, tokens, ctx),
    notePath: env.notePath(noteId),
  })).sort((a, b) =>
    b.score - a.score || a.notePath.length - b.notePath.length ||
    compareText(env.note(a.noteId)!.title, env.note(b.noteId)!.title) ||
    compareText(a.noteId, b.noteId)
  );
  return { hits };
}

/**
 * The ids (as compared: lowercased, without diacritics) a query is limited to when every match
 * must satisfy `note.noteId = …`
 * (alone, an `or` of them, or one operand of an `and`), else undefined.
 */
function namedIds(exp: Exp | null): Set<string> | undefined {
  if (exp === null) return undefined;
  if (exp.kind === "prop") {
    const id = normalizeSearchText(exp.value);
    return exp.prop === "noteid" && exp.op === "=" ? new Set([id]) : undefined;
  }
  if (exp.kind === "or") {
    const sets = exp.subs.map(namedIds);
    return sets.every((x) => x !== undefined) ? new Set(sets.flatMap((x) => [...x!])) : undefined;
  }
  if (exp.kind === "and") {
    return exp.subs.map(namedIds).find((x) => x !== undefined);
  }
  return undefined;
}

function compareText(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
}

function depthComparator(condition: string | undefined): (depth: number) => boolean {
  if (!condition) return () => true;
  const n = parseInt(condition.slice(2));
  if (condition.startsWith("eq")) return (d) => d === n;
  if (condition.startsWith("lt")) return (d) => d < n;
  if (condition.startsWith("gt")) return (d) => d > n;
  return () => true; // Core logs an unrecognised depth condition and ignores it
}
