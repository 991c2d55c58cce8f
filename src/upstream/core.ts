/**
 * Client for Core's ETAPI. Every method encodes its path segments, validates what comes back
 * and maps ETAPI errors to the shared error shape (upstream 404 stays 404).
 *
 * @module
 */
import { z } from "zod";
import { titleForCore, titlesFromCore } from "../core/titles.ts";
import { ApiError } from "../http/errors.ts";
import {
  coreAppInfoSchema,
  type CoreAttachment,
  coreAttachmentSchema,
  type CoreAttribute,
  coreAttributeSchema,
  type CoreBranch,
  coreBranchSchema,
  coreErrorSchema,
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
  readBodyText,
  readJsonBody,
  readJsonBodyAndText,
  type UpstreamDeps,
  upstreamFetch,
  type UpstreamRequest,
} from "./fetch.ts";
import { upstreamPath as p } from "./path.ts";

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

const NOT_FOUND_MESSAGES: Record<string, string> = {
  NOTE_NOT_FOUND: "Note not found",
  BRANCH_NOT_FOUND: "Branch not found",
  ATTRIBUTE_NOT_FOUND: "Attribute not found",
  ATTACHMENT_NOT_FOUND: "Attachment not found",
  REVISION_NOT_FOUND: "Revision not found",
};

/**
 * Maps a non-2xx ETAPI answer to an {@linkcode ApiError}. Core's message text is not passed on
 * (it may echo input or internals); its error code is, when it looks like one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const body = '{"status":404,"code":"NOTE_NOT_FOUND","message":"Note \'x\' not found."}';
 * const e = mapCoreError(404, body, new Headers());
 * assert.deepEqual([e.status, e.code, e.message], [404, "NOT_FOUND", "Note not found"]);
 * assert.deepEqual(e.details, { service: "core", upstreamCode: "NOTE_NOT_FOUND" });
 * ```
 */
export function mapCoreError(status: number, bodyText: string, headers: Headers): ApiError {
  let code: string | undefined;
  try {
    const parsed = coreErrorSchema.safeParse(JSON.parse(bodyText));
    if (parsed.success && parsed.data.code && /^[A-Z_]{1,40}$/.test(parsed.data.code)) {
      code = parsed.data.code;
    }
  } catch { /* non-JSON error body (rate limiter, proxy page): status alone decides */ }
  const details = { service: "core", ...(code ? { upstreamCode: code } : {}) };
  if (status === 404) {
    return new ApiError(
      404,
      "NOT_FOUND",
      NOT_FOUND_MESSAGES[code ?? ""] ?? "Not found in Core",
      details,
    );
  }
  if (status === 401) {
    return new ApiError(
      401,
      "UNAUTHORIZED",
      "Core rejected the credentials; reconnect Core",
      details,
    );
  }
  if (status === 403) {
    return new ApiError(403, "UPSTREAM_FORBIDDEN", "Core refused access", details);
  }
  if (status === 400 && code?.endsWith("_IS_PROTECTED")) {
    return new ApiError(
      403,
      "FORBIDDEN",
      "The note is protected and cannot be used through the API",
      details,
    );
  }
  if (status === 409) return new ApiError(409, "CONFLICT", "Core reported a conflict", details);
  if (status === 400 || status === 422) {
    return new ApiError(
      status,
      "UPSTREAM_REJECTED",
      `Core rejected the request${code ? ` (${code})` : ""}`,
      details,
    );
  }
  if (status === 429) {
    const retry = headers.get("retry-after");
    const seconds = retry && /^\d{1,6}$/.test(retry) ? retry : "60";
    return new ApiError(429, "RATE_LIMITED", "Core is rate limiting requests", details, {
      "retry-after": seconds,
    });
  }
  return new ApiError(502, "UPSTREAM_ERROR", "Core failed to handle the request", details);
}

/** Core search failures a query causes, by the start of Core's message (its text stays here). */
const QUERY_FAILURES: [RegExp, string][] = [
  [/^Invalid regular expression/, "the regular expression after %= is invalid"],
  [/^Invalid tokens: empty or whitespace-only/, "an empty quoted search term is not allowed"],
];

