/**
 * Semantic (RAG) search of the Parser's lore index, by GET or POST, and without a query the
 * index's status. The hits are the Parser's, passed on with the title also as `title` (the
 * front end's word); `GET /api/search?mode=rag` (search.ts) is the same query confirmed by Core.
 *
 * @module
 */
import { z } from "zod";
import type { Route } from "../api/router.ts";
import { ragQueryAnswer } from "../upstream/parser.ts";
import { parserRoute } from "./parser_proxy.ts";
import { RAG_DEFAULT_TOP_K, RAG_TOP_K, ragCall, ragResults } from "./search.ts";

/** Longest semantic query text. */
export const MAX_RAG_TEXT = 4_000;

const ragText = z.string().trim().min(1).max(MAX_RAG_TEXT);

/** Semantic hits as we answer them: the Parser's, the title also as `title` (the front end's). */
const ragHits = z.object({
  results: z.array(ragResults.shape.results.element.extend({
    title: z.string().describe("`noteTitle` again, in the front end's word"),
  })),
});

/** The hits of a semantic query, each with `title` beside the Parser's `noteTitle`. */
function toHits(answer: z.output<typeof ragQueryAnswer>): z.output<typeof ragHits> {
  return { results: answer.results.map((r) => ({ ...r, title: r.noteTitle })) };
}

/** The Parser's `GET /rag/status`: its keys are missing while the index is empty. */
const ragStatusAnswer = z.object({
  indexedNotes: z.number().int().min(0),
  lastIndexed: z.string().nullish(),
  model: z.string().nullish(),
});

/** The index status as we answer it (`GET /api/rag` without `text`). */
const ragStatus = z.object({
  indexedNotes: z.number().int().min(0),
  lastIndexed: z.string().nullable().describe("when a note was last indexed, null if never"),
  model: z.string().nullable().describe("the embedding model, null if nothing is indexed"),
});

const RAG_SEARCH = "`text` 1-4000 characters, `topK` 1-50 (default 10). The Parser's hits are " +
  "passed on as it sends them, the title as typed, as `noteTitle` and as `title` " +
  "(`GET /api/search?mode=rag` gives them as note summaries confirmed by Core). Only notes " +
  "the Parser has indexed for this user are found: what a brain dump writes is indexed " +
  "before its answer completes.";
const RAG_HITS = {
  description: "`{ results: [{ noteId, noteTitle, title, content, score }] }`, best first: " +
    "`content` is the note's best-matching chunk",
  schema: ragHits,
};
const RAG_INVALID = "text empty or over 4000 characters, or topK not an integer from 1 to 50";

/** `GET /api/rag?text=&topK=`, or without `text` the index status. */
export const ragGet = parserRoute({
  method: "GET",
  path: "/api/rag",
  summary: "Semantic search of the lore index (`text`, `topK`); without `text` the index status",
  tag: "rag",
  query: z.object({
    text: ragText.optional(),
    topK: z.coerce.number().int().min(RAG_TOP_K.min).max(RAG_TOP_K.max).optional(),
  }).refine((q) => q.text !== undefined || q.topK === undefined, {
    message: "topK needs text",
    path: ["topK"],
  }),
  description: `${RAG_SEARCH} Without \`text\` (and \`topK\`) the answer is the index ` +
    "status: how many notes the Parser has indexed, when it last indexed one and with which " +
    "embedding model. The Parser counts every note it has indexed, for any of its users.",
  responses: {
    200: {
      description: `${RAG_HITS.description}; without \`text\`: \`{ indexedNotes, ` +
        "lastIndexed, model }`",
      schema: z.union([ragHits, ragStatus]),
    },
    400: `${RAG_INVALID}, or topK without text`,
  },
  upstream: (ctx) =>
    ctx.query.text === undefined
      ? { path: "/rag/status" }
      : ragCall(ctx.query.text, ctx.query.topK ?? RAG_DEFAULT_TOP_K),
  answer: z.union([ragQueryAnswer, ragStatusAnswer]),
  reply: (data): z.output<typeof ragHits> | z.output<typeof ragStatus> =>
    "results" in data ? toHits(data) : {
      indexedNotes: data.indexedNotes,
      lastIndexed: data.lastIndexed ?? null,
      model: data.model ?? null,
    },
});

/** `POST /api/rag` */
export const ragPost = parserRoute({
  method: "POST",
  path: "/api/rag",
  summary: "Semantic search of the lore index: the best chunk of each of the topK closest notes",
  tag: "rag",
  body: z.strictObject({
    text: ragText,
    topK: z.number().int().min(RAG_TOP_K.min).max(RAG_TOP_K.max).default(RAG_DEFAULT_TOP_K),
  }),
  description: RAG_SEARCH,
  responses: { 200: RAG_HITS, 400: RAG_INVALID },
  upstream: (ctx) => ragCall(ctx.body.text, ctx.body.topK),
  answer: ragQueryAnswer,
  reply: toHits,
});

/** The semantic search routes. */
export const ragRoutes: Route[] = [ragGet, ragPost];
