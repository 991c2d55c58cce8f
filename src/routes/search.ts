/**
 * Search and discovery: the `@`-mention picker (Core titles merged with the Parser's
 * suggestions, within a latency budget), the note picker (one Core search, ranked here),
 * autolinking lore titles in free text (a per-credential title index, cached), the general
 * search endpoint (Core syntax or the Parser's semantic search) and the shared lookups behind
 * them: one semantic query.
 *
 * @module
 */
import { z } from "zod";
import { labelEquals, titleSearch } from "../core/search_query.ts";
import { ApiError } from "../http/errors.ts";
import { json } from "../http/response.ts";
import { type AutolinkTitle, compileAutolink } from "../lore/autolink.ts";
import { labelValue, noteSummary } from "../lore/note_view.ts";
import { notesByIds } from "../lore/notes_by_ids.ts";
import { rankByTitle } from "../lore/title_rank.ts";
import { isNoteType } from "../lore/vocabulary.ts";
import { type Ctx, defineRoute, type Route } from "../api/router.ts";
import type { CoreClient, CoreNote } from "../upstream/core.ts";
import { ragQueryAnswer } from "../upstream/parser.ts";
import { type ParserCall, parserJson } from "./parser_proxy.ts";
import { loreNoteSchema } from "./lore_responses.ts";
import { noteSummarySchema, titleHitSchema } from "./response_schemas.ts";
import { refineCallerQuery, searchTerm } from "./schemas.ts";

/** Seed limit of `/api/lore/mention-search`. */
export const MENTION_LIMIT = 8;
/** Seed limit of `/api/lore/note-search`. */
export const NOTE_SEARCH_LIMIT = 12;

const loreTypeFilter = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be a simple word");

/** A mention suggestion; `source` tells Core title hits from Parser suggestions. */
export interface MentionCandidate {
  noteId: string;
  title: string;
  loreType: string | null;
  source: "core" | "parser";
}

/**
 * Lore notes whose title contains `q`, best matches first, at most {@linkcode MENTION_LIMIT}:
 * one Core search (`#lore` and the title filter, fast search), ranked by title.
 */
export async function coreMentionCandidates(
  core: CoreClient,
  q: string,
): Promise<MentionCandidate[]> {
  const notes = await core.search(titleSearch(q, ["#lore"]), { fastSearch: true });
  return rankByTitle(readableNotes(notes), q, MENTION_LIMIT).map((n) => ({
    noteId: n.noteId,
    title: n.title,
    loreType: labelValue(n, "loreType") ?? null,
    source: "core",
  }));
}

const autocompleteAnswer = z.object({
  suggestions: z.array(z.looseObject({ noteId: z.string() })),
});

/**
 * The Parser's autocomplete ids for `q` within `MENTION_PARSER_BUDGET_MS`; any failure (no
 * session, slow, down, unexpected answer) is an empty list: mentions never wait for the Parser.
 */
async function parserMentionIds(ctx: Ctx, q: string): Promise<string[]> {
  try {
    const parser = await ctx.parser({ timeoutMs: ctx.config.MENTION_PARSER_BUDGET_MS });
    const answer = await parserJson(
      parser,
      { path: "/suggest/autocomplete", query: { q, limit: MENTION_LIMIT } },
      autocompleteAnswer,
    );
    return answer.suggestions.map((s) => s.noteId);
  } catch (e) {
    await ctx.credentials.onError(e).catch(() => {}); // a dead Parser session is still cleared
    const code = e instanceof ApiError ? e.code : "INTERNAL_ERROR";
    ctx.log.log(code === "NOT_CONFIGURED" ? "debug" : "warn", "mention search without Parser", {
      requestId: ctx.requestId,
      reason: code,
    });
    return [];
  }
}

