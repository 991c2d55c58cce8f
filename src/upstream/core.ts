/**
 * Client for Core's ETAPI. Every method encodes its path segments, validates what comes back
 * and maps ETAPI errors to the shared error shape (upstream 404 stays 404).
 *
 * @module
 */
import { z } from "zod";
import { titleForCore, titlesFromCore } from "../core/titles.ts";
import type { ApiError } from "../http/errors.ts";
import { callerQueryError, mapCoreError } from "./core_errors.ts";
import {
  coreAppInfoSchema,
  type CoreAttachment,
  coreAttachmentSchema,
  type CoreAttribute,
  coreAttributeSchema,
  type CoreBranch,
  coreBranchSchema,
  type CoreNote,
  coreNoteAnswerSchema,
  coreNoteWithBranchSchema,
  type CoreRevision,
  coreRevisionSchema,
  coreSearchAnswerSchema,
  verbatimResults,
} from "./core_schemas.ts";
import {
  DEFAULT_MAX_BODY_BYTES,
  MAX_ERROR_BODY_BYTES,
  parseJsonAnswer,
  readBodyBytes,
  readBodyText,
  readJsonBody,
  readJsonBodyAndText,
  type UpstreamDeps,
  upstreamFetch,
  type UpstreamRequest,
  type UpstreamResponse,
} from "./fetch.ts";
import { upstreamPath as p } from "./path.ts";
import { sha256Hex } from "../util/sha256.ts";

/** Where Core is and the ETAPI token to use there. */
export interface CoreCredentials {
  baseUrl: string;
  token: string;
}

/** Options of `GET /etapi/notes` that the service uses. */
export interface CoreSearchOptions {
  ancestorNoteId?: string;
  ancestorDepth?: string;
  fastSearch?: boolean;
  includeArchivedNotes?: boolean;
  limit?: number;
  orderBy?: string;
}

/** Body of `POST /etapi/create-note` (Core rejects any other key). */
export interface CreateNoteInput {
  parentNoteId: string;
  title: string;
  type: string;
  mime?: string;
  content: string;
  notePosition?: number;
}

/** Body of `POST /etapi/attributes`. */
export interface CreateAttributeInput {
  noteId: string;
  type: "label" | "relation";
  name: string;
  value: string;
  isInheritable?: boolean;
  position?: number;
}

/**
 * The ETAPI operations the service performs. Titles are the text as typed both ways: every
 * note, revision and attachment read has its title decoded from Core's stored HTML
 * ({@linkcode titlesFromCore}), and a title written is sent in the form Core's create-note
 * stores ({@linkcode titleForCore}).
 */
