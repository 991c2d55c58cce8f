/**
 * The site's password page: what a visitor sees instead of a page behind `#shareCredentials`.
 * A form in the site's layout (no script) posts the name and password to {@linkcode UNLOCK_PATH}
 * with the page to return to; the browser's own HTTP Basic dialog never shows, since the page
 * sends no `WWW-Authenticate`. Also the rule for the pages a form may return to (never another
 * site).
 *
 * @module
 */
import { siteHeaders } from "./headers.ts";
import { html, type SafeHtml } from "./html.ts";
import { layout } from "./layout.ts";
import { LOCK_PATH } from "./lock_control.ts";
import { HTML_TYPE } from "./respond.ts";

/** Where the password form posts. */
export const UNLOCK_PATH = "/public/unlock";
/** Longest name and password the form sends (browsers enforce `maxlength`). */
export const UNLOCK_USER_MAX = 200;
/** See {@linkcode UNLOCK_USER_MAX}. */
export const UNLOCK_PASSWORD_MAX = 1024;
/** Longest page address a form returns to. */
export const RETURN_PATH_MAX = 2048;

/** Why the form is shown again. */
export type UnlockProblem = "wrong" | "busy";

const PROBLEMS: Readonly<Record<UnlockProblem, string>> = {
  wrong: "That name and password are not right. Check them and try again.",
  busy: "Too many attempts from your connection. Please wait a minute, then try again.",
};

/** What the password page shows. */
export interface UnlockPage {
  /** The page to return to once unlocked: a path of this site ({@linkcode isSiteReturnPath}). */
  returnTo: string;
  /** The world's name, when it is known. */
  world?: string;
  problem?: UnlockProblem;
  /** The name typed before, shown again with a problem (never the password). */
  user?: string;
}

/** Base of the address a return path is read against: any other origin means another site. */
const SITE = "http://site.invalid";
// backslashes (browsers read them as slashes), spaces and control characters
// deno-lint-ignore no-control-regex
const ODD = /[\\\x00-\x20\x7f]/;

/**
 * Whether a form may send the visitor to `path` afterwards: a path of the public site alone
 * (`/`, `/public`, `/public/…`, with a query), exactly as a request names it. Absolute and
 * protocol-relative URLs, backslashes, dot segments, fragments and the form's own addresses
 * are not, so the form is never an open redirect.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(isSiteReturnPath("/public/lore/harbor-town"), true);
 * assert.equal(isSiteReturnPath("/?q=lantern"), true);
 * for (const away of ["https://evil.example/", "//evil.example", "/\\evil.example", "/api/lore"]) {
 *   assert.equal(isSiteReturnPath(away), false);
 * }
 * ```
 */
export function isSiteReturnPath(path: string): boolean {
  if (path.length > RETURN_PATH_MAX || !path.startsWith("/") || ODD.test(path)) return false;
  let url: URL;
  try {
    url = new URL(path, SITE);
  } catch {
    return false;
  }
  if (url.origin !== SITE || url.pathname + url.search !== path) return false;
  const p = url.pathname;
  const onSite = p === "/" || p === "/public" || p.startsWith("/public/");
  return onSite && p !== UNLOCK_PATH && p !== LOCK_PATH;
}

/**
 * The password page as an answer: 401 (429 when the visitor is `busy`, with `retryAfter`
 * seconds), never stored, never indexed, and without `WWW-Authenticate`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const res = unlockPageResponse({ returnTo: "/public/lore/vault", problem: "wrong" });
 * assert.equal(res.status, 401);
 * assert.equal(res.headers.get("www-authenticate"), null);
 * const page = await res.text();
 * assert.match(page, /<form class="unlock" method="post" action="\/public\/unlock">/);
 * assert.match(page, /name="return" value="\/public\/lore\/vault"/);
 * assert.match(page, /role="alert"/);
 * ```
 */
export function unlockPageResponse(page: UnlockPage, retryAfter?: number): Response {
  const headers = siteHeaders({ contentType: HTML_TYPE, cacheControl: "no-store", noIndex: true });
  const busy = page.problem === "busy";
  if (busy && retryAfter !== undefined) headers.set("retry-after", String(retryAfter));
  const main = unlockForm(page);
  const document = layout({ title: "Password required", main, noIndex: true, world: page.world });
  return new Response(document.html, { status: busy ? 429 : 401, headers });
}

/** The page's `<main>`: why, the problem if any (announced), the form, a way out. */
function unlockForm(page: UnlockPage): SafeHtml {
  const problem = page.problem;
  // the inputs name the message, so a screen reader reads it with the field it returns to
  const described = problem && html`
    aria-describedby="unlock-problem"
  `;
  const invalid = problem === "wrong" && html`
    aria-invalid="true"
  `;
  return html`
    <h1>Password required</h1>
    <p>This part of the lore is password-protected. Enter the name and password your game master gave you.</p>
    ${problem &&
      html`<p class="form-problem" id="unlock-problem" role="alert">${PROBLEMS[problem]}</p>`}
    <form class="unlock" method="post" action="${UNLOCK_PATH}">
      <input type="hidden" name="return" value="${page.returnTo}">
      <p><label for="unlock-user">Name</label>
    <input id="unlock-user" name="user" type="text" value="${problem ? page.user ?? "" : ""}"
      maxlength="${UNLOCK_USER_MAX}" autocomplete="username" autocapitalize="none"
      spellcheck="false" required${described}${invalid}></p>
      <p><label for="unlock-password">Password</label>
    <input id="unlock-password" name="password" type="password" maxlength="${UNLOCK_PASSWORD_MAX}"
      autocomplete="current-password" required${described}${invalid}></p>
      <p><button type="submit">Unlock</button></p>
    </form>
    <p><a href="/">Go to the home page</a></p>
  `;
}
