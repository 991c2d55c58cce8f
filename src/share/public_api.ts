/**
 * The public share: the one module both `/api/public/*` and the public site read, so both show
 * exactly the same thing. Everything passes the share filter: hidden and missing
 * notes are the same 404, notes behind `#shareCredentials` need their password (HTTP Basic, or
 * the site's unlock cookie), and nothing in an answer names or shows a note the visitor may not
 * see.
 *
 * Each method opens one {@linkcode PublicRequest} (snapshot, Core, this visitor's access) and
 * hands it to the module that makes the answer: `visitor_access.ts` (who may see what),
 * `public_notes.ts` and `public_search.ts` (the JSON answers), `public_images.ts`,
 * `visitor_view.ts` (site pages' data) and `answer_cache.ts` (rendered answers, kept).
 *
 * @module
 */
import {
  type AnswerRenderer,
  keptNoteAnswer,
  type NoteAnswer,
  noteRequest,
  rememberedAnswer,
  type SitePage,
  siteRequest,
} from "./answer_cache.ts";
import { publicImage } from "./public_images.ts";
import {
  homeResult,
  noteResult,
  type PublicHomeResult,
  type PublicNoteResult,
} from "./public_notes.ts";
import {
  openTarget,
  type PublicRequest,
  publicRequest,
  type PublicShareDeps,
} from "./public_request.ts";
import { type PublicSearchOutcome, searchNotes } from "./public_search.ts";
import {
  type PrepareSnapshot,
  type PublicSource,
  publicSource,
  refreshPublicShare,
} from "./public_snapshot.ts";
import type { RenderedAnswer } from "./rendered_answer.ts";
import { type CredentialGuard, guardsOpenedBy, type ShareView } from "./tree_filter.ts";
import { guarded, publicNotFound, type VisitorCredentials } from "./visitor_access.ts";
import { type VisitorView, visitorView } from "./visitor_view.ts";

export { type AnswerRenderer, keptPublicAnswer, type SitePage } from "./answer_cache.ts";
export {
  groupByLoreType,
  type PublicHomeResult,
  type PublicLoreGroup,
  type PublicNoteResult,
} from "./public_notes.ts";
export type { PublicShareDeps } from "./public_request.ts";
export { LORE_QUERY, type PublicSearchOutcome } from "./public_search.ts";
export {
  basicCredentials,
  publicNotFound,
  SHARE_AUTH_CHALLENGE,
  siteCredentials,
  type VisitorCredentials,
} from "./visitor_access.ts";
export type { VisibleNote, VisitorView } from "./visitor_view.ts";

/** The public share API; see {@linkcode publicShare}. */
export interface PublicShare {
  /** 404 (same for missing/hidden), 401 (+ WWW-Authenticate) when credentials are needed. */
  note(idOrAlias: string, credentials: VisitorCredentials | null): Promise<PublicNoteResult>;
  search(q: string, credentials: VisitorCredentials | null): Promise<PublicSearchOutcome>;
  /** The share root's own note plus every public lore note grouped by loreType (for `/`). */
  home(credentials: VisitorCredentials | null): Promise<PublicHomeResult>;
  /**
   * {@linkcode PublicShare.note} rendered by `renderer`, kept per snapshot version and visitor
   * class: the 404 and 401 checks run on every call, the render once.
   */
  noteAnswer(
    idOrAlias: string,
    credentials: VisitorCredentials | null,
    renderer: AnswerRenderer<PublicNoteResult>,
  ): Promise<RenderedAnswer>;
  /** {@linkcode PublicShare.search} rendered by `renderer`, kept like `noteAnswer`. */
  searchAnswer(
    q: string,
    credentials: VisitorCredentials | null,
    renderer: AnswerRenderer<PublicSearchOutcome & { query: string }>,
  ): Promise<RenderedAnswer>;
  /** {@linkcode PublicShare.home} rendered by `renderer`, kept like `noteAnswer`. */
  homeAnswer(
    credentials: VisitorCredentials | null,
    renderer: AnswerRenderer<PublicHomeResult>,
  ): Promise<RenderedAnswer>;
  /**
   * A site page rendered by `renderer` from what `make` builds out of the visitor's view, kept
   * like `noteAnswer`. The page's note (the root when none is named) passes the 404 and 401
   * checks on every call; `make` gets its noteId.
   */
  siteAnswer<T>(
    credentials: VisitorCredentials | null,
    page: SitePage,
    renderer: AnswerRenderer<T>,
    make: (view: VisitorView, noteId: string) => Promise<T>,
  ): Promise<RenderedAnswer>;
  /**
   * The password-protected branches `userPass` ("user:pass") opens, anywhere in the published
   * share (HTTP Basic opens them alike): none for a wrong one, or while nothing is published.
   * Every value of every branch is compared, in constant time.
   */
  unlock(userPass: string): Promise<readonly CredentialGuard[]>;
  /**
   * Reads the share again after a write through this service (`refreshPublicShare`), the new
   * snapshot warmed before it replaces the old one; when no visitor has read the share yet,
   * there is nothing to do.
   */
  refresh(): Promise<void>;
  /**
   * Image bytes of a public image note / image attachment, streamed; 404 otherwise. With a
   * matching `ifNoneMatch`, a 304 without touching the bytes.
   */
  image(
    id: string,
    credentials: VisitorCredentials | null,
    signal: AbortSignal,
    ifNoneMatch?: string | null,
  ): Promise<Response>;
}

