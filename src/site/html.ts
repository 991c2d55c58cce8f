/**
 * HTML templating for the public site: a tagged template that escapes every interpolated value,
 * so markup can only come from the template literals themselves or from strings explicitly
 * marked as already sanitized.
 *
 * @module
 */
import { escapeHtml } from "../lore/preview.ts";

const BRAND: unique symbol = Symbol("SafeHtml");

/** Markup that is safe to insert as is: built by {@linkcode html} or marked by {@linkcode trusted}. */
export interface SafeHtml {
  readonly [BRAND]: true;
  readonly html: string;
}

/**
 * What a template may interpolate. Strings and numbers are escaped; `null`, `undefined` and
 * `false` render nothing (for conditionals); arrays are rendered item by item.
 */
export type HtmlValue =
  | SafeHtml
  | string
  | number
  | null
  | undefined
  | false
  | readonly HtmlValue[];

function safe(markup: string): SafeHtml {
  return Object.freeze({ [BRAND]: true as const, html: markup });
}

function isSafe(value: unknown): value is SafeHtml {
  return typeof value === "object" && value !== null && BRAND in value;
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return "";
  if (isSafe(value)) return value.html;
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

/**
 * Builds markup; every `${value}` is escaped for a text node or a double-quoted attribute
 * unless it is already {@linkcode SafeHtml}. Attribute values must be written in double quotes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const href = '/public/lore/x" onclick="alert(1)';
 * const title = "<b>Ashford</b>";
 * assert.equal(
 *   html`<a href="${href}">${title}</a>`.html,
 *   '<a href="/public/lore/x&quot; onclick=&quot;alert(1)">&lt;b&gt;Ashford&lt;/b&gt;</a>',
 * );
 * ```
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return safe(out);
}

/**
 * Marks a string that has already been sanitized (note content from the public API, which is
 * player-sanitized there) as insertable. Never use it on anything else.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const contentHtml = "<p>Already player-sanitized.</p>"; // from the public API
 * assert.equal(
 *   html`<div class="content">${trusted(contentHtml)}</div>`.html,
 *   '<div class="content"><p>Already player-sanitized.</p></div>',
 * );
 * ```
 */
export function trusted(sanitized: string): SafeHtml {
  return safe(sanitized);
}
