/**
 * Who may see what of the published share, and what a visitor is told when they may not: one
 * 404 for missing and hidden notes alike, a 401 with a password prompt for notes behind
 * `#shareCredentials`, and never Core's own refusals. Every public answer asks here.
 *
 * @module
 */
import { ApiError } from "../http/errors.ts";
import type { SealKey } from "../session/seal.ts";
import { digest, type PublicSnapshot } from "./snapshot_index.ts";
import { type CredentialGuard, decodeBasic, guardsAllow } from "./tree_filter.ts";
import { hasUnlockCookie, opensGuard, readUnlocked, type Unlocked } from "./unlock_cookie.ts";

/** HTTP Basic challenge for notes behind `#shareCredentials`. */
export const SHARE_AUTH_CHALLENGE = 'Basic realm="Shared lore", charset="UTF-8"';

/**
 * The 404 of every public route, identical for missing, hidden and never-shared notes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const e = publicNotFound();
 * assert.deepEqual([e.status, e.code, e.message], [404, "NOT_FOUND", "Not found"]);
 * ```
 */
export function publicNotFound(): ApiError {
  return new ApiError(404, "NOT_FOUND", "Not found");
}

/**
 * The 401 of a note behind `#shareCredentials`, with the HTTP Basic challenge (the public API's
 * answer; the site answers it with its password form instead).
 */
export function credentialsNeeded(): ApiError {
  return new ApiError(
    401,
    "UNAUTHORIZED",
    "This part of the shared lore is password-protected",
    undefined,
    { "www-authenticate": SHARE_AUTH_CHALLENGE },
  );
}

/**
 * Core failures as a visitor may see them: a note gone since the snapshot is the same 404 as
 * any missing note, and Core refusing the server's own credentials is a configuration problem
 * (503), never a 401 the browser would answer with a password prompt.
 */
function visitorError(e: unknown): unknown {
  if (!(e instanceof ApiError)) return e;
  if (e.status === 404) return publicNotFound();
  // Core's own refusal carries `service: "core"`; the share's password prompt is ours and passes
  const fromCore = (e.details as { service?: unknown } | undefined)?.service === "core";
  if (fromCore && (e.code === "UNAUTHORIZED" || e.code === "UPSTREAM_FORBIDDEN")) {
    return new ApiError(503, "NOT_CONFIGURED", "The public share cannot read the lore database", {
      service: "core",
    });
  }
  return e;
}

/** Runs one public answer; whatever it throws reaches the visitor as {@linkcode visitorError}. */
export async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw visitorError(e);
  }
}

/** What one visitor may see of one snapshot; decisions are memoised per request. */
export interface Access {
  /** A public note whose credentials (if any) the visitor gave. */
  canSee(noteId: string): boolean;
  /** Distinguishes visitors who see different things (part of cache keys, never of an ETag). */
  fingerprint(): string;
}

/**
 * What a visitor gave for notes behind `#shareCredentials`: an `Authorization` header (HTTP
 * Basic), the branches the site's password form unlocked (its sealed cookie, unlock_cookie.ts),
 * or both. A request that gave neither has none (null): an anonymous visitor.
 */
export interface VisitorCredentials {
  /** The `Authorization` header as sent, or null. */
  authorization: string | null;
  /** The branches of a valid unlock cookie. */
  unlocked?: Unlocked;
}

/**
 * The credentials of a request that can only carry HTTP Basic (the public API): null without an
 * `Authorization` header.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(basicCredentials(null), null);
 * assert.deepEqual(basicCredentials("Basic eDp5"), { authorization: "Basic eDp5" });
 * ```
 */
export function basicCredentials(authorization: string | null): VisitorCredentials | null {
  return authorization === null ? null : { authorization };
}

/**
 * The credentials of a request to the public site: its `Authorization` header and its unlock
 * cookie. The seal key is asked for only when there is such a cookie; one that does not unseal
 * is ignored, as if the request had none. Without such a cookie the answer comes at once, not as
 * a promise (most visits carry none).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { deriveSealKey } from "../session/seal.ts";
 * const key = () => deriveSealKey("an example session secret of 32+ bytes");
 * const tampered = new Request("http://x/", { headers: { cookie: "share_unlock=v1.AAAA" } });
 * assert.equal(await siteCredentials(tampered, key), null);
 * ```
 */
export function siteCredentials(
  req: Request,
  key: () => Promise<SealKey>,
): VisitorCredentials | null | Promise<VisitorCredentials | null> {
  const authorization = req.headers.get("authorization");
  if (!hasUnlockCookie(req)) return basicCredentials(authorization);
  return withUnlocked(req, authorization, key);
}

/** {@linkcode siteCredentials} of a request that carries an unlock cookie. */
async function withUnlocked(
  req: Request,
  authorization: string | null,
  key: () => Promise<SealKey>,
): Promise<VisitorCredentials | null> {
  const unlocked = await readUnlocked(req, await key());
  if (unlocked === null) return basicCredentials(authorization);
  return { authorization, unlocked };
}

const ANONYMOUS_PRINT = digest();

/** The access of the visitor who gave `credentials` (null: none). */
export function accessFor(snap: PublicSnapshot, credentials: VisitorCredentials | null): Access {
  const decided = new Map<string, boolean>();
  const given = decodeBasic(credentials?.authorization ?? null);
  const unlocked = credentials?.unlocked;
  // a branch guards many notes: its digests are worked out once per request
  const openedBy = new Map<string, boolean>();
  const opened = unlocked && ((guard: CredentialGuard) => {
    const key = JSON.stringify([guard.owner, guard.values]);
    let ok = openedBy.get(key);
    if (ok === undefined) openedBy.set(key, ok = opensGuard(unlocked, guard));
    return ok;
  });
  const canSee = (noteId: string) => {
    let ok = decided.get(noteId);
    if (ok === undefined) decided.set(noteId, ok = guardsAllow(snap.view, noteId, given, opened));
    return ok;
  };
  let print: string | undefined;
  return {
    canSee,
    fingerprint() {
      if (!snap.hasCredentials) return "";
      // Without credentials no guarded note is visible: the digest of none, without the scan.
      if (credentials === null) return ANONYMOUS_PRINT;
      print ??= digest(
        ...snap.view.publicIds().filter((id) =>
          snap.view.credentialGroups(id).length > 0 && canSee(id)
        ),
      );
      return print;
    },
  };
}
