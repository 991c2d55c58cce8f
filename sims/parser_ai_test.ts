/**
 * Contract behaviours of the Parser double's AI tools:
 * RAG, consistency, relationship suggestions and apply, graph, gaps, autocomplete, history.
 * Each test starts a Core double (sample world) and a Parser double pointed at it.
 */
import assert from "node:assert/strict";
import { type ParserWorld, withParserWorld } from "./parser_sim_client.ts";
import { W } from "./world.ts";
import { seedRagIndex } from "./parser_rag.ts";

/** Seeds the owner's index with a Core note as it is now (its attributes included). */
function seedFromCore(w: ParserWorld, noteId: string, content: string): void {
  const note = w.core.store.getNote(noteId)!;
  seedRagIndex(w.parser.store, {
    noteId,
    title: note.title,
    content,
    attributes: w.core.store.ownAttributes(noteId),
  });
}

const ownerId = (w: ParserWorld) => w.parser.store.findSession(w.token)!.userId;
const llmTasks = (w: ParserWorld) =>
  w.parser.store.llmCalls.map((c) => `${c.task}:${c.userId ?? "-"}`);

/** What the real Parser needs before its RAG sees the owner's lore: the owner's full reindex. */
async function ownerReindex(w: ParserWorld): Promise<void> {
  const r = await w.call("/rag/reindex", { method: "POST" });
  assert.equal(r.status, 200);
}

Deno.test("rag/query: only the caller's index, empty on a fresh Parser (real: queryLore filters by userId)", () =>
  withParserWorld(async (w) => {
    const fresh = await w.call("/rag/query", { body: { text: "lighthouse keepers and tides" } });
    assert.deepEqual(fresh.json, { results: [] }, "Core has lore, the index has none");
    await ownerReindex(w);
    const r = await w.call("/rag/query", { body: { text: "lighthouse keepers and tides" } });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("ratelimit-limit"), null, "RAG is not rate-limited");
    const ids = r.json.results.map((x: { noteId: string }) => x.noteId);
    assert.equal(new Set(ids).size, ids.length, "one best chunk per note");
    assert.ok(ids.includes(W.charIselde) && ids.includes(W.locLighthouse), ids.join());
    assert.ok(!ids.includes(W.media), "only #lore notes");
    for (const hit of r.json.results) {
      assert.deepEqual(Object.keys(hit), ["noteId", "noteTitle", "content", "score"]);
      assert.ok(hit.score > 0 && hit.score <= 1);
      assert.ok(!hit.content.includes("<"), "plain text chunks");
    }
    const scores = r.json.results.map((x: { score: number }) => x.score);
    assert.deepEqual(scores, [...scores].sort((a: number, b: number) => b - a));
    const one = await w.call("/rag/query", { body: { text: "lighthouse", topK: 1 } });
    assert.equal(one.json.results.length, 1);
    for (const body of [{ text: "" }, { text: "x", topK: 51 }, { text: "x", topK: "5" }, {}]) {
      const bad = await w.call("/rag/query", { body });
      assert.equal(bad.status, 422, JSON.stringify(body));
      assert.equal(bad.json.type, "validation");
    }
    // the real route reads only the index: no Core credentials needed
    w.parser.store.deleteIntegration(ownerId(w));
    const offline = await w.call("/rag/query", { body: { text: "tides" } });
    assert.equal(offline.status, 200);
    assert.ok(offline.json.results.length > 0);
  }));

