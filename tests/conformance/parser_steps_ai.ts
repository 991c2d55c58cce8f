/**
 * Parser conformance steps: relationships (apply and its effect in Core, suggestions, a note's
 * relations merged with suggestions, the graph and the history), the consistency scan, gap
 * detection, semantic search (RAG, `search?mode=rag`) and the Parser's part of mention search.
 * Model output is checked for shape and scope only; where the Parser is known to behave
 * differently from what a user expects, the reason column says what it did.
 *
 * @module
 */
import { z } from "zod";
import { RELATIONSHIP_TYPES } from "../../src/lore/relationship_types.ts";
import { consistencyAnswer, gapsAnswer } from "../../src/routes/ai_scans.ts";
import { check, factOf, ownAttrs, readLore, same } from "./kit.ts";
import { loreNotes } from "./parser_steps_kit.ts";
import type { ParserStep } from "./parser_suite.ts";

const MISSING_ID = "zzParserConformance1";
const TYPES = RELATIONSHIP_TYPES;

const applySchema = z.object({
  applied: z.array(z.object({
    sourceNoteId: z.string(),
    targetNoteId: z.string(),
    type: z.string(),
    relationshipType: z.string(),
    relationName: z.string(),
  })),
  skipped: z.array(
    z.looseObject({ targetNoteId: z.string(), relationshipType: z.string(), reason: z.string() }),
  ),
  failed: z.array(
    z.looseObject({ targetNoteId: z.string(), relationshipType: z.string(), error: z.string() }),
  ),
});
const suggestionSchema = z.object({
  targetNoteId: z.string(),
  targetTitle: z.string().nullable(),
  type: z.enum(TYPES),
  relationshipType: z.enum(TYPES),
  description: z.string(),
  confidence: z.enum(["high", "medium", "low"]).nullable(),
});
const graphSchema = z.object({
  centerNoteId: z.string(),
  nodes: z.array(z.object({
    noteId: z.string(),
    title: z.string(),
    loreType: z.string().nullable(),
    depth: z.number().int(),
  })),
  edges: z.array(
    z.object({ sourceNoteId: z.string(), targetNoteId: z.string(), type: z.string() }),
  ),
  maxDepthReached: z.number().int(),
  truncated: z.boolean(),
});
const ragSchema = z.object({
  results: z.array(z.object({
    noteId: z.string(),
    noteTitle: z.string(),
    title: z.string(),
    content: z.string(),
    score: z.number(),
  })),
});
const ragStatusSchema = z.object({
  indexedNotes: z.number().int().min(0),
  lastIndexed: z.string().nullable(),
  model: z.string().nullable(),
});
const mentionSchema = z.array(z.object({
  noteId: z.string(),
  title: z.string(),
  loreType: z.string().nullable(),
  source: z.enum(["core", "parser"]),
}));

/** `GET /api/ai/gaps` and `POST` check the same. */
function gapsStep(method: "GET" | "POST"): ParserStep {
  return {
    method,
    path: "/api/ai/gaps",
    check: "gaps with suggestions; note counts per lore type include the run's notes",
    run: async (s) => {
      await loreNotes(s);
      const g = await s.api.json(method, "/api/ai/gaps", 200, gapsAnswer);
      const counted = Object.values(g.typeCounts).reduce((a, b) => a + b, 0);
      check(g.totalNotes >= 2, `totalNotes ${g.totalNotes}, but the run made lore notes`);
      check(counted <= g.totalNotes, `typeCounts add up to ${counted} > totalNotes`);
      check((g.typeCounts.location ?? 0) >= 1, "no location counted (the run made one)");
    },
  };
}

