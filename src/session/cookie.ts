/**
 * Cookie header parsing and `Set-Cookie` serialisation (RFC 6265). Parsing is tolerant and
 * bounded because the header is attacker-controlled; serialising is strict because a value that
 * smuggles `;` or CR/LF would let a caller inject attributes or headers.
 *
 * @module
 */

/** Larger `Cookie` headers are ignored entirely: no legitimate client of ours sends one. */
export const MAX_COOKIE_HEADER_LENGTH = 8 * 1024;
/** Only this many `;`-separated pairs are looked at; the rest of the header is ignored. */
export const MAX_COOKIE_PAIRS = 100;

/** Attributes of a `Set-Cookie` header. */
export interface CookieAttributes {
  /** Hidden from page scripts. */
  httpOnly?: boolean;
  /** Sent over HTTPS only. */
  secure?: boolean;
  /** Cross-site sending policy; `"None"` requires `secure`. */
  sameSite?: "Lax" | "Strict" | "None";
  /** URL path prefix the cookie is sent for, e.g. `/`. */
  path?: string;
  /** Seconds; a non-negative integer (0 deletes the cookie). */
  maxAge?: number;
  /** Absolute expiry, for clients that ignore `Max-Age`. */
  expires?: Date;
  /** Host (and its subdomains) the cookie is sent to; omit for this host only. */
  domain?: string;
}

// RFC 9110 token: the only characters a cookie name may use.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// RFC 6265 cookie-octet: printable ASCII except space, DQUOTE, comma, semicolon and backslash.
const COOKIE_VALUE =
  /^(?:"[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*"|[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*)$/;
// RFC 6265 path-value: any CHAR except CTLs and ";".
const PATH_VALUE = /^[\x20-\x3A\x3C-\x7E]+$/;
// A host name (optionally with the legacy leading dot), or an IPv4 address.
const DOMAIN_VALUE =
  /^\.?[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x1F\x7F]/;

/**
 * Parses a `Cookie` request header into a map. Never throws: malformed pairs (no `=`, empty or
 * non-token name, control characters) are skipped, the first occurrence of a name wins (browsers
 * send the most specific path first), and one pair of surrounding double quotes is removed.
 * Values are returned as sent, without percent-decoding. A header longer than
 * {@linkcode MAX_COOKIE_HEADER_LENGTH} yields an empty map; only the first
 * {@linkcode MAX_COOKIE_PAIRS} pairs are considered.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const cookies = parseCookies('parser_url="v1.abc"; theme=dark; parser_url=later; junk');
 * assert.equal(cookies.get("parser_url"), "v1.abc"); // quotes removed, the first one wins
 * assert.equal(cookies.get("junk"), undefined);
 * ```
 */
export function parseCookies(header: string | null | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (typeof header !== "string" || header.length > MAX_COOKIE_HEADER_LENGTH) return out;
  for (const pair of header.split(";", MAX_COOKIE_PAIRS)) {
    const eq = pair.indexOf("=");
    if (eq < 0) continue;
    const name = trimOws(pair.slice(0, eq));
    if (!TOKEN.test(name) || out.has(name)) continue;
    let value = trimOws(pair.slice(eq + 1));
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
      value = value.slice(1, -1);
    }
    if (CONTROL.test(value)) continue;
    out.set(name, value);
  }
  return out;
}

/**
 * Builds a `Set-Cookie` header value. Throws `TypeError` for anything that could change the
 * header's meaning: a non-token name, a value outside RFC 6265 cookie-octets (`;`, `,`, space,
 * quotes, `\`, CR/LF, controls, non-ASCII: encode such values first), an attribute containing
 * `;` or control characters, a negative or fractional `maxAge`, an invalid `expires`,
 * `SameSite=None` without `Secure`, or a `__Secure-`/`__Host-` name whose prefix rules are not
 * met.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const cookie = serializeCookie("parser_token", "v1.abc", {
 *   httpOnly: true,
 *   secure: true,
 *   sameSite: "Lax",
 *   path: "/",
 *   maxAge: 30 * 86400,
 * });
 * assert.equal(
 *   cookie,
 *   "parser_token=v1.abc; Path=/; Max-Age=2592000; HttpOnly; Secure; SameSite=Lax",
 * );
 * assert.throws(() => serializeCookie("parser_token", "a; Domain=evil.example"), TypeError);
 * ```
 */