/** What the title pickers decide where the API is silent. */
const PICKER_NOTES = "One Core search (fast search, a quoted title-contains term, in Core's " +
  "stored form and as typed), ranked on the titles as typed: exact title, prefix, word start, " +
  "substring, then shorter and alphabetical; a title not containing `q` is left out. Protected " +
  "notes are left out (Core's external API shows their titles encrypted).";

/** `GET /api/lore/mention-search?q=` */
export const mentionSearch = defineRoute({
  method: "GET",
  path: "/api/lore/mention-search",
  summary:
    "Autocomplete for @-mentions: lore notes by title, then the Parser's suggestions confirmed by Core (q ≥ 2 characters, at most 8)",
  backend: "Both",
  access: "private",
  tag: "search",
  query: z.object({ q: searchTerm(2) }),
  description: `${PICKER_NOTES} Only \`#lore\` notes. Core's candidates come first, then the ` +
    "Parser's suggestions that one Core search confirms are readable lore notes (titles from " +
    "Core), deduplicated, at most 8. The Parser gets at most `MENTION_PARSER_BUDGET_MS` (the " +
    "call is cancelled after that): no Parser session, a failure or slowness gives Core's " +
    "answer alone.",
  responses: {
    200: {
      description:
        '`[{ noteId, title, loreType, source: "core" | "parser" }]` (a bare array, as the front end reads it), Core title matches first (best first), then confirmed Parser suggestions',
      schema: z.array(titleHitSchema.extend({ source: z.enum(["core", "parser"]) })).max(
        MENTION_LIMIT,
      ),
    },
    400: "q shorter than 2 or longer than 200 characters",
  },
  handler: async (ctx) => {
    const core = await ctx.core();
    const [results, parserIds] = await Promise.all([
      coreMentionCandidates(core, ctx.query.q),
      parserMentionIds(ctx, ctx.query.q),
    ]);
    const seen = new Set(results.map((r) => r.noteId));
    const extra = [...new Set(parserIds)].filter((id) => !seen.has(id)).slice(0, MENTION_LIMIT);
    if (results.length >= MENTION_LIMIT || extra.length === 0) return json(results);
    let confirmed: Map<string, CoreNote>;
    try {
      confirmed = await notesByIds(core, extra, { lore: true, concurrency: ctx.concurrency });
    } catch (e) {
      // the Core candidates are the answer; unconfirmed Parser ids are never shown
      ctx.log.log("warn", "mention search: Parser suggestions not confirmed", {
        requestId: ctx.requestId,
        reason: e instanceof ApiError ? e.code : "INTERNAL_ERROR",
      });
      return json(results);
    }
    for (const id of extra) {
      const note = confirmed.get(id);
      if (!note || note.isProtected) continue;
      results.push({
        noteId: note.noteId,
        title: note.title,
        loreType: labelValue(note, "loreType") ?? null,
        source: "parser",
      });
      if (results.length >= MENTION_LIMIT) break;
    }
    return json(results);
  },
});

/** `GET /api/lore/note-search?q=&type=` */
export const noteSearch = defineRoute({
  method: "GET",
  path: "/api/lore/note-search",
  summary: "Note picker: notes by title, optionally of one note or lore type (q ≥ 2, at most 12)",
  backend: "Core",
  access: "private",
  tag: "search",
  query: z.object({ q: searchTerm(2), type: loreTypeFilter.optional() }),
  description: `${PICKER_NOTES} \`type\` names either one of Core's note types (\`image\`, ` +
    "`text`, …: the portal's portrait picker asks for `type=image`), keeping notes of that " +
    "type, or else a lore type, keeping notes with that `#loreType` (Core's note types and its " +
    "lore types share no name); without it every note counts. At most 12.",
  responses: {
    200: {
      description: "`[{ noteId, title, type, loreType }]` (a bare array, as the front end reads " +
        "it; `type` is Core's note type), best match first",
      schema: z.array(titleHitSchema.extend({ type: z.string().describe("Core's note type") }))
        .max(NOTE_SEARCH_LIMIT),
    },
    400: "q shorter than 2 or longer than 200 characters, or a malformed type",
  },
  handler: async (ctx) => {
    const { q, type } = ctx.query;
    const noteType = type !== undefined && isNoteType(type) ? type : undefined;
    const loreType = noteType === undefined ? type : undefined;
    const query = titleSearch(q, loreType ? [labelEquals("loreType", loreType)] : []);
    const found = await (await ctx.core()).search(query, { fastSearch: true });
    const notes = noteType ? found.filter((n) => n.type === noteType) : found;
    return json(
      rankByTitle(readableNotes(notes), q, NOTE_SEARCH_LIMIT).map((n) => ({
        noteId: n.noteId,
        title: n.title,
        type: n.type,
        loreType: labelValue(n, "loreType") ?? null,
      })),
    );
  },
});