/** RAG checks shared by `GET` and `POST /api/rag`; returns what the reason should say. */
function ragStep(method: "GET" | "POST"): ParserStep {
  return {
    method,
    path: "/api/rag",
    check: "at most topK results, one per note, best first, `title` = `noteTitle`; bad text " +
      `or topK 400${method === "GET" ? "; without text the index status" : ""}`,
    run: async (s) => {
      const text = `${s.name} Varrow drowned bell lanterns harbour`;
      const r = method === "GET"
        ? await s.api.json(
          "GET",
          `/api/rag?text=${encodeURIComponent(text)}&topK=3`,
          200,
          ragSchema,
        )
        : await s.api.json("POST", "/api/rag", 200, ragSchema, { json: { text, topK: 3 } });
      check(r.results.length <= 3, `${r.results.length} results for topK 3`);
      same(new Set(r.results.map((x) => x.noteId)).size, r.results.length, "one result per note");
      const scores = r.results.map((x) => x.score);
      check(scores.every((v, i) => i === 0 || v <= scores[i - 1]), "results are not best first");
      check(r.results.every((x) => x.title === x.noteTitle), "title differs from noteTitle");
      if (method === "GET") {
        const status = await s.api.json("GET", "/api/rag", 200, ragStatusSchema);
        check(status.indexedNotes >= r.results.length, "fewer notes indexed than found");
        check(status.indexedNotes === 0 || status.model, "notes indexed, but no model named");
        await s.api.error("GET", "/api/rag?text=%20", 400, "INVALID_REQUEST");
        await s.api.error("GET", "/api/rag?text=x&topK=51", 400, "INVALID_REQUEST");
      } else {
        await s.api.error("POST", "/api/rag", 400, "INVALID_REQUEST", { json: { text: "" } });
        await s.api.error("POST", "/api/rag", 400, "INVALID_REQUEST", {
          json: { text: "x", topK: 0 },
        });
      }
      const mine = [...s.written].filter((id) => r.results.some((x) => x.noteId === id));
      return mine.length
        ? `${r.results.length} result(s), the run's brain-dumped notes among them`
        : `${r.results.length} result(s); the run's brain-dumped notes are not among them`;
    },
  };
}

