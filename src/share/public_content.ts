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
  type HtmlRewriter,
  noteIdFromHref,
  noteIdFromImageSrc,
  sanitizePlayerHtml,
} from "../sanitize/html.ts";
import type { CoreAttachment, CoreClient, CoreNote } from "../upstream/core.ts";
import type { PublicCaches } from "./public_snapshot.ts";

/** Note types whose content is HTML shown to visitors. */
const HTML_TYPES: ReadonlySet<string> = new Set(["text", "book"]);

const BLOB_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Whether the note's content is HTML the public sees (text and book notes).
 *
 * @example
 * ```ts
 * if (hasHtmlContent(note)) html = await publicContent(caches, core, identity, note);
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
 * const raw = await publicContent(caches, core, identity, note);
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
 * The words a visitor can read in the note (title excluded), normalised for matching: player
 * sanitizing (no `.gm-only` parts), tags dropped, entities decoded, lower case, no accents.
 * Cached by `blobId` like the content.
 *
 * @example
 * ```ts
 * (await publicSearchText(caches, core, identity, note)).includes("harbor");
 * ```
 */
export async function publicSearchText(
  caches: PublicCaches,
  core: CoreClient,
  identity: string,
  note: Pick<CoreNote, "noteId" | "blobId" | "type">,
): Promise<string> {
  if (!hasHtmlContent(note)) return "";
  const toText = async () => visibleText(await publicContent(caches, core, identity, note));
  const blobId = note.blobId && BLOB_ID.test(note.blobId) ? note.blobId : null;
  if (blobId === null) return await toText();
  return await caches.texts.getOrLoad(`${identity}:${blobId}`, toText);
}

// Text only: every image and every href goes, so nothing but prose is left to match against.
const textOnly: HtmlRewriter = Object.freeze({
  image: () => null,
  link: () => null,
  dataNoteId: () => null,
});

const ENTITY = /&(?:#(\d{1,7})|#x([0-9a-f]{1,6})|(amp|lt|gt|quot|apos|nbsp));/gi;
const NAMED: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
};

function visibleText(html: string): string {
  const text = sanitizePlayerHtml(html, textOnly)
    .replace(/<[^>]*>/g, " ")
    .replace(ENTITY, (_, dec: string, hex: string, name: string) => {
      if (name) return NAMED[name.toLowerCase()] ?? " ";
      const code = dec ? Number(dec) : parseInt(hex, 16);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : " ";
    });
  return normalizeForSearch(text);
}

/**
 * Lower case, accents removed, whitespace collapsed: both sides of a public search match go
 * through this.
 *
 * @example
 * ```ts
 * normalizeForSearch("  Café  Noir "); // "cafe noir"
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
  /** The note, for its type and title. */
  note(noteId: string): CoreNote | undefined;
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
 * publicImagePath("AbC123", "Coast chart.png"); // "/api/public/images/AbC123/Coast-chart.png"
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
 * - `data-note-id`: always dropped (it could name a hidden note).
 *
 * @example
 * ```ts
 * const html = sanitizePlayerHtml(raw, publicRewriter(policy, attachments));
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
  };
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
 * referencesAttachments('<img src="api/attachments/a1/image/x.png">'); // true
 * ```
 */
export function referencesAttachments(html: string): boolean {
  return html.includes("api/attachments/");
}

/**
 * Visitor HTML of a public note's content: text and book notes through the player sanitizer
 * with the public rewriter; an image note as one `<img>`; a code note as escaped `<pre>`; any
 * other type shows nothing.
 *
 * @example
 * ```ts
 * const html = renderPublicContent(note, raw, rewriter);
 * ```
 */
export function renderPublicContent(
  note: Pick<CoreNote, "noteId" | "title" | "type">,
  raw: string,
  rewriter: HtmlRewriter,
): string {
  if (hasHtmlContent(note)) return sanitizePlayerHtml(raw, rewriter);
  if (note.type === "image") {
    return `<p><img src="${escapeHtml(publicImagePath(note.noteId, note.title))}" alt="${
      escapeHtml(note.title)
    }"></p>`;
  }
  if (note.type === "code") return `<pre><code>${escapeHtml(raw)}</code></pre>`;
  return "";
}