Deno.test('rag index: brain-dumped notes are indexed for user "default", not the owner (real: indexNote(noteId, credentials))', () =>
  withParserWorld(async (w) => {
    const dump = await w.call("/brain-dump", {
      body: { rawText: "Captain Velra Ashgrove commands the Gullwing, a swift cutter." },
    });
    assert.equal(dump.status, 200);
    const created = dump.json.created as { noteId: string; title: string }[];
    assert.ok(created.length > 0);
    for (const n of created) {
      assert.equal(w.parser.store.rag.chunks.get(`${n.noteId}::default`)?.noteTitle, n.title);
      assert.ok(!w.parser.store.rag.chunks.has(`${n.noteId}::${ownerId(w)}`));
      assert.equal(w.parser.store.rag.meta.get(n.noteId)?.noteTitle, n.title);
    }
    const rag = await w.call("/rag/query", { body: { text: "Velra Ashgrove Gullwing" } });
    assert.deepEqual(rag.json, { results: [] }, "the owner's RAG does not see them");
    assert.equal(w.parser.store.rag.meta.size, created.length, "rag_index_meta is global");
    const ac = await w.call("/suggest/autocomplete?q=velra");
    assert.deepEqual(
      ac.json.suggestions.map((x: { noteId: string }) => x.noteId),
      created.filter((n) => /velra/i.test(n.title)).map((n) => n.noteId),
      "autocomplete phase 1 reads the global title table",
    );
  }));

Deno.test("rag index: a fresh Parser's is empty; reindex indexes every #lore note for the caller", () =>
  withParserWorld(async (w) => {
    assert.equal(w.parser.store.rag.meta.size, 0);
    const full = await w.call("/rag/reindex", { method: "POST" });
    assert.equal(full.status, 200);
    assert.equal(full.json.failed, 0);
    assert.ok(full.json.indexed >= 15, JSON.stringify(full.json));
    assert.equal(w.parser.store.rag.meta.size, full.json.indexed);
    assert.ok(w.parser.store.rag.chunks.has(`${W.charMira}::${ownerId(w)}`));
  }));

Deno.test("rag/reindex/:noteId: one note for the caller; a missing note 404, no integration 500", () =>
  withParserWorld(async (w) => {
    const dump = await w.call("/brain-dump", {
      body: { rawText: "Captain Velra Ashgrove commands the Gullwing, a swift cutter." },
    });
    const [first] = dump.json.created as { noteId: string; title: string }[];
    const r = await w.call(`/rag/reindex/${first.noteId}`, { method: "POST" });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { ok: true, noteId: first.noteId });
    assert.ok(w.parser.store.rag.chunks.has(`${first.noteId}::${ownerId(w)}`));
    const rag = await w.call("/rag/query", { body: { text: "Velra Ashgrove Gullwing" } });
    assert.deepEqual(rag.json.results.map((x: { noteId: string }) => x.noteId), [first.noteId]);

    const missing = await w.call("/rag/reindex/gone12345678", { method: "POST" });
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.json, {
      error: "NOTE_NOT_FOUND",
      message: "Note not found.",
      noteId: "gone12345678",
    });
    w.parser.store.deleteIntegration(ownerId(w));
    const offline = await w.call(`/rag/reindex/${W.charMira}`, { method: "POST" });
    assert.equal(offline.status, 500);
    assert.equal(offline.json.error, "REINDEX_FAILED");
  }));

Deno.test("rag/status: the global index, its keys left out while empty", () =>
  withParserWorld(async (w) => {
    const empty = await w.call("/rag/status");
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.json, { indexedNotes: 0 });
    await ownerReindex(w);
    // another user's notes count too: rag_index_meta is global
    seedRagIndex(w.parser.store, {
      noteId: "other0000001",
      title: "X",
      content: "y",
      userId: "u2",
    });
    const r = await w.call("/rag/status");
    assert.equal(r.json.indexedNotes, w.parser.store.rag.meta.size);
    assert.equal(r.json.model, "openai/text-embedding-3-small");
    assert.match(r.json.lastIndexed, /^\d{4}-\d\d-\d\dT.*Z$/);
  }));

Deno.test("consistency: noteIds are searched as #noteId=A OR #noteId=B, which lore notes do not match", () =>
  withParserWorld(async (w) => {
    w.core.clearRequests();
    const r = await w.call("/consistency/check", { body: { noteIds: [W.charMira, W.charOskar] } });
    assert.deepEqual(r.json, { issues: [], summary: "No lore notes found to check." });
    const searched = w.core.requests.map((q) => new URLSearchParams(q.search).get("search"))
      .filter(Boolean);
    assert.deepEqual(searched, [`#noteId=${W.charMira} OR #noteId=${W.charOskar}`]);
    assert.equal(w.parser.store.llmCalls.length, 0, "no model call without notes");
  }));

