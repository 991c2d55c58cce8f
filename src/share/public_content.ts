/**
 * Content of public notes: fetched from Core's ETAPI (never from Core's share render, which can
 * leak GM-only parts), cached by Core's content-addressed `blobId`, and turned into player HTML
 * whose links and images point only at public notes, or into plain text for the public search.
 *
 * @module
 */
import { contentBlobId, escapeHtml } from "../lore/preview.ts";
import {
  attachmentIdFromImageSrc,
  type ElementView,
  type HtmlRewriter,
  noteIdFromHref,
  noteIdFromImageSrc,
  sanitizePlayerHtml,
} from "../sanitize/html.ts";
import { loadHtmlEngine } from "../sanitize/html_engine.ts";
import { decodeHtmlEntities, htmlToText } from "../sanitize/plain_text.ts";
import type { CoreAttachment, CoreClient, CoreNote } from "../upstream/core.ts";
import type { PublicCaches } from "./public_snapshot.ts";
import { ownShareAlias } from "./tree_filter.ts";

/** Note types whose content is HTML shown to visitors. */
const HTML_TYPES: ReadonlySet<string> = new Set(["text", "book"]);

const BLOB_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Whether the note's content is HTML the public sees (text and book notes).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(hasHtmlContent({ type: "book" }), true);
 * assert.equal(hasHtmlContent({ type: "code" }), false);
 * ```
 */
export function hasHtmlContent(note: Pick<CoreNote, "type">): boolean {
  return HTML_TYPES.has(note.type);
}

/**
 * The note's raw content. Cached under Core's `blobId` only when the fetched text hashes to that
 * id (the note may have changed since the snapshot), so a cache entry is always the blob it
 * names. Concurrent requests for one blob share one Core call.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { contentBlobId } from "../lore/preview.ts";
 * import { createCoreClient } from "../upstream/core.ts";
 * import { createPublicCaches } from "./public_snapshot.ts";
 * let reads = 0;
 * const core = createCoreClient({ baseUrl: "http://core:8080", token: "t" }, {
 *   timeoutMs: 15_000,
 *   fetch: () => Promise.resolve(new Response(`<p>Harbor, read ${++reads}</p>`)),
 * });
 * const caches = createPublicCaches({ PUBLIC_CACHE_MS: 60_000 });
 * const note = { noteId: "abc123", blobId: await contentBlobId("<p>Harbor, read 1</p>") };
 * assert.equal(await publicContent(caches, core, "identity", note), "<p>Harbor, read 1</p>");
 * assert.equal(await publicContent(caches, core, "identity", note), "<p>Harbor, read 1</p>");
 * assert.equal(reads, 1); // the second came from the cache
 * ```
 */
export async function publicContent(
  caches: PublicCaches,
  core: CoreClient,
  identity: string,
  note: Pick<CoreNote, "noteId" | "blobId">,
): Promise<string> {
  const blobId = note.blobId && BLOB_ID.test(note.blobId) ? note.blobId : null;
  if (blobId === null) return await core.contentText(note.noteId);
  const key = `${identity}:${blobId}`;
  let stale = false;
  const text = await caches.contents.getOrLoad(key, async () => {
    const fetched = await core.contentText(note.noteId);
    stale = await contentBlobId(fetched) !== blobId;
    return fetched;
  });
  if (stale) caches.contents.delete(key);
  return text;
}

