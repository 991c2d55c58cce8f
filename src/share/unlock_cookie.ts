/**
 * The public site's unlock cookie: which password-protected branches (`#shareCredentials`) a
 * browser gave the password of through the site's form, so that it need not send HTTP Basic.
 * It names each branch (the note owning the credentials) with a digest of the `user:pass` that
 * opened it, never the password itself, and is sealed (AES-GCM, session/seal.ts), so a browser
 * can neither read nor forge it. A changed password no longer matches its digest: the branch
 * locks again by itself.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { cookieAttributes, SESSION_MAX_AGE_SECONDS } from "../session/browser_session.ts";
import { expireCookie, parseCookies, serializeCookie } from "../session/cookie.ts";
import { seal, type SealKey, unseal } from "../session/seal.ts";
import type { CredentialGuard } from "./tree_filter.ts";

/** The cookie's name, also the purpose its value is sealed for. */
export const UNLOCK_COOKIE = "share_unlock";

/**
 * Most branches one cookie remembers (so that it always fits a cookie); the earliest unlocked
 * are forgotten first.
 */
export const MAX_UNLOCKED = 16;

/** Branches a browser unlocked: the owning noteId → the digest of the `user:pass` given. */
export type Unlocked = ReadonlyMap<string, string>;

const OWNER = /^[A-Za-z0-9_]{1,128}$/;
const DIGEST = /^[A-Za-z0-9_-]{43}$/;

/**
 * The digest remembered for a branch: SHA-256 over the owner and the `user:pass`, so one value
 * on two branches gives two digests.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(unlockDigest("vault", "player:lantern").length, 43);
 * assert.notEqual(unlockDigest("vault", "player:lantern"), unlockDigest("crypt", "player:lantern"));
 * ```
 */
export function unlockDigest(owner: string, userPass: string): string {
  return createHash("sha256").update(`${owner}\n${userPass}`).digest("base64url");
}

/**
 * Whether `unlocked` opens a guard: the digest it holds for the guard's owner is one of the
 * guard's current values'. The digest came out of a sealed cookie, so no visitor chose it, and
 * comparing it is no oracle.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const unlocked = new Map([["vault", unlockDigest("vault", "player:lantern")]]);
 * assert.equal(opensGuard(unlocked, { owner: "vault", values: ["player:lantern"] }), true);
 * // the GM changed the password: the remembered digest no longer opens the branch
 * assert.equal(opensGuard(unlocked, { owner: "vault", values: ["player:candle"] }), false);
 * ```
 */
export function opensGuard(unlocked: Unlocked, guard: CredentialGuard): boolean {
  const digest = unlocked.get(guard.owner);
  return digest !== undefined && guard.values.some((v) => unlockDigest(guard.owner, v) === digest);
}

/** Whether the request carries an unlock cookie at all (reading it needs the seal key). */
export function hasUnlockCookie(req: Request): boolean {
  const header = req.headers.get("cookie");
  return header !== null && header.includes(UNLOCK_COOKIE) &&
    parseCookies(header).has(UNLOCK_COOKIE);
}

/**
 * The branches the request's unlock cookie names; null without one, or for one that does not
 * unseal or does not read as this module wrote it (forged, edited, expired: absent).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { deriveSealKey } from "../session/seal.ts";
 * const key = await deriveSealKey("an example session secret of 32+ bytes");
 * const unlocked = new Map([["vault", unlockDigest("vault", "player:lantern")]]);
 * const cookie = (await unlockCookie(key, unlocked, false)).split(";")[0];
 * const req = new Request("http://x/public/lore/vault", { headers: { cookie } });
 * assert.deepEqual(await readUnlocked(req, key), unlocked);
 * const forged = new Request("http://x/", { headers: { cookie: `${UNLOCK_COOKIE}=v1.abc` } });
 * assert.equal(await readUnlocked(forged, key), null);
 * ```
 */
export async function readUnlocked(req: Request, key: SealKey): Promise<Unlocked | null> {
  const sealed = parseCookies(req.headers.get("cookie")).get(UNLOCK_COOKIE);
  if (!sealed) return null;
  const text = await unseal(key, UNLOCK_COOKIE, sealed);
  if (text === null) return null;
  let pairs: unknown;
  try {
    pairs = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(pairs) || pairs.length > MAX_UNLOCKED) return null;
  const unlocked = new Map<string, string>();
  for (const pair of pairs) {
    if (!Array.isArray(pair) || pair.length !== 2) return null;
    const [owner, digest] = pair;
    if (typeof owner !== "string" || !OWNER.test(owner)) return null;
    if (typeof digest !== "string" || !DIGEST.test(digest)) return null;
    unlocked.set(owner, digest);
  }
  return unlocked;
}

/**
 * The `Set-Cookie` that remembers `unlocked` (at most {@linkcode MAX_UNLOCKED}, the latest kept)
 * for as long as a session: sealed, HttpOnly, `SameSite=Lax`, `Secure` when `secure`, on the
 * whole site, since its pages live at `/` and `/public/…` and their images under
 * `/api/public/images/`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { deriveSealKey } from "../session/seal.ts";
 * const key = await deriveSealKey("an example session secret of 32+ bytes");
 * const cookie = await unlockCookie(key, new Map([["vault", unlockDigest("vault", "a:b")]]), true);
 * assert.match(cookie, /^share_unlock=v1\.[\w-]+; Path=\/; Max-Age=2592000; HttpOnly; Secure/);
 * ```
 */
export async function unlockCookie(
  key: SealKey,
  unlocked: Unlocked,
  secure: boolean,
): Promise<string> {
  const pairs = [...unlocked].filter(([owner]) => OWNER.test(owner)).slice(-MAX_UNLOCKED);
  const value = await seal(key, UNLOCK_COOKIE, JSON.stringify(pairs), {
    maxAgeSeconds: SESSION_MAX_AGE_SECONDS,
  });
  return serializeCookie(UNLOCK_COOKIE, value, {
    ...cookieAttributes(secure),
    maxAge: SESSION_MAX_AGE_SECONDS,
  });
}

/**
 * The `Set-Cookie` that forgets every unlocked branch ("Lock again").
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.match(lockCookie(false), /^share_unlock=; Path=\/; Max-Age=0/);
 * ```
 */
export function lockCookie(secure: boolean): string {
  return expireCookie(UNLOCK_COOKIE, cookieAttributes(secure));
}