/**
 * The public share bound to one request: server-side Core credentials, the app's cached
 * snapshot, and the request's signal and log for streamed images. `warm` makes what every page
 * of a new snapshot shares (the site's, src/site/warm.ts) before that snapshot replaces the last
 * good one, after a write or a background reload alike.
 */
export function publicShare(
  deps: PublicShareDeps,
  warm?: (view: VisitorView) => Promise<void>,
): PublicShare {
  // a snapshot that replaces another is warmed for anonymous visitors first (see `warm`)
  const prepare: PrepareSnapshot | undefined = warm && (async (snapshot, core, identity) => {
    const req = publicRequest(deps, { snapshot, core, identity }, null);
    if (req) await warm(visitorView(req));
  });
  let source: Promise<PublicSource> | undefined;
  const load = () => source ??= publicSource(deps.publicCore, deps.caches, prepare);
  /** The visitor's request; undefined while nothing is published. */
  const request = async (credentials: VisitorCredentials | null) =>
    publicRequest(deps, await load(), credentials);
  /** The visitor's request on the published share; 404 while nothing is published. */
  const published = async (credentials: VisitorCredentials | null): Promise<PublicRequest> => {
    const req = await request(credentials);
    if (!req) throw publicNotFound();
    return req;
  };
  /** The request and the note it names (the root when none), after the 404 and 401 checks. */
  const opened = async (credentials: VisitorCredentials | null, idOrAlias?: string) => {
    const req = await published(credentials);
    return { req, note: openTarget(req, idOrAlias) };
  };
  /** The answer about a note, kept (answer_cache.ts `keptNoteAnswer`). */
  const answerAbout = <T>(credentials: VisitorCredentials | null, asked: NoteAnswer<T>) =>
    guarded(async () => {
      const { req, note } = await opened(credentials, asked.idOrAlias);
      return await keptNoteAnswer(req, note, asked);
    });

  return {
    note: (idOrAlias, credentials) =>
      guarded(async () => {
        const { req, note } = await opened(credentials, idOrAlias);
        return await noteResult(req, note);
      }),

    noteAnswer: (idOrAlias, credentials, renderer) =>
      answerAbout(credentials, {
        idOrAlias,
        requested: noteRequest(idOrAlias),
        subject: "note",
        renderer,
        make: noteResult,
      }),

    home: (credentials) =>
      guarded(async () => {
        const { req, note } = await opened(credentials);
        return await homeResult(req, note);
      }),

    homeAnswer: (credentials, renderer) =>
      guarded(async () => {
        const { req, note } = await opened(credentials);
        return await rememberedAnswer(req, "home", renderer, () => homeResult(req, note));
      }),

    // Search alone answers while nothing is published (no results rather than a 404).
    search: (q, credentials) =>
      guarded(async () => searchNotes(await request(credentials), q.trim())),

    searchAnswer: (q, credentials, renderer) =>
      guarded(async () => {
        const req = await request(credentials);
        const query = q.trim();
        const make = async () => ({ ...await searchNotes(req, query), query });
        // nothing published: no snapshot version to keep the answer under
        if (!req) return renderer.render(await make(), credentials !== null);
        return await rememberedAnswer(req, `search:${query}`, renderer, make);
      }),

    siteAnswer: (credentials, page, renderer, make) =>
      answerAbout(credentials, {
        idOrAlias: page.noteIdOrAlias,
        requested: siteRequest(page),
        subject: `site:${page.subject}`,
        renderer,
        make: (req, note) => make(visitorView(req), note.noteId),
      }),

    unlock: (userPass) =>
      guarded(async () => {
        const snap = (await load()).snapshot;
        if (!snap) return [];
        return guardsOpenedBy(snap.derived("guards", () => shareGuards(snap.view)), userPass);
      }),

    refresh: async () => {
      await refreshPublicShare(deps.caches, deps.publicCore, prepare);
    },

    image: (id, credentials, signal, ifNoneMatch) =>
      guarded(async () => {
        signal.throwIfAborted();
        return await publicImage(await published(credentials), id, ifNoneMatch ?? null);
      }),
  };
}

/**
 * Every guard on the way to a public note, once per owning note (with every value any note's
 * walk found for it).
 */
function shareGuards(view: ShareView): CredentialGuard[] {
  const values = new Map<string, Set<string>>();
  for (const id of view.publicIds()) {
    for (const guard of view.credentialGuards(id)) {
      let set = values.get(guard.owner);
      if (!set) values.set(guard.owner, set = new Set());
      for (const v of guard.values) set.add(v);
    }
  }
  return [...values].map(([owner, set]) => ({ owner, values: [...set] }));
}
