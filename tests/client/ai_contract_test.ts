/**
 * The client contract of the AI features: for each call the Portal UI (branch `dev`) makes from
 * its brain dump, session, AI tool, search, dashboard, copilot and import screens, the request
 * exactly as its browser code sends it (method, path, query, `Content-Type`, body fields) and the
 * fields it then reads, asserted over HTTP through the real app against the Core and Parser
 * doubles. Each test names the UI file and function that makes the call. Where the older UI
 * (branch `main`) reads other fields of the same answer, they are asserted too.
 */
import assert from "node:assert/strict";
import { assertNoSecrets, type Harness, withHarness } from "../helpers/harness.ts";
import { reindexForOwner } from "../../sims/parser.ts";
import { seedShowcase } from "../../sims/showcase.ts";
import { W } from "../../sims/world.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const OPTS = {
  parser: { rateLimits: { "brain-dump": { max: 1_000, windowMs: 60_000 } } },
  parserSession: true,
  env: { LORE_ROOT_NOTE_ID: W.loreRoot },
};

const withUi = (fn: (h: Harness) => Promise<void>) => withHarness(fn, OPTS);

/**
 * A call as the UI's browser code makes it: same origin (the browser adds `Origin` to writes),
 * a JSON body with `Content-Type: application/json` when it sends one.
 */
