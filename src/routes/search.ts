/**
 * Search and discovery: the `@`-mention and note pickers (one Core search each, ranked here),
 * autolinking lore titles in free text (a per-credential title index, cached), and the general
 * search endpoint.
 *
 * @module
 */
import { z } from "zod";
import { labelEquals, titleContains } from "../core/search_query.ts";
import { notConfigured } from "../http/errors.ts";
import { json } from "../http/response.ts";
import { type AutolinkTitle, compileAutolink } from "../lore/autolink.ts";
import { decodeTitleEntities, labelValue, noteSummary } from "../lore/note_view.ts";
import { rankByTitle } from "../lore/title_rank.ts";
import { defineRoute, type Route } from "../router.ts";
import type { CoreClient, CoreNote } from "../upstream/core.ts";
import { searchTerm } from "./schemas.ts";

/** Seed limit of `/api/lore/mention-search`. */
export const MENTION_LIMIT = 8;
/** Seed limit of `/api/lore/note-search`. */
export const NOTE_SEARCH_LIMIT = 12;

const loreTypeFilter = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be a simple word");

/** A mention suggestion; `source` tells Core hits from (later) Parser suggestions. */
export interface MentionCandidate {
  noteId: string;
  title: string;
  loreType: string | null;
  source: "core";
}

/**
 * Lore notes whose title contains `q`, best matches first, at most {@linkcode MENTION_LIMIT}:
 * one Core search (`#lore` and the title filter, fast search), ranked by title.
 *
 * @example
 * ```ts
 * await coreMentionCandidates(core, "ash"); // [{ noteId, title: "Ashford", loreType: "location", source: "core" }]
 * ```
 */
export async function coreMentionCandidates(
  core: CoreClient,
  q: string,
): Promise<MentionCandidate[]> {
  const notes = await core.search(`#lore ${titleContains(q)}`, { fastSearch: true });
  return rankByTitle(readableNotes(notes), q, MENTION_LIMIT).map((n) => ({
    noteId: n.noteId,
    title: n.title,
    loreType: labelValue(n, "loreType") ?? null,
    source: "core",
  }));
}

/** `GET /api/lore/mention-search?q=` */
export const mentionSearch = defineRoute({
  method: "GET",
  path: "/api/lore/mention-search",
  summary: "Autocomplete for @-mentions: lore notes by title (q ≥ 2 characters, at most 8)",
  backend: "Both",
  access: "private",
  tag: "search",
  query: z.object({ q: searchTerm(2) }),
  responses: {
    200: "`{ results: [{ noteId, title, loreType, source }] }`, best match first",
    400: "q shorter than 2 or longer than 200 characters",
  },
  handler: async (ctx) =>
    json({ results: await coreMentionCandidates(await ctx.core(), ctx.query.q) }),
});

/** `GET /api/lore/note-search?q=&type=` */
export const noteSearch = defineRoute({
  method: "GET",
  path: "/api/lore/note-search",
  summary: "Note picker: notes by title, optionally of one lore type (q ≥ 2, at most 12)",
  backend: "Core",
  access: "private",
  tag: "search",
  query: z.object({ q: searchTerm(2), type: loreTypeFilter.optional() }),
  responses: {
    200: "`{ results: [{ noteId, title, loreType }] }`, best match first",
    400: "q shorter than 2 or longer than 200 characters, or a malformed type",
  },
  handler: async (ctx) => {
    const { q, type } = ctx.query;
    const query = [type ? labelEquals("loreType", type) : "", titleContains(q)].filter(Boolean)
      .join(" ");
    const notes = await (await ctx.core()).search(query, { fastSearch: true });
    const results = rankByTitle(readableNotes(notes), q, NOTE_SEARCH_LIMIT).map((n) => ({
      noteId: n.noteId,
      title: n.title,
      loreType: labelValue(n, "loreType") ?? null,
    }));
    return json({ results });
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
  body: { kind: "json", schema: z.strictObject({ text: z.string().min(1).max(200_000) }) },
  responses: { 200: "`{ matches: [{ term, noteId, title }] }` in order of appearance" },
  handler: async (ctx) => {
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

/** `GET /api/search?q=&mode=` */
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
  }),
  responses: {
    200: '`{ mode: "etapi", results: NoteSummary[], count }`',
    503: "NOT_CONFIGURED: `rag` needs the Parser, which is not connected",
  },
  handler: async (ctx) => {
    if (ctx.query.mode === "rag") throw notConfigured("parser");
    const notes = await (await ctx.core()).search(ctx.query.q);
    return json({ mode: "etapi", results: notes.map(noteSummary), count: notes.length });
  },
});

/**
 * Every lore note's title for autolinking: one fast `#lore` search. Protected notes are left
 * out (ETAPI shows their titles encrypted).
 *
 * @example
 * ```ts
 * const index = await loreTitleIndex(core); // [{ noteId, title }, …]
 * ```
 */
export async function loreTitleIndex(core: CoreClient): Promise<AutolinkTitle[]> {
  const notes = await core.search("#lore", { fastSearch: true });
  // Core stores titles HTML-escaped on create (`&` → `&amp;`); text is matched as written
  return readableNotes(notes).map((n) => ({
    noteId: n.noteId,
    title: decodeTitleEntities(n.title),
  }));
}

/** Protected notes carry ciphertext titles through ETAPI: never offer them by title. */
function readableNotes(notes: readonly CoreNote[]): CoreNote[] {
  return notes.filter((n) => !n.isProtected);
}

/** The search and discovery routes. */
export const searchRoutes: Route[] = [mentionSearch, noteSearch, autolink, search];
