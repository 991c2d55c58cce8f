/**
 * Cross-site request forgery defence for cookie-authenticated browsers: an unsafe method from a
 * page on another site is refused before anything else runs.
 *
 * @module
 */
import { ApiError } from "./errors.ts";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The origin the browser used to reach us: the request URL, or, behind a trusted proxy, the
 * forwarded host and protocol.
 *
 * @example
 * ```ts
 * publicOrigin(new Request("http://127.0.0.1:8080/api"), false); // "http://127.0.0.1:8080"
 * ```
 */
export function publicOrigin(req: Request, trustProxy: boolean): string {
  const url = new URL(req.url);
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
 * Throws 403 `CSRF_REJECTED` for an unsafe request whose `Sec-Fetch-Site` is anything but
 * `same-origin`/`none`, or whose `Origin` differs from ours. Requests without either header
 * (curl, server-to-server) carry no ambient browser credentials of another site and pass.
 *
 * @example
 * ```ts
 * checkCsrf(req, config.TRUST_PROXY);
 * ```
 */
export function checkCsrf(req: Request, trustProxy: boolean): void {
  if (SAFE.has(req.method)) return;
  const site = req.headers.get("sec-fetch-site");
  if (site && site !== "same-origin" && site !== "none") {
    throw new ApiError(403, "CSRF_REJECTED", "Cross-site requests are not allowed");
  }
  const origin = req.headers.get("origin");
  if (origin && origin !== publicOrigin(req, trustProxy)) {
    throw new ApiError(403, "CSRF_REJECTED", "Cross-site requests are not allowed");
  }
}
