/**
 * Allow-list sanitizers for lore HTML read from Core, which stores whatever it was given
 * (`<script>` included).
 *
 * The input is first parsed the way a browser parses it (browser_tree.ts): gm-only sections and
 * whatever a rewriter removes go there. sanitize-html (htmlparser2) then applies the policy:
 * which tags and attributes survive, how image and link URLs are rewritten, and, for players,
 * which `gm-only` subtrees disappear. The exported functions are pure (the only module state is
 * a cache of options per rewriter and a flag scoped to one synchronous call).
 *
 * Both parsers belong to the HTML engine, loaded on first use (html_engine.ts): the sanitizers
 * throw until `loadHtmlEngine()` has resolved, so their async callers await it first. The URL
 * helpers and rewriters need no engine.
 *
 * @module
 */

import { attachmentImagePath, imageNotePath } from "../media/attachment_image.ts";
import { noteRef } from "./note_refs.ts";
import {
  type BrowserTree,
  countElements,
  type ElementView,
  parseLikeBrowser,
  removeElements,
  serializeTree,
  someElement,
  startTags,
  textChunks,
  textWrittenWithin,
} from "./browser_tree.ts";
import {
  htmlEngine,
  type SanitizeAttributes,
  type SanitizeFrame,
  type SanitizeOptions,
  type SanitizeTransformer,
} from "./html_engine.ts";

export type { ElementView } from "./browser_tree.ts";

/**
 * How a sanitized document may point at images and notes; injected so the authenticated editor
 * view and the public site can share one sanitizer. Both methods receive the attribute value
 * with HTML entities already decoded. Their results are checked again by the sanitizer (images:
 * http/https/relative, never protocol-relative; links: http/https/mailto/relative), so a buggy
 * rewriter cannot reintroduce `javascript:`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const publicRewriter: HtmlRewriter = {
 *   image: (src) => {
 *     const id = noteIdFromImageSrc(src);
 *     return id ? `/api/public/images/${id}/image` : null;
 *   },
 *   link: (href) => editorRewriter.link(href),
 * };
 * assert.equal(publicRewriter.image("api/images/AbC123/a.png"), "/api/public/images/AbC123/image");
 * assert.equal(publicRewriter.image("data:image/png;base64,AAAA"), null);
 * ```
 */
export interface HtmlRewriter {
  /** Given a raw img src, return the URL to emit, or null to drop the <img> entirely. */
  image(src: string): string | null;
  /** Given a raw href, return the href to emit, or null to keep the link text but drop the href. */
  link(href: string): string | null;
  /**
   * Given a `data-note-id` value, return the value to emit or null to drop the attribute. When
   * absent, valid note ids are kept (the public view drops them: they may name hidden notes).
   */
  dataNoteId?(noteId: string): string | null;
  /**
   * Consulted for every element of the browser's parse of the input, before anything else:
   * true removes the element with everything inside it. The public view uses it for links and
   * included notes whose text came from a note the visitor may not see.
   */
  removes?(element: ElementView): boolean;
}

/**
 * Changes whenever the sanitizers' output for the same input changes; part of every ETag of
 * sanitized HTML, so a browser or cache never keeps an answer an older version produced.
 */
export const SANITIZER_VERSION = "image-paths-1";

// ---------------------------------------------------------------------------------------------
// URL helpers

const NOTE_ID = /^[A-Za-z0-9_]{1,128}$/;
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
const LINK_SCHEMES: ReadonlySet<string> = new Set(["http", "https", "mailto"]);
const IMAGE_SCHEMES: ReadonlySet<string> = new Set(["http", "https"]);
// `//x`, `\\x`, `/\x`, `\/x` all reach another host in browsers.
const OTHER_HOST_RELATIVE = /^[/\\]{2}/;

