/**
 * AI tools, relationships, graph and RAG over HTTP through the real app, against the Core double
 * (sample world) and the Parser double. The shared Parser error matrix is in
 * parser_error_paths_test.ts; route-specific failures are here.
 */
import assert from "node:assert/strict";
import { assertNoSecrets, type Harness, withHarness } from "../helpers/harness.ts";
import { answerMovingTime, manualDeadlines } from "../helpers/manual_deadlines.ts";
import { type RecordedRequest, reindexForOwner, seedRagIndex } from "../../sims/parser.ts";
import { W } from "../../sims/world.ts";

const withParser = (fn: (h: Harness) => Promise<void>) =>
  withHarness(fn, { parser: true, parserSession: true });

// deno-lint-ignore no-explicit-any
type Body = any;

const send = async (h: Harness, method: string, path: string, json?: unknown) => {
  const r = await h.requestJson<Body>(path, { method, json });
  assertNoSecrets(h, JSON.stringify(r.body));
  return r;
};

/** What reached the Parser double at `path` (feature calls only). */
const parserCalls = (h: Harness, path: string | RegExp): RecordedRequest[] =>
  h.parser!.requests.filter((r) => typeof path === "string" ? r.path === path : path.test(r.path));

const sentBody = (r: RecordedRequest) => JSON.parse(r.bodyText ?? "null");

interface Attr {
  noteId: string;
  type: string;
  name: string;
  value: string;
}
const ownAttrs = async (h: Harness, noteId: string) =>
  (await h.etapi<{ attributes: Attr[] }>(`/notes/${noteId}`)).attributes
    .filter((a) => a.noteId === noteId).map((a) => `${a.type}:${a.name}=${a.value}`);