Deno.test("consistency: the owner's index is sampled (empty on a fresh Parser), issues found, model logged", () =>
  withParserWorld(async (w) => {
    const fresh = await w.call("/consistency/check", { body: {} });
    assert.deepEqual(fresh.json, { issues: [], summary: "No lore notes found to check." });
    w.core.store.createAttribute({
      noteId: W.charMira,
      type: "relation",
      name: "relEnemy",
      value: W.charOskar,
    });
    for (const id of [W.charMira, W.charOskar]) {
      seedFromCore(w, id, "characters and their relationships");
    }
    const r = await w.call("/consistency/check", { body: { extra: true } });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("ratelimit-limit"), "20");
    assert.equal(r.headers.get("ratelimit-remaining"), "18");
    assert.deepEqual(r.json.issues[0], {
      type: "contradiction",
      severity: "high",
      description: "Mira Tallowend is recorded as both an ally and an enemy of Oskar Venn.",
      affectedNoteIds: [W.charMira, W.charOskar],
    });
    assert.match(r.json.summary, /across 2 lore entries/);
    assert.deepEqual(llmTasks(w), [`consistency:${ownerId(w)}`]);
    await ownerReindex(w);
    const sampled = await w.call("/consistency/check", { body: {} });
    assert.equal(sampled.status, 200);
    const affected = new Set(
      sampled.json.issues.flatMap((i: { affectedNoteIds: string[] }) => i.affectedNoteIds),
    );
    assert.ok(affected.size > 0 && affected.size <= 8, "semantic sampling checks at most 8 notes");
  }, { rateLimits: { consistency: { max: 20, windowMs: 60_000 } } }));

Deno.test("consistency: fallback bodies", async () => {
  for (
    const [output, summary] of [
      ["invalid", "LLM response failed validation."],
      ["unparseable", "Failed to parse consistency check response."],
    ] as const
  ) {
    await withParserWorld(async (w) => {
      await ownerReindex(w);
      const r = await w.call("/consistency/check", { body: {} });
      assert.deepEqual(r.json, { issues: [], summary });
    }, { ai: { llmOutput: output } });
  }
});

Deno.test("suggest/relationships: nothing in the owner's index → [] without a model call", () =>
  withParserWorld(async (w) => {
    const r = await w.call("/suggest/relationships", { body: { text: "Oskar Venn" } });
    assert.deepEqual(r.json, { suggestions: [] });
    assert.equal(w.parser.store.llmCalls.length, 0);
  }));

Deno.test("suggest/relationships: indexed titles in the text, typed, cached per note and text", () =>
  withParserWorld(async (w) => {
    await ownerReindex(w);
    const text =
      "Mira Tallowend pilots ships off Saltmarrow Harbor. She trusts Oskar Venn. She owes The Lantern Guild.";
    const r = await w.call("/suggest/relationships", { body: { text, noteId: W.charMira } });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("ratelimit-limit"), "20");
    const byTarget = Object.fromEntries(
      r.json.suggestions.map((s: { targetNoteId: string }) => [s.targetNoteId, s]),
    );
    assert.ok(!(W.charMira in byTarget), "never the note itself");
    assert.equal(byTarget[W.charOskar].relationshipType, "ally");
    assert.equal(byTarget[W.charOskar].confidence, "high");
    assert.equal(byTarget[W.locHarbor].relationshipType, "located_in");
    assert.equal(byTarget[W.faction].relationshipType, "member_of");
    assert.deepEqual(Object.keys(byTarget[W.charOskar]).sort(), [
      "confidence",
      "description",
      "relationshipType",
      "targetNoteId",
      "targetTitle",
    ]);
    const again = await w.call("/suggest/relationships", { body: { text, noteId: W.charMira } });
    assert.deepEqual(again.json, r.json);
    assert.deepEqual(llmTasks(w), [`suggest:${ownerId(w)}`], "the second answer is cached");
    const [a, b] = await Promise.all([
      w.call("/suggest/relationships", { body: { text: "Oskar Venn" } }),
      w.call("/suggest/relationships", { body: { text: "Oskar Venn" } }),
    ]);
    assert.deepEqual(a.json, b.json);
    assert.equal(w.parser.store.llmCalls.length, 2, "concurrent identical requests share one call");
    const bad = await w.call("/suggest/relationships", { body: { noteId: "x" } });
    assert.equal(bad.status, 422);
  }));

