/**
 * The public site's password form and "Lock again": a visitor gives a `#shareCredentials`
 * password once, and a sealed cookie opens that branch's pages (and their images) from then on,
 * in place of the HTTP Basic dialog a browser would show. The form posts from our own pages only
 * (another origin's POST is refused before the handler, http/csrf.ts), its attempts count
 * against the login rate limit, and it returns to a page of this site alone.
 *
 * @module
 */
import { z } from "zod";
import { ApiError } from "../http/errors.ts";
import { defineRoute, type PublicCtx, type Route } from "../api/router.ts";
import { shareFor } from "../pipeline/context.ts";
import { secureCookies } from "../session/browser_session.ts";
import {
  hasUnlockCookie,
  lockCookie,
  readUnlocked,
  unlockCookie,
  unlockDigest,
} from "../share/unlock_cookie.ts";
import { errorPageResponse } from "../site/error_page.ts";
import { LOCK_PATH } from "../site/lock_control.ts";
import {
  isSiteReturnPath,
  RETURN_PATH_MAX,
  UNLOCK_PASSWORD_MAX,
  UNLOCK_PATH,
  UNLOCK_USER_MAX,
  type UnlockPage,
  unlockPageResponse,
} from "../site/unlock_page.ts";
import { enforceRateLimit } from "./auth.ts";

const unlockBody = z.object({
  user: z.string().max(UNLOCK_USER_MAX).default("").describe(
    'The user name of the branch\'s `#shareCredentials="user:pass"`',
  ),
  password: z.string().max(UNLOCK_PASSWORD_MAX).default("").describe("Its password"),
  return: z.string().max(RETURN_PATH_MAX).refine(isSiteReturnPath, {
    message: "must be a path of the public site (`/`, `/public`, `/public/…`)",
  }).describe("The page to go back to: a path of the public site, with its query"),
});

type UnlockBody = z.output<typeof unlockBody>;

/** The home of the public site, wherever `/` is served (see the home's aliases). */
const SITE_HOME = "/public";

/** A 303 to a page of this site, never stored, with the cookie that changed. */
function backTo(path: string, cookie: string | null): Response {
  const headers = new Headers({ location: path, "cache-control": "no-store" });
  if (cookie) headers.set("set-cookie", cookie);
  return new Response(null, { status: 303, headers });
}

/**
 * Checks a name and password against every password-protected branch of the share: a 303 back
 * with the branches it opens added to the unlock cookie, or the password page again. What it
 * answers does not depend on the page it returns to, so it says nothing about that page.
 */
async function unlock(ctx: PublicCtx<unknown, unknown, UnlockBody>): Promise<Response> {
  const { user, password } = ctx.body;
  const back = ctx.body.return;
  // the world's name once the share is read (the first visitor's answer reads as every other)
  const page = (): UnlockPage => ({ returnTo: back, world: ctx.state.publicShare.worldName, user });
  try {
    await enforceRateLimit(ctx, "unlock");
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 429) throw e;
    const retryAfter = Number(new Headers(e.headers).get("retry-after")) || undefined;
    return unlockPageResponse({ ...page(), problem: "busy" }, retryAfter);
  }
  const userPass = `${user}:${password}`;
  let opened;
  try {
    opened = await shareFor(ctx).unlock(userPass);
  } catch (e) {
    // Core failing is the site's error page; anything else is the pipeline's
    if (!(e instanceof ApiError) || e.status < 500) throw e;
    return errorPageResponse(e, ctx.requestId, page().world);
  }
  if (opened.length === 0) return unlockPageResponse({ ...page(), problem: "wrong" });
  const key = await ctx.sealKey();
  const unlocked = new Map(await readUnlocked(ctx.req, key) ?? []);
  for (const { owner } of opened) {
    unlocked.delete(owner); // the latest unlocked last: the earliest are forgotten first
    unlocked.set(owner, unlockDigest(owner, userPass));
  }
  return backTo(back, await unlockCookie(key, unlocked, secureCookies(ctx.req, ctx.config)));
}

/** `POST /public/unlock` — the site's password form. */
export const unlockRoute = defineRoute({
  method: "POST",
  path: UNLOCK_PATH,
  summary: "Public site: give a password-protected branch's name and password (the site's form)",
  backend: "Core",
  access: "public",
  tag: "site",
  body: { kind: "form", schema: unlockBody },
  description: "What a page behind `#shareCredentials` shows instead of itself is a form " +
    "posting here (no script; the browser's HTTP Basic dialog never shows). The " +
    '`user:password` is compared in constant time with every `#shareCredentials="user:pass"` ' +
    "of the published share; each branch it opens is remembered in the `share_unlock` cookie: " +
    "sealed (AES-GCM with `SESSION_SECRET`'s key), HttpOnly, `SameSite=Lax`, `Secure` over " +
    "HTTPS, `Path=/` (the site's pages are `/` and `/public/…`, their images " +
    "`/api/public/images/…`), 30 days. It names the branch with a digest of the credentials, " +
    "never the password: a changed password locks the branch again. Pages and images seen " +
    "through the cookie are `private`, as with `Authorization`; `/api/public/lore` and " +
    "`/api/public/search` read HTTP Basic only. Each attempt counts against `AUTH_RATE_LIMIT` " +
    "per `AUTH_RATE_WINDOW_MS` and client address, like a login. The answer is the same " +
    "whatever `return` names (a hidden or missing note's page is its 404 afterwards), and " +
    "another origin's POST is refused.",
  responses: {
    303: {
      description: "Opened: `Location` is `return`, `Set-Cookie: share_unlock=…` " +
        "(`Cache-Control: no-store`)",
    },
    400: "`return` is not a path of the public site (never an open redirect), or a field is " +
      "too long",
    401: {
      description: "Nothing opens with that name and password: the password page again with " +
        "a message (no `WWW-Authenticate`)",
      mediaType: "text/html",
    },
    429: {
      description: "Too many attempts from this client: the password page with a message " +
        "and `Retry-After`",
      mediaType: "text/html",
    },
    502: { description: "Core failed (the site's error page)", mediaType: "text/html" },
    503: {
      description: "Core is not configured, not reachable or refuses the service's token " +
        "(the site's error page)",
      mediaType: "text/html",
    },
    504: {
      description: "Core did not answer in time (the site's error page)",
      mediaType: "text/html",
    },
  },
  handler: unlock,
});

/** `POST /public/lock` — "Lock again": forget the passwords this browser gave. */
export const lockRoute = defineRoute({
  method: "POST",
  path: LOCK_PATH,
  summary: 'Public site: forget the passwords this browser gave ("Lock again")',
  backend: "None",
  access: "public",
  tag: "site",
  description: 'The footer\'s "Lock again" button on pages that show password-protected ' +
    "notes posts here: the `share_unlock` cookie is deleted (when the request has one) and " +
    "the visitor goes to the site's home. Another origin's POST is refused.",
  responses: {
    303: {
      description: "`Location: /public` (the site's home), `Set-Cookie` deleting " +
        "`share_unlock` (`Cache-Control: no-store`)",
    },
  },
  handler: (ctx) =>
    backTo(
      SITE_HOME,
      hasUnlockCookie(ctx.req) ? lockCookie(secureCookies(ctx.req, ctx.config)) : null,
    ),
});

/** This group's routes. */
export const siteUnlockRoutes: Route[] = [unlockRoute, lockRoute];
