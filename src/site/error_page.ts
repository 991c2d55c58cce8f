/**
 * Error pages of the public site: HTML, not the API's JSON, with the status kept. A 401 carries
 * no `WWW-Authenticate`: the site never makes the browser ask for a password (its pages show
 * their own password form, unlock_page.ts). The wording is the site's own; nothing from a
 * backend is shown.
 *
 * @module
 */
import { ApiError } from "../http/errors.ts";
import { siteHeaders } from "./headers.ts";
import { html } from "./html.ts";
import { layout } from "./layout.ts";
import { HTML_TYPE } from "./respond.ts";

interface Wording {
  title: string;
  text: string;
}

const WORDING: Readonly<Record<number, Wording>> = {
  400: { title: "Bad request", text: "That request could not be understood." },
  401: {
    title: "Password required",
    text: "This part of the lore is password-protected.",
  },
  404: { title: "Not found", text: "This page does not exist or is not public." },
  405: { title: "Not available", text: "This page can only be read, not sent to." },
  421: { title: "Wrong address", text: "This site is not served under the address you used." },
  429: { title: "Too many requests", text: "Please wait a moment, then try again." },
  503: {
    title: "Temporarily unavailable",
    text: "The lore archive cannot be reached right now. Please try again shortly.",
  },
  504: {
    title: "Temporarily unavailable",
    text: "The lore archive did not answer in time. Please try again shortly.",
  },
};

const FALLBACK: Wording = {
  title: "Something went wrong",
  text: "The page could not be shown. Please try again later.",
};

/** Headers of the error that the browser needs to act on; no other upstream header is kept. */
const PASSED_HEADERS = ["retry-after"] as const;

/**
 * An HTML error page for any failure; `ApiError`s keep their status (and `Retry-After`),
 * anything else is a 500. Our own validation messages (400 `INVALID_REQUEST`) are shown, since
 * they tell the visitor what to fix.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ApiError } from "../http/errors.ts";
 * const res = errorPageResponse(new ApiError(404, "NOT_FOUND", "Not found"), "req-1");
 * assert.equal(res.status, 404);
 * assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
 * assert.match(await res.text(), /Reference: <code>req-1<\/code>/);
 * ```
 */
export function errorPageResponse(error: unknown, requestId: string, world?: string): Response {
  const status = error instanceof ApiError && error.status >= 400 && error.status <= 599
    ? error.status
    : 500;
  const wording = WORDING[status] ?? FALLBACK;
  const detail = error instanceof ApiError && error.code === "INVALID_REQUEST"
    ? error.message
    : null;
  const main = html`<h1>${wording.title}</h1>
<p>${wording.text}</p>
${detail && html`<p class="meta">${detail}</p>`}
<p><a href="/">Go to the home page</a></p>
<p class="meta">Reference: <code>${requestId}</code></p>`;
  const headers = siteHeaders({ contentType: HTML_TYPE, cacheControl: "no-store", noIndex: true });
  if (error instanceof ApiError && error.headers) {
    const given = new Headers(error.headers);
    for (const name of PASSED_HEADERS) {
      const value = given.get(name);
      if (value) headers.set(name, value);
    }
  }
  const document = layout({ title: wording.title, main, noIndex: true, world }).html;
  return new Response(document, { status, headers });
}