/** Every request in `cases` answers 400 INVALID_REQUEST and nothing reaches the Parser. */
async function rejects(h: Harness, cases: [string, string, unknown?][]) {
  h.parser!.clearRequests();
  for (const [method, path, json] of cases) {
    const r = await send(h, method, path, json);
    assert.equal(r.status, 400, `${method} ${path} ${JSON.stringify(json)}`);
    assert.equal(r.body.error, "INVALID_REQUEST");
  }
  assert.deepEqual(parserCalls(h, /^\/(rag|suggest|consistency)\//), []);
}

Deno.test("consistency: ids deduplicated and forwarded; the Parser's issues from the owner's index", () =>
  withParser(async (h) => {
    const r = await send(h, "POST", "/api/ai/consistency", {
      noteIds: [W.charMira, W.charOskar, W.charMira],
    });
    assert.equal(r.status, 200);
    // the real Parser searches Core for #noteId=… labels, which lore notes do not carry
    assert.deepEqual(r.body, { issues: [], summary: "No lore notes found to check." });
    assert.deepEqual(parserCalls(h, "/consistency/check").map(sentBody), [{
      noteIds: [W.charMira, W.charOskar],
    }]);
    await h.etapi("/attributes", {
      method: "POST",
      json: { noteId: W.charMira, type: "relation", name: "relEnemy", value: W.charOskar },
    });
    // what the owner's index holds after a reindex of these two notes
    for (const noteId of [W.charMira, W.charOskar]) {
      const note = h.core.store.getNote(noteId)!;
      seedRagIndex(h.parser!.store, {
        noteId,
        title: note.title,
        content: "characters and their relationships",
        attributes: h.core.store.ownAttributes(noteId),
      });
    }
    const sampled = await send(h, "POST", "/api/ai/consistency", {});
    assert.equal(sampled.status, 200);
    assert.deepEqual(sampled.body.issues[0], {
      type: "contradiction",
      severity: "high",
      description: "Mira Tallowend is recorded as both an ally and an enemy of Oskar Venn.",
      affectedNoteIds: [W.charMira, W.charOskar],
    });
    assert.match(sampled.body.summary, /across 2 lore entries/);
    assert.deepEqual(sentBody(parserCalls(h, "/consistency/check")[1]), { noteIds: [] });
    const none = await send(h, "POST", "/api/ai/consistency", { noteIds: ["gone12345678"] });
    assert.deepEqual(none.body, { issues: [], summary: "No lore notes found to check." });
    await rejects(h, [
      ["POST", "/api/ai/consistency", { noteIds: "x" }],
      ["POST", "/api/ai/consistency", { noteIds: ["../x"] }],
      ["POST", "/api/ai/consistency", { noteIds: Array.from({ length: 51 }, (_, i) => `n${i}`) }],
      ["POST", "/api/ai/consistency", { noteIds: [], extra: 1 }],
    ]);
  }));

Deno.test("gaps: GET and POST reach the same Parser method, never cached", () =>
  withParser(async (h) => {
    for (const method of ["GET", "POST"]) {
      const r = await send(h, method, "/api/ai/gaps");
      assert.equal(r.status, 200, method);
      assert.equal(r.headers.get("cache-control"), "no-store");
      assert.equal(r.body.totalNotes, 16);
      assert.equal(r.body.typeCounts.character, 4);
      assert.ok(r.body.gaps.some((g: { area: string }) => g.area === "Belief"));
      assert.deepEqual(Object.keys(r.body).sort(), ["gaps", "summary", "totalNotes", "typeCounts"]);
    }
    assert.deepEqual(parserCalls(h, "/suggest/gaps").map((r) => r.method), ["GET", "POST"]);
  }));

Deno.test("relationship suggestions for a text: the kind as `type` and as `relationshipType`", () =>
  withParser(async (h) => {
    await reindexForOwner(h.parser!); // the real Parser suggests only from the owner's index
    const text = "Iselde Crane keeps Greyfin Lighthouse. She trusts Oskar Venn.";
    const r = await send(h, "POST", "/api/ai/relationships", { text, noteId: W.charIselde });
    assert.equal(r.status, 200);
    const byTarget = Object.fromEntries(
      r.body.suggestions.map((s: { targetNoteId: string }) => [s.targetNoteId, s]),
    );
    assert.deepEqual(byTarget[W.charOskar], {
      targetNoteId: W.charOskar,
      targetTitle: "Oskar Venn",
      type: "ally",
      relationshipType: "ally",
      description: "She trusts Oskar Venn.",
      confidence: "high",
    });
    assert.equal(byTarget[W.locLighthouse].type, "located_in");
    assert.ok(!(W.charIselde in byTarget));
    assert.deepEqual(sentBody(parserCalls(h, "/suggest/relationships")[0]), {
      text,
      noteId: W.charIselde,
    });
    await rejects(h, [
      ["POST", "/api/ai/relationships", { text: "   " }],
      ["POST", "/api/ai/relationships", { text: "x".repeat(50_001) }],
      ["POST", "/api/ai/relationships", { text: "x", noteId: "a/b" }],
      ["POST", "/api/ai/relationships", { text: "x", extra: true }],
    ]);
  }));

Deno.test("apply relationships: written to Core as rel<Type> (+ inverse, note label), mapped back", () =>
  withParser(async (h) => {
    const r = await send(h, "PUT", "/api/ai/relationships", {
      sourceNoteId: W.charOskar,
      relations: [
        { targetNoteId: W.faction, type: "member_of", description: "  Keeps the books  " },
        { targetNoteId: W.charBrannoch, type: "enemy" },
        { targetNoteId: "gone12345678", type: "rival" },
      ],
    });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      applied: [{
        sourceNoteId: W.charOskar,
        targetNoteId: W.faction,
        type: "member_of",
        relationshipType: "member_of",
        relationName: "relMemberOf",
      }],
      skipped: [{
        sourceNoteId: W.charOskar,
        targetNoteId: W.charBrannoch,
        type: "enemy",
        relationshipType: "enemy",
        reason: "ALREADY_EXISTS",
      }],
      failed: [{
        sourceNoteId: W.charOskar,
        targetNoteId: "gone12345678",
        type: "rival",
        relationshipType: "rival",
        error: "TARGET_NOT_FOUND",
        message: "The target note does not exist",
      }],
    });
    assert.deepEqual(sentBody(parserCalls(h, "/suggest/relationships/apply")[0]), {
      sourceNoteId: W.charOskar,
      relations: [
        { targetNoteId: W.faction, relationshipType: "member_of", description: "Keeps the books" },
        { targetNoteId: W.charBrannoch, relationshipType: "enemy" },
        { targetNoteId: "gone12345678", relationshipType: "rival" },
      ],
    });
    const oskar = await ownAttrs(h, W.charOskar);
    assert.ok(oskar.includes(`relation:relMemberOf=${W.faction}`), oskar.join());
    assert.ok(oskar.includes(`label:relationNote=member_of:${W.faction}: Keeps the books`));
    assert.ok((await ownAttrs(h, W.faction)).includes(`relation:relMemberOf=${W.charOskar}`));

    // the front end's word for the kind, alone or agreeing with ours
    const oneWay = await send(h, "PUT", "/api/ai/relationships", {
      sourceNoteId: W.charIselde,
      relations: [{
        targetNoteId: W.locLighthouse,
        relationshipType: "inhabits",
        type: "inhabits",
      }],
      bidirectional: false,
    });
    assert.equal(oneWay.body.applied[0].relationName, "relInhabits");
    assert.equal(sentBody(parserCalls(h, "/suggest/relationships/apply")[1]).bidirectional, false);
    assert.ok(
      !(await ownAttrs(h, W.locLighthouse)).includes(`relation:relInhabits=${W.charIselde}`),
    );

    const missing = await send(h, "PUT", "/api/ai/relationships", {
      sourceNoteId: "gone12345678",
      relations: [{ targetNoteId: W.faction, type: "ally" }],
    });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body.details, {
      fields: [{ path: "body.sourceNoteId", message: "not found" }],
    });
    h.core.fault({ path: `/etapi/notes/${W.charMira}`, status: 500 });
    const unreadable = await send(h, "PUT", "/api/ai/relationships", {
      sourceNoteId: W.charMira,
      relations: [{ targetNoteId: W.faction, type: "ally" }],
    });
    assert.equal(unreadable.status, 502);
    assert.equal(unreadable.body.error, "UPSTREAM_ERROR");
    assert.ok(!JSON.stringify(unreadable.body).includes("ETAPI"), "the Parser's words stay out");
    h.core.clearFaults();

    const rel = (type: unknown, targetNoteId: unknown = W.faction) => ({
      sourceNoteId: W.charMira,
      relations: [{ targetNoteId, type }],
    });
    const both = (type: string, relationshipType: string) => ({
      sourceNoteId: W.charMira,
      relations: [{ targetNoteId: W.faction, type, relationshipType }],
    });
    await rejects(h, [
      ["PUT", "/api/ai/relationships", rel("friend")],
      ["PUT", "/api/ai/relationships", rel(undefined)],
      ["PUT", "/api/ai/relationships", both("ally", "enemy")],
      ["PUT", "/api/ai/relationships", both("ally", "friend")],
      ["PUT", "/api/ai/relationships", rel("relAlly")],
      ["PUT", "/api/ai/relationships", rel("ally", W.charMira)],
      ["PUT", "/api/ai/relationships", rel("ally", "../x")],
      ["PUT", "/api/ai/relationships", { sourceNoteId: W.charMira, relations: [] }],
      [
        "PUT",
        "/api/ai/relationships",
        {
          sourceNoteId: W.charMira,
          relations: Array.from({ length: 51 }, () => ({ targetNoteId: W.faction, type: "ally" })),
        },
      ],
      ["PUT", "/api/ai/relationships", { ...rel("ally"), bidirectional: "yes" }],
      ["PUT", "/api/ai/relationships", { relations: [{ targetNoteId: W.faction, type: "ally" }] }],
    ]);
  }));

