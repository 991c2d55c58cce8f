/**
 * The request's URL as the client sent it, built only from a well-formed authority and the
 * request target's own path and query.
 *
 * Deno 2.9 builds `req.url` by pasting the `Host` header, unchecked, in front of the request
 * target: `Host: a b` makes `new URL(req.url)` throw, and `Host: h/api/lore/X/content?` moves the
 * path the router would see. An absolute-form target (`GET http://h/p HTTP/1.1`) replaces both,
 * also unchecked. So the authority is validated first, and the URL is only parsed once it cannot
 * change where the target's path begins.
 *
 * Without a `Host` (or with an empty one) Deno makes one up, `localhost:<port>`, which would pass
 * for a loopback name: a request off the network must carry its own. HTTP/1.1 requires it
 * (RFC 9112 §3.2: 400 otherwise); the handler cannot tell HTTP/1.0 from 1.1, nor see HTTP/2's
 * `:authority` apart from a made-up host, so every served request without one is refused.
 *
 * @module
 */
import { invalidRequest } from "./errors.ts";

/** A registered name (letters, digits, `.`, `-`, `_`, `~`) or a bracketed IPv6 literal, port. */
const AUTHORITY = /^(?:[A-Za-z0-9._~-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::(\d{1,5}))?$/;

/** `scheme://authority` then the target; the authority ends where a path or query begins. */
const SPLIT = /^(https?):\/\/([^/?#]*)([\s\S]*)$/i;

/**
 * Whether a `Host` value (or a URL's authority) is a plain `host[:port]`: no user info, path,
 * spaces or percent signs, a port of at most 65535, and a host the URL parser accepts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(validAuthority("lore.example:8080"), true);
 * assert.equal(validAuthority("a b/c@d"), false);
 * ```
 */
export function validAuthority(authority: string): boolean {
  const known = checkedAuthorities.get(authority);
  if (known !== undefined) return known;
  const m = AUTHORITY.exec(authority);
  const valid = !!m && !(m[1] !== undefined && Number(m[1]) > 65535) &&
    URL.canParse(`http://${authority}/`);
  // Nearly every request repeats one of a few Host values: remember a bounded number of verdicts.
  if (authority.length <= 262) {
    if (checkedAuthorities.size >= MAX_CHECKED_AUTHORITIES) checkedAuthorities.clear();
    checkedAuthorities.set(authority, valid);
  }
  return valid;
}

const MAX_CHECKED_AUTHORITIES = 256;
/** A pure function's answers (a fixed-size memo, not state): the same input, the same verdict. */
const checkedAuthorities = new Map<string, boolean>();

/**
 * The request's URL; 400 `INVALID_REQUEST` when the `Host` header or the request target is
 * malformed, when a request `served` off a connection has no `Host` (see the module notes), or
 * when the path holds `.`/`..` segments (also percent-encoded) or backslashes, which URL parsing
 * would silently resolve into another path. The fragment, which clients must not send, is
 * dropped. A request made in the process (`served` false) may leave its host to its URL.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   requestUrl(new Request("http://127.0.0.1:8080/api/lore?q=x")).pathname,
 *   "/api/lore",
 * );
 * assert.throws(() => requestUrl(new Request("http://localhost:8080/"), true), {
 *   status: 400,
 *   message: "A Host header is required",
 * });
 * ```
 */
export function requestUrl(req: Request, served = false): URL {
  const host = req.headers.get("host");
  if (served && !host) throw invalidRequest("A Host header is required");
  if (host && !validAuthority(host)) {
    throw invalidRequest("The Host header is not a valid host name with an optional port");
  }
  const target = usualTarget(req.url, host);
  if (target !== undefined) return new URL(target);
  const m = SPLIT.exec(req.url);
  // the usual target carries the Host header's authority, checked just above
  if (!m || (m[2] !== host && !validAuthority(m[2]))) {
    throw invalidRequest("The request target is not a valid URL");
  }
  const [, scheme, authority, rest] = m;
  const [given] = rest.split("#");
  const q = given.indexOf("?");
  const path = (q < 0 ? given : given.slice(0, q)) || "/";
  const query = q < 0 ? "" : given.slice(q);
  if (path.includes("\\") || (mayHoldDots(path) && path.split("/").some(isDotSegment))) {
    throw invalidRequest("The request path may not contain . or .. segments or backslashes");
  }
  try {
    return new URL(`${scheme.toLowerCase()}://${authority}${path}${query}`);
  } catch {
    throw invalidRequest("The request target is not a valid URL");
  }
}

/**
 * The usual request's URL as Deno gives it, when it needs no rebuilding: `http://`, the `Host`
 * (already checked), then a path with no `.`, `%`, `\\` or `#` anywhere after it, so no dot segment
 * and nothing to cut. Undefined otherwise, and the URL is taken apart the long way.
 */
function usualTarget(url: string, host: string | null): string | undefined {
  if (!host || !url.startsWith("http://") || !url.startsWith(host, 7)) return undefined;
  const start = 7 + host.length;
  if (url.charCodeAt(start) !== SLASH) return undefined;
  UNUSUAL.lastIndex = start;
  return UNUSUAL.test(url) ? undefined : url;
}
const SLASH = 47;
const UNUSUAL = /[.%\\#]/g;

/** A cheap first test: a dot segment needs a `.` or a `%2e`. */
function mayHoldDots(path: string): boolean {
  return path.includes(".") || path.includes("%");
}

function isDotSegment(segment: string): boolean {
  const s = segment.replace(/%2e/gi, ".");
  return s === "." || s === "..";
}
