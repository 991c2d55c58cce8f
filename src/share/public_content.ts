/**
 * Content of public notes: fetched from Core's ETAPI (never from Core's share render, which can
 * leak GM-only parts), cached by Core's content-addressed `blobId`, and turned into player HTML
 * whose links and images point only at public notes, or into plain text for the public search.
 *
 * @module
 */
import { contentBlobId, escapeHtml } from "../lore/preview.ts";
import { type ElementView, type HtmlRewriter, sanitizePlayerHtml } from "../sanitize/html.ts";
import { loadHtmlEngine } from "../sanitize/html_engine.ts";
import { type NoteRef, noteRef } from "../sanitize/note_refs.ts";
import { htmlToText } from "../sanitize/plain_text.ts";
import { imageTitle } from "../sanitize/prose.ts";
import type { CoreAttachment, CoreClient, CoreNote } from "../upstream/core.ts";
import type { PublicLinkPolicy } from "./link_policy.ts";
import type { PublicCaches } from "./public_snapshot.ts";

export { type LinkTarget, linkTarget, type PublicLinkPolicy } from "./link_policy.ts";

/** Note types whose content is HTML shown to visitors. */
const HTML_TYPES: ReadonlySet<string> = new Set(["text", "book"]);

const BLOB_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The note's `blobId` when it can address its content (Core's content-addressed id), else null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(contentAddress({ blobId: "aB3_-x" }), "aB3_-x");
 * assert.equal(contentAddress({ blobId: "../x" }), null);
 * ```
 */
export function contentAddress(note: Pick<CoreNote, "blobId">): string | null {
  return note.blobId && BLOB_ID.test(note.blobId) ? note.blobId : null;
}

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
 * names; read from the caches' disk (`DATA_DIR`) before Core, again only when it hashes to its
 * id. Concurrent requests for one blob share one Core call.
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
  const blobId = contentAddress(note);
  if (blobId === null) return await core.contentText(note.noteId);
  const key = `${identity}:${blobId}`;
  let stale = false;
  const text = await caches.contents.getOrLoad(key, async () => {
    const kept = await caches.disk?.readBlob(identity, blobId);
    if (kept != null && await contentBlobId(kept) === blobId) return kept;
    const fetched = await core.contentText(note.noteId);
    stale = await contentBlobId(fetched) !== blobId;
    // for the next start; a failed write only costs it this Core call
    if (!stale) caches.disk?.writeBlob(identity, blobId, fetched).catch(() => {});
    return fetched;
  });
  if (stale) caches.contents.delete(key);
  return text;
}

/**
 * The words a visitor can read in the note (title excluded), normalised for matching: the public
 * view's HTML (no `.gm-only` parts, no text that came from a hidden note) with tags dropped,
 * entities decoded, lower case, no accents. Made afresh; note_readings.ts keeps it.
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
 *   rootId: "root1",
 *   isPublic: () => false,
 *   canSee: () => false,
 *   target: () => undefined,
 *   resolve: () => undefined,
 *   pagePath: (id) => `/public/lore/${id}`,
 *   backendHosts: new Set(),
 * };
 * const caches = createPublicCaches({ PUBLIC_CACHE_MS: 60_000 });
 * const note = { noteId: "abc123", type: "text" };
 * const text = await publicSearchText(caches, core, "identity", note, nothingElseIsPublic);
 * assert.equal(text, "the harbor town"); // no GM-only words
 * ```
 */
export async function publicSearchText(
  caches: PublicCaches,
  core: CoreClient,
  identity: string,
  note: Pick<CoreNote, "noteId" | "blobId" | "type">,
  policy: PublicLinkPolicy,
): Promise<string> {
  if (!hasHtmlContent(note)) return "";
  return visibleText(await publicContent(caches, core, identity, note), textOnly(policy));
}