/** `POST /api/lore/autolink` */
export const autolink = defineRoute({
  method: "POST",
  path: "/api/lore/autolink",
  summary: "Find lore titles in text (whole words, longest match); title index cached 60 s",
  backend: "Core",
  access: "private",
  tag: "search",
  body: { kind: "json", schema: z.strictObject({ text: z.string().max(200_000) }) },
  description: "Whole words, case-insensitive, the longest match wins; titles under 3 " +
    "characters are ignored, protected notes never offered; each note is reported once, at its " +
    'first occurrence; a text under 3 characters (the portal\'s editor sends `""` for an ' +
    "empty note) matches nothing and asks Core nothing. The title index is one `#lore` search " +
    "per caller (keyed by a hash of the Core credentials), kept `AUTOLINK_CACHE_MS` (60 s) and " +
    "loaded once for concurrent requests.",
  responses: {
    200: {
      description: "`{ matches: [{ term, noteId, title }] }` in order of appearance",
      schema: z.object({
        matches: z.array(z.object({ term: z.string(), noteId: z.string(), title: z.string() })),
      }),
    },
  },
  handler: async (ctx) => {
    // no title under 3 characters is indexed, so a shorter text cannot match one
    if (ctx.body.text.length < 3) return json({ matches: [] });
    const identity = await ctx.coreIdentity();
    // Shared by every concurrent request of this caller: it must not die with the first
    // requester's connection, hence a detached client.
    const matcher = await ctx.state.autolink.getOrLoad(
      identity,
      async () => compileAutolink(await loreTitleIndex(await ctx.core({ detached: true }))),
    );
    return json({ matches: matcher.match(ctx.body.text) });
  },
});

/** `topK` of a semantic query when none is given (the Parser's default, our API's documented example). */
export const RAG_DEFAULT_TOP_K = 10;
/** Bounds of a semantic query's `topK` (the Parser's). */
export const RAG_TOP_K = { min: 1, max: 50 } as const;

/**
 * Semantic search hits as we answer them: the Parser's `/rag/query` answer (one best chunk per
 * note, best first) with `noteTitle` as typed (it is read with `ragQueryAnswer`, which decodes
 * Core's stored form).
 */
export const ragResults = z.object({
  results: z.array(z.object({
    noteId: z.string(),
    noteTitle: z.string().describe("the note's title as typed"),
    content: z.string(),
    score: z.number(),
  })),
});

/**
 * The Parser call of one semantic query.
 */
export function ragCall(text: string, topK: number): ParserCall {
  return { method: "POST", path: "/rag/query", body: { text, topK } };
}

const count = z.number().int().nonnegative().describe("The number of `results`");

/** Most results one `GET /api/search` answers (`limit`). */
export const SEARCH_LIMIT_MAX = 1000;

