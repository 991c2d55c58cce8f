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
 * another origin — or an `Origin` header other than ours. Ours are the origin the request itself
 * names, whose host the host rule accepted before (host_check.ts: a page on a name rebound to
 * this service never gets this far; on `PUBLIC_ORIGIN`'s host, with its scheme: the plain-HTTP
 * page of an HTTPS site is another origin), and `PUBLIC_ORIGIN`, which stays ours when a proxy
 * in front rewrites the `Host`. Requests carrying neither header (curl, servers, browsers
 * without fetch metadata) pass: they bring no other site's page along. An `Origin` the operator allowed
 * (`CORS_ORIGINS`, see cors.ts) counts as ours whatever `Sec-Fetch-Site` says; a request from
 * such a page without `Origin` (an `<img>`, a link) does not. An opaque `Origin: null` counts as
 * none when `Sec-Fetch-Site` is `same-origin`: a page under `Referrer-Policy: no-referrer` (the
 * public site's) sends it with its own form posts, and fetch metadata, which no page can set,
 * says where they came from (a sandboxed frame's requests are `cross-site`).
 *
 * @module
 */
import { ApiError } from "./errors.ts";
import { requestOrigin } from "./host_check.ts";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/** Which origins count as ours (see the module notes). */
export interface OriginPolicy {
  /** `TRUST_PROXY`: the request's origin is the forwarded one. */
  trustProxy: boolean;
  /** `PUBLIC_ORIGIN`, when set. */
  publicOrigin?: string;
  /** Whether an `Origin` is one the operator allowed (`CORS_ORIGINS`). */
  allowed?: (origin: string | null) => boolean;
}

/**
 * Throws 403 `CSRF_REJECTED` for a request from another origin (see the module notes) that the
 * route does not accept: any unsafe method, and every method on a route that is not public
 * (`publicRoute`: the route reads no caller credentials).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const url = new URL("http://127.0.0.1:8080/api/lore");
 * const from = (origin: string) => new Request(url, { method: "POST", headers: { origin } });
 * const policy = { trustProxy: false, publicOrigin: "https://lore.example.org" };
 * checkCrossSite(from("http://127.0.0.1:8080"), url, false, policy); // same origin: passes
 * checkCrossSite(from("https://lore.example.org"), url, false, policy); // ours too
 * assert.throws(() => checkCrossSite(from("https://evil.example"), url, false, policy), {
 *   status: 403,
 *   code: "CSRF_REJECTED",
 * });
 * const allowed = (origin: string | null) => origin === "https://app.example.org";
 * checkCrossSite(from("https://app.example.org"), url, false, { ...policy, allowed }); // passes
 * ```
 */
export function checkCrossSite(
  req: Request,
  url: URL,
  publicRoute: boolean,
  policy: OriginPolicy,
): void {
  if (publicRoute && SAFE.has(req.method)) return;
  const site = req.headers.get("sec-fetch-site");
  let origin = req.headers.get("origin");
  if (policy.allowed?.(origin)) return;
  if (origin === "null" && site === "same-origin") origin = null;

  if (
    (site && site !== "same-origin" && site !== "none") ||
    (origin && origin !== policy.publicOrigin &&
      origin !== requestOrigin(req, url, policy.trustProxy, policy.publicOrigin))
  ) {
    throw new ApiError(403, "CSRF_REJECTED", "Cross-site requests are not allowed");
  }
}