/** The steps of this module, in run order. */
export const aiSteps: ParserStep[] = [
  {
    method: "PUT",
    path: "/api/ai/relationships",
    check: "relAlly both ways plus #relationNote in Core; again (as `relationshipType`): " +
      "ALREADY_EXISTS; bad input 400",
    run: async (s) => {
      const { a, b } = await loreNotes(s);
      const body = {
        sourceNoteId: a.noteId,
        relations: [{ targetNoteId: b.noteId, type: "ally", description: `Sworn ${s.tag}` }],
        bidirectional: true,
      };
      const r = await s.api.json("PUT", "/api/ai/relationships", 200, applySchema, { json: body });
      same(r.applied.map((x) => [x.sourceNoteId, x.targetNoteId, x.type, x.relationName]), [[
        a.noteId,
        b.noteId,
        "ally",
        "relAlly",
      ]], "applied");
      const from = await readLore(s, a.noteId);
      check(ownAttrs(from).includes(`relation:relAlly=${b.noteId}`), "no relAlly on the source");
      check(
        from.attributes.some((x) =>
          x.name === "relationNote" && x.value.includes(`Sworn ${s.tag}`)
        ),
        "the description is not stored as #relationNote",
      );
      const to = await readLore(s, b.noteId);
      check(
        ownAttrs(to).includes(`relation:relAlly=${a.noteId}`),
        "no inverse relAlly on the target",
      );
      // again, in the front end's word for the kind (`relationshipType`)
      const again = await s.api.json("PUT", "/api/ai/relationships", 200, applySchema, {
        json: {
          ...body,
          relations: [{ targetNoteId: b.noteId, relationshipType: "ally", description: "x" }],
        },
      });
      same(
        again.skipped.map((x) => [x.reason, x.relationshipType]),
        [["ALREADY_EXISTS", "ally"]],
        "applying again",
      );
      same(again.applied, [], "applied again");
      await s.api.error("PUT", "/api/ai/relationships", 400, "INVALID_REQUEST", {
        json: { ...body, relations: [{ targetNoteId: b.noteId, type: "befriends" }] },
      });
      await s.api.error("PUT", "/api/ai/relationships", 400, "INVALID_REQUEST", {
        json: { ...body, sourceNoteId: MISSING_ID },
      });
    },
  },
  {
    method: "POST",
    path: "/api/lore/:id/relationships",
    check: "Core's relations (typed) and the Parser's suggestions, none duplicating them",
    run: async (s) => {
      const { a, b } = await loreNotes(s);
      const r = await s.api.json(
        "POST",
        `/api/lore/${a.noteId}/relationships`,
        200,
        z.object({
          noteId: z.string(),
          existing: z.array(z.looseObject({
            name: z.string(),
            type: z.string().nullable(),
            targetNoteId: z.string(),
            targetTitle: z.string(),
          })),
          suggestions: z.array(
            suggestionSchema.omit({ targetTitle: true }).extend({
              targetTitle: z.string(),
              relationshipType: z.string(),
            }),
          ),
          suggestionsError: z.unknown().nullable(),
        }),
      );
      same(
        r.existing.map((x) => [x.name, x.type, x.targetNoteId, x.targetTitle]),
        [["relAlly", "ally", b.noteId, b.title]],
        "relations",
      );
      check(r.suggestionsError === null, `no suggestions: ${JSON.stringify(r.suggestionsError)}`);
      for (const x of r.suggestions) {
        same(x.relationshipType, x.type, "relationshipType beside type");
        check(x.targetNoteId !== a.noteId, "the note is suggested to itself");
        check(
          !(x.type === "ally" && x.targetNoteId === b.noteId),
          "an existing relation is suggested again",
        );
      }
      return `relations from Core; ${r.suggestions.length} suggestion(s) from the Parser`;
    },
  },
  {
    method: "POST",
    path: "/api/ai/relationships",
    check: "suggestions of the 17 types for a text about the note; empty text 400",
    run: async (s) => {
      const { a, b } = await loreNotes(s);
      const r = await s.api.json(
        "POST",
        "/api/ai/relationships",
        200,
        z.object({ suggestions: z.array(suggestionSchema) }),
        { json: { text: `${a.title} swore an oath to defend ${b.title}.`, noteId: a.noteId } },
      );
      await s.api.error("POST", "/api/ai/relationships", 400, "INVALID_REQUEST", {
        json: { text: "   " },
      });
      return `${r.suggestions.length} suggestion(s), each of a known type`;
    },
  },
  {
    method: "GET",
    path: "/api/lore/:id/graph",
    check:
      "the note at depth 0, its ally at depth 1 with its lore type; bad depth 400; missing 404",
    run: async (s) => {
      const { a, b } = await loreNotes(s);
      const g = await s.api.json(
        "GET",
        `/api/lore/${a.noteId}/graph?depth=1&maxNodes=5`,
        200,
        graphSchema,
      );
      same(g.centerNoteId, a.noteId, "centerNoteId");
      const node = (id: string) => g.nodes.find((n) => n.noteId === id);
      same(node(a.noteId)?.depth, 0, "depth of the note");
      same([node(b.noteId)?.depth, node(b.noteId)?.loreType], [1, "location"], "the ally node");
      check(
        g.edges.some((e) =>
          e.sourceNoteId === a.noteId && e.targetNoteId === b.noteId && e.type === "ally"
        ),
        "no ally edge from the note",
      );
      await s.api.error("GET", `/api/lore/${a.noteId}/graph?depth=4`, 400, "INVALID_REQUEST");
      await s.api.error("GET", `/api/lore/${MISSING_ID}/graph`, 404, "NOT_FOUND");
    },
  },
  {
    method: "GET",
    path: "/api/lore/:id/relationship-history",
    check: "entries about the note, newest first; limit out of range 400",
    run: async (s) => {
      const { a } = await loreNotes(s);
      const h = await s.api.json(
        "GET",
        `/api/lore/${a.noteId}/relationship-history?limit=5`,
        200,
        z.object({
          entries: z.array(z.object({
            id: z.string(),
            sourceNoteId: z.string(),
            targetNoteId: z.string(),
            type: z.string(),
            relationName: z.string(),
            description: z.string().nullable(),
            createdAt: z.string(),
          })),
        }),
      );
      check(h.entries.length <= 5, `${h.entries.length} entries for limit 5`);
      for (const e of h.entries) {
        check(
          e.sourceNoteId === a.noteId || e.targetNoteId === a.noteId,
          "an entry of another note",
        );
      }
      await s.api.error(
        "GET",
        `/api/lore/${a.noteId}/relationship-history?limit=51`,
        400,
        "INVALID_REQUEST",
      );
      return h.entries.length
        ? `${h.entries.length} entr(ies) for the relation the run applied`
        : "no entries although the run applied a relation (the Parser stores them without a user)";
    },
  },
  {
    method: "POST",
    path: "/api/ai/consistency",
    check: "issues only about the given notes, or a summary; sampling without ids; bad ids 400",
    run: async (s) => {
      const { a, b } = await loreNotes(s);
      const given = await s.api.json("POST", "/api/ai/consistency", 200, consistencyAnswer, {
        json: { noteIds: [a.noteId, b.noteId, a.noteId] },
      });
      for (const i of given.issues) {
        check(
          i.affectedNoteIds.every((id) => id === a.noteId || id === b.noteId),
          "an issue about a note that was not given",
        );
      }
      await s.api.json("POST", "/api/ai/consistency", 200, consistencyAnswer, { json: {} });
      await s.api.error("POST", "/api/ai/consistency", 400, "INVALID_REQUEST", {
        json: { noteIds: ["../x"] },
      });
      return given.summary === "No lore notes found to check."
        ? "the Parser found none of the given notes (it looks them up as #noteId labels)"
        : `the given notes were checked: ${given.issues.length} issue(s)`;
    },
  },
  gapsStep("GET"),
  gapsStep("POST"),
  ragStep("GET"),
  ragStep("POST"),
  {
    method: "GET",
    path: "/api/search",
    check: "mode=rag: the Parser's hits as Core note summaries with score and excerpt",
    run: async (s) => {
      const r = await s.api.json(
        "GET",
        `/api/search?mode=rag&q=${encodeURIComponent(`${s.name} Varrow harbour lanterns`)}`,
        200,
        z.object({
          mode: z.literal("rag"),
          results: z.array(z.looseObject({
            noteId: z.string(),
            title: z.string(),
            type: z.string(),
            score: z.number(),
            excerpt: z.string(),
          })),
          count: z.number().int(),
        }),
      );
      same(r.count, r.results.length, "count");
      check(r.results.length <= 10, `${r.results.length} results (10 at most)`);
      for (const x of r.results.slice(0, 3)) await readLore(s, x.noteId); // each one is in Core
      return `${r.count} result(s), each a note Core has`;
    },
  },
  {
    method: "GET",
    path: "/api/lore/mention-search",
    check: "Core's title matches first; the Parser's extras confirmed by Core with Core's title",
    run: async (s) => {
      const { a } = await loreNotes(s);
      const exact = await s.api.json(
        "GET",
        `/api/lore/mention-search?q=${encodeURIComponent(a.title)}`,
        200,
        mentionSchema,
      );
      same(exact[0]?.noteId, a.noteId, "first result for the exact title");
      // a brain-dumped note renamed in Core: only the Parser's index still knows its old title
      const [renamed] = JSON.parse(factOf(s, "autoNotes")) as { noteId: string; title: string }[];
      const title = `Renamed ${s.tag}`;
      await s.api.call("PATCH", `/api/lore/${renamed.noteId}`, { json: { title } });
      same((await readLore(s, renamed.noteId)).title, title, "renamed title");
      const r = await s.api.json(
        "GET",
        `/api/lore/mention-search?q=${encodeURIComponent(renamed.title)}`,
        200,
        mentionSchema,
      );
      check(r.length <= 8, `${r.length} results (8 at most)`);
      const core = r.filter((x) => x.source === "core");
      const extra = r.filter((x) => x.source === "parser");
      check(r.slice(0, core.length).every((x) => x.source === "core"), "Core's not first");
      check(core.every((x) => x.title.includes(renamed.title)), "a Core result without the term");
      for (const x of extra) same((await readLore(s, x.noteId)).title, x.title, "a Parser extra");
      const found = extra.some((x) => x.noteId === renamed.noteId && x.title === title);
      return found
        ? "the renamed note came from the Parser's index, shown with Core's new title"
        : `the Parser added ${extra.length} note(s); the renamed one was not among them`;
    },
  },
];