export interface CoreClient {
  getNote(noteId: string): Promise<CoreNote>;
  createNote(input: CreateNoteInput): Promise<{ note: CoreNote; branch: CoreBranch }>;
  patchNote(
    noteId: string,
    patch: { title?: string; type?: string; mime?: string },
  ): Promise<CoreNote>;
  deleteNote(noteId: string): Promise<void>;
  /**
   * Raw content response (streamable); non-2xx already mapped to an error, except a 304 answer
   * to `ifNoneMatch`, which is returned as is.
   */
  content(noteId: string, opts?: { ifNoneMatch?: string }): Promise<Response>;
  contentText(noteId: string): Promise<string>;
  putContent(
    noteId: string,
    body: BodyInit,
    contentType: "text/plain" | "application/octet-stream",
  ): Promise<void>;
  search(query: string, opts?: CoreSearchOptions): Promise<CoreNote[]>;
  /**
   * {@linkcode CoreClient.search} for a query the caller wrote: the failures Core reports as a
   * 500 although the query caused them are 400 `INVALID_REQUEST` (see
   * {@linkcode callerQueryError}).
   */
  searchCallerQuery(query: string, opts?: CoreSearchOptions): Promise<CoreNote[]>;
  /**
   * {@linkcode CoreClient.search}, unless Core answers with exactly the bytes whose SHA-256 (hex)
   * is `unless`: then `results` is null and nothing is decoded or parsed. `digest` names the
   * answer read, for the next call's `unless`.
   */
  searchUnlessSame(
    query: string,
    opts: CoreSearchOptions,
    unless?: string,
  ): Promise<{ results: CoreNote[] | null; digest: string }>;
  /**
   * {@linkcode CoreClient.searchCallerQuery}, with the list's JSON text as Core sent it when the
   * validated list is exactly that text (else `null`, also when a title was decoded): a route
   * passing the list on unchanged sends it without serializing hundreds of notes again.
   */
  listCallerQuery(
    query: string,
    opts?: CoreSearchOptions,
  ): Promise<{ results: CoreNote[]; resultsJson: string | null }>;
  getAttribute(attributeId: string): Promise<CoreAttribute>;
  createAttribute(input: CreateAttributeInput): Promise<CoreAttribute>;
  deleteAttribute(attributeId: string): Promise<void>;
  getBranch(branchId: string): Promise<CoreBranch>;
  createBranch(
    input: { noteId: string; parentNoteId: string; notePosition?: number; prefix?: string | null },
  ): Promise<CoreBranch>;
  patchBranch(
    branchId: string,
    patch: { notePosition?: number; prefix?: string | null },
  ): Promise<CoreBranch>;
  deleteBranch(branchId: string): Promise<void>;
  revisions(noteId: string): Promise<CoreRevision[]>;
  getRevision(revisionId: string): Promise<CoreRevision>;
  revisionContent(revisionId: string): Promise<Response>;
  /** The note's attachments, by position. */
  attachments(noteId: string): Promise<CoreAttachment[]>;
  getAttachment(attachmentId: string): Promise<CoreAttachment>;
  /** Raw attachment content response (streamable); non-2xx already mapped to an error. */
  attachmentContent(attachmentId: string): Promise<Response>;
  appInfo(): Promise<{ appVersion: string }>;
  /** Exchanges Core's password for a new ETAPI token named `tokenName` (no token needed). */
  login(password: string, tokenName: string): Promise<string>;
}

const loginSchema = z.looseObject({ authToken: z.string().min(1) });

/** Claims an error answer before the usual mapping (it sees Core's text). */
type Explain = (status: number, text: string) => ApiError | undefined;

/** What every call of one client shares: where Core is, its token header, the request's deps. */
interface CoreBinding {
  baseUrl: string;
  auth: Record<string, string>;
  deps: UpstreamDeps;
  maxBody: number;
}

/** Sends `req` with the token; a non-2xx answer (but an allowed 304) is thrown, mapped. */
async function coreCall(
  b: CoreBinding,
  req: UpstreamRequest,
  allow304 = false,
  explain?: Explain,
): Promise<UpstreamResponse> {
  const up = await upstreamFetch(b.deps, "Core", b.baseUrl, {
    ...req,
    headers: { ...b.auth, ...(req.headers as Record<string, string> | undefined) },
  });
  if ((up.res.status >= 200 && up.res.status < 300) || (allow304 && up.res.status === 304)) {
    return up;
  }
  const text = await readBodyText(up, b.deps, "Core", MAX_ERROR_BODY_BYTES).catch(() => "");
  throw explain?.(up.res.status, text) ?? mapCoreError(up.res.status, text, up.res.headers);
}

/** {@linkcode coreCall} whose answer is JSON validated by `schema`. */
async function coreJson<S extends z.ZodType>(
  b: CoreBinding,
  schema: S,
  req: UpstreamRequest,
  explain?: Explain,
): Promise<z.output<S>> {
  return readJsonBody(await coreCall(b, req, false, explain), b.deps, "Core", schema, b.maxBody);
}

/** {@linkcode coreCall} whose answer body is not needed: dropped so the connection is freed. */
async function coreNoBody(b: CoreBinding, req: UpstreamRequest): Promise<void> {
  const up = await coreCall(b, req);
  await up.res.body?.cancel().catch(() => {}); // a body the deadline ended is gone already
  up.release();
}

/** {@linkcode coreCall} whose answer is handed on unread (content, to stream). */
async function coreStreamed(b: CoreBinding, req: UpstreamRequest, allow304 = false) {
  return (await coreCall(b, { ...req, stream: true }, allow304)).res;
}

