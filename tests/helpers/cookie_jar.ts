/**
 * A browser's cookie jar for HTTP tests: it keeps the cookies the service sets (and drops those
 * it expires), sends them back, and can speak as the front end's own pages do (same-origin
 * fetches: `Sec-Fetch-Site: same-origin`, and `Origin` on writes).
 *
 * @module
 */
import type { Harness } from "./harness.ts";

/** Cookies by name, as a browser keeps them for one site. */
export interface CookieJar {
  /** Applies `Set-Cookie` values: sets each cookie, or drops it when it is expired. */
  apply(setCookies: string[]): void;
  /** The names of the cookies kept, sorted. */
  names(): string[];
  /** The `Cookie` header to send (empty without cookies). */
  header(): Record<string, string>;
}

/**
 * A jar holding the cookies of `initial` (`Set-Cookie` values).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const jar = cookieJar(["a=1; Path=/; HttpOnly"]);
 * jar.apply(["b=2; Path=/", "a=; Max-Age=0; Path=/"]);
 * assert.deepEqual(jar.names(), ["b"]);
 * assert.deepEqual(jar.header(), { cookie: "b=2" });
 * ```
 */
export function cookieJar(initial: string[] = []): CookieJar {
  const cookies = new Map<string, string>();
  const jar: CookieJar = {
    apply(setCookies) {
      for (const sc of setCookies) {
        const [pair, ...attrs] = sc.split(";");
        const eq = pair.indexOf("=");
        const name = pair.slice(0, eq).trim();
        const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a));
        if (expired) cookies.delete(name);
        else cookies.set(name, pair.slice(eq + 1).trim());
      }
    },
    names: () => [...cookies.keys()].sort(),
    header: (): Record<string, string> =>
      cookies.size ? { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; ") } : {},
  };
  jar.apply(initial);
  return jar;
}

/**
 * Sends a request with the jar's cookies and keeps the cookies it is given; the answer parsed as
 * JSON (`body` is null for an empty one).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Harness } from "./harness.ts";
 * // Declared, not run here: `h` is a running harness.
 * async function loreAsBrowser(h: Harness): Promise<void> {
 *   const jar = cookieJar();
 *   const r = await browse(h, jar, "/api/lore");
 *   assert.equal(r.status, 200);
 * }
 * ```
 */
export async function browse<T = Record<string, unknown>>(
  h: Harness,
  jar: CookieJar,
  path: string,
  init: RequestInit & { json?: unknown } = {},
): Promise<{ status: number; headers: Headers; body: T }> {
  const res = await h.request(path, {
    ...init,
    headers: { ...jar.header(), ...(init.headers as Record<string, string> | undefined) },
  });
  jar.apply(res.headers.getSetCookie());
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : null) as T };
}

/**
 * A `fetch` of the front end's pages, served from the service's own origin: `init` as the page
 * writes it (method, `Content-Type`, body), plus what the browser adds to a same-origin fetch
 * (`Sec-Fetch-Site: same-origin`, and `Origin` unless the method is GET or HEAD) and the jar's
 * cookies.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Harness } from "./harness.ts";
 * // Declared, not run here: `h` is a running harness.
 * async function saveShareRoot(h: Harness, noteId: string): Promise<void> {
 *   const r = await pageFetch(h, cookieJar(), "/api/share", {
 *     method: "PUT",
 *     headers: { "Content-Type": "application/json" },
 *     body: JSON.stringify({ noteId }),
 *   });
 *   assert.equal(r.status, 200);
 * }
 * ```
 */
export function pageFetch<T = Record<string, unknown>>(
  h: Harness,
  jar: CookieJar,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; headers: Headers; body: T }> {
  const method = (init.method ?? "GET").toUpperCase();
  const headers: Record<string, string> = {
    "sec-fetch-site": "same-origin",
    ...(method === "GET" || method === "HEAD" ? {} : { origin: h.url }),
    ...(init.headers as Record<string, string> | undefined),
  };
  return browse<T>(h, jar, path, { ...init, headers });
}