Deno.test("suggest/relationships: an unusable model answer is an empty list", () =>
  withParserWorld(async (w) => {
    await ownerReindex(w);
    const r = await w.call("/suggest/relationships", { body: { text: "Oskar Venn" } });
    assert.deepEqual(r.json, { suggestions: [] });
  }, { ai: { llmOutput: "unparseable" } }));

Deno.test("suggest/relationships/apply: writes relations, note label, inverse; skipped and failed items", () =>
  withParserWorld(async (w) => {
    const r = await w.call("/suggest/relationships/apply", {
      body: {
        sourceNoteId: W.charOskar,
        relations: [
          {
            targetNoteId: W.faction,
            relationshipType: "member_of",
            description: "Keeps the books",
          },
          { targetNoteId: W.charBrannoch, relationshipType: "enemy" },
          { targetNoteId: W.charMira, relationshipType: "friend" },
          { targetNoteId: "missing12345", relationshipType: "rival" },
        ],
      },
    });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.applied, [{
      sourceNoteId: W.charOskar,
      targetNoteId: W.faction,
      relationshipType: "member_of",
      relationName: "relMemberOf",
    }]);
    assert.deepEqual(r.json.skipped, [
      {
        sourceNoteId: W.charOskar,
        targetNoteId: W.charBrannoch,
        relationshipType: "enemy",
        reason: "Relation already exists.",
      },
      {
        sourceNoteId: W.charOskar,
        targetNoteId: W.charMira,
        relationshipType: "friend",
        reason: "Unknown relationship type: friend",
      },
    ]);
    assert.equal(r.json.failed.length, 1);
    assert.equal(r.json.failed[0].targetNoteId, "missing12345");
    assert.match(r.json.failed[0].error, /^ETAPI POST \/attributes → 404/);
    const own = (id: string) => w.core.store.ownAttributes(id).map((a) => `${a.name}=${a.value}`);
    assert.ok(own(W.charOskar).includes(`relMemberOf=${W.faction}`));
    assert.ok(
      own(W.charOskar).includes(`relationNote=member_of:${W.faction}: Keeps the books`),
    );
    assert.ok(own(W.faction).includes(`relMemberOf=${W.charOskar}`), "inverse, same name");
    const oneWay = await w.call("/suggest/relationships/apply", {
      body: {
        sourceNoteId: W.charIselde,
        relations: [{ targetNoteId: W.locLighthouse, relationshipType: "inhabits" }],
        bidirectional: false,
      },
    });
    assert.equal(oneWay.json.applied.length, 1);
    assert.ok(!own(W.locLighthouse).includes(`relInhabits=${W.charIselde}`));
    const gone = await w.call("/suggest/relationships/apply", {
      body: { sourceNoteId: "missing12345", relations: [] },
    });
    assert.equal(gone.status, 200);
    assert.equal(gone.json.failed[0].targetNoteId, "N/A");
    assert.equal(gone.json.failed[0].relationshipType, "N/A");
    assert.match(gone.json.failed[0].error, /^Failed to fetch source note: ETAPI GET .* → 404/);
    const history = await w.call(`/suggest/history/${W.charOskar}`);
    assert.deepEqual(history.json, { entries: [] }, "the known bug: rows have no userId");
    assert.equal((await w.call(`/suggest/history/${W.charOskar}?limit=51`)).status, 422);
  }));