Deno.test("a note's relationships: Core relations plus confirmed suggestions, one search each", () =>
  withParser(async (h) => {
    await reindexForOwner(h.parser!); // the real Parser suggests only from the owner's index
    h.core.clearRequests();
    const r = await send(h, "POST", `/api/lore/${W.charMira}/relationships`);
    assert.equal(r.status, 200);
    assert.equal(r.body.noteId, W.charMira);
    assert.deepEqual(
      r.body.existing.map((x: Body) => [x.name, x.type, x.targetNoteId, x.targetTitle]),
      [
        ["portraitImage", null, W.imgPortrait, "mira-portrait.png"],
        ["relAlly", "ally", W.charOskar, "Oskar Venn"],
        ["relInhabits", "inhabits", W.locHarbor, "Saltmarrow Harbor"],
      ],
    );
    assert.equal(r.body.existing[1].loreType, "character");
    assert.ok(r.body.existing.every((x: Body) => typeof x.attributeId === "string"));
    // the front end's name for the kind beside ours
    assert.ok(r.body.suggestions.every((s: Body) => s.relationshipType === s.type));
    // Oskar is already an ally; the harbor is only inhabited, not yet "located in"
    assert.deepEqual(
      r.body.suggestions.map((s: Body) => [s.type, s.targetNoteId, s.targetTitle, s.loreType])
        .sort((a: string[], b: string[]) => a[2].localeCompare(b[2])),
      [
        ["located_in", W.locHarbor, "Saltmarrow Harbor", "location"],
        ["member_of", W.faction, "The Lantern Guild", "faction"],
      ],
    );
    assert.equal(r.body.suggestionsError, null);
    const sent = sentBody(parserCalls(h, "/suggest/relationships")[0]);
    assert.equal(sent.noteId, W.charMira);
    assert.match(sent.text, /^Mira Tallowend\n\nMira Tallowend pilots ships through the reefs/);
    assert.ok(!sent.text.includes("<"), "plain text, no HTML");
    // the Parser double's own Core calls are in the log too: its searches are `#lore`
    const ours = h.core.requests.filter((x) =>
      x.path === "/etapi/notes" && new URLSearchParams(x.search).get("search") !== "#lore"
    );
    // relation targets as a note read resolves them (archived included), suggestion targets as
    // the lore search finds them: one search each, sent side by side
    assert.equal(ours.length, 2, "one search for relation targets, one for suggestions");
    for (const x of ours) {
      assert.match(new URLSearchParams(x.search).get("search")!, /^note\.noteId = "/);
    }
    assert.deepEqual(
      ours.map((x) => new URLSearchParams(x.search).get("includeArchivedNotes")).sort(),
      ["true", null].sort(),
    );
    assert.deepEqual(
      h.core.requests.map((x) => `${x.method} ${x.path}`).filter((x) => x !== "GET /etapi/notes"),
      [`GET /etapi/notes/${W.charMira}`, `GET /etapi/notes/${W.charMira}/content`],
    );
  }));

Deno.test("a note's relationships: Parser suggestions naming non-lore, missing or self are dropped", () =>
  withParser(async (h) => {
    const suggestion = (targetNoteId: string, relationshipType = "related_to") => ({
      targetNoteId,
      targetTitle: "Parser says so",
      relationshipType,
      description: "d",
    });
    h.parser!.fault({
      path: "/suggest/relationships",
      status: 200,
      body: JSON.stringify({
        suggestions: [
          suggestion(W.media), // exists, not lore
          suggestion("gone12345678"), // missing
          suggestion("bad id/../x"), // not an id
          suggestion(W.charIselde), // itself
          suggestion(W.charMira, "rival"),
          suggestion(W.charMira, "rival"), // twice
        ],
      }),
    });
    const r = await send(h, "POST", `/api/lore/${W.charIselde}/relationships`);
    assert.deepEqual(r.body.suggestions, [{
      targetNoteId: W.charMira,
      targetTitle: "Mira Tallowend",
      loreType: "character",
      relationshipType: "rival",
      type: "rival",
      description: "d",
      confidence: null,
    }]);
  }));

Deno.test("a note's relationships: the Core part answers when the Parser cannot", () =>
  withHarness(async (h) => {
    const noSession = await send(h, "POST", `/api/lore/${W.charMira}/relationships`);
    assert.equal(noSession.status, 200);
    assert.equal(noSession.body.existing.length, 3);
    assert.deepEqual(noSession.body.suggestions, []);
    assert.equal(noSession.body.suggestionsError.error, "UNAUTHORIZED");
    assert.deepEqual(parserCalls(h, "/suggest/relationships"), []);
  }, { parser: true }));

Deno.test("a note's relationships: Parser failure or timeout is a marker; a missing note is 404", () => {
  // the Parser's deadline passes once, when its call is all the request waits for
  const time = manualDeadlines();
  return withHarness(async (h) => {
    h.parser!.fault({
      path: "/suggest/relationships",
      status: 500,
      body: "LLM exploded at /srv/secret",
      contentType: "text/plain",
      times: 1,
    });
    const failed = await send(h, "POST", `/api/lore/${W.charMira}/relationships`);
    assert.equal(failed.status, 200);
    assert.equal(failed.body.existing.length, 3);
    assert.deepEqual(failed.body.suggestions, []);
    assert.deepEqual(failed.body.suggestionsError, {
      error: "UPSTREAM_ERROR",
      message: "The Parser failed to handle the request",
    });
    h.parser!.fault({ path: "/suggest/relationships", hang: true, times: 1 });
    const slow = await answerMovingTime(
      time,
      send(h, "POST", `/api/lore/${W.charMira}/relationships`),
      () => time.now() === 0 && h.parser!.held() === 1 && time.pending() === 1,
    );
    assert.equal(slow.body.suggestionsError.error, "UPSTREAM_TIMEOUT");
    assert.equal(slow.body.existing.length, 3);
    h.parser!.clearRequests();
    const missing = await send(h, "POST", "/api/lore/gone12345678/relationships");
    assert.equal(missing.status, 404);
    assert.deepEqual(parserCalls(h, "/suggest/relationships"), []);
    const bad = await send(h, "POST", "/api/lore/a.b/relationships");
    assert.equal(bad.status, 400);
  }, { parser: true, parserSession: true, env: { UPSTREAM_TIMEOUT_MS: "400" }, deadlines: time });
});

Deno.test("graph: the double's traversal with our `type`, depth/maxNodes forwarded, missing → 404", () =>
  withParser(async (h) => {
    const r = await send(h, "GET", `/api/lore/${W.charMira}/graph?depth=1`);
    assert.equal(r.status, 200);
    assert.equal(r.body.centerNoteId, W.charMira);
    assert.deepEqual(r.body.nodes[0], {
      noteId: W.charMira,
      title: "Mira Tallowend",
      loreType: "character",
      depth: 0,
    });
    assert.deepEqual(r.body.edges[0], {
      sourceNoteId: W.charMira,
      targetNoteId: W.charOskar,
      type: "ally",
    });
    assert.deepEqual([r.body.maxDepthReached, r.body.truncated], [1, false]);
    assert.equal(parserCalls(h, `/suggest/graph/${W.charMira}`)[0].search, "?depth=1&maxNodes=50");
    const capped = await send(h, "GET", `/api/lore/${W.charMira}/graph?depth=3&maxNodes=5`);
    assert.ok(capped.body.nodes.length <= 5);
    const media = await send(h, "GET", `/api/lore/${W.media}/graph`);
    assert.equal(media.body.nodes[0].loreType, null, 'no lore type: null, not "unknown"');
    const missing = await send(h, "GET", "/api/lore/gone12345678/graph");
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error, "NOT_FOUND");
    await rejects(h, [
      ["GET", `/api/lore/${W.charMira}/graph?depth=4`],
      ["GET", `/api/lore/${W.charMira}/graph?depth=0`],
      ["GET", `/api/lore/${W.charMira}/graph?depth=1.5`],
      ["GET", `/api/lore/${W.charMira}/graph?maxNodes=4`],
      ["GET", `/api/lore/${W.charMira}/graph?maxNodes=101`],
      ["GET", `/api/lore/${W.charMira}/graph?depth=x`],
      ["GET", "/api/lore/a.b/graph"],
    ]);
  }));