async function ui(
  h: Harness,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; headers: Headers; text: string }> {
  const headers = new Headers({ accept: "*/*" });
  if (method !== "GET") headers.set("origin", h.url);
  if (body !== undefined) headers.set("Content-Type", "application/json");
  const res = await fetch(h.url + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assertNoSecrets(h, text);
  return { status: res.status, headers: res.headers, text };
}

/** {@linkcode ui}, the answer read as JSON and required to be a success. */
async function uiJson(h: Harness, method: string, path: string, body?: unknown): Promise<Json> {
  const r = await ui(h, method, path, body);
  assert.ok(r.status >= 200 && r.status < 300, `${method} ${path} → ${r.status}: ${r.text}`);
  return JSON.parse(r.text);
}

/**
 * The events of an SSE body read the way hooks/use-sse-stream.ts reads them: line by line,
 * `event: ` names the next `data: ` line, whose text is JSON (or kept as text); any other line
 * (comments, blanks) resets the name to `message` only when blank.
 */
function sseAsTheUiReadsIt(body: string): { event: string; data: Json }[] {
  const out: { event: string; data: Json }[] = [];
  let current = "message";
  for (const line of body.split("\n")) {
    if (line.startsWith("event: ")) current = line.slice(7).trim();
    else if (line.startsWith("data: ")) {
      let data: Json;
      try {
        data = JSON.parse(line.slice(6));
      } catch {
        data = line.slice(6);
      }
      out.push({ event: current, data });
      current = "message";
    } else if (line === "") current = "message";
  }
  return out;
}

const DUMP = "Captain Hollis Marrow sails the Gull Queen out of Saltmarrow Harbor at dawn. " +
  "Hollis Marrow owes the Tidewater Company a fortune.";

/** The fields a created/updated entity card reads (brain-dump/page.tsx, EntityCard). */
function assertEntityCards(list: Json[]) {
  for (const e of list) {
    assert.equal(typeof e.noteId, "string");
    assert.equal(typeof e.title, "string");
    assert.equal(typeof e.type, "string");
  }
}

// ---------------------------------------------------------------------------------------------
// Brain dump, session

Deno.test("brain-dump page: auto runs as a stream the UI can read; history is a bare array", () =>
  withUi(async (h) => {
    // app/(portal)/brain-dump/page.tsx, handleAutoStream: POST /api/brain-dump/stream { rawText }
    const r = await ui(h, "POST", "/api/brain-dump/stream", { rawText: DUMP });
    assert.equal(r.status, 200);
    assert.match(r.headers.get("content-type") ?? "", /^text\/event-stream/);
    const events = sseAsTheUiReadsIt(r.text);
    const status = events.filter((e) => e.event === "status");
    assert.ok(status.length > 0);
    for (const s of status) {
      assert.equal(typeof s.data.stage, "string");
      assert.equal(typeof s.data.message, "string");
    }
    for (const t of events.filter((e) => e.event === "token")) {
      assert.equal(typeof t.data.content, "string");
    }
    const done = events.find((e) => e.event === "done");
    assert.ok(done, "a done event");
    // normalizeResult(JSON.parse(done.raw)): summary, created, updated, skipped
    const result = JSON.parse(done.data.raw);
    assert.equal(typeof result.summary, "string");
    assertEntityCards(result.created);
    assertEntityCards(result.updated);
    assert.ok(result.created.some((e: Json) => e.title === "Tidewater Company"));
    assert.ok(Array.isArray(result.skipped));

    // brain-dump/page.tsx and session/page.tsx, the history queries: GET /api/brain-dump/history
    const history = await uiJson(h, "GET", "/api/brain-dump/history");
    assert.ok(Array.isArray(history), "a bare array (the Session page of `main` maps it as one)");
    assert.equal(history.length, 1);
    const [entry] = history;
    assert.equal(entry.rawText, DUMP);
    assert.ok(Array.isArray(entry.notesCreated) && Array.isArray(entry.notesUpdated));
    assert.ok(!Number.isNaN(new Date(entry.createdAt).getTime()));
    // what the Session page of `main` reads: when, and how many notes
    assert.equal(entry.timestamp, entry.createdAt);
    assert.equal(entry.entityCount, entry.notesCreated.length + entry.notesUpdated.length);
    assert.ok(entry.entityCount > 0);
    assert.ok(entry.model === null || typeof entry.model === "string");
  }));

Deno.test("brain-dump page: review, then commit the proposals as received; the detail page", () =>
  withUi(async (h) => {
    // brain-dump/page.tsx, runDump: POST /api/brain-dump { rawText, mode: "review" }
    const review = await uiJson(h, "POST", "/api/brain-dump", { rawText: DUMP, mode: "review" });
    assert.equal(review.mode, "review");
    assert.equal(typeof review.summary, "string");
    assert.ok(review.proposedEntities.length > 0);
    for (const p of review.proposedEntities) {
      assert.equal(typeof p.title, "string");
      assert.equal(typeof p.type, "string");
      assert.ok(p.action === "create" || p.action === "update");
    }
    // commitReview: the approved proposals exactly as the review gave them; the page cleared its
    // text after the review, so rawText is its fallback
    const approved = review.proposedEntities.filter((p: Json) => p.title !== "Gull Queen");
    const commit = await uiJson(h, "POST", "/api/brain-dump/commit", {
      rawText: "review commit",
      approvedEntities: approved,
    });
    assert.equal(typeof commit.summary, "string");
    assertEntityCards(commit.created);
    assertEntityCards(commit.updated);
    assert.ok(commit.created.some((e: Json) => e.title === "Tidewater Company"));
    assert.ok(!commit.created.some((e: Json) => e.title === "Gull Queen"));
    for (const s of commit.skipped) assert.equal(typeof s.reason, "string");

    const [entry] = await uiJson(h, "GET", "/api/brain-dump/history");
    assert.equal(entry.model, "review-commit");
    // app/(portal)/brain-dump/[id]/page.tsx: GET /api/brain-dump/history/:id
    const detail = await uiJson(h, "GET", `/api/brain-dump/history/${entry.id}`);
    assert.equal(detail.rawText, "review commit");
    assert.ok(typeof (detail.summary ?? detail.parsedJson?.summary) === "string");
    for (const e of detail.parsedJson.entities) {
      assert.equal(typeof e.title, "string");
      assert.equal(typeof e.type, "string");
    }
    assert.equal(detail.notesCreated.length, commit.created.length);
  }));

Deno.test("session page: quick capture (auto) gives the created and updated cards", () =>
  withUi(async (h) => {
    // app/(portal)/session/page.tsx, captureMutation: POST /api/brain-dump { rawText, mode }
    const data = await uiJson(h, "POST", "/api/brain-dump", { rawText: DUMP, mode: "auto" });
    assertEntityCards(data.created);
    assertEntityCards(data.updated);
    assert.ok(data.updated.some((e: Json) => e.noteId === W.locHarbor));
    // the recap: newest first, a bare array of which the page shows five
    const history = await uiJson(h, "GET", "/api/brain-dump/history");
    assert.ok(Array.isArray(history));
    assert.deepEqual(history[0].notesUpdated, [W.locHarbor]);
  }));

// ---------------------------------------------------------------------------------------------
// AI tools

Deno.test("consistency page and the brain dump's contradiction check", () =>
  withUi(async (h) => {
    await reindexForOwner(h.parser!);
    const read = (data: Json) => {
      assert.equal(typeof data.summary, "string");
      for (const i of data.issues) {
        assert.ok(["high", "medium", "low"].includes(i.severity));
        assert.equal(typeof i.type, "string");
        assert.equal(typeof i.description, "string");
        assert.ok(Array.isArray(i.affectedNoteIds));
      }
    };
    // app/(portal)/ai/consistency/page.tsx, runCheck: `noteIds: undefined` leaves the body {}
    read(await uiJson(h, "POST", "/api/ai/consistency", {}));
    // brain-dump/page.tsx, runConsistencyCheck: the ids of the notes a dump wrote
    read(await uiJson(h, "POST", "/api/ai/consistency", { noteIds: [W.charMira, W.locHarbor] }));
  }));

Deno.test("gaps page: POST without a body", () =>
  withUi(async (h) => {
    // app/(portal)/ai/gaps/page.tsx: fetch("/api/ai/gaps", { method: "POST" })
    const r = await fetch(`${h.url}/api/ai/gaps`, { method: "POST", headers: { origin: h.url } });
    assert.equal(r.status, 200);
    const data = await r.json();
    assert.ok(data.gaps.length > 0);
    for (const g of data.gaps) {
      for (const k of ["area", "description", "suggestion"]) assert.equal(typeof g[k], "string");
      assert.ok(["high", "medium", "low"].includes(g.severity));
    }
  }));

Deno.test("relationships page: suggestions carry relationshipType; Apply marks them applied", () =>
  withUi(async (h) => {
    await reindexForOwner(h.parser!);
    // app/(portal)/ai/relationships/page.tsx, getSuggestions: POST { text, noteId }
    const text = "Iselde Crane keeps Greyfin Lighthouse. She trusts Oskar Venn.";
    const { suggestions } = await uiJson(h, "POST", "/api/ai/relationships", {
      text,
      noteId: W.charIselde,
    });
    const oskar = suggestions.find((s: Json) => s.targetNoteId === W.charOskar);
    assert.ok(oskar, JSON.stringify(suggestions));
    assert.equal(oskar.relationshipType, "ally");
    assert.equal(oskar.targetTitle, "Oskar Venn");
    assert.equal(typeof oskar.description, "string");
    for (const s of suggestions) assert.equal(typeof s.relationshipType, "string");

    // applyRelation: PUT with the suggestion's relationshipType, bidirectional
    const key = `${oskar.targetNoteId}::${oskar.relationshipType}`;
    const result = await uiJson(h, "PUT", "/api/ai/relationships", {
      sourceNoteId: W.charIselde,
      relations: [{
        targetNoteId: oskar.targetNoteId,
        relationshipType: oskar.relationshipType,
        description: oskar.description,
      }],
      bidirectional: true,
    });
    const keys = (list: Json[]) => list.map((r) => `${r.targetNoteId}::${r.relationshipType}`);
    assert.deepEqual(keys(result.applied), [key], "the page marks the suggestion applied");
    assert.deepEqual(result.skipped, []);
    assert.deepEqual(result.failed, []);
    const iselde = h.core.store.ownAttributes(W.charIselde);
    assert.ok(iselde.some((a) => a.name === "relAlly" && a.value === W.charOskar));
    // applying it again: skipped, which the page also shows as applied
    const again = await uiJson(h, "PUT", "/api/ai/relationships", {
      sourceNoteId: W.charIselde,
      relations: [{ targetNoteId: W.charOskar, relationshipType: "ally", description: "x" }],
      bidirectional: true,
    });
    assert.deepEqual(keys(again.skipped), [key]);
    // a target that is gone: the page shows `failed[].error` under the suggestion
    const gone = await uiJson(h, "PUT", "/api/ai/relationships", {
      sourceNoteId: W.charIselde,
      relations: [{ targetNoteId: "gone12345678", relationshipType: "rival", description: "x" }],
      bidirectional: true,
    });
    assert.deepEqual(keys(gone.failed), ["gone12345678::rival"]);
    assert.equal(typeof gone.failed[0].error, "string");
  }));

// ---------------------------------------------------------------------------------------------
// Semantic search and the index

Deno.test("search page and dashboard: semantic results carry title; GET /api/rag is the index status", () =>
  withUi(async (h) => {
    // app/(portal)/page.tsx, the "RAG Indexed" card: GET /api/rag, { indexedNotes, model }
    const empty = await uiJson(h, "GET", "/api/rag");
    assert.deepEqual(empty, { indexedNotes: 0, lastIndexed: null, model: null });
    const { indexed } = await reindexForOwner(h.parser!);
    const status = await uiJson(h, "GET", "/api/rag");
    assert.equal(status.indexedNotes, indexed);
    assert.ok(indexed > 0);
    assert.equal(typeof status.model, "string");
    assert.ok(!Number.isNaN(new Date(status.lastIndexed).getTime()));

    // app/(portal)/search/page.tsx, mode "rag": POST /api/rag { text, topK: 20 }
    const { results } = await uiJson(h, "POST", "/api/rag", {
      text: "lighthouse keeper",
      topK: 20,
    });
    const iselde = results.find((r: Json) => r.noteId === W.charIselde);
    assert.ok(iselde, JSON.stringify(results));
    assert.equal(iselde.title, "Iselde Crane");
    assert.equal(typeof iselde.score, "number");
    assert.equal(typeof iselde.content, "string");
    for (const r of results) assert.equal(typeof r.title, "string");
  }));

Deno.test("the sample world's index: seeded notes and new brain dumps are found semantically", () =>
  withHarness(async (h) => {
    seedShowcase(h.core.store); // the sample world as `deno task dev` serves it
    await reindexForOwner(h.parser!); // what `deno task dev` does once at start
    const find = async (text: string) => {
      const { results } = await uiJson(h, "POST", "/api/rag", { text, topK: 20 });
      return results.map((r: Json) => r.title);
    };
    assert.ok((await find("reef pilot")).includes("Mira Tallowend"));
    // a brain dump's new notes are searchable as soon as its answer is complete
    await ui(h, "POST", "/api/brain-dump/stream", { rawText: DUMP });
    assert.ok((await find("Tidewater Company fortune")).includes("Tidewater Company"));
    await uiJson(h, "POST", "/api/brain-dump", {
      rawText: "The Brinewatch Order guards the drowned bells of Saltmarrow.",
      mode: "auto",
    });
    assert.ok((await find("drowned bells")).includes("The Brinewatch Order"));
    // and through the search route's semantic mode
    const search = await uiJson(h, "GET", "/api/search?q=drowned%20bells&mode=rag");
    const hits = Array.isArray(search) ? search : search.results;
    assert.ok(hits.some((n: Json) => n.title === "The Brinewatch Order"), JSON.stringify(search));
  }, OPTS));

// ---------------------------------------------------------------------------------------------
// Copilot

Deno.test("copilot: a turn as the UI sends it (messages), its events, Apply with approved ids", () =>
  withUi(async (h) => {
    const noteId = W.charMira;
    // components/portal/ArticleCopilot.tsx, sendMessage: POST …/copilot/stream { messages }
    const first = [{ role: "user", content: "Who is she?" }];
    const turn1 = await ui(h, "POST", `/api/lore/${noteId}/copilot/stream`, { messages: first });
    assert.equal(turn1.status, 200, turn1.text);
    const events1 = sseAsTheUiReadsIt(turn1.text);
    const result1 = events1.find((e) => e.event === "result")?.data;
    assert.equal(typeof result1?.assistantMessage, "string", turn1.text);
    assert.ok(Array.isArray(result1.citations));
    for (const t of events1.filter((e) => e.event === "token")) {
      assert.equal(typeof t.data.content, "string");
    }
    assert.ok(!events1.some((e) => e.event === "error"), turn1.text);

    // the next turn sends the whole conversation, the assistant's answer included
    const second = [
      ...first,
      { role: "assistant", content: result1.assistantMessage },
      { role: "user", content: "set mood to wary" },
    ];
    const turn2 = await ui(h, "POST", `/api/lore/${noteId}/copilot/stream`, { messages: second });
    const result2 = sseAsTheUiReadsIt(turn2.text).find((e) => e.event === "result")?.data;
    const proposal = result2?.proposal;
    assert.ok(proposal?.targets?.length === 1, turn2.text);
    const [target] = proposal.targets;
    assert.equal(target.targetId, noteId);
    assert.equal(typeof target.rationale, "string");

    // applySelectedChanges: { proposal, approvedTargetIds }; reads `applied`
    const apply = await uiJson(h, "POST", `/api/lore/${noteId}/copilot/apply`, {
      proposal,
      approvedTargetIds: [target.targetId],
    });
    assert.deepEqual(apply.applied.updatedNoteIds, [noteId]);
    assert.deepEqual(apply.applied.createdNoteIds, []);
    assert.deepEqual(apply.applied.skipped, []);
    assert.deepEqual(apply.applied.failed, []);
    assert.equal(h.core.store.labelValue(noteId, "mood"), "wary");
  }));

Deno.test("copilot: only the approved targets are applied; skipped and failed name targets", () =>
  withUi(async (h) => {
    const noteId = W.charMira;
    const target = (targetId: string, value: string) => ({
      kind: "update",
      targetId,
      labelUpserts: [{ name: "mood", value }],
      labelDeletes: [],
      relationAdds: [],
      relationDeletes: [],
      rationale: "r",
    });
    const proposal = {
      targets: [target(noteId, "calm"), target(W.faction, "busy"), target(W.charIselde, "x")],
    };
    const apply = await uiJson(h, "POST", `/api/lore/${noteId}/copilot/apply`, {
      proposal,
      approvedTargetIds: [noteId, W.charIselde],
    });
    assert.deepEqual(apply.applied.updatedNoteIds, [noteId]);
    // Iselde is not writable from Mira's page: the UI lists the skipped target ids
    assert.deepEqual(apply.applied.skipped, [W.charIselde]);
    assert.equal(h.core.store.labelValue(W.faction, "mood"), undefined, "not approved");
  }));

// ---------------------------------------------------------------------------------------------
// Import

const MAP = {
  info: { mapName: "Brinemarch", width: 960, seed: "42" },
  settings: { mapName: "Brinemarch", distanceUnit: "mi" },
  pack: {
    cells: { i: [0, 1, 2] },
    states: [{ i: 0, name: "Neutrals" }, { i: 1, name: "Vell", fullName: "Kingdom of Vell" }],
    burgs: [{}, { i: 1, name: "Tarnholm", state: 1, population: 3.2 }],
    religions: [{ i: 0, name: "No religion" }],
    cultures: [{ i: 0, name: "Wildlands" }, { i: 1, name: "Vellish" }],
  },
  notes: [{ id: "burg1", name: "Tarnholm Docks", legend: "Tar and rope" }],
};

Deno.test("import page: system pack, and the map export through the UI's azgaar path", () =>
  withUi(async (h) => {
    // app/(portal)/import/page.tsx, importMutation: { notes, skipDuplicates: true }; a pack file's
    // entries carry fields the importer does not read
    const pack = await uiJson(h, "POST", "/api/import/system-pack", {
      notes: [
        { name: "Reef Eel", cr: "1/2", type: "beast", ac: 13, hp: 11, source: "Coast Bestiary" },
        { name: "Lamp Wraith", cr: 3, size: "Medium" },
      ],
      skipDuplicates: true,
    });
    assert.deepEqual([pack.created, pack.skipped, pack.errors], [2, 0, 0]);
    assert.deepEqual(pack.detail.errors, []);

    // azgaarPreviewMutation: POST /api/import/azgaar?action=preview { mapData }
    const preview = await uiJson(h, "POST", "/api/import/azgaar?action=preview", {
      mapData: MAP,
    });
    assert.deepEqual(preview, {
      mapName: "Brinemarch",
      stateCnt: 1,
      burgCnt: 1,
      religionCnt: 0,
      cultureCnt: 1,
      noteCnt: 1,
    });
    // azgaarImportMutation: POST /api/import/azgaar { mapData, options }
    const options = {
      importStates: true,
      importBurgs: true,
      importReligions: true,
      importCultures: true,
      importNotes: true,
      skipDuplicates: true,
    };
    const imported = await uiJson(h, "POST", "/api/import/azgaar", { mapData: MAP, options });
    assert.equal(imported.mapName, "Brinemarch");
    assert.deepEqual(imported.totals, { created: 4, skipped: 0, errors: 0 });
  }));