Deno.test("suggest/graph: rel* relations only, depth, maxNodes, missing center", () =>
  withParserWorld(async (w) => {
    const r = await w.call(`/suggest/graph/${W.charMira}?depth=1`);
    assert.equal(r.status, 200);
    assert.equal(r.json.centerNoteId, W.charMira);
    assert.deepEqual(
      r.json.nodes.map((n: { noteId: string; depth: number }) => [n.noteId, n.depth]),
      [[W.charMira, 0], [W.charOskar, 1], [W.locHarbor, 1]],
    );
    assert.deepEqual(r.json.edges, [
      { sourceNoteId: W.charMira, targetNoteId: W.charOskar, relationshipType: "ally" },
      { sourceNoteId: W.charMira, targetNoteId: W.locHarbor, relationshipType: "inhabits" },
      // the last level's edges are kept, their targets are not visited (as in the real one)
      { sourceNoteId: W.charOskar, targetNoteId: W.charBrannoch, relationshipType: "enemy" },
    ]);
    assert.equal(r.json.nodes[0].loreType, "character");
    assert.equal(r.json.maxDepthReached, 1);
    assert.equal(r.json.truncated, false);
    const deep = await w.call(`/suggest/graph/${W.charMira}?depth=3`);
    const ids = deep.json.nodes.map((n: { noteId: string }) => n.noteId);
    assert.deepEqual(
      new Set(ids),
      new Set([W.charMira, W.charOskar, W.locHarbor, W.charBrannoch]),
    );
    assert.ok(!ids.includes(W.faction), "content links (internalLink) are not followed");
    for (const i of [1, 2, 3, 4, 5, 6, 7]) {
      w.core.store.createAttribute({
        noteId: W.charOskar,
        type: "relation",
        name: "relFamily",
        value: [
          W.charIselde,
          W.locHarbor,
          W.locReef,
          W.faction,
          W.eventFlood,
          W.questLamp,
          W.statEel,
        ][i - 1],
      });
    }
    const capped = await w.call(`/suggest/graph/${W.charMira}?depth=3&maxNodes=5`);
    assert.equal(capped.json.nodes.length, 5);
    assert.equal(capped.json.truncated, true);
    const missing = await w.call("/suggest/graph/missing12345");
    assert.deepEqual(missing.json, {
      nodes: [],
      edges: [],
      centerNoteId: "missing12345",
      maxDepthReached: 0,
      truncated: false,
    });
    for (const qs of ["depth=4", "depth=0", "maxNodes=4", "maxNodes=101", "depth=x"]) {
      const bad = await w.call(`/suggest/graph/${W.charMira}?${qs}`);
      assert.equal(bad.status, 422, qs);
      assert.equal(bad.json.on, "query");
    }
  }));

Deno.test("suggest/gaps: census, pillars, POST logs no user", () =>
  withParserWorld(async (w) => {
    const r = await w.call("/suggest/gaps");
    assert.equal(r.status, 200);
    assert.equal(r.json.typeCounts.character, 4);
    assert.equal(r.json.totalNotes, 16);
    const areas = r.json.gaps.map((g: { area: string }) => g.area);
    assert.ok(areas.includes("Belief") && !areas.includes("Characters"), areas.join());
    assert.ok(r.json.gaps.length <= 5);
    const post = await w.call("/suggest/gaps", { method: "POST" });
    assert.deepEqual(post.json, r.json);
    assert.deepEqual(llmTasks(w), [`gap-detect:${ownerId(w)}`, "gap-detect:-"]);
  }));

Deno.test("suggest/gaps: fallback summaries keep the census", () =>
  withParserWorld(async (w) => {
    const r = await w.call("/suggest/gaps");
    assert.deepEqual(r.json.gaps, []);
    assert.equal(r.json.summary, "LLM response failed validation.");
    assert.equal(r.json.totalNotes, 16);
  }, { ai: { llmOutput: "invalid" } }));