/**
 * Core answers a search that fails on the query itself with `500 GENERIC` and the exception's
 * text (services/search: a `%=` operand `new RegExp` cannot compile, an empty quoted full-text
 * term). Those become 400 `INVALID_REQUEST` naming `query.q` with our own sentence; anything
 * else is undefined (the usual mapping applies). Core's text is only matched, never passed on.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const message = "Invalid regular expression: /[/ms: Unterminated character class";
 * const e = callerQueryError(500, JSON.stringify({ status: 500, code: "GENERIC", message }));
 * assert.equal(e?.code, "INVALID_REQUEST");
 * assert.equal(
 *   e?.message,
 *   "Core cannot run this search: the regular expression after %= is invalid",
 * );
 * assert.equal(callerQueryError(500, '{"code":"GENERIC","message":"disk full"}'), undefined);
 * ```
 */
export function callerQueryError(status: number, bodyText: string): ApiError | undefined {
  if (status !== 500) return undefined;
  let message: string | undefined;
  try {
    const parsed = coreErrorSchema.safeParse(JSON.parse(bodyText));
    if (parsed.success && parsed.data.code === "GENERIC") message = parsed.data.message;
  } catch { /* not Core's JSON error: not a query failure */ }
  const problem = QUERY_FAILURES.find(([re]) => re.test(message ?? ""))?.[1];
  if (!problem) return undefined;
  return new ApiError(400, "INVALID_REQUEST", `Core cannot run this search: ${problem}`, {
    fields: [{ path: "query.q", message: problem }],
    service: "core",
    upstreamCode: "GENERIC",
  });
}

