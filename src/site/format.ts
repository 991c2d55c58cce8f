/**
 * Turning public-API data into words and URLs for the public site: attribute and lore-type
 * names for people, dates, and the only URLs a page may link to.
 *
 * @module
 */
import { publicImagePath } from "../share/public_content.ts";

/**
 * A camelCase / snake_case / kebab-case attribute name as words; the `rel` prefix of relation
 * names (`relAlly`) is dropped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(humanizeName("inWorldDate"), "In world date");
 * assert.equal(humanizeName("relAlly"), "Ally");
 * ```
 */
export function humanizeName(name: string): string {
  const words = name
    .replace(/^rel(?=[A-Z])/, "")
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/[_-]+/g, " ")
    .trim()
    .toLowerCase();
  return words ? words[0].toUpperCase() + words.slice(1) : name;
}

/**
 * Heading for a group of notes of one lore type; notes without a type are "Other".
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(loreTypeLabel("character"), "Character");
 * assert.equal(loreTypeLabel(null), "Other");
 * ```
 */
export function loreTypeLabel(loreType: string | null): string {
  return loreType?.trim() ? humanizeName(loreType.trim()) : "Other";
}

/**
 * Heading for all notes of one lore type: the type's label in the plural.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(loreTypePlural("character"), "Characters");
 * assert.equal(loreTypePlural("faction"), "Factions");
 * ```
 */
export function loreTypePlural(loreType: string): string {
  const label = loreTypeLabel(loreType);
  return /s$/.test(label)
    ? label
    : /[^aeiou]y$/.test(label)
    ? `${label.slice(0, -1)}ies`
    : `${label}s`;
}

/**
 * A note title as shown: Core can hold empty titles (its title sanitizer may strip everything),
 * and a page or link without a name is not usable.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(displayTitle("  "), "Untitled");
 * ```
 */
export function displayTitle(title: string): string {
  return title.trim() || "Untitled";
}

const DATE_FORMAT = new Intl.DateTimeFormat("en-GB", { dateStyle: "long", timeZone: "UTC" });

/**
 * An ISO 8601 timestamp as a `<time>`'s machine value and a readable UTC date; null when the
 * value is not a date.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   formatDate("2026-03-01T09:05:00.000Z"),
 *   { iso: "2026-03-01T09:05:00.000Z", text: "1 March 2026" },
 * );
 * ```
 */
export function formatDate(value: string | null): { iso: string; text: string } | null {
  if (!value) return null;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return null;
  const iso = new Date(ms).toISOString();
  return { iso, text: DATE_FORMAT.format(ms) };
}

/**
 * An absolute http(s) URL for a link off the site, or null for anything else (`javascript:`,
 * `data:`, relative or malformed URLs): escaping alone does not make a URL safe to follow.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(externalHref("https://music.example.org/x"), "https://music.example.org/x");
 * assert.equal(externalHref("javascript:alert(1)"), null);
 * ```
 */
export function externalHref(value: string | null): string | null {
  if (!value) return null;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return null;
  }
  return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
}

/**
 * The public page of a note (by id or alias), path segment encoded.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(loreHref("harbor-town"), "/public/lore/harbor-town");
 * ```
 */
export function loreHref(idOrAlias: string): string {
  return `/public/lore/${encodeURIComponent(idOrAlias)}`;
}

/**
 * The one public URL of an image note (or image attachment), from its id and title: the URL the
 * public content uses for it too, so a browser fetches an image once whichever page shows it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   imageHref("wImgPortrt01", "mira-portrait.png"),
 *   "/api/public/images/wImgPortrt01/mira-portrait.png",
 * );
 * ```
 */
export function imageHref(noteId: string, title: string): string {
  return publicImagePath(noteId, title);
}