/**
 * The words a visitor can read in the note (title excluded), normalised for matching: the public
 * view's HTML (no `.gm-only` parts, no text that came from a hidden note) with tags dropped,
 * entities decoded, lower case, no accents. Cached by `blobId` within one snapshot `version`
 * (what is hidden can change while the blob does not).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createCoreClient } from "../upstream/core.ts";
 * import { createPublicCaches } from "./public_snapshot.ts";
 * const html = '<p>The <b>Harbor</b> Town<span class="gm-only"> hides a cult</span></p>';
 * const core = createCoreClient({ baseUrl: "http://core:8080", token: "t" }, {
 *   timeoutMs: 15_000,
 *   fetch: () => Promise.resolve(new Response(html)),
 * });
 * const nothingElseIsPublic: PublicLinkPolicy = {
 *   isPublic: () => false,
 *   canSee: () => false,
 *   note: () => undefined,
 *   lookup: () => undefined,
 *   pagePath: (id) => `/public/lore/${id}`,
 *   backendHosts: new Set(),
 * };
 * const caches = createPublicCaches({ PUBLIC_CACHE_MS: 60_000 });
 * const note = { noteId: "abc123", type: "text" };
 * const text = await publicSearchText(caches, core, "identity", note, "v1", nothingElseIsPublic);
 * assert.equal(text, "the harbor town"); // no GM-only words
 * ```
 */
export async function publicSearchText(
  caches: PublicCaches,
  core: CoreClient,
  identity: string,
  note: Pick<CoreNote, "noteId" | "blobId" | "type">,
  version: string,
  policy: PublicLinkPolicy,
): Promise<string> {
  if (!hasHtmlContent(note)) return "";
  const toText = async () =>
    visibleText(await publicContent(caches, core, identity, note), textOnly(policy));
  const blobId = note.blobId && BLOB_ID.test(note.blobId) ? note.blobId : null;
  if (blobId === null) return await toText();
  return await caches.texts.getOrLoad(`${identity}:${version}:${blobId}`, toText);
}

// Text only: every image and every href goes, so nothing but prose is left to match against.
const textOnly = (policy: PublicLinkPolicy): HtmlRewriter => ({
  image: () => null,
  link: () => null,
  dataNoteId: () => null,
  removes: (el) => removedForPublic(policy, el),
});

async function visibleText(html: string, rewriter: HtmlRewriter): Promise<string> {
  await loadHtmlEngine();
  return normalizeForSearch(htmlToText(html, (h) => sanitizePlayerHtml(h, rewriter)));
}

/**
 * Lower case, accents removed, whitespace collapsed: both sides of a public search match go
 * through this.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(normalizeForSearch("  Café  Noir "), "cafe noir");
 * ```
 */
export function normalizeForSearch(text: string): string {
  return text.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase().replace(/\s+/g, " ")
    .trim();
}

/** What the public rewriter needs to know about the share and this visitor. */
export interface PublicLinkPolicy {
  /** Public note (any visitor may follow a link to it; credentials are asked there). */
  isPublic(noteId: string): boolean;
  /** Public AND this visitor may see it (its title or bytes may be shown). */
  canSee(noteId: string): boolean;
  /** Any note of the share snapshot, public or not, for its type, title and alias. */
  note(noteId: string): CoreNote | undefined;
  /** A snapshot note named by id or by its own `#shareAlias`, public or not. */
  lookup(idOrAlias: string): CoreNote | undefined;
  /** `/public/lore/<alias or id>` of a public note. */
  pagePath(noteId: string): string;
  /** Hosts of the private backends: links there are dropped (internal addresses). */
  backendHosts: ReadonlySet<string>;
}

/**
 * `/api/public/images/<id>/<file>`: the file name is the title made URL-safe (it is ignored on
 * the way in; it only helps people who save the image).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   publicImagePath("AbC123", "Coast chart.png"),
 *   "/api/public/images/AbC123/Coast-chart.png",
 * );
 * ```
 */