const loginSchema = z.looseObject({ authToken: z.string().min(1) });

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
  const auth: Record<string, string> = creds.token ? { authorization: creds.token } : {};
  const maxBody = deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;

  /** `explain` may claim an error answer before the usual mapping (it sees Core's text). */
  const call = async (
    req: UpstreamRequest,
    allow304 = false,
    explain?: (status: number, text: string) => ApiError | undefined,
  ) => {
    const up = await upstreamFetch(deps, "Core", creds.baseUrl, {
      ...req,
      headers: { ...auth, ...(req.headers as Record<string, string> | undefined) },
    });
    if ((up.res.status >= 200 && up.res.status < 300) || (allow304 && up.res.status === 304)) {
      return up;
    }
    const text = await readBodyText(up, deps, "Core", MAX_ERROR_BODY_BYTES).catch(() => "");
    throw explain?.(up.res.status, text) ?? mapCoreError(up.res.status, text, up.res.headers);
  };

  const jsonCall = async <S extends z.ZodType>(
    schema: S,
    req: UpstreamRequest,
    explain?: (status: number, text: string) => ApiError | undefined,
  ): Promise<z.output<S>> => {
    return readJsonBody(await call(req, false, explain), deps, "Core", schema, maxBody);
  };

  const searchRequest = (query: string, opts: CoreSearchOptions): UpstreamRequest => ({
    path: "/etapi/notes",
    query: { search: query, ...opts },
  });

  /** Notes (revisions, attachments) with their titles as typed: where Core's titles enter. */
  const typedTitles = async <T extends { title: string }>(entities: T[]): Promise<T[]> => {
    await titlesFromCore(entities);
    return entities;
  };
  const typedTitle = async <T extends { title: string }>(entity: T): Promise<T> =>
    (await typedTitles([entity]))[0];

  const searchCall = async (
    query: string,
    opts: CoreSearchOptions = {},
    explain?: (status: number, text: string) => ApiError | undefined,
  ) =>
    typedTitles(
      (await jsonCall(coreSearchAnswerSchema, searchRequest(query, opts), explain)).results,
    );

  const jsonBody = (body: unknown) => ({
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

  const noBody = async (req: UpstreamRequest) => {
    const up = await call(req);
    await up.res.body?.cancel().catch(() => {}); // a body the deadline ended is gone already
    up.release();
  };

  const streamed = async (req: UpstreamRequest, allow304 = false) =>
    (await call({ ...req, stream: true }, allow304)).res;

  return {
    getNote: async (id) =>
      typedTitle(await jsonCall(coreNoteAnswerSchema, { path: p`/etapi/notes/${id}` })),
    createNote: async (input) => {
      const created = await jsonCall(coreNoteWithBranchSchema, {
        method: "POST",
        path: "/etapi/create-note",
        ...jsonBody({ ...input, title: titleForCore(input.title) }),
      });
      await typedTitle(created.note);
      return created;
    },
    patchNote: async (id, patch) =>
      typedTitle(
        await jsonCall(coreNoteAnswerSchema, {
          method: "PATCH",
          path: p`/etapi/notes/${id}`,
          // a PATCHed title is stored as sent: in create-note's form, so every title is uniform
          ...jsonBody(
            patch.title === undefined ? patch : { ...patch, title: titleForCore(patch.title) },
          ),
        }),
      ),
    deleteNote: (id) => noBody({ method: "DELETE", path: p`/etapi/notes/${id}` }),
    content: (id, opts) =>
      streamed({
        path: p`/etapi/notes/${id}/content`,
        headers: opts?.ifNoneMatch ? { "if-none-match": opts.ifNoneMatch } : undefined,
      }, true),
    contentText: async (id) => {
      const up = await call({ path: p`/etapi/notes/${id}/content` });
      return readBodyText(up, deps, "Core", maxBody);
    },
    putContent: (id, body, contentType) =>
      noBody({
        method: "PUT",
        path: p`/etapi/notes/${id}/content`,
        headers: { "content-type": contentType },
        body,
      }),
    search: (query, opts) => searchCall(query, opts),
    searchCallerQuery: (query, opts) => searchCall(query, opts, callerQueryError),
    listCallerQuery: async (query, opts = {}) => {
      const up = await call(searchRequest(query, opts), false, callerQueryError);
      const { value, text } = await readJsonBodyAndText(
        up,
        deps,
        "Core",
        coreSearchAnswerSchema,
        maxBody,
      );
      const decoded = await titlesFromCore(value.results);
      return {
        results: value.results,
        resultsJson: decoded ? null : verbatimResults(text, value.results),
      };
    },
    getAttribute: (id) => jsonCall(coreAttributeSchema, { path: p`/etapi/attributes/${id}` }),
    createAttribute: (input) =>
      jsonCall(coreAttributeSchema, {
        method: "POST",
        path: "/etapi/attributes",
        ...jsonBody(input),
      }),
    deleteAttribute: (id) => noBody({ method: "DELETE", path: p`/etapi/attributes/${id}` }),
    getBranch: (id) => jsonCall(coreBranchSchema, { path: p`/etapi/branches/${id}` }),
    createBranch: (input) =>
      jsonCall(coreBranchSchema, { method: "POST", path: "/etapi/branches", ...jsonBody(input) }),
    patchBranch: (id, patch) =>
      jsonCall(coreBranchSchema, {
        method: "PATCH",
        path: p`/etapi/branches/${id}`,
        ...jsonBody(patch),
      }),
    deleteBranch: (id) => noBody({ method: "DELETE", path: p`/etapi/branches/${id}` }),
    revisions: async (id) =>
      typedTitles(
        await jsonCall(coreRevisionSchema.array(), { path: p`/etapi/notes/${id}/revisions` }),
      ),
    getRevision: async (id) =>
      typedTitle(await jsonCall(coreRevisionSchema, { path: p`/etapi/revisions/${id}` })),
    revisionContent: (id) => streamed({ path: p`/etapi/revisions/${id}/content` }),
    attachments: async (id) =>
      typedTitles(
        await jsonCall(coreAttachmentSchema.array(), { path: p`/etapi/notes/${id}/attachments` }),
      ),
    getAttachment: async (id) =>
      typedTitle(await jsonCall(coreAttachmentSchema, { path: p`/etapi/attachments/${id}` })),
    attachmentContent: (id) => streamed({ path: p`/etapi/attachments/${id}/content` }),
    appInfo: () => jsonCall(coreAppInfoSchema, { path: "/etapi/app-info" }),
    login: async (password, tokenName) =>
      (await jsonCall(loginSchema, {
        method: "POST",
        path: "/etapi/auth/login",
        ...jsonBody({ password, tokenName }),
      })).authToken,
  };
}

export type { CoreAttachment, CoreAttribute, CoreBranch, CoreNote, CoreRevision };