/** `GET /api/search?q=&mode=&limit=` */
export const search = defineRoute({
  method: "GET",
  path: "/api/search",
  summary: "Search: `etapi` = Core search syntax (complete list); `rag` = Parser semantic search",
  backend: "Both",
  access: "private",
  tag: "search",
  query: z.object({
    q: z.string().trim().min(1).max(2000),
    mode: z.enum(["etapi", "rag"]).default("etapi"),
    limit: z.coerce.number().int().min(1).max(SEARCH_LIMIT_MAX).optional(),
  }).superRefine((v, ctx) => {
    if (v.mode === "etapi") refineCallerQuery(v.q, ctx, ["q"]);
  }),
  description: "`etapi` (default): `q` in Core's search syntax, Core's notes (with their " +
    "attributes) plus `loreType`, in Core's order; a query Core would fail on is a 400 naming " +
    "`query.q`, as for `GET /api/lore`. Words Core does not understand after the first " +
    "`#`/`~` (`#statblock Eel`) are left out by Core, which answers the rest. `rag`: the " +
    `Parser's ${RAG_DEFAULT_TOP_K} best notes (\`limit\` of them, at most ${RAG_TOP_K.max}), ` +
    "best first, each confirmed and summarised by one Core search (notes Core no longer has " +
    "are left out); it needs the Parser (503 `NOT_CONFIGURED` without one, 401 " +
    "`UNAUTHORIZED` before login). `limit` (1-1000) keeps the first `limit` results; " +
    "`X-Total-Count` is the number before it.",
  responses: {
    200: {
      description: '`{ mode: "etapi", results: (Note & { loreType })[], count }` or ' +
        '`{ mode: "rag", results: (NoteSummary & { score, excerpt })[], count }`; ' +
        "`X-Total-Count`: the number of results before `limit`",
      schema: z.discriminatedUnion("mode", [
        z.object({ mode: z.literal("etapi"), results: z.array(loreNoteSchema), count }),
        z.object({
          mode: z.literal("rag"),
          results: z.array(noteSummarySchema.extend({ score: z.number(), excerpt: z.string() })),
          count,
        }),
      ]),
    },
    400: "`etapi`: a query Core cannot run (e.g. an invalid regular expression after `%=`); " +
      "a `limit` that is not an integer from 1 to 1000",
    503: "`NOT_CONFIGURED`: `rag` needs the Parser, which is not connected",
  },
  handler: async (ctx) => {
    const { q, mode, limit } = ctx.query;
    const core = await ctx.core();
    const answer = <T>(results: T[]) => {
      const kept = limit === undefined ? results : results.slice(0, limit);
      return json({ mode, results: kept, count: kept.length }, 200, {
        "x-total-count": String(results.length),
      });
    };
    if (mode === "etapi") {
      const notes = await core.searchCallerQuery(q);
      return answer(notes.map((n) => ({ ...n, loreType: labelValue(n, "loreType") ?? null })));
    }
    const topK = Math.min(limit ?? RAG_DEFAULT_TOP_K, RAG_TOP_K.max);
    const { results: hits } = await parserJson(
      await ctx.parser(),
      ragCall(q, topK),
      ragQueryAnswer,
    );
    const notes = hits.length
      ? await notesByIds(core, hits.map((h) => h.noteId), {
        lore: false,
        concurrency: ctx.concurrency,
      })
      : new Map<string, CoreNote>();
    return answer(hits.flatMap((h) => {
      const note = notes.get(h.noteId);
      return note ? [{ ...noteSummary(note), score: h.score, excerpt: h.content }] : [];
    }));
  },
});

/**
 * Every lore note's title for autolinking: one fast `#lore` search. Protected notes are left
 * out (ETAPI shows their titles encrypted).
 */
export async function loreTitleIndex(core: CoreClient): Promise<AutolinkTitle[]> {
  const notes = await core.search("#lore", { fastSearch: true });
  return readableNotes(notes).map((n) => ({ noteId: n.noteId, title: n.title }));
}

/** Protected notes carry ciphertext titles through ETAPI: never offer them by title. */
function readableNotes(notes: readonly CoreNote[]): CoreNote[] {
  return notes.filter((n) => !n.isProtected);
}

/** The search and discovery routes. */
export const searchRoutes: Route[] = [mentionSearch, noteSearch, autolink, search];