export function publicImagePath(id: string, title: string): string {
  const file = title.replace(/&[a-z]+;|&#\d+;/gi, " ").replace(/[^A-Za-z0-9._]+/g, "-")
    .replace(/^[-.]+|-+$/g, "").slice(0, 100) || "image";
  return `/api/public/images/${encodeURIComponent(id)}/${encodeURIComponent(file)}`;
}

/**
 * The rewriter of public HTML:
 * - images: image notes this visitor can see, and image attachments the note owns, both via
 *   `/api/public/images/…`; every other image (hidden notes, remote trackers, `data:`) is removed;
 * - links: to public notes → `/public/lore/<alias or id>`; to other notes → no href; absolute
 *   http(s)/mailto links elsewhere stay, except to the private backends; relative ones go;
 * - `data-note-id`: always dropped (it could name a hidden note);
 * - text that came from a note the public may not see goes: see {@linkcode removedForPublic}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sanitizePlayerHtml } from "../sanitize/html.ts";
 * import { loadHtmlEngine } from "../sanitize/html_engine.ts";
 * await loadHtmlEngine();
 * const policy: PublicLinkPolicy = {
 *   isPublic: (id) => id === "town",
 *   canSee: (id) => id === "town",
 *   note: () => undefined,
 *   lookup: () => undefined,
 *   pagePath: (id) => `/public/lore/${id}`,
 *   backendHosts: new Set(["core:8080"]),
 * };
 * const raw = '<p><a href="#root/town">Harbor</a> <a href="http://core:8080/x">Core</a></p>' +
 *   '<img src="https://tracker.example/p.gif">';
 * assert.equal(
 *   sanitizePlayerHtml(raw, publicRewriter(policy, new Map())),
 *   '<p><a href="/public/lore/town">Harbor</a> <a>Core</a></p>', // and the tracker is gone
 * );
 * ```
 */
export function publicRewriter(
  policy: PublicLinkPolicy,
  attachments: ReadonlyMap<string, CoreAttachment>,
): HtmlRewriter {
  return {
    image(src) {
      const noteId = noteIdFromImageSrc(src);
      if (noteId !== null) {
        const target = policy.canSee(noteId) ? policy.note(noteId) : undefined;
        return target?.type === "image" ? publicImagePath(noteId, target.title) : null;
      }
      const attachmentId = attachmentIdFromImageSrc(src);
      const att = attachmentId === null ? undefined : attachments.get(attachmentId);
      return att?.role === "image" ? publicImagePath(att.attachmentId, att.title) : null;
    },
    link(href) {
      const noteId = noteIdFromHref(href);
      if (noteId !== null) return policy.isPublic(noteId) ? policy.pagePath(noteId) : null;
      return externalLink(href, policy.backendHosts);
    },
    dataNoteId: () => null,
    removes: (el) => removedForPublic(policy, el),
  };
}

/**
 * Whether an element of a public note's HTML goes with all its text because that text may have
 * come from a note the public may not see (Core writes a reference link's text as its target's
 * title, and an included note's section carries the target's content):
 * - an include-note `<section>` whose `data-note-id` is not a public note;
 * - a link to a note that is not public when it is a reference link, a relative `<id>` or
 *   `./<alias>` link as Core's share pages write them, a link whose target lies outside the
 *   share (its title is unknown, so any text could be it), or a link whose text and the
 *   target's title, alias or id contain one another (as strings or as sets of words).
 *   Other text a writer typed stays, unlinked.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ElementView } from "../sanitize/html.ts";
 * const policy: PublicLinkPolicy = {
 *   isPublic: (id) => id === "town",
 *   canSee: (id) => id === "town",
 *   note: () => undefined, // no other note of the share is known
 *   lookup: () => undefined,
 *   pagePath: (id) => `/public/lore/${id}`,
 *   backendHosts: new Set(),
 * };
 * const link = (href: string, text: string): ElementView => ({
 *   tagName: "a",
 *   attr: (name) => (name === "href" ? href : undefined),
 *   classes: ["reference-link"],
 *   text,
 *   startOffset: 0,
 * });
 * assert.equal(removedForPublic(policy, link("#root/draft1", "The Drowned Cult")), true);
 * assert.equal(removedForPublic(policy, link("#root/town", "Harbor Town")), false);
 * ```
 */
export function removedForPublic(policy: PublicLinkPolicy, el: ElementView): boolean {
  if (el.tagName === "section" && el.classes.includes("include-note")) {
    const id = el.attr("data-note-id");
    return id === undefined || !policy.isPublic(id);
  }
  if (el.tagName !== "a") return false;
  const href = el.attr("href");
  if (href === undefined) return false;
  const linked = noteIdFromHref(href);
  // Relative links to notes only come from Core's share pages, which write the target's title.
  const copied = linked === null ? policy.lookup(relativeShareRef(href)) : undefined;
  const targetId = linked ?? copied?.noteId;
  if (targetId === undefined || policy.isPublic(targetId)) return false;
  const target = policy.note(targetId);
  if (target === undefined || copied || el.classes.includes("reference-link")) return true;
  return mayName(el.text, [
    decodeHtmlEntities(target.title),
    ownShareAlias(target) ?? "",
    targetId,
  ]);
}

const wordsOf = (text: string) => normalizeForSearch(text).split(/[^\p{L}\p{N}]+/u).filter(Boolean);

/** Text and a name overlap: one contains the other, as a string or as a set of words. */
function mayName(rawText: string, names: readonly string[]): boolean {
  const text = normalizeForSearch(decodeHtmlEntities(rawText));
  if (text === "") return false;
  const textWords = wordsOf(text);
  return names.some((raw) => {
    const name = normalizeForSearch(raw);
    if (name === "") return false;
    if (text.includes(name) || name.includes(text)) return true;
    const nameWords = new Set(wordsOf(name));
    return textWords.length > 0 &&
      (textWords.every((w) => nameWords.has(w)) ||
        [...nameWords].every((w) => textWords.includes(w)));
  });
}

/** `./x`, `x` (Core's share links) → `x`; anything with a scheme, path or fragment → "". */
function relativeShareRef(href: string): string {
  const ref = href.trim().replace(/^\.\//, "").replace(/[?#][\s\S]*$/, "");
  return /^[^/:\\]+$/.test(ref) ? ref : "";
}

function externalLink(href: string, backendHosts: ReadonlySet<string>): string | null {
  let url: URL;
  try {
    url = new URL(href.trim());
  } catch {
    return null; // relative: it would resolve against the public site, or name an internal path
  }
  if (url.protocol === "mailto:") return href.trim();
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  return backendHosts.has(url.host.toLowerCase()) ? null : href.trim();
}

/**
 * Attachment ids the content refers to as images (`api/attachments/<id>/image/…`), to decide
 * whether the owner's attachment list is needed at all.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(referencesAttachments('<img src="api/attachments/a1/image/x.png">'), true);
 * ```
 */
export function referencesAttachments(html: string): boolean {
  return html.includes("api/attachments/");
}

/**
 * Visitor HTML of a public note's content: text and book notes through the player sanitizer
 * with the public rewriter; an image note as one `<img>`; a code note as escaped `<pre>`; any
 * other type shows nothing. Loads the HTML engine whatever the type: the pages around this
 * HTML read its text too (their descriptions), an image note's `<img>` included.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const rewriter = { image: () => null, link: () => null };
 * const chart = { noteId: "img1", title: "Coast chart", type: "image" };
 * assert.equal(
 *   await renderPublicContent(chart, "", rewriter),
 *   '<p><img src="/api/public/images/img1/Coast-chart" alt="Coast chart"></p>',
 * );
 * assert.equal(
 *   await renderPublicContent({ noteId: "c1", title: "Script", type: "code" }, "a < b", rewriter),
 *   "<pre><code>a &lt; b</code></pre>",
 * );
 * ```
 */
export async function renderPublicContent(
  note: Pick<CoreNote, "noteId" | "title" | "type">,
  raw: string,
  rewriter: HtmlRewriter,
): Promise<string> {
  await loadHtmlEngine();
  if (hasHtmlContent(note)) return sanitizePlayerHtml(raw, rewriter);
  if (note.type === "image") {
    return `<p><img src="${escapeHtml(publicImagePath(note.noteId, note.title))}" alt="${
      escapeHtml(note.title)
    }"></p>`;
  }
  if (note.type === "code") return `<pre><code>${escapeHtml(raw)}</code></pre>`;
  return "";
}
