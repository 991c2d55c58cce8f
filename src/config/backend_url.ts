/**
 * The one rule for a backend base URL, wherever one enters: `CORE_URL`, `PARSER_URL`, their
 * allow-lists, a login's or connect's `url`, and the Core address the Parser hands out. Applying
 * the same rule everywhere is what lets an allow-list comparison be a plain string match.
 *
 * - http(s) only; no credentials, query or fragment; the scheme and host in lower case, the
 *   default port dropped, trailing slashes removed.
 * - Core: the address users copy from Core's own settings ends in `/etapi`, the API path the
 *   service appends itself. A trailing `/etapi` is removed (and said); a path that goes deeper
 *   into the API (`/etapi/notes`) is refused, naming the fix. Any other path is kept: Core may be
 *   served under a prefix by a reverse proxy.
 * - Parser: all its routes live at its root (`/health`, `/brain-dump`, `/api/auth/…`), so a path
 *   ending in one of them (`/api`, `/api/auth`, `/health`, …) is refused, naming the fix, while
 *   a reverse proxy's own prefix is kept.
 *
 * @module
 */

/** The two backends. */
export type Backend = "core" | "parser";

/** A usable base URL (`note` says what was changed beyond formatting), or why it is refused. */
export type BaseUrlResult =
  | { ok: true; url: string; note?: string }
  | { ok: false; message: string };

/** Path endings that name one of the Parser's own routes rather than where it is served. */
const PARSER_ROUTE_ENDINGS: readonly string[][] = [
  ["api", "auth"],
  ["api"],
  ["health"],
  ["reference"],
  ["brain-dump"],
];

const endsWith = (segments: string[], ending: readonly string[]) =>
  ending.length <= segments.length &&
  ending.every((s, i) => segments[segments.length - ending.length + i].toLowerCase() === s);

/**
 * Checks and normalises one backend base URL; see the module notes. Messages never repeat the
 * URL itself (it may be logged or answered).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(backendBaseUrl("core", "http://Core:8080/"), {
 *   ok: true,
 *   url: "http://core:8080",
 * });
 * const copied = backendBaseUrl("core", "http://core:8080/etapi");
 * assert.equal(copied.ok && copied.url, "http://core:8080");
 * assert.equal(backendBaseUrl("parser", "http://parser:3001/api/auth").ok, false);
 * ```
 */
export function backendBaseUrl(backend: Backend, raw: string): BaseUrlResult {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return { ok: false, message: "not a URL" };
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    return { ok: false, message: "must be an http or https URL" };
  }
  if (u.username || u.password || u.search || u.hash) {
    return {
      ok: false,
      message: "must be a plain http(s) URL without credentials, query or fragment",
    };
  }
  const segments = u.pathname.split("/").filter(Boolean);
  const base = (kept: string[]) => `${u.origin}${kept.map((s) => `/${s}`).join("")}`;
  if (backend === "core") {
    const api = segments.findIndex((s) => s.toLowerCase() === "etapi");
    if (api >= 0 && api < segments.length - 1) {
      return {
        ok: false,
        message: "must be Core's base address, without /etapi/… (e.g. http://core:8080)",
      };
    }
    if (api >= 0) {
      return {
        ok: true,
        url: base(segments.slice(0, api)),
        note: "the trailing /etapi (Core's API path, which the service adds itself) was removed",
      };
    }
  } else {
    const ending = PARSER_ROUTE_ENDINGS.find((e) => endsWith(segments, e));
    if (ending) {
      return {
        ok: false,
        message: `must be the Parser's base address, where its routes start: remove /${
          ending.join("/")
        } (e.g. http://parser:3001)`,
      };
    }
  }
  return { ok: true, url: base(segments) };
}
