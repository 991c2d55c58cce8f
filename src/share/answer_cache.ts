/**
 * Rendered public answers, kept so a page or JSON answer is rendered once per snapshot version
 * and visitor class, while the 404 and 401 checks still run on every request. A repeat anonymous
 * visit may even skip resolving the note ({@linkcode keptPublicAnswer}).
 *
 * @module
 */
import { SANITIZER_VERSION } from "../sanitize/html.ts";
import { loadHtmlEngine } from "../sanitize/html_engine.ts";
import type { CoreNote } from "../upstream/core.ts";
import { openTarget, type PublicRequest, publicRequest } from "./public_request.ts";
import { keepAnswer, keptAnswer, type PublicCaches, type RemakeAnswer } from "./public_snapshot.ts";
import type { RenderedAnswer } from "./rendered_answer.ts";
import type { VisitorCredentials } from "./visitor_access.ts";

/**
 * Renders a route's answer from what the share gives it. `view` names the rendering (e.g.
 * `"api"`, `"page"`): answers are cached per view, so two routes never share one.
 */
export interface AnswerRenderer<T> {
  view: string;
  render(from: T, authorized: boolean): RenderedAnswer;
}

/** What a site page is about: a note (404/401 checked) or the whole share (the root). */
export interface SitePage {
  /** Names the page among the site's pages (part of the cache key). */
  subject: string;
  /** The note the page shows; the share root when absent. */
  noteIdOrAlias?: string;
}

/**
 * The answer an earlier anonymous visit to the same request got, while it is certain to be the
 * answer now ({@linkcode keptAnswer}): a repeat visit skips resolving the note. The request is
 * the note `idOrAlias` (the API's `view`), or a site page (`SitePage`, its subject naming the
 * visitor's origin as the page's answer does). Undefined otherwise; the caller then asks the
 * share for the note's or the page's answer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createPublicCaches } from "./public_snapshot.ts";
 * const caches = createPublicCaches({ PUBLIC_CACHE_MS: 5_000 });
 * assert.equal(keptPublicAnswer(caches, "api", "harbor-town", null), undefined); // not visited
 * const page = { subject: "note\nhttps://lore.example", noteIdOrAlias: "harbor-town" };
 * assert.equal(keptPublicAnswer(caches, "page", page, null), undefined);
 * ```
 */
export function keptPublicAnswer(
  caches: PublicCaches,
  view: string,
  request: string | SitePage,
  credentials: VisitorCredentials | null,
): RenderedAnswer | undefined {
  const requested = typeof request === "string" ? noteRequest(request) : siteRequest(request);
  return keptAnswer(caches, keptRequest(view, requested), credentials === null);
}

/** The key of a request in {@linkcode PublicCaches.kept}. */
function keptRequest(view: string, requested: string): string {
  return `${view}\n${requested}`;
}

/** A note's answer as asked for: by the id or alias in the request. */
export function noteRequest(idOrAlias: string): string {
  return `note:${idOrAlias}`;
}

/** A site page as asked for: its subject and the note named in the request. */
export function siteRequest(page: SitePage): string {
  return `site:${page.subject}:${page.noteIdOrAlias ?? ""}`;
}

/**
 * A rendered answer from the cache, rendered once per key. The key holds everything an answer
 * depends on: the snapshot's version, the sanitizer, which guarded notes the visitor sees,
 * whether the request carried credentials (its caching headers), the view and the subject.
 * Only an anonymous visit's answer is found again by the request alone: one seen with
 * credentials (a password, the unlock cookie) is never handed to another visitor that way.
 * Entries expire with the snapshot's TTL, since a note's attachments are outside its version.
 * A new snapshot (a draft edited) renders again; the ETag comes from the bytes, so an answer
 * that reads the same keeps it and a revalidation is still a 304. `requested` (from
 * {@linkcode noteRequest} or {@linkcode siteRequest}) lets a later anonymous visit find it again,
 * and `remake` makes it again from a newer snapshot (public_snapshot.ts `remakeKeptAnswers`).
 */
export function rememberedAnswer<T>(
  req: PublicRequest,
  subject: string,
  renderer: AnswerRenderer<T>,
  make: () => Promise<T>,
  requested?: string,
  remake?: RemakeAnswer,
): Promise<RenderedAnswer> {
  const { caches } = req.deps;
  const { authorized, identity } = req;
  const version = req.snap.version;
  const key = [
    identity,
    version,
    SANITIZER_VERSION,
    req.access.fingerprint(),
    authorized ? "auth" : "anon",
    renderer.view,
    subject,
  ].join("\n");
  // A page reads note HTML in several places (descriptions, excerpts), each of which needs the
  // HTML engine: it is loaded before the page is made.
  const answer = caches.rendered.getOrLoad(key, async () => {
    await loadHtmlEngine();
    return renderer.render(await make(), authorized);
  });
  if (requested === undefined || authorized) return answer;
  // the request as asked (alias or id) finds this answer again without resolving the note
  return answer.then((a) => {
    keepAnswer(caches, keptRequest(renderer.view, requested), {
      renderedKey: key,
      identity,
      version,
      remake,
    });
    return a;
  });
}

/** An answer about one note: how the request named it, and how the answer is made. */
export interface NoteAnswer<T> {
  /** The noteId or `#shareAlias` asked for; the share root when absent. */
  idOrAlias?: string;
  /** The request as asked ({@linkcode noteRequest}, {@linkcode siteRequest}). */
  requested: string;
  /** Names the answer among the note's answers (`note`, `site:note`…). */
  subject: string;
  renderer: AnswerRenderer<T>;
  make: (req: PublicRequest, note: CoreNote) => Promise<T>;
}

/**
 * The answer about `note` (the one `asked.idOrAlias` names, its 404 and 401 checks passed),
 * rendered once ({@linkcode rememberedAnswer}); an anonymous visitor's is kept with how to make
 * it again from a newer snapshot, where the note is looked up and checked anew.
 */
export function keptNoteAnswer<T>(
  req: PublicRequest,
  note: CoreNote,
  asked: NoteAnswer<T>,
): Promise<RenderedAnswer> {
  const remake: RemakeAnswer = async (source) => {
    const fresh = publicRequest(req.deps, source, null);
    if (fresh) await keptNoteAnswer(fresh, openTarget(fresh, asked.idOrAlias), asked);
  };
  const make = () => asked.make(req, note);
  const subject = `${asked.subject}:${note.noteId}`;
  return rememberedAnswer(req, subject, asked.renderer, make, asked.requested, remake);
}
