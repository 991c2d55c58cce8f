/**
 * Note previews: what a note looks like as sanitized HTML for the GM or for players, and the
 * content-addressed validators (ETag, cache key) that let a preview be reused without fetching
 * the content again. Pure functions; the route does the I/O.
 *
 * @module
 */
import { imageNotePath } from "../media/attachment_image.ts";
import { hasLabel } from "./note_view.ts";
import { sanitizeLoreHtml, sanitizePlayerHtml, SANITIZER_VERSION } from "../sanitize/html.ts";
import { loadHtmlEngine } from "../sanitize/html_engine.ts";
import type { CoreNote } from "../upstream/core_schemas.ts";

/** `gm` shows everything (sanitized); `player` also drops `.gm-only` parts and hidden notes. */
export type PreviewMode = "gm" | "player";

/**
 * The preview modes, for the query schema.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(PREVIEW_MODES.includes("player"), true);
 * ```
 */
export const PREVIEW_MODES = ["gm", "player"] as const;

/** How to produce one preview, decided from the note's metadata alone. */
export type PreviewPlan =
  /** The HTML is known without the content (hidden, image, unsupported type). */
  | { kind: "static"; etag: string | null; html: string }
  /** Fetch the content and render it; reuse `cacheKey` when set (content-addressed). */
  | {
    kind: "content";
    etag: string | null;
    /** Core's `blobId` of the content this plan was made for (null when Core sent none). */
    blobId: string | null;
    cacheKey: string | null;
    /** Async: a text note's sanitizer needs the HTML engine, loaded on first use. */
    render: (content: string) => Promise<string>;
  };

/**
 * Plans a preview. Text → the mode's sanitizer; code → escaped `<pre><code>`; image → an `<img>`
 * of `/api/images/<id>/<title>` (our image route's editor form); anything else → empty. For players, a note carrying `#gmOnly` or
 * `#draft` (own or inherited, any value) is empty. ETags and cache keys derive from Core's
 * `blobId` (a hash of the content), so they never go stale; the type is part of them where the
 * same blob renders differently.
 */
export function planPreview(
  note: Pick<CoreNote, "noteId" | "title" | "type" | "blobId" | "attributes" | "utcDateModified">,
  mode: PreviewMode,
): PreviewPlan {
  const blob = note.blobId && /^[A-Za-z0-9_-]{1,64}$/.test(note.blobId) ? note.blobId : null;
  if (mode === "player" && (hasLabel(note, "gmOnly") || hasLabel(note, "draft"))) {
    return { kind: "static", etag: `"player-hidden"`, html: "" };
  }
  switch (note.type) {
    case "text": {
      const sanitize = mode === "gm" ? sanitizeLoreHtml : sanitizePlayerHtml;
      return {
        kind: "content",
        etag: blob && `"${mode}-${SANITIZER_VERSION}-${blob}"`,
        blobId: blob,
        cacheKey: blob && `${mode}:${blob}`, // per process: only one sanitizer version runs
        render: async (content) => {
          await loadHtmlEngine();
          return sanitize(content);
        },
      };
    }
    case "code":
      return {
        kind: "content",
        etag: blob && `"${mode}-code-${blob}"`,
        blobId: blob,
        cacheKey: blob && `code:${blob}`,
        render: (code) => Promise.resolve(`<pre><code>${escapeHtml(code)}</code></pre>`),
      };
    case "image": {
      // The alt text is the title, which is not part of the blob: the modification time is.
      const modified = (note.utcDateModified ?? "").replace(/\D/g, "");
      return {
        kind: "static",
        etag: blob && `"${mode}-image-${blob}-${modified}"`,
        html: `<img src="${imageNotePath(note.noteId, note.title)}" alt="${
          escapeHtml(note.title)
        }">`,
      };
    }
    default:
      return { kind: "static", etag: `"${mode}-empty"`, html: "" };
  }
}

/**
 * Core's blob id of a string content: SHA-512, base64 with `+`→`X` and `/`→`Y`, first 20
 * characters. Lets a caller check that fetched content is the blob it
 * planned for (the note may have changed in between) before caching under that id.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(await contentBlobId(""), "z4PhNX7vuL3xVChQ1m2A");
 * ```
 */
export async function contentBlobId(content: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-512", new TextEncoder().encode(content));
  const base64 = btoa(String.fromCharCode(...new Uint8Array(digest)));
  return base64.replaceAll("+", "X").replaceAll("/", "Y").slice(0, 20);
}

/**
 * Whether an `If-None-Match` header matches an ETag (weak comparison, `*` matches anything).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(etagMatches('W/"gm-abc", "gm-def"', '"gm-def"'), true);
 * ```
 */
export function etagMatches(header: string | null, etag: string): boolean {
  if (!header) return false;
  // the usual revalidation sends back the one ETag it got, as it got it
  if (header === etag && !etag.includes(",")) return true;
  const strip = (t: string) => t.trim().replace(/^W\//, "");
  const wanted = strip(etag);
  return header.split(",").some((t) => strip(t) === "*" || strip(t) === wanted);
}

/**
 * Escapes text for an HTML text node or a double-quoted attribute value.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(escapeHtml('<b title="x">&'), "&lt;b title=&quot;x&quot;&gt;&amp;");
 * ```
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

const ENTITIES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};