Deno.test("suggest/autocomplete: index titles, then the caller's chunks, then the model", () =>
  withParserWorld(async (w) => {
    const before = await w.call("/suggest/autocomplete?q=reef");
    assert.deepEqual(before.json, { suggestions: [] }, "nothing indexed yet");
    await w.call("/rag/reindex", { method: "POST" });
    const r = await w.call("/suggest/autocomplete?q=reef&limit=2");
    assert.deepEqual(r.json.suggestions[0], { noteId: W.locReef, title: "The Knucklebone Reef" });
    assert.ok(
      r.json.suggestions.some((s: { noteId: string }) => s.noteId === W.charMira),
      "semantic fill: Mira's text mentions reefs",
    );
    assert.equal(r.json.suggestions.length, 2);
    assert.equal(w.parser.store.llmCalls.length, 0, "enough results: no model call");
    const llm = await w.call("/suggest/autocomplete?q=brazen");
    assert.deepEqual(llm.json.suggestions, [{
      noteId: W.charBrannoch,
      title: "Brannoch the Drowned",
    }]);
    assert.deepEqual(llmTasks(w), [`autocomplete:${ownerId(w)}`]);
    for (const qs of ["", "?q=", "?q=a&limit=0", "?q=a&limit=21", "?q=a&limit=x"]) {
      const bad = await w.call(`/suggest/autocomplete${qs}`);
      assert.equal(bad.status, 422, qs);
    }
  }));

Deno.test("suggest group: 20 per window, shared across its routes, 429 body", () =>
  withParserWorld(async (w) => {
    assert.equal((await w.call("/suggest/history/x")).status, 200);
    assert.equal((await w.call("/suggest/autocomplete?q=x")).status, 200);
    const r = await w.call("/suggest/graph/x");
    assert.equal(r.status, 429);
    assert.deepEqual(r.json, { error: "Rate limit exceeded for AI tools.", code: "RATE_LIMITED" });
    assert.equal(r.headers.get("retry-after"), "60");
    const other = await w.call("/consistency/check", { body: { noteIds: ["x"] } });
    assert.equal(other.status, 200, "consistency is a separate bucket");
    const anon = await w.call("/suggest/graph/x", { token: "not-a-session" });
    assert.equal(anon.status, 401);
  }, { rateLimits: { suggest: { max: 2, windowMs: 60_000 } } }));

Deno.test("titles: hits, graph nodes, suggestions and autocomplete relay Core's stored form", () =>
  withParserWorld(async (w) => {
    // `Salt & Smoke <Tide>` as the service writes it: Core stores it escaped
    const stored = "Salt &amp; Smoke &lt;Tide&gt;";
    const { note } = w.core.store.createNote({
      parentNoteId: W.loreRoot,
      title: stored,
      type: "text",
      content: "<p>A smokehouse where the tide turns.</p>",
    });
    const id = note.noteId;
    w.core.store.createAttribute({ noteId: id, type: "label", name: "lore", value: "" });
    w.core.store.createAttribute({
      noteId: id,
      type: "relation",
      name: "relAlly",
      value: W.charMira,
    });
    await ownerReindex(w); // the real indexer reads note.title from Core and keeps it as is
    const rag = await w.call("/rag/query", { body: { text: "smokehouse tide" } });
    assert.equal(rag.json.results[0].noteId, id);
    assert.equal(rag.json.results[0].noteTitle, stored);
    const graph = await w.call(`/suggest/graph/${id}?depth=1`);
    assert.equal(graph.json.nodes[0].title, stored);
    const text = "Mira Tallowend smokes fish at Salt & Smoke <Tide> every morning.";
    const suggest = await w.call("/suggest/relationships", { body: { text } });
    const target = suggest.json.suggestions.find((s: { targetNoteId: string }) =>
      s.targetNoteId === id
    );
    assert.equal(target?.targetTitle, stored, "the model names it as its context shows it");
    const complete = await w.call("/suggest/autocomplete?q=smoke");
    assert.deepEqual(complete.json.suggestions[0], { noteId: id, title: stored });
  }));