function jsonBody(body: unknown): Pick<UpstreamRequest, "headers" | "body"> {
  return { headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
}

function searchRequest(query: string, opts: CoreSearchOptions): UpstreamRequest {
  return { path: "/etapi/notes", query: { search: query, ...opts } };
}

/** Notes (revisions, attachments) with their titles as typed: where Core's titles enter. */
async function typedTitles<T extends { title: string }>(entities: T[]): Promise<T[]> {
  await titlesFromCore(entities);
  return entities;
}

async function typedTitle<T extends { title: string }>(entity: T): Promise<T> {
  return (await typedTitles([entity]))[0];
}

/** Notes and their content. */
function noteMethods(
  b: CoreBinding,
): Pick<
  CoreClient,
  "getNote" | "createNote" | "patchNote" | "deleteNote" | "content" | "contentText" | "putContent"
> {
  return {
    getNote: async (id) =>
      typedTitle(await coreJson(b, coreNoteAnswerSchema, { path: p`/etapi/notes/${id}` })),
    createNote: async (input) => {
      const created = await coreJson(b, coreNoteWithBranchSchema, {
        method: "POST",
        path: "/etapi/create-note",
        ...jsonBody({ ...input, title: titleForCore(input.title) }),
      });
      await typedTitle(created.note);
      return created;
    },
    patchNote: async (id, patch) =>
      typedTitle(
        await coreJson(b, coreNoteAnswerSchema, {
          method: "PATCH",
          path: p`/etapi/notes/${id}`,
          // a PATCHed title is stored as sent: in create-note's form, so every title is uniform
          ...jsonBody(
            patch.title === undefined ? patch : { ...patch, title: titleForCore(patch.title) },
          ),
        }),
      ),
    deleteNote: (id) => coreNoBody(b, { method: "DELETE", path: p`/etapi/notes/${id}` }),
    content: (id, opts) =>
      coreStreamed(b, {
        path: p`/etapi/notes/${id}/content`,
        headers: opts?.ifNoneMatch ? { "if-none-match": opts.ifNoneMatch } : undefined,
      }, true),
    contentText: async (id) => {
      const up = await coreCall(b, { path: p`/etapi/notes/${id}/content` });
      return readBodyText(up, b.deps, "Core", b.maxBody);
    },
    putContent: (id, body, contentType) =>
      coreNoBody(b, {
        method: "PUT",
        path: p`/etapi/notes/${id}/content`,
        headers: { "content-type": contentType },
        body,
      }),
  };
}

/** Searches; a caller's query has the failures it causes explained ({@linkcode callerQueryError}). */
function searchMethods(
  b: CoreBinding,
): Pick<CoreClient, "search" | "searchCallerQuery" | "searchUnlessSame" | "listCallerQuery"> {
  const searchCall = async (query: string, opts: CoreSearchOptions = {}, explain?: Explain) =>
    typedTitles(
      (await coreJson(b, coreSearchAnswerSchema, searchRequest(query, opts), explain)).results,
    );
  return {
    search: (query, opts) => searchCall(query, opts),
    searchCallerQuery: (query, opts) => searchCall(query, opts, callerQueryError),
    searchUnlessSame: async (query, opts, unless) => {
      const up = await coreCall(b, searchRequest(query, opts));
      const bytes = await readBodyBytes(up, b.deps, "Core", b.maxBody);
      const digest = await sha256Hex(bytes);
      if (digest === unless) return { results: null, digest };
      const text = new TextDecoder().decode(bytes);
      const answer = parseJsonAnswer(text, b.deps, "Core", coreSearchAnswerSchema);
      return { results: await typedTitles(answer.results), digest };
    },
    listCallerQuery: async (query, opts = {}) => {
      const up = await coreCall(b, searchRequest(query, opts), false, callerQueryError);
      const { value, text } = await readJsonBodyAndText(
        up,
        b.deps,
        "Core",
        coreSearchAnswerSchema,
        b.maxBody,
      );
      const decoded = await titlesFromCore(value.results);
      return {
        results: value.results,
        resultsJson: decoded ? null : verbatimResults(text, value.results),
      };
    },
  };
}

/** Attributes and branches: they carry no titles, so answers pass as validated. */
function linkMethods(
  b: CoreBinding,
): Pick<
  CoreClient,
  | "getAttribute"
  | "createAttribute"
  | "deleteAttribute"
  | "getBranch"
  | "createBranch"
  | "patchBranch"
  | "deleteBranch"
> {
  return {
    getAttribute: (id) => coreJson(b, coreAttributeSchema, { path: p`/etapi/attributes/${id}` }),
    createAttribute: (input) =>
      coreJson(b, coreAttributeSchema, {
        method: "POST",
        path: "/etapi/attributes",
        ...jsonBody(input),
      }),
    deleteAttribute: (id) => coreNoBody(b, { method: "DELETE", path: p`/etapi/attributes/${id}` }),
    getBranch: (id) => coreJson(b, coreBranchSchema, { path: p`/etapi/branches/${id}` }),
    createBranch: (input) =>
      coreJson(b, coreBranchSchema, {
        method: "POST",
        path: "/etapi/branches",
        ...jsonBody(input),
      }),
    patchBranch: (id, patch) =>
      coreJson(b, coreBranchSchema, {
        method: "PATCH",
        path: p`/etapi/branches/${id}`,
        ...jsonBody(patch),
      }),
    deleteBranch: (id) => coreNoBody(b, { method: "DELETE", path: p`/etapi/branches/${id}` }),
  };
}

/** Revisions and attachments: read only, titles as typed. */
function revisionAndAttachmentMethods(
  b: CoreBinding,
): Pick<
  CoreClient,
  | "revisions"
  | "getRevision"
  | "revisionContent"
  | "attachments"
  | "getAttachment"
  | "attachmentContent"
> {
  return {
    revisions: async (id) =>
      typedTitles(
        await coreJson(b, coreRevisionSchema.array(), { path: p`/etapi/notes/${id}/revisions` }),
      ),
    getRevision: async (id) =>
      typedTitle(await coreJson(b, coreRevisionSchema, { path: p`/etapi/revisions/${id}` })),
    revisionContent: (id) => coreStreamed(b, { path: p`/etapi/revisions/${id}/content` }),
    attachments: async (id) =>
      typedTitles(
        await coreJson(b, coreAttachmentSchema.array(), {
          path: p`/etapi/notes/${id}/attachments`,
        }),
      ),
    getAttachment: async (id) =>
      typedTitle(await coreJson(b, coreAttachmentSchema, { path: p`/etapi/attachments/${id}` })),
    attachmentContent: (id) => coreStreamed(b, { path: p`/etapi/attachments/${id}/content` }),
  };
}

/**
 * Creates a client bound to one set of credentials and one incoming request (its abort signal
 * and timing sink). Cheap: make one per request.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const calls: string[] = [];
 * const core = createCoreClient({ baseUrl: "http://core:8080", token: "etapi-token" }, {
 *   timeoutMs: 15_000,
 *   fetch: (url, init) => { // stands in for Core: every note is missing
 *     calls.push(`${init?.method} ${url}`);
 *     const body = { status: 404, code: "NOTE_NOT_FOUND", message: "Note 'abc123' not found." };
 *     return Promise.resolve(Response.json(body, { status: 404 }));
 *   },
 * });
 * await assert.rejects(core.getNote("abc123"), { status: 404, message: "Note not found" });
 * assert.deepEqual(calls, ["GET http://core:8080/etapi/notes/abc123"]);
 * ```
 */
export function createCoreClient(creds: CoreCredentials, deps: UpstreamDeps): CoreClient {
  const b: CoreBinding = {
    baseUrl: creds.baseUrl,
    auth: creds.token ? { authorization: creds.token } : {},
    deps,
    maxBody: deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
  };
  return {
    ...noteMethods(b),
    ...searchMethods(b),
    ...linkMethods(b),
    ...revisionAndAttachmentMethods(b),
    appInfo: () => coreJson(b, coreAppInfoSchema, { path: "/etapi/app-info" }),
    login: async (password, tokenName) =>
      (await coreJson(b, loginSchema, {
        method: "POST",
        path: "/etapi/auth/login",
        ...jsonBody({ password, tokenName }),
      })).authToken,
  };
}

export { callerQueryError, mapCoreError };
export type { CoreAttachment, CoreAttribute, CoreBranch, CoreNote, CoreRevision };