export function serializeCookie(name: string, value: string, attrs: CookieAttributes = {}): string {
  if (typeof name !== "string" || !TOKEN.test(name)) {
    throw new TypeError("cookie name must be a non-empty RFC 9110 token");
  }
  // The value is often a secret: the message names the cookie, never the value.
  if (typeof value !== "string" || !COOKIE_VALUE.test(value)) {
    throw new TypeError(`cookie ${name}: value contains characters not allowed in a cookie`);
  }
  const parts = [`${name}=${value}`];
  if (attrs.path !== undefined) {
    if (typeof attrs.path !== "string" || !PATH_VALUE.test(attrs.path)) {
      throw new TypeError(`cookie ${name}: invalid Path`);
    }
    parts.push(`Path=${attrs.path}`);
  }
  if (attrs.domain !== undefined) {
    if (typeof attrs.domain !== "string" || !DOMAIN_VALUE.test(attrs.domain)) {
      throw new TypeError(`cookie ${name}: invalid Domain`);
    }
    parts.push(`Domain=${attrs.domain}`);
  }
  if (attrs.maxAge !== undefined) {
    if (!Number.isSafeInteger(attrs.maxAge) || attrs.maxAge < 0) {
      throw new TypeError(`cookie ${name}: Max-Age must be a non-negative integer`);
    }
    parts.push(`Max-Age=${attrs.maxAge}`);
  }
  if (attrs.expires !== undefined) {
    if (!(attrs.expires instanceof Date) || Number.isNaN(attrs.expires.getTime())) {
      throw new TypeError(`cookie ${name}: Expires must be a valid Date`);
    }
    parts.push(`Expires=${attrs.expires.toUTCString()}`);
  }
  if (attrs.httpOnly) parts.push("HttpOnly");
  if (attrs.secure) parts.push("Secure");
  if (attrs.sameSite !== undefined) {
    if (attrs.sameSite !== "Lax" && attrs.sameSite !== "Strict" && attrs.sameSite !== "None") {
      throw new TypeError(`cookie ${name}: SameSite must be Lax, Strict or None`);
    }
    // Browsers reject SameSite=None without Secure; failing here beats a silently dropped cookie.
    if (attrs.sameSite === "None" && !attrs.secure) {
      throw new TypeError(`cookie ${name}: SameSite=None requires Secure`);
    }
    parts.push(`SameSite=${attrs.sameSite}`);
  }
  // Cookie prefixes (RFC 6265bis): browsers drop cookies that break these rules.
  if (name.startsWith("__Secure-") && !attrs.secure) {
    throw new TypeError(`cookie ${name}: the __Secure- prefix requires Secure`);
  }
  if (
    name.startsWith("__Host-") &&
    (!attrs.secure || attrs.path !== "/" || attrs.domain !== undefined)
  ) {
    throw new TypeError(`cookie ${name}: the __Host- prefix requires Secure, Path=/ and no Domain`);
  }
  return parts.join("; ");
}

/**
 * A `Set-Cookie` value that deletes a cookie: empty value, `Max-Age=0` and an `Expires` in 1970.
 * Pass the same `path`/`domain`/flags the cookie was set with, or the browser keeps it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   expireCookie("parser_token", { httpOnly: true, path: "/" }),
 *   "parser_token=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly",
 * );
 * ```
 */
export function expireCookie(
  name: string,
  attrs: Omit<CookieAttributes, "maxAge" | "expires"> = {},
): string {
  return serializeCookie(name, "", { ...attrs, maxAge: 0, expires: new Date(0) });
}

/** Trims RFC 9110 optional whitespace (SP and HTAB) only. */
function trimOws(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && (s[start] === " " || s[start] === "\t")) start++;
  while (end > start && (s[end - 1] === " " || s[end - 1] === "\t")) end--;
  return s.slice(start, end);
}