// Text only: every image and every href goes, so nothing but prose is left to match against.
const textOnly = (policy: PublicLinkPolicy): HtmlRewriter => ({
  image: () => null,
  link: () => null,
  dataNoteId: () => null,
  removes: (el) => publicRemoval(policy, el),
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
  const file = title.replace(/[^A-Za-z0-9._]+/g, "-")
    .replace(/^[-.]+|-+$/g, "").slice(0, 100) || "image";
  return `/api/public/images/${encodeURIComponent(id)}/${encodeURIComponent(file)}`;
}

/**
 * The rewriter of public HTML. Every URL is read by {@linkcode noteRef}, so every way a note can
 * be named (`#root/…`, Core's share URLs on any host, `./<id|alias>`, `api/notes/<id>`, image
 * and attachment URLs, …) counts as naming it:
 * - images: image notes this visitor can see, and image attachments the note owns, both via
 *   `/api/public/images/…`; every other image (hidden notes, remote trackers, `data:`) is removed;
 * - links: to public notes → `/public/lore/<alias or id>`; to other notes, attachments and
 *   unknown targets → no href; absolute http(s)/mailto links elsewhere stay, except to the
 *   private backends; other relative ones go;
 * - `data-note-id`: always dropped (it could name a hidden note);
 * - text that may have come from a note the public may not see goes: see
 *   {@linkcode removedForPublic}; a link that goes leaves the redaction mark
 *   (`src/sanitize/redaction.ts`) in its place.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sanitizePlayerHtml } from "../sanitize/html.ts";
 * import { loadHtmlEngine } from "../sanitize/html_engine.ts";
 * import type { CoreNote } from "../upstream/core.ts";
 * await loadHtmlEngine();
 * const town = { noteId: "town", title: "Harbor Town", type: "text", alias: null };
 * const policy: PublicLinkPolicy = {
 *   rootId: "town",
 *   isPublic: (id) => id === "town",
 *   canSee: (id) => id === "town",
 *   target: (id) => (id === "town" ? town : undefined),
 *   resolve: (ref) => (ref === "town" ? "town" : undefined),
 *   pagePath: (id) => `/public/lore/${id}`,
 *   backendHosts: new Set(["core:8080"]),
 * };
 * const raw = '<p><a href="#root/town">Harbor</a> <a href="http://core:8080/x">Core</a> ' +
 *   '<a href="https://lore.example/share/town">Town</a></p>' +
 *   '<img src="https://tracker.example/p.gif">';
 * assert.equal(
 *   sanitizePlayerHtml(raw, publicRewriter(policy, new Map())),
 *   '<p><a href="/public/lore/town">Harbor</a> <a>Core</a> ' +
 *     '<a href="/public/lore/town">Town</a></p>', // and the tracker is gone
 * );
 * ```
 */
export function publicRewriter(
  policy: PublicLinkPolicy,
  attachments: ReadonlyMap<string, CoreAttachment>,
): HtmlRewriter {
  return {
    image(src) {
      const ref = noteRef(src);
      if (ref === null) return null;
      const id = targetOf(policy, ref);
      const target = id === undefined || !policy.canSee(id) ? undefined : policy.target(id);
      if (target?.type === "image") return publicImagePath(target.noteId, target.title);
      // `/api/public/images/<id>` serves attachments too: an id ref may name one
      const att = ref.kind === "share" ? undefined : attachments.get(ref.id);
      return att?.role === "image" ? publicImagePath(att.attachmentId, att.title) : null;
    },
    link(href) {
      const ref = noteRef(href);
      if (ref === null) return externalLink(href, policy.backendHosts);
      const id = targetOf(policy, ref);
      return id !== undefined && policy.isPublic(id) ? policy.pagePath(id) : null;
    },
    dataNoteId: () => null,
    removes: (el) => publicRemoval(policy, el),
  };
}

/**
 * How an element {@linkcode removedForPublic} takes goes: a link leaves the redaction mark in its
 * sentence ("She trusts — more than she should."), the same whatever it named; an included note
 * goes without a trace.
 */
function publicRemoval(policy: PublicLinkPolicy, el: ElementView): boolean | "redact" {
  return removedForPublic(policy, el) && (el.tagName === "a" ? "redact" : true);
}

/**
 * The noteId a reference names, else undefined (an alias no note of the share has, or an
 * attachment, whose owner the reference does not tell). Share references resolve as Core's
 * share does: alias first, then noteId.
 */
function targetOf(policy: PublicLinkPolicy, ref: NoteRef): string | undefined {
  if (ref.kind === "id") return ref.id;
  if (ref.kind === "share") return ref.ref === "" ? policy.rootId : policy.resolve(ref.ref);
  return undefined;
}

/**
 * Whether an element of a public note's HTML goes with all its text because that text may have
 * come from, or name, a note the public may not see:
 * - an include-note `<section>` whose `data-note-id` is not a public note;
 * - a link naming a note in any form {@linkcode noteRef} reads, unless the target is public:
 *   - the target is unknown (outside the share, missing, an attachment): its title is unknown,
 *     so any text could be it (fail closed);
 *   - a reference link, or the bare `./<id|alias>` form Core's share pages write: Core wrote
 *     the target's title as the text;
 *   - otherwise when the text and the target's title, alias or id contain one another (as
 *     strings or as sets of words). Other text a writer typed stays, unlinked.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ElementView } from "../sanitize/html.ts";
 * import type { CoreNote } from "../upstream/core.ts";
 * const draft = { noteId: "draft1", title: "The Drowned Cult", type: "text", alias: null };
 * const policy: PublicLinkPolicy = {
 *   rootId: "town",
 *   isPublic: (id) => id === "town",
 *   canSee: (id) => id === "town",
 *   target: (id) => (id === "draft1" ? draft : undefined),
 *   resolve: (ref) => (ref === "draft1" ? "draft1" : undefined),
 *   pagePath: (id) => `/public/lore/${id}`,
 *   backendHosts: new Set(),
 * };
 * const link = (href: string, text: string): ElementView => ({
 *   tagName: "a",
 *   attr: (name) => (name === "href" ? href : undefined),
 *   classes: [],
 *   text,
 *   startOffset: 0,
 * });
 * assert.equal(removedForPublic(policy, link("http://core:8080/share/draft1", "Drowned Cult")), true);
 * assert.equal(removedForPublic(policy, link("#root/draft1", "old rumours")), false); // typed
 * assert.equal(removedForPublic(policy, link("./outside9", "old rumours")), true); // unknown
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
  const ref = href === undefined ? null : noteRef(href);
  if (ref === null) return false;
  const id = targetOf(policy, ref);
  if (id !== undefined && policy.isPublic(id)) return false;
  const target = id === undefined ? undefined : policy.target(id);
  if (target === undefined) return true;
  if ((ref.kind === "share" && ref.bare) || el.classes.includes("reference-link")) return true;
  return mayName(el.text, [target.title, target.alias ?? "", target.noteId]);
}

const wordsOf = (text: string) => normalizeForSearch(text).split(/[^\p{L}\p{N}]+/u).filter(Boolean);

/**
 * Text and a name overlap: one contains the other, as a string or as a set of words. The text
 * is also read percent-decoded (a pasted URL spells an id or alias as `%70%31…`).
 */
function mayName(rawText: string, names: readonly string[]): boolean {
  // the text as a browser shows it: the parser decoded its character references already
  return [rawText, percentDecoded(rawText)].some((text) => overlaps(text, names));
}

function overlaps(rawText: string, names: readonly string[]): boolean {
  const text = normalizeForSearch(rawText);
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

/** Percent-encoded runs decoded where they are valid UTF-8, the rest as it is. */
function percentDecoded(text: string): string {
  return text.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
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
      escapeHtml(imageTitle(note.title))
    }"></p>`;
  }
  if (note.type === "code") return `<pre><code>${escapeHtml(raw)}</code></pre>`;
  return "";
}
