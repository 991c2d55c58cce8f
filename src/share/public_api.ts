/**
 * The public share: the one module both `/api/public/*` and the public site read, so both show
 * exactly the same thing. Everything passes the share filter: hidden and missing
 * notes are the same 404, notes behind `#shareCredentials` need HTTP Basic, and nothing in an
 * answer names or shows a note the visitor may not see.
 *
 * @module
 */
import { ApiError } from "../http/errors.ts";
import type { Config } from "../config.ts";
import { guardedResponseBody, type StreamContext } from "../http/stream_guard.ts";
import {
  coreUtcToIso,
  hasLabel,
  httpUrlOrNull,
  labelValue,
  relationTarget,
} from "../lore/note_view.ts";
import { compareByTitle } from "../lore/order.ts";
import { etagMatches } from "../lore/preview.ts";
import { userRelations } from "../lore/user_relations.ts";
import { verifiedRasterStream } from "../media/image_response.ts";
import { SANITIZER_VERSION } from "../sanitize/html.ts";
import { loadHtmlEngine } from "../sanitize/html_engine.ts";
import { htmlToText } from "../sanitize/plain_text.ts";
import { cachedImageSize, type PixelSize } from "./image_sizes.ts";
import { isPrivateField, publicFields } from "./public_fields.ts";
import type { CoreAttachment, CoreClient, CoreNote } from "../upstream/core.ts";
import { mapLimit } from "../util/concurrency.ts";
import {
  hasHtmlContent,
  normalizeForSearch,
  publicContent,
  type PublicLinkPolicy,
  publicRewriter,
  publicSearchText,
  referencesAttachments,
  renderPublicContent,
} from "./public_content.ts";
import {
  digest,
  keepAnswer,
  keptAnswer,
  type PublicCaches,
  type PublicCoreReader,
  type PublicSnapshot,
  type PublicSource,
  publicSource,
} from "./public_snapshot.ts";
import type { RenderedAnswer } from "./rendered_answer.ts";
import type {
  PublicAttribute,
  PublicLoreNote,
  PublicRelation,
  PublicSearchHit,
  PublicSearchResult,
} from "./public_types.ts";
import { basicAuthAllows } from "./tree_filter.ts";

/** One public lore type with its notes, for the home page. */
export interface PublicLoreGroup {
  loreType: string;
  notes: { id: string; title: string }[];
}

/** One public note as a visitor sees it. */
export interface PublicNoteResult {
  note: PublicLoreNote;
  noIndex: boolean;
}

/** A public search as a visitor sees it. */
export interface PublicSearchOutcome {
  result: PublicSearchResult;
}

/** The share root's own note plus every public lore note grouped by loreType (for `/`). */
export interface PublicHomeResult {
  root: PublicLoreNote;
  groups: PublicLoreGroup[];
  noIndex: boolean;
}

/**
 * Renders a route's answer from what the share gives it. `view` names the rendering (e.g.
 * `"api"`, `"page"`): answers are cached per view, so two routes never share one.
 */
export interface AnswerRenderer<T> {
  view: string;
  render(from: T, authorized: boolean): RenderedAnswer;
}

/**
 * One visitor's view of the published share, for site pages built from more than one note.
 * Everything it hands out passed the share filter for this visitor: hidden notes, and notes
 * behind a password the visitor did not give, do not exist here.
 */