Deno.test("relationship history: forwarded with its limit; the Parser records none per user", () =>
  withParser(async (h) => {
    await send(h, "PUT", "/api/ai/relationships", {
      sourceNoteId: W.charOskar,
      relations: [{ targetNoteId: W.faction, type: "serves" }],
    });
    const r = await send(h, "GET", `/api/lore/${W.charOskar}/relationship-history?limit=5`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { entries: [] });
    const calls = parserCalls(h, `/suggest/history/${W.charOskar}`);
    assert.equal(calls[0].search, "?limit=5");
    await send(h, "GET", `/api/lore/${W.charOskar}/relationship-history`);
    assert.equal(parserCalls(h, `/suggest/history/${W.charOskar}`)[1].search, "?limit=20");
    await rejects(h, [
      ["GET", `/api/lore/${W.charOskar}/relationship-history?limit=0`],
      ["GET", `/api/lore/${W.charOskar}/relationship-history?limit=51`],
      ["GET", `/api/lore/${W.charOskar}/relationship-history?limit=many`],
    ]);
  }));

Deno.test("rag: GET and POST forward text and topK (default 10), answer the double's chunks", () =>
  withParser(async (h) => {
    await reindexForOwner(h.parser!); // the real Parser answers from the owner's index only
    const get = await send(h, "GET", "/api/rag?text=lighthouse%20keepers");
    assert.equal(get.status, 200);
    const ids = get.body.results.map((x: { noteId: string }) => x.noteId);
    assert.ok(ids.includes(W.locLighthouse) && ids.includes(W.charIselde), ids.join());
    assert.deepEqual(Object.keys(get.body.results[0]), [
      "noteId",
      "noteTitle",
      "content",
      "score",
      "title",
    ]);
    for (const r of get.body.results) assert.equal(r.title, r.noteTitle);
    const post = await send(h, "POST", "/api/rag", { text: "lighthouse keepers", topK: 2 });
    assert.equal(post.body.results.length, 2);
    assert.deepEqual(post.body.results, get.body.results.slice(0, 2));
    assert.deepEqual(parserCalls(h, "/rag/query").map(sentBody), [
      { text: "lighthouse keepers", topK: 10 },
      { text: "lighthouse keepers", topK: 2 },
    ]);
    await send(h, "GET", "/api/rag?text=tides&topK=50");
    assert.deepEqual(sentBody(parserCalls(h, "/rag/query")[2]), { text: "tides", topK: 50 });
    await rejects(h, [
      ["GET", "/api/rag?topK=5"],
      ["GET", "/api/rag?text=%20"],
      ["GET", `/api/rag?text=${"x".repeat(4001)}`],
      ["GET", "/api/rag?text=x&topK=0"],
      ["GET", "/api/rag?text=x&topK=51"],
      ["GET", "/api/rag?text=x&topK=2.5"],
      ["POST", "/api/rag", { text: "x", topK: "5" }],
      ["POST", "/api/rag", { topK: 5 }],
      ["POST", "/api/rag", { text: "x", extra: 1 }],
    ]);
  }));

Deno.test("rag: GET without text is the Parser's index status, nulls while it is empty", () =>
  withParser(async (h) => {
    const empty = await send(h, "GET", "/api/rag");
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.body, { indexedNotes: 0, lastIndexed: null, model: null });
    const { indexed } = await reindexForOwner(h.parser!);
    const status = await send(h, "GET", "/api/rag");
    assert.equal(status.body.indexedNotes, indexed);
    assert.equal(status.body.model, "openai/text-embedding-3-small");
    assert.match(status.body.lastIndexed, /^\d{4}-\d\d-\d\dT/);
    assert.deepEqual(parserCalls(h, "/rag/status").map((r) => r.method), ["GET", "GET"]);
    assert.deepEqual(parserCalls(h, "/rag/query"), [], "no search without text");
  }));
