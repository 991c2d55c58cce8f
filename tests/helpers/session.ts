/**
 * Cookie helpers for tests: read `Set-Cookie` answers like a browser would, log in through the
 * service, and seal cookies with the test services' `SESSION_SECRET`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { deriveSealKey, seal } from "../../src/session/seal.ts";
import { DEFAULT_OWNER } from "../../sims/parser.ts";
import { type Harness, TEST_SESSION_SECRET } from "./harness.ts";

/** One parsed `Set-Cookie` value. */
export interface SetCookie {
  name: string;
  value: string;
  /** Attribute names in lower case → value (`""` for flags such as `HttpOnly`). */
  attrs: Map<string, string>;
}

/**
 * Parses the `Set-Cookie` headers of a response, by cookie name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const res = new Response(null, {
 *   headers: [["set-cookie", "parser_token=v1.abc; Path=/; HttpOnly; Max-Age=60"]],
 * });
 * const jar = setCookies(res);
 * assert.equal(jar.get("parser_token")?.value, "v1.abc");
 * assert.equal(jar.get("parser_token")?.attrs.has("httponly"), true);
 * ```
 */
export function setCookies(res: Response | { headers: Headers }): Map<string, SetCookie> {
  const out = new Map<string, SetCookie>();
  for (const line of res.headers.getSetCookie()) {
    const [pair, ...rest] = line.split(";");
    const eq = pair.indexOf("=");
    const name = pair.slice(0, eq).trim();
    const attrs = new Map<string, string>();
    for (const a of rest) {
      const i = a.indexOf("=");
      attrs.set(
        (i < 0 ? a : a.slice(0, i)).trim().toLowerCase(),
        i < 0 ? "" : a.slice(i + 1).trim(),
      );
    }
    out.set(name, { name, value: pair.slice(eq + 1).trim(), attrs });
  }
  return out;
}

/**
 * Whether the response expires cookie `name` (the browser deletes it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const res = new Response(null, {
 *   headers: [["set-cookie", "parser_token=; Path=/; Max-Age=0"]],
 * });
 * assert.equal(clears(res, "parser_token"), true);
 * assert.equal(clears(res, "parser_url"), false);
 * ```
 */
export function clears(res: Response | { headers: Headers }, name: string): boolean {
  return setCookies(res).get(name)?.attrs.get("max-age") === "0";
}

/**
 * The `Cookie` request header a browser sends after this response (expired cookies dropped).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const loginRes = new Response(null, {
 *   headers: [
 *     ["set-cookie", "parser_url=v1.u; Path=/; HttpOnly"],
 *     ["set-cookie", "parser_token=v1.t; Path=/; HttpOnly"],
 *     ["set-cookie", "codex_off=; Path=/; Max-Age=0"],
 *   ],
 * });
 * assert.equal(cookieHeader(loginRes), "parser_url=v1.u; parser_token=v1.t");
 * ```
 */
export function cookieHeader(res: Response | { headers: Headers }): string {
  return [...setCookies(res).values()]
    .filter((c) => c.attrs.get("max-age") !== "0")
    .map((c) => `${c.name}=${c.value}`)
    .join("; ");
}

/**
 * Logs in through `POST /api/auth/login` (default owner unless told) and returns the cookie
 * header to send on later requests; fails the test unless the login succeeds.
 *
 * @example
 * ```ts
 * import type { Harness } from "./harness.ts";
 * // Declared, not run here: `h` is a running harness with the Parser double.
 * async function loreAsOwner(h: Harness): Promise<Response> {
 *   const cookie = await login(h);
 *   return await h.request("/api/lore", { headers: { cookie } });
 * }
 * ```
 */
export async function login(
  h: Harness,
  creds: { email: string; password: string } = DEFAULT_OWNER,
): Promise<string> {
  const res = await h.request("/api/auth/login", {
    method: "POST",
    json: { email: creds.email, password: creds.password },
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return cookieHeader(res);
}

/**
 * A cookie value sealed like the service seals it (same secret, same purpose = cookie name).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { deriveSealKey, unseal } from "../../src/session/seal.ts";
 * import { TEST_SESSION_SECRET } from "./harness.ts";
 * const sealed = await sealCookie("parser_token", "stolen");
 * const key = await deriveSealKey(TEST_SESSION_SECRET);
 * assert.equal(await unseal(key, "parser_token", sealed), "stolen"); // the test service accepts it
 * ```
 */
export async function sealCookie(name: string, value: string): Promise<string> {
  const key = await deriveSealKey(TEST_SESSION_SECRET);
  return await seal(key, name, value, { maxAgeSeconds: 3600 });
}

/**
 * A TCP listener that counts connections: proof that nothing was contacted.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * // Declared, not run here: it listens on a port.
 * async function nothingConnects(tryToConnect: (url: string) => Promise<void>): Promise<void> {
 *   const l = countingListener();
 *   await tryToConnect(l.url); // e.g. a request the service must refuse before calling out
 *   assert.equal(l.accepted, 0);
 *   await l.close();
 * }
 * ```
 */
export function countingListener() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let accepted = 0;
  const loop = (async () => {
    for await (const conn of listener) {
      accepted++;
      conn.close();
    }
  })();
  return {
    url: `http://127.0.0.1:${listener.addr.port}`,
    get accepted() {
      return accepted;
    },
    async close() {
      listener.close();
      await loop.catch(() => {});
    },
  };
}