export interface VisitorView {
  /** The share root's noteId. */
  rootId: string;
  /** Notes this visitor may see, breadth-first from the root (children in Core's order). */
  visibleIds(): readonly string[];
  canSee(noteId: string): boolean;
  /** The `#shareAlias` of a visible note, else its id (what its public URL uses). */
  idFor(noteId: string): string;
  /** A visible note's title, lore type, `#shareDescription`, image-ness and date. */
  summary(noteId: string): VisibleNote;
  /** Visible children of a visible note, in Core's order. */
  childrenOf(noteId: string): readonly string[];
  /**
   * Visible ancestors from the root down to the parent, along the note's shortest public path:
   * the place a note with several parents is listed.
   */
  ancestorsOf(noteId: string): readonly string[];
  /** A visible note as `/api/public/lore/:id` shows it. */
  note(noteId: string): Promise<PublicNoteResult>;
  /** The visible text of a visible note as written (case kept, no GM-only part). */
  text(noteId: string): Promise<string>;
  /** Visible notes the note's public content links to (links that survive the filter). */
  linksFrom(noteId: string): Promise<readonly string[]>;
  /** Visible notes whose public content links to the note, in breadth-first order. */
  backlinksTo(noteId: string): Promise<readonly string[]>;
  /** The share's public search, as `/api/public/search` answers it for this visitor. */
  search(q: string): Promise<PublicSearchResult>;
  /**
   * Pixel size of a visible image note, or of an image attachment of the visible note `ownerId`;
   * null for anything else or when it cannot be read.
   */
  imageSize(imageId: string, ownerId: string): Promise<PixelSize | null>;
}

/** What site pages may show of a visible note without rendering it. */
export interface VisibleNote {
  noteId: string;
  title: string;
  loreType: string | null;
  /** `#shareDescription` of the note, trimmed, or null. */
  description: string | null;
  isImage: boolean;
  /** Lore notes (`#lore`) are the ones listed by type. */
  isLore: boolean;
  /** ISO 8601. */
  dateModified: string | null;
  /** `#shareDisallowRobotIndexing` on the note or the share root. */
  noIndex: boolean;
  /** Promoted attribute by its label name (e.g. `inWorldDate`), as the public note shows it. */
  label(name: string): string | null;
  /** A public-relation target of the note (e.g. `mapImage`) this visitor may see, or null. */
  relation(name: string): string | null;
}

/** What a site page is about: a note (404/401 checked) or the whole share (the root). */
export interface SitePage {
  /** Names the page among the site's pages (part of the cache key). */
  subject: string;
  /** The note the page shows; the share root when absent. */
  noteIdOrAlias?: string;
}

/** The public share API; see {@linkcode publicShare}. */
export interface PublicShare {
  /** 404 (same for missing/hidden), 401 (+ WWW-Authenticate) when credentials are needed. */
  note(idOrAlias: string, authorization: string | null): Promise<PublicNoteResult>;
  search(q: string, authorization: string | null): Promise<PublicSearchOutcome>;
  /** The share root's own note plus every public lore note grouped by loreType (for `/`). */
  home(authorization: string | null): Promise<PublicHomeResult>;
  /**
   * {@linkcode PublicShare.note} rendered by `renderer`, kept per snapshot version and visitor
   * class: the 404 and 401 checks run on every call, the render once.
   */
  noteAnswer(
    idOrAlias: string,
    authorization: string | null,
    renderer: AnswerRenderer<PublicNoteResult>,
  ): Promise<RenderedAnswer>;
  /** {@linkcode PublicShare.search} rendered by `renderer`, kept like `noteAnswer`. */
  searchAnswer(
    q: string,
    authorization: string | null,
    renderer: AnswerRenderer<PublicSearchOutcome & { query: string }>,
  ): Promise<RenderedAnswer>;
  /** {@linkcode PublicShare.home} rendered by `renderer`, kept like `noteAnswer`. */
  homeAnswer(
    authorization: string | null,
    renderer: AnswerRenderer<PublicHomeResult>,
  ): Promise<RenderedAnswer>;
  /**
   * A site page rendered by `renderer` from what `make` builds out of the visitor's view, kept
   * like `noteAnswer`. The page's note (the root when none is named) passes the 404 and 401
   * checks on every call; `make` gets its noteId.
   */
  siteAnswer<T>(
    authorization: string | null,
    page: SitePage,
    renderer: AnswerRenderer<T>,
    make: (view: VisitorView, noteId: string) => Promise<T>,
  ): Promise<RenderedAnswer>;
  /**
   * Image bytes of a public image note / image attachment, streamed; 404 otherwise. With a
   * matching `ifNoneMatch`, a 304 without touching the bytes.
   */
  image(
    id: string,
    authorization: string | null,
    signal: AbortSignal,
    ifNoneMatch?: string | null,
  ): Promise<Response>;
}

/** `q` that lists every published lore note. */
export const LORE_QUERY = "#lore";