/** Tab, newline and NUL hide schemes (`jav&#x09;ascript:`); no legitimate URL needs them. */
function hasControlChar(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * Trimmed URL if its scheme is in `schemes` or it has none, else null. A colon before the first
 * `/`, `?` or `#` without a well-formed scheme (`java script:`, `&#106;avascript:` left
 * undecoded, non-ASCII look-alikes) is treated as an obfuscated scheme and rejected.
 */
function cleanUrl(raw: string, schemes: ReadonlySet<string>): string | null {
  if (typeof raw !== "string" || hasControlChar(raw)) return null;
  const url = raw.trim();
  if (url === "") return null;
  const scheme = SCHEME.exec(url);
  if (scheme) return schemes.has(scheme[1].toLowerCase()) ? url : null;
  const colon = url.indexOf(":");
  if (colon === -1) return url;
  const pathStart = url.search(/[/?#]/);
  return pathStart !== -1 && pathStart < colon ? url : null;
}

/** A link target we are willing to emit: http, https, mailto or relative (incl. `//host`). */
function safeLink(href: string): string | null {
  return cleanUrl(href, LINK_SCHEMES);
}

/** An image URL we are willing to emit: http(s) or a same-host relative path. */
function safeImage(src: string): string | null {
  const url = cleanUrl(src, IMAGE_SCHEMES);
  return url === null || OTHER_HOST_RELATIVE.test(url) ? null : url;
}

/**
 * Note id of an image reference, else null: any URL {@linkcode noteRef} reads as an image of a
 * note (`api/images/<id>/<file>` as Core stores it, `/api/lore/<id>/image` as we serve it, on
 * any host or base path, with a query or fragment) whose id is a valid noteId. Attachments,
 * `data:` and other URLs give null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(noteIdFromImageSrc("api/images/AbC123/map.png?2024"), "AbC123");
 * assert.equal(noteIdFromImageSrc("https://core.example/api/lore/AbC123/image"), "AbC123");
 * assert.equal(noteIdFromImageSrc("data:image/png;base64,AAAA"), null);
 * ```
 */
export function noteIdFromImageSrc(src: string): string | null {
  const ref = noteRef(src);
  return ref?.kind === "id" && ref.image && NOTE_ID.test(ref.id) ? ref.id : null;
}

/**
 * Attachment id of an image attachment reference (`api/attachments/<id>/image/<file>` as Core
 * stores it, on any host or base path, with a query or fragment), else null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(attachmentIdFromImageSrc("api/attachments/AtT123/image/sigil.png"), "AtT123");
 * assert.equal(attachmentIdFromImageSrc("api/attachments/AtT123/download"), null);
 * ```
 */
export function attachmentIdFromImageSrc(src: string): string | null {
  const ref = noteRef(src);
  return ref?.kind === "attachment" && ref.image && NOTE_ID.test(ref.id) ? ref.id : null;
}

/**
 * Target noteId of a link that names a note by id (see {@linkcode noteRef}): Core's internal
 * `#root/<path>/<id>` (also on an absolute URL such as `http://core.example/#root/a/b`), and
 * `api/notes/<id>`-style URLs; else null. Share links by alias (`/share/<alias>`) need a lookup
 * and give null here. `#root` alone yields `"root"`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(noteIdFromHref("#root/x/AbC123"), "AbC123");
 * assert.equal(noteIdFromHref("http://core.example/#root/a/b/AbC123"), "AbC123");
 * assert.equal(noteIdFromHref("https://example.com/page"), null);
 * ```
 */
export function noteIdFromHref(href: string): string | null {
  const ref = noteRef(href);
  return ref?.kind === "id" && NOTE_ID.test(ref.id) ? ref.id : null;
}

/**
 * Rewriter for the authenticated API view. Images: only those naming a note's image or an image
 * attachment, in any spelling {@linkcode noteRef} reads, and always from our own routes (never
 * the host the URL names): image notes become `/api/images/<id>/<URL-safe file>` (Core's own
 * form, rooted: the portal's sanitizer keeps image sources of this form only; it redirects to
 * `/api/lore/<id>/image`), image attachments (Core's pasted images,
 * `api/attachments/<id>/image/<file>`) `/api/attachments/<id>/image/<URL-safe file>`; everything
 * else (remote trackers, `data:`) is dropped. Links: http, https, mailto and relative (including
 * `#root/...` and protocol-relative `//host`) are kept; any other or obfuscated scheme loses its
 * href.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(editorRewriter.image("api/images/AbC123/map.png"), "/api/images/AbC123/map.png");
 * assert.equal(editorRewriter.image("/api/lore/AbC123/image"), "/api/images/AbC123/image");
 * assert.equal(
 *   editorRewriter.image("api/attachments/AtT123/image/inline%20image"),
 *   "/api/attachments/AtT123/image/inline-image",
 * );
 * assert.equal(editorRewriter.image("https://tracker.example/p.gif"), null);
 * assert.equal(editorRewriter.link("JaVaScRiPt:alert(1)"), null);
 * ```
 */
export const editorRewriter: HtmlRewriter = Object.freeze({
  image(src: string): string | null {
    // The last segment is Core's encoded title: it names saved copies and is never looked up.
    const file = () => src.trim().replace(/[?#][\s\S]*$/, "").split("/").pop()!;
    const id = noteIdFromImageSrc(src);
    if (id !== null) return imageNotePath(id, file());
    const attachmentId = attachmentIdFromImageSrc(src);
    return attachmentId === null ? null : attachmentImagePath(attachmentId, file());
  },
  link(href: string): string | null {
    return safeLink(href);
  },
});

// ---------------------------------------------------------------------------------------------
// Policy

// deno-fmt-ignore
const ALLOWED_TAGS = [
  "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "code", "div",
  "span", "section", "figure", "figcaption", "ul", "ol", "li", "dl", "dt", "dd", "strong", "b",
  "em", "i", "u", "s", "sub", "sup", "mark", "small", "del", "ins", "kbd", "abbr", "table",
  "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "colgroup", "col", "details",
  "summary", "a", "img",
];
const ALLOWED_TAG_SET: ReadonlySet<string> = new Set(ALLOWED_TAGS);

// Dropped together with everything inside them; other disallowed tags only lose the tag.
// deno-fmt-ignore
const DROP_WITH_CONTENT: readonly string[] = [
  "script", "style", "template", "noscript", "iframe", "frame", "frameset", "object", "embed",
  "applet", "svg", "math", "input", "button", "textarea", "select", "option", "optgroup",
  "datalist", "title", "xmp", "plaintext", "noembed", "noframes",
];

type Attributes = SanitizeAttributes;

// Attribute objects of elements that must vanish with their content (gm-only subtrees, images
// the rewriter rejects); `exclusiveFilter` sees the same object on the closing frame. We do not
// rename such elements to a disallowed tag instead: sanitize-html 2.18 never clears the
// rename of a discarded element, so the next sibling at that depth got the wrong end tag.
const doomed = new WeakSet<Attributes>();

/** An attribute set marking its element for removal with everything inside it. */
function doom(): Attributes {
  const attribs: Attributes = {};
  doomed.add(attribs);
  return attribs;
}

// Set by the transform while a (synchronous) sanitize call runs, when a disallowed element was
// met. htmlparser2 applies implied end tags (`<p>` before `<div>`, `<dd>` before `<dd>`) only
// against the innermost open element, so unwrapping one (`<p><center><div>`) can leave markup
// that parses into a different tree next time; a second pass over the already-clean output
// fixes that (idempotence). Doomed elements go with their whole subtree and need no second pass.
let removedElement = false;

const CLASS_TOKEN = /^[A-Za-z0-9_-]{1,64}$/;
const GM_ONLY_CLASS = "gm-only";
const DIGITS = /^[0-9]{1,5}$/;
const SPAN = /^[0-9]{1,4}$/;
const OL_START = /^-?[0-9]{1,9}$/;
const OL_TYPES: ReadonlySet<string> = new Set(["1", "a", "A", "i", "I"]);
const TH_SCOPES: ReadonlySet<string> = new Set(["row", "col", "rowgroup", "colgroup"]);
const REL_TOKENS = ["noopener", "noreferrer", "nofollow", "ugc", "sponsored"];

// Hex or numeric rgb()/rgba() only: no keywords, functions or url() that could smuggle content.
const CHANNEL = String.raw`\s*\d{1,3}%?\s*`;
const ALPHA = String.raw`\s*(?:\d{1,3}%|[01]|[01]?\.\d{1,4})\s*`;
const COLOR = [
  /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i,
  new RegExp(`^rgb\\(${CHANNEL},${CHANNEL},${CHANNEL}\\)$`, "i"),
  new RegExp(`^rgba\\(${CHANNEL},${CHANNEL},${CHANNEL},${ALPHA}\\)$`, "i"),
];
const DECORATION =
  /^(?:none|(?:underline|overline|line-through)(?:\s+(?:underline|overline|line-through)){0,2})$/i;
const SIZE = [/^\d{1,5}(?:\.\d{1,4})?(?:px|%)$/];
const SIZE_STYLES = { width: SIZE, height: SIZE };

/** Own attribute value only, so names like `constructor` never read the prototype. */
function attr(attribs: Attributes, name: string): string | undefined {
  return Object.hasOwn(attribs, name) ? attribs[name] : undefined;
}

/**
 * Fail closed on `gm-only`: any Unicode whitespace splits, and any letter case matches, even
 * though browsers and Core's `.gm-only` selector are case-sensitive.
 */
function isGmOnly(attribs: Attributes): boolean {
  const value = attr(attribs, "class");
  if (value === undefined) return false;
  return hasGmOnlyToken(value.split(/\s+/));
}

function hasGmOnlyToken(classes: readonly string[]): boolean {
  return classes.some((token) => token.toLowerCase() === GM_ONLY_CLASS);
}

function cleanClass(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const tokens = [...new Set(value.split(/\s+/).filter((token) => CLASS_TOKEN.test(token)))];
  return tokens.length ? tokens.join(" ") : undefined;
}

function setIf(out: Attributes, name: string, value: string | undefined, valid: boolean): void {
  if (value !== undefined && valid) out[name] = value;
}

function linkAttributes(attribs: Attributes, out: Attributes, rewriter: HtmlRewriter): void {
  const raw = attr(attribs, "href");
  const href = raw === undefined ? null : rewriter.link(raw);
  const safe = href === null ? null : safeLink(href);
  if (safe !== null) out.href = safe;
  // title/target/rel mean nothing without a destination, and a dropped target's title could
  // name the note it pointed at.
  if (safe === null) return;
  setIf(out, "title", attr(attribs, "title"), true);
  const rel = new Set((attr(attribs, "rel") ?? "").toLowerCase().split(/\s+/));
  if (attr(attribs, "target")?.trim().toLowerCase() === "_blank") {
    out.target = "_blank";
    rel.add("noopener").add("noreferrer");
  }
  // Fixed token order keeps the output canonical, hence idempotent.
  const kept = REL_TOKENS.filter((token) => rel.has(token));
  if (kept.length) out.rel = kept.join(" ");
}

/** False when the image must be removed. */
function imageAttributes(attribs: Attributes, out: Attributes, rewriter: HtmlRewriter): boolean {
  const raw = attr(attribs, "src");
  const rewritten = raw === undefined ? null : rewriter.image(raw);
  const src = rewritten === null ? null : safeImage(rewritten);
  if (src === null) return false;
  out.src = src;
  setIf(out, "alt", attr(attribs, "alt"), true);
  setIf(out, "title", attr(attribs, "title"), true);
  const width = attr(attribs, "width");
  setIf(out, "width", width, DIGITS.test(width ?? ""));
  const height = attr(attribs, "height");
  setIf(out, "height", height, DIGITS.test(height ?? ""));
  return true;
}

function cellAttributes(attribs: Attributes, out: Attributes): void {
  for (const name of ["colspan", "rowspan"]) {
    const value = attr(attribs, name);
    setIf(out, name, value, SPAN.test(value ?? ""));
  }
}

/** Rebuilds an element's attributes from scratch, in a fixed order, per the allow-list. */
function transformFor(rewriter: HtmlRewriter, player: boolean): SanitizeTransformer {
  return (tagName, attribs) => {
    const allowed = ALLOWED_TAG_SET.has(tagName);
    if (player && isGmOnly(attribs)) {
      // A disallowed wrapper (`<font class="gm-only">`) would be unwrapped and its text kept,
      // so it becomes a span that the filter then removes whole. Raw-text and foreign
      // elements are dropped with their content anyway, and must not become a span.
      if (allowed) return { tagName, attribs: doom() };
      if (!DROP_WITH_CONTENT.includes(tagName)) return { tagName: "span", attribs: doom() };
    }
    if (!allowed) {
      removedElement = true;
      return { tagName, attribs: {} };
    }
    const out: Attributes = {};
    switch (tagName) {
      case "a":
        linkAttributes(attribs, out, rewriter);
        break;
      case "img":
        if (!imageAttributes(attribs, out, rewriter)) return { tagName, attribs: doom() };
        break;
      case "ol": {
        const start = attr(attribs, "start");
        setIf(out, "start", start, OL_START.test(start ?? ""));
        const type = attr(attribs, "type");
        setIf(out, "type", type, OL_TYPES.has(type ?? ""));
        break;
      }
      case "td":
        cellAttributes(attribs, out);
        break;
      case "th": {
        cellAttributes(attribs, out);
        const scope = attr(attribs, "scope")?.trim().toLowerCase();
        setIf(out, "scope", scope, TH_SCOPES.has(scope ?? ""));
        break;
      }
      case "abbr":
        setIf(out, "title", attr(attribs, "title"), true);
        break;
    }
    setIf(out, "class", cleanClass(attr(attribs, "class")), true);
    const rawNoteId = attr(attribs, "data-note-id");
    const noteId = rawNoteId === undefined || !rewriter.dataNoteId
      ? rawNoteId
      : rewriter.dataNoteId(rawNoteId) ?? undefined;
    setIf(out, "data-note-id", noteId, NOTE_ID.test(noteId ?? ""));
    // Declarations are filtered by sanitize-html against `allowedStyles` below.
    setIf(out, "style", attr(attribs, "style"), true);
    return { tagName, attribs: out };
  };
}

// The transform above already enforces all of this; sanitize-html enforces it a second time.
const BASE_OPTIONS: Readonly<SanitizeOptions> = Object.freeze({
  allowedTags: ALLOWED_TAGS,
  nonTextTags: [...DROP_WITH_CONTENT],
  exclusiveFilter: (frame: SanitizeFrame) => doomed.has(frame.attribs),
  disallowedTagsMode: "discard",
  allowedAttributes: {
    "*": ["class", "data-note-id", "style"],
    a: ["href", "title", "target", "rel"],
    img: ["src", "alt", "title", "width", "height"],
    ol: ["start", "type"],
    td: ["colspan", "rowspan"],
    th: ["colspan", "rowspan", "scope"],
    abbr: ["title"],
  },
  allowedClasses: { "*": [CLASS_TOKEN] },
  allowedStyles: {
    "*": {
      "text-align": [/^(?:left|right|center|justify)$/i],
      "color": COLOR,
      "background-color": COLOR,
      "font-weight": [/^(?:normal|bold|bolder|lighter|[1-9]00)$/i],
      "font-style": [/^(?:normal|italic|oblique)$/i],
      "text-decoration": [DECORATION],
    },
    img: SIZE_STYLES,
    table: SIZE_STYLES,
    td: SIZE_STYLES,
    col: SIZE_STYLES,
  },
  allowedSchemes: [...LINK_SCHEMES],
  allowedSchemesByTag: { img: [...IMAGE_SCHEMES] },
  allowedSchemesAppliedToAttributes: ["href", "src"],
  allowProtocolRelative: true, // links only; images are checked by safeImage()
  selfClosing: ["br", "hr", "img", "col"],
  enforceHtmlBoundary: false,
  parser: { decodeEntities: true },
});

interface ModeOptions {
  lore: SanitizeOptions;
  player: SanitizeOptions;
}

// One options object per rewriter and mode, built on first use and dropped with the rewriter.
const optionsByRewriter = new WeakMap<HtmlRewriter, ModeOptions>();

function optionsFor(rewriter: HtmlRewriter, player: boolean): SanitizeOptions {
  let entry = optionsByRewriter.get(rewriter);
  if (entry === undefined) {
    entry = {
      lore: { ...BASE_OPTIONS, transformTags: { "*": transformFor(rewriter, false) } },
      player: { ...BASE_OPTIONS, transformTags: { "*": transformFor(rewriter, true) } },
    };
    optionsByRewriter.set(rewriter, entry);
  }
  return player ? entry.player : entry.lore;
}

// The second pass must not rewrite again (a public rewriter need not accept its own output);
// the URLs it sees were already rewritten and checked.
const keepUrls: HtmlRewriter = Object.freeze({
  image: (src: string) => src,
  link: (href: string) => href,
});

// Built at module load: the default rewriter and the second pass.
optionsFor(editorRewriter, false);
optionsFor(keepUrls, false);

function sanitize(html: string, rewriter: HtmlRewriter, player: boolean): string {
  // Membership (which text lies inside a gm-only element, inside a link) is decided on the tree
  // a browser builds; the allow-list then runs over that tree's serialization, from which the
  // removed parts are already gone, so no parser disagreement can bring them back.
  const input = typeof html === "string" ? html : "";
  const tree = parseLikeBrowser(input);
  if (player && !everyGmOnlyTagParsed(input, tree)) return ""; // fail closed
  const removes = rewriter.removes?.bind(rewriter);
  const removed = player || removes
    ? removeElements(tree, (el) => (player && hasGmOnlyToken(el.classes)) || !!removes?.(el))
    : { texts: [], ranges: [] };
  // Text the parser moved out of a removed element was written inside it: fail closed.
  if (textWrittenWithin(tree, removed.ranges)) return "";
  const outer = removedElement; // in case a rewriter itself sanitizes
  removedElement = false;
  let out: string;
  try {
    const { sanitizeHtml } = htmlEngine();
    const once = sanitizeHtml(serializeTree(tree), optionsFor(rewriter, player));
    out = removedElement ? sanitizeHtml(once, optionsFor(keepUrls, player)) : once;
  } finally {
    removedElement = outer;
  }
  // The answer is the browser's own reading of the result, so what a client stores, compares
  // or inserts is exactly the tree it will get (and sanitizing it again changes nothing).
  const reparsed = parseLikeBrowser(out);
  if (player && !passesReaderCheck(reparsed, removed.texts, textChunks(tree).join(""))) return "";
  return serializeTree(reparsed);
}

/**
 * True when every start tag written with a gm-only class became an element of the browser's
 * tree. A tag the browser drops (`<tr class="gm-only">` outside a table) leaves the text the
 * writer meant to hide unmarked; the writer's intent is then unknowable.
 */
function everyGmOnlyTagParsed(html: string, tree: BrowserTree): boolean {
  if (!/gm-only/i.test(html)) return true;
  const parsed = new Set<number | undefined>();
  countElements(tree, (el) => hasGmOnlyToken(el.classes) && !!parsed.add(el.startOffset));
  return startTags(html).every((tag) =>
    !hasGmOnlyToken((tag.attr("class") ?? "").split(/\s+/)) || parsed.has(tag.startOffset)
  );
}

const squash = (text: string) => text.replace(/\s+/g, " ").trim();

/**
 * The player view's last line of defence: the output, parsed again the browser's way, has no
 * gm-only element and shows none of the removed text (unless the kept text has it too, i.e. the
 * writer repeated it outside the secret part). Fails closed: the caller then shows nothing.
 */
function passesReaderCheck(
  reparsed: BrowserTree,
  removed: readonly string[],
  kept: string,
): boolean {
  if (someElement(reparsed, (el) => hasGmOnlyToken(el.classes))) return false;
  const shown = squash(textChunks(reparsed).join(""));
  const keptText = squash(kept);
  return removed.every((chunk) => {
    const text = squash(chunk);
    return text === "" || !shown.includes(text) || keptText.includes(text);
  });
}

/**
 * Lore ("gm" preview) sanitizer: strict allow-list of structure, text formatting, tables, lists,
 * links and images; `gm-only` content is kept. Deterministic, and idempotent whenever the
 * rewriter accepts its own output (the default one does).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadHtmlEngine } from "./html_engine.ts";
 * await loadHtmlEngine();
 * assert.equal(sanitizeLoreHtml('<p onclick="x()">Hi<script>alert(1)</script></p>'), "<p>Hi</p>");
 * assert.equal(
 *   sanitizeLoreHtml('<img src="api/images/AbC123/map.png">'),
 *   '<img src="/api/images/AbC123/map.png">',
 * );
 * ```
 */
export function sanitizeLoreHtml(html: string, rewriter: HtmlRewriter = editorRewriter): string {
  return sanitize(html, rewriter, false);
}

/**
 * Player sanitizer: the lore rules, plus every element whose class list contains `gm-only` (in
 * any letter case, at any depth, even on otherwise disallowed tags) is removed with all its
 * content. Note-level `#gmOnly`/`#draft` are the caller's concern.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadHtmlEngine } from "./html_engine.ts";
 * await loadHtmlEngine();
 * assert.equal(
 *   sanitizePlayerHtml('<p>Town<span class="gm-only"> (cult base)</span></p>'),
 *   "<p>Town</p>",
 * );
 * ```
 */
export function sanitizePlayerHtml(html: string, rewriter: HtmlRewriter = editorRewriter): string {
  return sanitize(html, rewriter, true);
}
