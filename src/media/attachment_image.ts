/**
 * URLs of images on the authenticated API: where the editor and previews point an `<img>` that
 * Core stores as `api/images/<id>/<file>` (an image note) or `api/attachments/<id>/image/<file>`
 * (an image attachment).
 *
 * @module
 */

/**
 * A file name reduced to a URL- and filesystem-safe form: percent-decoded once (Core stores the
 * title encoded, `inline%20image`), every run of characters other than letters, digits, `.` and
 * `_` turned into `-`, at most 100 characters, no leading `-`/`.` or trailing `-`; `image` when
 * nothing is left. Idempotent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(urlSafeFileName("inline%20image"), "inline-image");
 * assert.equal(urlSafeFileName("../Küste map.png"), "K-ste-map.png");
 * assert.equal(urlSafeFileName("%%"), "image");
 * ```
 */
export function urlSafeFileName(name: string): string {
  let decoded = name;
  try {
    decoded = decodeURIComponent(name);
  } catch { /* a stray `%` is just a character here */ }
  return decoded.replace(/[^A-Za-z0-9._]+/g, "-").slice(0, 100).replace(/^[-.]+|-+$/g, "") ||
    "image";
}

/**
 * Path of the authenticated image-attachment route; the file name only gives saved copies a name
 * (the route ignores it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   attachmentImagePath("AtT123abcDEF", "inline%20image"),
 *   "/api/attachments/AtT123abcDEF/image/inline-image",
 * );
 * ```
 */
export function attachmentImagePath(attachmentId: string, fileName: string): string {
  return `/api/attachments/${encodeURIComponent(attachmentId)}/image/${
    encodeURIComponent(urlSafeFileName(fileName))
  }`;
}

/**
 * Path of an image note in lore HTML and upload answers: `/api/images/<id>/<file>`, Core's own
 * form made root-relative. It redirects to `GET /api/lore/<id>/image`; the portal's HTML
 * sanitizer keeps only image sources of this form. The file name only names saved copies.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(imageNotePath("AbC123", "Küste map.png"), "/api/images/AbC123/K-ste-map.png");
 * ```
 */
export function imageNotePath(noteId: string, fileName: string): string {
  return `/api/images/${encodeURIComponent(noteId)}/${
    encodeURIComponent(urlSafeFileName(fileName))
  }`;
}