/** HTTP Basic challenge for notes behind `#shareCredentials`. */
export const SHARE_AUTH_CHALLENGE = 'Basic realm="Shared lore", charset="UTF-8"';

/** Images are public for a day (seed limit); credentialed ones only in the visitor's cache. */
const IMAGE_MAX_AGE = 86400;

/** Group of public lore notes without a `#loreType`. */
const NO_LORE_TYPE = "other";

const MAX_SEARCH_WORDS = 16;

/**
 * Lore notes grouped by lore type (`other` for none), types by name, notes by title.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const groups = groupByLoreType([
 *   { noteId: "n1", id: "mira", title: "Mira", loreType: "character" },
 *   { noteId: "n2", id: "ashford", title: "Ashford", loreType: "location" },
 *   { noteId: "n3", id: "iselde", title: "Iselde", loreType: " character " },
 * ]);
 * assert.deepEqual(groups.map((g) => [g.loreType, g.notes.length]), [["character", 2], ["location", 1]]);
 * ```
 */
export function groupByLoreType(
  notes: readonly { noteId: string; id: string; title: string; loreType?: string | null }[],
): PublicLoreGroup[] {
  const byType = new Map<string, typeof notes[number][]>();
  for (const n of notes) {
    const type = n.loreType?.trim() || NO_LORE_TYPE;
    byType.set(type, [...(byType.get(type) ?? []), n]);
  }
  return [...byType.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([loreType, group]) => ({
      loreType,
      notes: group.sort(compareByTitle).map((n) => ({ id: n.id, title: n.title })),
    }));
}

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

function credentialsNeeded(): ApiError {
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

async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw visitorError(e);
  }
}

/** What one visitor may see of one snapshot; decisions are memoised per request. */
interface Access {
  canSee(noteId: string): boolean;
  /** Distinguishes visitors who see different things (part of cache keys, never of an ETag). */
  fingerprint(): string;
}

function accessFor(snap: PublicSnapshot, authorization: string | null): Access {
  const decided = new Map<string, boolean>();
  const canSee = (noteId: string) => {
    let ok = decided.get(noteId);
    if (ok === undefined) {
      decided.set(noteId, ok = basicAuthAllows(snap.view, noteId, authorization));
    }
    return ok;
  };
  let print: string | undefined;
  return {
    canSee,
    fingerprint() {
      if (!snap.hasCredentials) return "";
      // Without credentials no guarded note is visible: the digest of none, without the scan.
      if (authorization === null) return ANONYMOUS_PRINT;
      print ??= digest(
        ...snap.view.publicIds().filter((id) =>
          snap.view.credentialGroups(id).length > 0 && canSee(id)
        ),
      );
      return print;
    },
  };
}

const ANONYMOUS_PRINT = digest();

function idFor(snap: PublicSnapshot, noteId: string): string {
  return snap.view.aliasOf(noteId) ?? noteId;
}

function isTruthyLabel(note: CoreNote, name: string): boolean {
  return note.attributes.some((a) =>
    a.type === "label" && a.name === name && a.value.trim().toLowerCase() !== "false"
  );
}

function noIndexOf(snap: PublicSnapshot, note: CoreNote): boolean {
  const root = snap.byId.get(snap.rootId);
  return isTruthyLabel(note, "shareDisallowRobotIndexing") ||
    (root !== undefined && isTruthyLabel(root, "shareDisallowRobotIndexing"));
}

/** Display attributes: the promoted labels the public may see, under their promoted alias. */
function displayAttributes(snap: PublicSnapshot, note: CoreNote): PublicAttribute[] {
  return publicFields(note, snap.byId.get(snap.rootId)).map(({ alias, value }) => ({
    name: alias,
    value,
  }));
}

/** The first value of each promoted label the public may see, by the label's own name. */
function displayLabels(snap: PublicSnapshot, note: CoreNote): Map<string, string> {
  const out = new Map<string, string>();
  for (const { name, value } of publicFields(note, snap.byId.get(snap.rootId))) {
    if (!out.has(name)) out.set(name, value);
  }
  return out;
}

