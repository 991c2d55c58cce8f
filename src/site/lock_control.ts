/**
 * "Lock again": the control every page's footer offers a visitor who sees password-protected
 * pages. It posts to {@linkcode LOCK_PATH}, which forgets the passwords this browser gave.
 *
 * @module
 */
import { html, type SafeHtml } from "./html.ts";

/** Where "Lock again" posts. */
export const LOCK_PATH = "/public/lock";

/**
 * The control: a form with one button, no script.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.match(lockControl().html, /<form class="lock" method="post" action="\/public\/lock">/);
 * ```
 */
export function lockControl(): SafeHtml {
  return html`
    <form class="lock" method="post" action="${LOCK_PATH}">
      <p>Password-protected pages are open in this browser.
    <button type="submit">Lock again</button></p>
    </form>
  `;
}
