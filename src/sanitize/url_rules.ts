/**
 * How sanitized HTML may point at images and notes: the {@linkcode HtmlRewriter} contract the
 * editor view and the public site plug into the one sanitizer, the editor's own rewriter, the
 * readers that find a note or attachment id in a URL, and the scheme checks (`safeLink`,
 * `safeImage`) that the allow-list applies again to whatever a rewriter returns, so a buggy
 * rewriter cannot reintroduce `javascript:`. Pure; needs no HTML engine.
 *
 * @module
 */

import { attachmentImagePath, imageNotePath } from "../media/attachment_image.ts";
import type { ElementView } from "./browser_tree.ts";
import { noteRef } from "./note_refs.ts";

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
   * true removes the element with everything inside it; `"redact"` removes it too and leaves the
   * redaction mark (redaction.ts) in its place. The public view uses it for links and included
   * notes whose text came from a note the visitor may not see.
   */
  removes?(element: ElementView): boolean | "redact";
}

/** A valid noteId (also the only `data-note-id` value the allow-list keeps). */
export const NOTE_ID = /^[A-Za-z0-9_]{1,128}$/;
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
/** Schemes a link may keep (besides relative URLs). */
export const LINK_SCHEMES: ReadonlySet<string> = new Set(["http", "https", "mailto"]);
/** Schemes an image may keep (besides same-host relative URLs). */
export const IMAGE_SCHEMES: ReadonlySet<string> = new Set(["http", "https"]);
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
export function safeLink(href: string): string | null {
  return cleanUrl(href, LINK_SCHEMES);
}

/** An image URL we are willing to emit: http(s) or a same-host relative path. */
export function safeImage(src: string): string | null {
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
