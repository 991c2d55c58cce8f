/**
 * The allow-list policy, applied with sanitize-html (htmlparser2): which tags survive (and which
 * go with everything inside them), which attributes and inline styles each may keep, and how
 * image and link URLs pass through the {@linkcode HtmlRewriter} and the scheme checks. In the
 * player mode, `gm-only` elements that reach it are removed whole as well. Every element's
 * attributes are rebuilt from scratch, in a fixed order, so the output is canonical.
 *
 * Kept apart from the composing sanitizer (html.ts) because this is the part that knows
 * sanitize-html's options and quirks. Module state: a cache of options per rewriter and a flag
 * scoped to one synchronous call. Throws until the HTML engine is loaded (html_engine.ts).
 *
 * @module
 */

import { classIsGmOnly } from "./gm_only.ts";
import {
  htmlEngine,
  type SanitizeAttributes,
  type SanitizeFrame,
  type SanitizeOptions,
  type SanitizeTransformer,
} from "./html_engine.ts";
import { isRedactionClass, REDACTION_ATTRIBUTES } from "./redaction.ts";
import {
  editorRewriter,
  type HtmlRewriter,
  IMAGE_SCHEMES,
  LINK_SCHEMES,
  NOTE_ID,
  safeImage,
  safeLink,
} from "./url_rules.ts";

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
    if (player && classIsGmOnly(attr(attribs, "class"))) {
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
      case "span":
        // the redaction mark's attributes are fixed, never the input's (redaction.ts)
        if (isRedactionClass(cleanClass(attr(attribs, "class")))) {
          Object.assign(out, REDACTION_ATTRIBUTES);
        }
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
    span: Object.keys(REDACTION_ATTRIBUTES),
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

/**
 * The allow-list pass over HTML (in practice the serialization of the browser's tree, from which
 * the removed parts are already gone): sanitize-html with this policy, and when an element was
 * unwrapped, a second pass over the already-clean output (see `removedElement`). `player` also
 * removes `gm-only` elements with their content.
 */
export function applyAllowList(html: string, rewriter: HtmlRewriter, player: boolean): string {
  const outer = removedElement; // in case a rewriter itself sanitizes
  removedElement = false;
  try {
    const { sanitizeHtml } = htmlEngine();
    const once = sanitizeHtml(html, optionsFor(rewriter, player));
    return removedElement ? sanitizeHtml(once, optionsFor(keepUrls, player)) : once;
  } finally {
    removedElement = outer;
  }
}
