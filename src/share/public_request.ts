/**
 * One visitor's request on the published share, as every public answer reads it: the snapshot,
 * the Core that read it, and what this visitor may see, built once per request so that no answer
 * re-derives access from the visitor's credentials on its own. Also the one way into a note (the
 * 404 and 401 checks) and the public id a note's URL uses.
 *
 * @module
 */
import type { Config } from "../config/service_config.ts";
import type { StreamContext } from "../http/stream_guard.ts";
import type { CoreClient, CoreNote } from "../upstream/core.ts";
import { type Answerer, answerer } from "./policy_record.ts";
import { linkTarget, type PublicLinkPolicy } from "./public_content.ts";
import type { PublicCaches, PublicCoreReader, PublicSource } from "./public_snapshot.ts";
import type { PublicSnapshot } from "./snapshot_index.ts";
import {
  type Access,
  accessFor,
  credentialsNeeded,
  publicNotFound,
  type VisitorCredentials,
} from "./visitor_access.ts";

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

/** One visitor's request on a published snapshot. */
export interface PublicRequest {
  deps: PublicShareDeps;
  snap: PublicSnapshot;
  /** Core on the server's public credentials that read `snap` (detached: shared work). */
  core: CoreClient;
  /** Whose credentials `core` uses; partitions every public cache. */
  identity: string;
  access: Access;
  /** The request carried credentials, Basic or the unlock cookie (its answers are `private`). */
  authorized: boolean;
  /** Where public content may link for this visitor; made on first use, by a render. */
  policy(): PublicLinkPolicy;
  /** The policy's answers, worked out once per snapshot and visitor class (kept readings). */
  answers(): Answerer;
}

/**
 * The request of the visitor who gave `credentials` (null: none) on what `src` loaded;
 * undefined while nothing is published.
 */
export function publicRequest(
  deps: PublicShareDeps,
  src: PublicSource,
  credentials: VisitorCredentials | null,
): PublicRequest | undefined {
  const { snapshot: snap, core, identity } = src;
  if (!snap) return undefined;
  const access = accessFor(snap, credentials);
  let policy: PublicLinkPolicy | undefined;
  let answers: Answerer | undefined;
  const req: PublicRequest = {
    deps,
    snap,
    core,
    identity,
    access,
    authorized: credentials !== null,
    // Only a render needs it: an answer from the cache never parses a URL.
    policy: () =>
      policy ??= {
        rootId: snap.rootId,
        isPublic: (id) => snap.view.isPublic(id),
        canSee: (id) => access.canSee(id),
        target: (id) => {
          const note = snap.byId.get(id);
          return note && linkTarget(note);
        },
        resolve: (idOrAlias) => snap.lookup(idOrAlias)?.noteId,
        pagePath: (id) => `/public/lore/${encodeURIComponent(idFor(snap, id))}`,
        backendHosts: backendHosts(deps.config),
      },
    answers: () =>
      answers ??= snap.derived(`answers\n${access.fingerprint()}`, () => answerer(req.policy())),
  };
  return req;
}

/** Hosts of the private backends, whose links never reach a visitor. */
function backendHosts(config: PublicShareDeps["config"]): ReadonlySet<string> {
  return new Set(
    [config.CORE_URL, ...config.CORE_ALLOWED_URLS, config.PARSER_URL, ...config.PARSER_ALLOWED_URLS]
      .filter((u): u is string => !!u)
      .map((u) => new URL(u).host.toLowerCase()),
  );
}

/** A public note this visitor may open: 404 for missing and hidden alike, then 401. */
function open(req: PublicRequest, noteId: string | undefined): CoreNote {
  if (noteId === undefined || !req.snap.view.isPublic(noteId)) throw publicNotFound();
  if (!req.access.canSee(noteId)) throw credentialsNeeded();
  return req.snap.byId.get(noteId)!;
}

/** The note a request names by id or alias (as given, or percent-decoded), checked by `open`. */
export function openNote(req: PublicRequest, idOrAlias: string): CoreNote {
  const { view } = req.snap;
  return open(req, view.resolve(idOrAlias) ?? view.resolve(decodeParam(idOrAlias)));
}

/** The share root's own note, checked like any other. */
export function openRoot(req: PublicRequest): CoreNote {
  return open(req, req.snap.rootId);
}

/** The note `idOrAlias` names ({@linkcode openNote}), or the root when there is none. */
export function openTarget(req: PublicRequest, idOrAlias?: string): CoreNote {
  return idOrAlias === undefined ? openRoot(req) : openNote(req, idOrAlias);
}

/** What a note's public URL names it by: its `#shareAlias`, else its id. */
export function idFor(snap: PublicSnapshot, noteId: string): string {
  return snap.view.aliasOf(noteId) ?? noteId;
}

/** A percent-encoded path segment decoded, or "" when it is not valid UTF-8 percent-encoding. */
export function decodeParam(value: string): string {
  if (!value.includes("%")) return "";
  try {
    return decodeURIComponent(value);
  } catch {
    return "";
  }
}