/** A relation or a field read by name that the GM keeps from visitors. */
function isPrivate(snap: PublicSnapshot, note: CoreNote, name: string): boolean {
  return isPrivateField(note, snap.byId.get(snap.rootId), name);
}

function relationsOf(snap: PublicSnapshot, note: CoreNote, access: Access): PublicRelation[] {
  return userRelations(note).flatMap((a) => {
    if (!access.canSee(a.value) || isPrivate(snap, note, a.name)) return [];
    const target = snap.byId.get(a.value)!;
    return [{
      name: a.name,
      targetNoteId: target.noteId,
      targetTitle: target.title,
      loreType: labelValue(target, "loreType") ?? null,
    }];
  });
}

/** A source with a published snapshot. */
type Published = PublicSource & { snap: PublicSnapshot };

/**
 * What the public share needs for one request; a public route's context has all of it but the
 * caches, which the app keeps.
 */
export interface PublicShareDeps extends StreamContext {
  /** Core on the server's public credentials. */
  publicCore: PublicCoreReader;
  /** The app's public caches. */
  caches: PublicCaches;
  config:
    & StreamContext["config"]
    & Pick<
      Config,
      | "CORE_URL"
      | "CORE_ALLOWED_URLS"
      | "PARSER_URL"
      | "PARSER_ALLOWED_URLS"
      | "UPSTREAM_TIMEOUT_MS"
    >;
  /** Run at most this many Core calls at once (search reads note texts). */
  concurrency: number;
}

/**
 * The answer an earlier anonymous visit to the same request got, while it is certain to be the
 * answer now ({@linkcode keptAnswer}): a repeat visit skips resolving the note. The request is
 * the note `idOrAlias` (the API's `view`), or a site page (`SitePage`, its subject naming the
 * visitor's origin as the page's answer does). Undefined otherwise; the caller then asks
 * {@linkcode PublicShare.noteAnswer} or {@linkcode PublicShare.siteAnswer}.
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
  authorization: string | null,
): RenderedAnswer | undefined {
  const requested = typeof request === "string" ? noteRequest(request) : siteRequest(request);
  return keptAnswer(caches, keptRequest(view, requested), authorization);
}

/** The key of a request in {@linkcode PublicCaches.kept}. */
function keptRequest(view: string, requested: string): string {
  return `${view}\n${requested}`;
}

/** A note's answer as asked for: by the id or alias in the request. */
function noteRequest(idOrAlias: string): string {
  return `note:${idOrAlias}`;
}

/** A site page as asked for: its subject and the note named in the request. */
function siteRequest(page: SitePage): string {
  return `site:${page.subject}:${page.noteIdOrAlias ?? ""}`;
}

/**
 * The public share bound to one request: server-side Core credentials, the app's cached
 * snapshot, and the request's signal and log for streamed images.
 *
 * @example
 * ```ts
 * async function harborTown(deps: PublicShareDeps, authorization: string | null) {
 *   const { note, noIndex } = await publicShare(deps).note("harbor-town", authorization);
 *   return { title: note.title, noIndex };
 * }
 * ```
 */
