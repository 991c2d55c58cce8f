/**
 * Cross-site request isolation for cookie-authenticated (and zero-login) browsers, from fetch
 * metadata and `Origin`. Refusing only unsafe methods is not enough: `SameSite=Lax` cookies ride
 * along on another site's top-level navigations and form GETs, and with zero-login or
 * environment credentials an `<img src>` on any page needs no cookie at all, so a GET that runs
 * an AI analysis or a search would run, and bill, for whoever embeds it. So:
 *
 * - an unsafe method (POST, PUT, PATCH, DELETE) from another origin is refused on every route;
 * - a private route refuses every method from another origin, GET and HEAD included;
 * - public routes (share API, public site, health, OpenAPI, the editor image redirect) stay
 *   reachable from anywhere with safe methods.
 *
 * "Another origin" means a `Sec-Fetch-Site` other than `same-origin` or `none` (a user's own
 * navigation: typed address, bookmark) — `same-site` included, since a sibling subdomain is
 * another origin — or an `Origin` header other than ours. Requests carrying neither (curl,
 * servers, browsers without fetch metadata) pass: they bring no other site's page along. An
 * `Origin` the operator allowed (`CORS_ORIGINS`, see cors.ts) counts as ours whatever
 * `Sec-Fetch-Site` says; a request from such a page without `Origin` (an `<img>`, a link) does not.
 *
 * @module
 */
import { ApiError } from "./errors.ts";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The origin the browser used to reach us: the request's own URL (see `requestUrl`), or, behind
 * a trusted proxy, the forwarded host and protocol.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const url = new URL("http://127.0.0.1:8080/api");
 * assert.equal(publicOrigin(new Request(url), url, false), "http://127.0.0.1:8080");
 * ```
 */
export function publicOrigin(req: Request, url: URL, trustProxy: boolean): string {
  if (trustProxy) {
    const host = req.headers.get("x-forwarded-host")?.split(",")[0].trim();
    const proto = req.headers.get("x-forwarded-proto")?.split(",")[0].trim().toLowerCase();
    if (host) {
      return `${
        proto === "https" ? "https" : proto === "http" ? "http" : url.protocol.slice(0, -1)
      }://${host}`;
    }
  }
  return url.origin;
}

/**
 * Throws 403 `CSRF_REJECTED` for a request from another origin (see the module notes) that the
 * route does not accept: any unsafe method, and every method on a route that is not public
 * (`publicRoute`: the route reads no caller credentials). `allowed` says whether an `Origin` is
 * one the operator allowed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const url = new URL("http://127.0.0.1:8080/api/lore");
 * const from = (origin: string) => new Request(url, { method: "POST", headers: { origin } });
 * checkCrossSite(from("http://127.0.0.1:8080"), url, false, false); // same origin: passes
 * assert.throws(() => checkCrossSite(from("https://evil.example"), url, false, false), {
 *   status: 403,
 *   code: "CSRF_REJECTED",
 * });
 * const app = (origin: string | null) => origin === "https://app.example.org";
 * checkCrossSite(from("https://app.example.org"), url, false, false, app); // allowed: passes
 * ```
 */
export function checkCrossSite(
  req: Request,
  url: URL,
  publicRoute: boolean,
  trustProxy: boolean,
  allowed?: (origin: string | null) => boolean,
): void {
  if (publicRoute && SAFE.has(req.method)) return;
  const site = req.headers.get("sec-fetch-site");
  const origin = req.headers.get("origin");
  if (allowed?.(origin)) return;
  if (
    (site && site !== "same-origin" && site !== "none") ||
    (origin && origin !== publicOrigin(req, url, trustProxy))
  ) {
    throw new ApiError(403, "CSRF_REJECTED", "Cross-site requests are not allowed");
  }
}