export function publicShare(deps: PublicShareDeps): PublicShare {
  let source: Promise<PublicSource> | undefined;
  const load = () => source ??= publicSource(deps.publicCore, deps.caches);
  const { caches, config } = deps;
  // Only a render needs them: an answer from the cache never parses a URL.
  let hosts: ReadonlySet<string> | undefined;
  const backendHosts = () =>
    hosts ??= new Set(
      [
        config.CORE_URL,
        ...config.CORE_ALLOWED_URLS,
        config.PARSER_URL,
        ...config.PARSER_ALLOWED_URLS,
      ]
        .filter((u): u is string => !!u)
        .map((u) => new URL(u).host.toLowerCase()),
    );

  const published = async () => {
    const src = await load();
    if (!src.snapshot) throw publicNotFound();
    return { ...src, snap: src.snapshot };
  };

  /** A public note this visitor may open: 404 for missing and hidden alike, then 401. */
  const open = (snap: PublicSnapshot, noteId: string | undefined, authorization: string | null) => {
    if (noteId === undefined || !snap.view.isPublic(noteId)) throw publicNotFound();
    if (!basicAuthAllows(snap.view, noteId, authorization)) throw credentialsNeeded();
    return snap.byId.get(noteId)!;
  };

  const policy = (snap: PublicSnapshot, access: Access): PublicLinkPolicy => ({
    rootId: snap.rootId,
    isPublic: (id) => snap.view.isPublic(id),
    canSee: (id) => access.canSee(id),
    note: (id) => snap.byId.get(id),
    lookup: (idOrAlias) => snap.lookup(idOrAlias),
    pagePath: (id) => `/public/lore/${encodeURIComponent(idFor(snap, id))}`,
    backendHosts: backendHosts(),
  });

  const render = async (
    src: Published,
    note: CoreNote,
    access: Access,
  ): Promise<{ note: PublicLoreNote }> => {
    const { snap, core, identity } = src;
    const needsContent = hasHtmlContent(note) || note.type === "code";
    const raw = needsContent ? await publicContent(caches, core, identity, note) : "";
    // Only the note's own image attachments may be shown; the list is read only when needed.
    const attachments = new Map<string, CoreAttachment>();
    if (hasHtmlContent(note) && referencesAttachments(raw)) {
      for (const a of await core.attachments(note.noteId)) attachments.set(a.attachmentId, a);
    }
    const portrait = isPrivate(snap, note, "portraitImage")
      ? undefined
      : relationTarget(note, "portraitImage");
    const result: PublicLoreNote = {
      noteId: note.noteId,
      title: note.title,
      loreType: labelValue(note, "loreType") ?? null,
      contentHtml: await renderPublicContent(
        note,
        raw,
        publicRewriter(policy(snap, access), attachments),
      ),
      attributes: displayAttributes(snap, note),
      resolvedRelations: relationsOf(snap, note, access),
      portraitImageNoteId: portrait !== undefined && access.canSee(portrait) &&
          snap.byId.get(portrait)?.type === "image"
        ? portrait
        : null,
      themeSongUrl: isPrivate(snap, note, "themeSong")
        ? null
        : httpUrlOrNull(labelValue(note, "themeSong")),
      dateModified: coreUtcToIso(note.utcDateModified),
    };
    return { note: result };
  };

  /** The note to show and what this visitor may see, after the 404 and 401 checks. */
  const openNote = async (idOrAlias: string, authorization: string | null) => {
    const src = await published();
    const { view } = src.snap;
    const noteId = view.resolve(idOrAlias) ?? view.resolve(decodeParam(idOrAlias));
    const note = open(src.snap, noteId, authorization);
    return { src, note, access: accessFor(src.snap, authorization) };
  };

  const noteResult = async (src: Published, note: CoreNote, access: Access) => ({
    ...await render(src, note, access),
    noIndex: noIndexOf(src.snap, note),
  });

  const openHome = async (authorization: string | null) => {
    const src = await published();
    const rootNote = open(src.snap, src.snap.rootId, authorization);
    return { src, rootNote, access: accessFor(src.snap, authorization) };
  };

  const homeResult = async (
    src: Published,
    rootNote: CoreNote,
    access: Access,
  ): Promise<PublicHomeResult> => {
    const { snap } = src;
    const root = await render(src, rootNote, access);
    const groups = groupByLoreType(
      snap.view.publicIds().flatMap((id) => {
        const n = snap.byId.get(id)!;
        if (id === snap.rootId || !hasLabel(n, "lore") || !access.canSee(id)) return [];
        const loreType = labelValue(n, "loreType");
        return [{ noteId: id, id: idFor(snap, id), title: n.title, loreType }];
      }),
    );
    return {
      root: root.note,
      groups,
      noIndex: noIndexOf(snap, rootNote),
    };
  };

  const searchResult = async (
    src: PublicSource,
    query: string,
    authorization: string | null,
  ): Promise<PublicSearchOutcome> => {
    const snap = src.snapshot;
    if (!snap) {
      return { result: { results: [] } };
    }
    const access = accessFor(snap, authorization);
    const visible = snap.view.publicIds().filter((id) => access.canSee(id))
      .map((id) => snap.byId.get(id)!);
    const scored = query.toLowerCase() === LORE_QUERY
      ? visible.filter((n) => hasLabel(n, "lore")).map((n) => ({ n, score: 1 }))
      : await textMatches(visible, query, (n) =>
        publicSearchText(
          caches,
          src.core,
          src.identity,
          n,
          snap.version,
          policy(snap, access),
        ), deps.concurrency);
    const results: PublicSearchHit[] = scored
      .sort((a, b) => b.score - a.score || compareByTitle(a.n, b.n))
      .map(({ n, score }) => ({
        id: idFor(snap, n.noteId),
        title: n.title,
        score,
        path: snap.ancestorsOf(n.noteId).map((id) => snap.byId.get(id)!.title).join(" / "),
      }));
    return { result: { results } };
  };

  /**
   * A rendered answer from the cache, rendered once per key. The key holds everything an answer
   * depends on: the snapshot's version, the sanitizer, which guarded notes the visitor sees,
   * whether the request carried credentials (its caching headers), the view and the subject.
   * Entries expire with the snapshot's TTL, since a note's attachments are outside its version.
   * A new snapshot (a draft edited) renders again; the ETag comes from the bytes, so an answer
   * that reads the same keeps it and a revalidation is still a 304.
   */
  const remember = <T>(
    src: Published,
    access: Access,
    authorization: string | null,
    subject: string,
    renderer: AnswerRenderer<T>,
    make: () => Promise<T>,
    requested?: string,
  ): Promise<RenderedAnswer> => {
    const authorized = authorization !== null;
    const key = [
      src.identity,
      src.snap.version,
      SANITIZER_VERSION,
      access.fingerprint(),
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
    if (requested !== undefined && !authorized) {
      // the request as asked (alias or id) finds this answer again without resolving the note
      const ref = { renderedKey: key, identity: src.identity, version: src.snap.version };
      return answer.then((a) => {
        keepAnswer(caches, keptRequest(renderer.view, requested), ref);
        return a;
      });
    }
    return answer;
  };

  const visitorView = (
    src: Published,
    access: Access,
    authorization: string | null,
  ): VisitorView => {
    const { snap } = src;
    let visible: string[] | undefined;
    const visibleIds = () => visible ??= snap.view.publicIds().filter((id) => access.canSee(id));
    const seen = (noteId: string) => {
      if (!snap.view.isPublic(noteId) || !access.canSee(noteId)) throw publicNotFound();
      return snap.byId.get(noteId)!;
    };
    const rendered = new Map<string, Promise<PublicNoteResult>>();
    const attachmentsOf = new Map<string, Promise<CoreAttachment[]>>();
    const sanitized = async (noteId: string) => {
      const note = seen(noteId);
      if (!hasHtmlContent(note)) return "";
      const raw = await publicContent(caches, src.core, src.identity, note);
      // links only: the owner's attachments are not needed to know where it links
      return renderPublicContent(note, raw, publicRewriter(policy(snap, access), new Map()));
    };
    const linksFrom = async (noteId: string) => {
      const out = new Set<string>();
      for (const m of (await sanitized(noteId)).matchAll(/href="\/public\/lore\/([^"#?]+)"/g)) {
        const target = snap.view.resolve(decodeParam(m[1]) || m[1]);
        if (target !== undefined && target !== noteId && access.canSee(target)) out.add(target);
      }
      return [...out];
    };
    return {
      rootId: snap.rootId,
      visibleIds,
      canSee: (id) => snap.view.isPublic(id) && access.canSee(id),
      idFor: (id) => idFor(snap, id),
      summary: (noteId) => {
        const note = seen(noteId);
        const promoted = displayLabels(snap, note);
        return {
          noteId,
          title: note.title,
          loreType: labelValue(note, "loreType")?.trim() || null,
          description: labelValue(note, "shareDescription")?.trim() || null,
          isImage: note.type === "image",
          isLore: hasLabel(note, "lore"),
          dateModified: coreUtcToIso(note.utcDateModified),
          noIndex: noIndexOf(snap, note),
          label: (name) => promoted.get(name) ?? null,
          relation: (name) => {
            const target = isPrivate(snap, note, name) ? undefined : relationTarget(note, name);
            return target !== undefined && snap.view.isPublic(target) && access.canSee(target)
              ? target
              : null;
          },
        };
      },
      childrenOf: (noteId) =>
        (seen(noteId).childNoteIds ?? []).filter((id) =>
          id !== snap.rootId && snap.view.isPublic(id) && access.canSee(id)
        ),
      ancestorsOf: (noteId) => (seen(noteId), snap.ancestorsOf(noteId)),
      note: (noteId) => {
        let r = rendered.get(noteId);
        if (!r) rendered.set(noteId, r = noteResult(src, seen(noteId), access));
        return r;
      },
      text: async (noteId) =>
        htmlToText(await sanitized(noteId), (h) => h).replace(/\s+/g, " ").trim(),
      linksFrom,
      backlinksTo: async (noteId) => {
        seen(noteId);
        const key = [src.identity, snap.version, SANITIZER_VERSION, access.fingerprint()].join(
          "\n",
        );
        const index = await caches.backlinks.getOrLoad(key, async () => {
          const sources = visibleIds();
          const targets = await mapLimit(sources, deps.concurrency, linksFrom);
          const out = new Map<string, string[]>();
          sources.forEach((from, i) => {
            for (const to of targets[i]) out.set(to, [...(out.get(to) ?? []), from]);
          });
          return out;
        });
        return index.get(noteId) ?? [];
      },
      search: async (q) => (await searchResult(src, q.trim(), authorization)).result,
      imageSize: async (imageId, ownerId) => {
        const { core, identity } = src;
        if (snap.view.isPublic(imageId)) {
          const image = seen(imageId);
          if (image.type !== "image") return null;
          return await cachedImageSize(
            caches.imageSizes,
            identity,
            image.blobId,
            () => core.content(imageId),
          );
        }
        if (!hasHtmlContent(seen(ownerId))) return null;
        attachmentsOf.set(ownerId, attachmentsOf.get(ownerId) ?? core.attachments(ownerId));
        const att = (await attachmentsOf.get(ownerId)!).find((a) => a.attachmentId === imageId);
        if (att?.role !== "image") return null;
        return await cachedImageSize(
          caches.imageSizes,
          identity,
          att.blobId,
          () => core.attachmentContent(imageId),
        );
      },
    };
  };

  return {
    note: (idOrAlias, authorization) =>
      guarded(async () => {
        const { src, note, access } = await openNote(idOrAlias, authorization);
        return await noteResult(src, note, access);
      }),

    noteAnswer: (idOrAlias, authorization, renderer) =>
      guarded(async () => {
        const { src, note, access } = await openNote(idOrAlias, authorization);
        return await remember(
          src,
          access,
          authorization,
          `note:${note.noteId}`,
          renderer,
          () => noteResult(src, note, access),
          noteRequest(idOrAlias),
        );
      }),

    home: (authorization) =>
      guarded(async () => {
        const { src, rootNote, access } = await openHome(authorization);
        return await homeResult(src, rootNote, access);
      }),

    homeAnswer: (authorization, renderer) =>
      guarded(async () => {
        const { src, rootNote, access } = await openHome(authorization);
        return await remember(
          src,
          access,
          authorization,
          "home",
          renderer,
          () => homeResult(src, rootNote, access),
        );
      }),

    search: (q, authorization) =>
      guarded(async () => searchResult(await load(), q.trim(), authorization)),

    searchAnswer: (q, authorization, renderer) =>
      guarded(async () => {
        const src = await load();
        const query = q.trim();
        const make = async () => ({
          ...await searchResult(src, query, authorization),
          query,
        });
        if (!src.snapshot) return renderer.render(await make(), authorization !== null);
        const published = { ...src, snap: src.snapshot };
        const access = accessFor(published.snap, authorization);
        return await remember(published, access, authorization, `search:${query}`, renderer, make);
      }),

    siteAnswer: (authorization, page, renderer, make) =>
      guarded(async () => {
        const { src, note, access } = page.noteIdOrAlias === undefined
          ? await openHome(authorization).then((o) => ({ ...o, note: o.rootNote }))
          : await openNote(page.noteIdOrAlias, authorization);
        return await remember(
          src,
          access,
          authorization,
          `site:${page.subject}:${note.noteId}`,
          renderer,
          () => make(visitorView(src, access, authorization), note.noteId),
          siteRequest(page),
        );
      }),

    image: (id, authorization, signal, ifNoneMatch) =>
      guarded(async () => {
        signal.throwIfAborted();
        const { snap } = await published();
        const { core } = await deps.publicCore();
        const target = await imageTarget(core, snap, id);
        if (!target) throw publicNotFound();
        const ownerId = target.kind === "note" ? id : target.ownerId;
        if (!basicAuthAllows(snap.view, ownerId, authorization)) throw credentialsNeeded();
        const guardedImage = snap.view.credentialGroups(ownerId).length > 0;
        const headers = new Headers({
          "cache-control": `${guardedImage ? "private" : "public"}, max-age=${IMAGE_MAX_AGE}`,
          "x-content-type-options": "nosniff",
          "content-security-policy": "default-src 'none'; sandbox",
        });
        if (guardedImage) headers.set("vary", "Authorization");
        const blob = target.blobId && /^[A-Za-z0-9_-]{1,64}$/.test(target.blobId)
          ? target.blobId
          : null;
        // the bytes' own identity: another snapshot (a draft edited) never changes it
        const etag = blob && `W/"${digest("image", blob)}"`;
        if (etag) {
          headers.set("etag", etag);
          if (etagMatches(ifNoneMatch ?? null, etag)) {
            return new Response(null, { status: 304, headers });
          }
        }
        const upstream = target.kind === "note"
          ? await core.content(id)
          : await core.attachmentContent(id);
        const image = await verifiedRasterStream(
          upstream,
          config.UPSTREAM_TIMEOUT_MS,
          deps.deadlines,
        );
        if (!image) throw publicNotFound();
        headers.set("content-type", image.mime);
        return new Response(guardedResponseBody(deps, image.stream, "Core"), { headers });
      }),
  };
}

type ImageTarget =
  | { kind: "note"; blobId?: string }
  | { kind: "attachment"; ownerId: string; blobId?: string };

/**
 * A public image note, or else an image attachment of a public note (one Core call). A hidden
 * note's id takes the attachment path and ends in the same 404 as an unknown id.
 */
async function imageTarget(
  core: CoreClient,
  snap: PublicSnapshot,
  id: string,
): Promise<ImageTarget | null> {
  if (snap.view.isPublic(id)) {
    const note = snap.byId.get(id)!;
    return note.type === "image" ? { kind: "note", blobId: note.blobId } : null;
  }
  const att = await core.getAttachment(id);
  if (att.role !== "image" || !snap.view.isPublic(att.ownerId)) return null;
  return { kind: "attachment", ownerId: att.ownerId, blobId: att.blobId };
}

/**
 * Notes whose title or visible text holds every word of the query. Per word: in the title 2
 * (3 when a title word starts with it), in the text 1.
 */
async function textMatches(
  notes: CoreNote[],
  query: string,
  textOf: (note: CoreNote) => Promise<string>,
  concurrency: number,
): Promise<{ n: CoreNote; score: number }[]> {
  const words = [...new Set(normalizeForSearch(query).split(" ").filter(Boolean))]
    .slice(0, MAX_SEARCH_WORDS);
  if (words.length === 0) return [];
  const texts = await mapLimit(notes, concurrency, textOf);
  return notes.flatMap((n, i) => {
    const title = normalizeForSearch(n.title);
    const titleWords = title.split(" ");
    let score = 0;
    for (const w of words) {
      const inTitle = title.includes(w);
      const inText = texts[i].includes(w);
      if (!inTitle && !inText) return [];
      if (inTitle) score += titleWords.some((t) => t.startsWith(w)) ? 3 : 2;
      if (inText) score += 1;
    }
    return [{ n, score }];
  });
}

/** A percent-encoded path segment decoded, or "" when it is not valid UTF-8 percent-encoding. */
function decodeParam(value: string): string {
  if (!value.includes("%")) return "";
  try {
    return decodeURIComponent(value);
  } catch {
    return "";
  }
}
