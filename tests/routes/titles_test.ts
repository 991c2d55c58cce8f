/**
 * Titles as the GM typed them, over HTTP through the real app against the Core double: Core
 * stores a title HTML-escaped on create (and sanitized: a tag off its list is dropped), the
 * service writes titles in that escaped form on create and rename alike, decodes what Core
 * stores once where notes enter, and every page escapes the title once. Against the Parser
 * double too: the titles it relays from Core (semantic search, graph, suggestions, copilot
 * context, brain-dump duplicates) are decoded once, the model's text is not.
 */
import assert from "node:assert/strict";
import { assertNoSecrets, type Harness, withHarness } from "../helpers/harness.ts";
import { reindexForOwner } from "../../sims/parser.ts";
import { copilotSimState } from "../../sims/parser_copilot.ts";
import { W } from "../../sims/world.ts";

const TYPED = "Salt & Smoke <Tide>";
/** What Core holds for {@linkcode TYPED} when the service wrote it. */
const STORED = "Salt &amp; Smoke &lt;Tide&gt;";
/** {@linkcode TYPED} escaped once for HTML, as a page's source must hold it. */
const IN_HTML = "Salt &amp; Smoke &lt;Tide&gt;";
const JSON_TITLE = `"title":${JSON.stringify(TYPED)}`;

interface NoteAnswer {
  noteId: string;
  title: string;
}

async function createLore(h: Harness, title: string, parentNoteId: string = W.loreRoot) {
  const res = await h.requestJson<{ note: NoteAnswer }>("/api/lore", {
    method: "POST",
    json: { title, loreType: "location", parentNoteId },
  });
  assert.equal(res.status, 201);
  assert.equal(res.body.note.title, title, "the create answer shows the typed title");
  return res.body.note.noteId;
}

async function text(h: Harness, path: string): Promise<string> {
  const res = await h.request(path);
  const body = await res.text();
  assert.equal(res.status, 200, `${path}: ${body.slice(0, 200)}`);
  assertNoSecrets(h, body);
  return body;
}

async function titleOf(h: Harness, id: string): Promise<string> {
  const res = await h.requestJson<NoteAnswer>(`/api/lore/${id}`);
  assert.equal(res.status, 200);
  return res.body.title;
}

/** Every private answer that names the note, read through the service. */
async function assertEverywhere(h: Harness, id: string, title: string) {
  assert.equal(await titleOf(h, id), title, "GET /api/lore/:id");
  const list = await text(h, "/api/lore");
  assert.ok(list.includes(`"noteId":"${id}"`), "in the list");
  assert.ok(list.includes(`"title":${JSON.stringify(title)}`), "the list shows the typed title");
  const found = await h.requestJson<{ results: NoteAnswer[] }>(
    `/api/search?q=${encodeURIComponent(`#loreType=location`)}`,
  );
  assert.equal(found.body.results.find((n) => n.noteId === id)?.title, title, "search");
  for (const route of ["mention-search", "note-search"]) {
    const hits = await h.requestJson<NoteAnswer[]>(
      `/api/lore/${route}?q=${encodeURIComponent(title)}`,
    );
    assert.equal(hits.status, 200);
    assert.deepEqual(
      hits.body.filter((r) => r.noteId === id).map((r) => r.title),
      [title],
      `${route} finds it by the typed title`,
    );
  }
}

Deno.test("titles: a note created as typed reads back as typed in every private answer", () =>
  withHarness(async (h) => {
    const id = await createLore(h, TYPED);
    assert.equal(h.core.store.getNote(id)!.title, STORED, "Core holds the escaped form");
    await assertEverywhere(h, id, TYPED);

    // breadcrumbs and backlinks of and through it
    const { note: child } = h.core.store.createNote({
      parentNoteId: id,
      title: "Quay",
      type: "text",
      content: "",
    });
    const crumbs = await h.requestJson<NoteAnswer[]>(`/api/lore/${child.noteId}/breadcrumbs`);
    assert.deepEqual(crumbs.body.map((c) => c.title).slice(-1), [TYPED]);
    h.core.store.createAttribute({
      noteId: id,
      type: "relation",
      name: "relAlly",
      value: W.charMira,
    });
    const backlinks = await h.requestJson<NoteAnswer[]>(`/api/lore/${W.charMira}/backlinks`);
    assert.deepEqual(
      backlinks.body.filter((b) => b.noteId === id).map((b) => b.title),
      [TYPED],
    );

    // autolink finds it in text the way it reads
    const linked = await h.requestJson<{ matches: { noteId: string; title: string }[] }>(
      "/api/lore/autolink",
      { method: "POST", json: { text: `We sailed to ${TYPED} at dawn.` } },
    );
    assert.deepEqual(linked.body.matches.filter((m) => m.noteId === id), [
      { term: TYPED, noteId: id, title: TYPED },
    ]);
  }));

Deno.test("titles: the pickers compare typed titles, not Core's escaped form", () =>
  withHarness(async (h) => {
    const id = await createLore(h, "Lamp & Lantern");
    for (const [q, found] of [["& Lan", true], ["amp;", false], ["p & l", true]] as const) {
      const hits = await h.requestJson<NoteAnswer[]>(
        `/api/lore/mention-search?q=${encodeURIComponent(q)}`,
      );
      assert.equal(hits.body.some((r) => r.noteId === id), found, q);
    }
    // a title another writer stored as typed (a PATCH through ETAPI) is found the same way
    await h.etapi(`/notes/${id}`, { method: "PATCH", json: { title: "Lamp & Lantern" } });
    assert.equal(h.core.store.getNote(id)!.title, "Lamp & Lantern");
    const hits = await h.requestJson<NoteAnswer[]>(
      `/api/lore/note-search?q=${encodeURIComponent("Lamp & Lantern")}&type=location`,
    );
    assert.deepEqual(hits.body.map((r) => r.title), ["Lamp & Lantern"]);
  }));

Deno.test("titles: renames store the escaped form; create → read → rename → read is stable", () =>
  withHarness(async (h) => {
    const id = await createLore(h, TYPED);
    const rename = async (title: string) => {
      const res = await h.requestJson<NoteAnswer>(`/api/lore/${id}`, {
        method: "PATCH",
        json: { title },
      });
      assert.equal(res.status, 200);
      assert.equal(res.body.title, title, "the PATCH answer shows the typed title");
    };
    await rename(await titleOf(h, id)); // the same title again
    assert.equal(h.core.store.getNote(id)!.title, STORED, "uniform with create");
    assert.equal(await titleOf(h, id), TYPED);

    // a title typed with what looks like an entity stays that text
    await rename("Tom &amp; Jerry");
    assert.equal(h.core.store.getNote(id)!.title, "Tom &amp;amp; Jerry");
    await assertEverywhere(h, id, "Tom &amp; Jerry");
    await rename(await titleOf(h, id));
    assert.equal(await titleOf(h, id), "Tom &amp; Jerry");

    // a revision (Core copies the stored title into it) shows the typed title too
    await h.etapi(`/notes/${id}/revision`, { method: "POST" });
    const revisions = await h.requestJson<{ revisions: NoteAnswer[] }>(
      `/api/lore/${id}/revisions`,
    );
    assert.equal(revisions.status, 200);
    assert.deepEqual(revisions.body.revisions.map((r) => r.title), ["Tom &amp; Jerry"]);
  }));

Deno.test("titles: what other writers stored reads as the text a browser shows", () =>
  withHarness(async (h) => {
    const stored = (title: string) =>
      h.core.store.createNote(
        { parentNoteId: W.loreRoot, title, type: "text", content: "" },
        { rawTitle: true },
      ).note.noteId;
    const cases: [stored: string, shown: string][] = [
      ["<b>Salt</b> &amp; Smoke", "Salt & Smoke"], // a kept tag is reduced to its text
      ["Tom & Jerry", "Tom & Jerry"], // PATCHed as typed
      ["a < b", "a < b"],
      ["<img src=x onerror=alert(1)>Harbor", "Harbor"], // Core's <style> quirk can store this
      ["&#39;Twas &quot;so&quot;", `'Twas "so"`],
    ];
    for (const [title, shown] of cases) assert.equal(await titleOf(h, stored(title)), shown, title);
    // Core's create sanitizer itself: what it keeps of markup sent to it directly
    const direct = await h.etapi<{ note: NoteAnswer }>("/create-note", {
      method: "POST",
      json: { parentNoteId: W.loreRoot, title: "<i>Ash</i> & <Tide>", type: "text", content: "" },
    });
    assert.equal(direct.note.title, "<i>Ash</i> &amp; ");
    assert.equal(await titleOf(h, direct.note.noteId), "Ash & ");
  }));

Deno.test("titles: published, the typed title is in the public answer and escaped once on pages", () =>
  withHarness(async (h) => {
    const id = await createLore(h, TYPED, W.guide);
    const api = await text(h, `/api/public/lore/${id}`);
    assert.ok(api.includes(JSON_TITLE), "the public API answer holds the typed title");

    const page = await text(h, `/public/lore/${id}`);
    assert.match(page, new RegExp(`<title>${IN_HTML} · `));
    assert.match(page, new RegExp(`<h1 id="note-title">${IN_HTML}</h1>`));
    assert.match(page, new RegExp(`<meta property="og:title" content="${IN_HTML}">`));
    assert.match(page, new RegExp(`<li aria-current="page">${IN_HTML}</li>`), "breadcrumbs");
    assert.match(page, new RegExp(`href="/public/lore/${id}"[^>]*>${IN_HTML}</a>`), "navigation");
    for (const body of [api, page]) {
      assert.ok(!body.includes("&amp;amp;") && !body.includes("&amp;lt;"), "never twice");
    }
    assert.ok(!page.includes("<Tide>"), "never unescaped in markup");
    const home = await text(h, "/");
    assert.ok(home.includes(`>${IN_HTML}</a>`), "the home page lists it");
    const found = await text(h, `/api/public/search?q=${encodeURIComponent("Salt & Smoke")}`);
    assert.ok(found.includes(JSON_TITLE), "public search finds it by the typed words");
    const amp = await text(h, "/api/public/search?q=amp");
    assert.ok(!amp.includes(`"${id}"`), "Core's escaping is not searchable");

    const feed = await text(h, "/public/feed.atom");
    assert.ok(feed.includes(`<title>${IN_HTML}</title>`), "the feed entry's title");
    const sitemap = await text(h, "/sitemap.xml");
    assert.ok(sitemap.includes(`/public/lore/${id}</loc>`), "the sitemap lists the page");
  }, { env: { PUBLIC_CACHE_MS: "0" } }));

// ---------------------------------------------------------------------------------------------
// Titles the Parser relays: it reads notes from Core itself and passes their titles on as Core
// stores them; the service decodes exactly those fields, once, and nothing the model wrote.
// ---------------------------------------------------------------------------------------------

// deno-lint-ignore no-explicit-any
type Json = any;

/** Core's stored form must never reach an answer (nor the typed title be decoded again). */
function assertNoStoredForm(h: Harness, body: unknown, where: string) {
  const text = JSON.stringify(body);
  assertNoSecrets(h, text);
  assert.ok(!text.includes("&amp;") && !text.includes("&lt;"), `${where}: ${text.slice(0, 300)}`);
}

/** {@linkcode TYPED}, written through the service, allied to Mira, indexed by the Parser. */
async function relayedNote(h: Harness): Promise<string> {
  const res = await h.requestJson<{ note: NoteAnswer }>("/api/lore", {
    method: "POST",
    json: {
      title: TYPED,
      loreType: "location",
      parentNoteId: W.loreRoot,
      content: "<p>A smokehouse where the tide turns.</p>",
    },
  });
  assert.equal(res.status, 201);
  const id = res.body.note.noteId;
  h.core.store.createAttribute({
    noteId: id,
    type: "relation",
    name: "relAlly",
    value: W.charMira,
  });
  await reindexForOwner(h.parser!); // the Parser reads the title from Core: the stored form
  assert.equal(h.parser!.store.rag.meta.get(id)?.noteTitle, STORED);
  return id;
}

const withParser = (fn: (h: Harness) => Promise<void>) =>
  withHarness(fn, { parser: true, parserSession: true });

Deno.test("titles: semantic search, graph, suggestions and copilot context show the typed title", () =>
  withParser(async (h) => {
    const id = await relayedNote(h);
    const hitOf = (body: Json) => body.results.find((r: Json) => r.noteId === id);

    const get = await h.requestJson<Json>(`/api/rag?text=${encodeURIComponent("smokehouse tide")}`);
    assert.equal(get.status, 200);
    assert.equal(hitOf(get.body).noteTitle, TYPED, "GET /api/rag");
    const post = await h.requestJson<Json>("/api/rag", {
      method: "POST",
      json: { text: "smokehouse tide", topK: 3 },
    });
    assert.equal(hitOf(post.body).noteTitle, TYPED, "POST /api/rag");
    const search = await h.requestJson<Json>("/api/search?mode=rag&q=smokehouse");
    assert.equal(hitOf(search.body).title, TYPED, "GET /api/search?mode=rag");
    for (const r of [get, post, search]) assertNoStoredForm(h, r.body, "semantic search");

    const graph = await h.requestJson<Json>(`/api/lore/${id}/graph?depth=1`);
    assert.equal(graph.status, 200);
    assert.equal(graph.body.nodes.find((n: Json) => n.noteId === id)?.title, TYPED, "graph");
    assertNoStoredForm(h, graph.body, "graph");

    const text = `Mira Tallowend smokes fish at ${TYPED} every morning.`;
    const suggested = await h.requestJson<Json>("/api/ai/relationships", {
      method: "POST",
      json: { text },
    });
    assert.equal(suggested.status, 200);
    const target = suggested.body.suggestions.find((s: Json) => s.targetNoteId === id);
    assert.equal(target?.targetTitle, TYPED, "suggestions");
    // decoding it would drop `<Tide>` (a tag to the HTML engine)
    assert.ok(target.description.includes(TYPED), "the model's description is not decoded");
    assertNoStoredForm(h, suggested.body, "suggestions");

    // the copilot's related passages are sent to the Parser with the typed title, and come back
    const turn = await h.requestJson<Json>(`/api/lore/${W.charMira}/copilot/chat`, {
      method: "POST",
      json: { transcript: [{ role: "user", content: "Where is the smokehouse on the tide?" }] },
    });
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
    const sent = copilotSimState(h.parser!.store).bodies.at(-1)!;
    assert.deepEqual(sent.ragContext.filter((r) => r.noteId === id).map((r) => r.title), [TYPED]);
    assert.deepEqual(
      turn.body.citations.filter((c: Json) => c.noteId === id).map((c: Json) => c.title),
      [TYPED],
    );
    assertNoStoredForm(h, [sent, turn.body], "copilot");
  }));

/** The brain-dump routes' answers, as JSON. */
const dump = (h: Harness, path: string, json: unknown) =>
  h.requestJson<Json>(path, { method: "POST", json });

Deno.test("titles: brain-dump duplicate matches and notices show Core's titles as typed", () =>
  withParser(async (h) => {
    const id = await relayedNote(h);
    const match = (score: number) => [{ noteId: id, title: TYPED, score }];
    const commit = await dump(h, "/api/brain-dump/commit", {
      rawText: "reviewed smokehouse",
      approvedEntities: [
        { title: "Salt & Smoke", type: "location", action: "create" },
        // a title as Core stores the note (a model that copied it): the Parser skips it
        { title: STORED, type: "location", action: "create" },
      ],
    });
    assert.equal(commit.status, 200, JSON.stringify(commit.body));
    assert.deepEqual(commit.body.duplicates, [
      { proposedTitle: "Salt & Smoke", proposedType: "location", matches: match(0.9) },
      { proposedTitle: STORED, proposedType: "location", matches: match(0.95) },
    ]);
    assert.deepEqual(commit.body.skipped, [
      { title: STORED, reason: `Possible duplicate of ${JSON.stringify(TYPED)} (95% match)` },
    ], "the proposed title is passed on as sent; the note it duplicates reads as typed");
    assert.deepEqual(commit.body.created.map((n: Json) => n.title), ["Salt & Smoke"]);

    // a note whose title holds a proposed name: review, the stream, then the plain auto run
    const guild = `${TYPED} Harbor Guild`;
    const res = await h.requestJson<{ note: NoteAnswer }>("/api/lore", {
      method: "POST",
      json: { title: guild, loreType: "faction", parentNoteId: W.loreRoot },
    });
    assert.equal(res.status, 201);
    const guildMatch = [{ noteId: res.body.note.noteId, title: guild, score: 0.9 }];
    const expected = [{
      proposedTitle: "Harbor Guild",
      proposedType: "location",
      matches: guildMatch,
    }];
    const review = await dump(h, "/api/brain-dump", {
      rawText: "Buyers from Harbor Guild want salt by the barrel.",
      mode: "review",
    });
    assert.equal(review.status, 200, JSON.stringify(review.body));
    assert.deepEqual(review.body.duplicates, expected, "review");

    const stream = await h.request("/api/brain-dump/stream", {
      method: "POST",
      json: { rawText: "Buyers from Harbor Guild want smoke by the barrel." },
    });
    assert.equal(stream.status, 200);
    const events = await stream.text();
    const done = events.split("\n\n").find((e) => e.startsWith("event: done\n"))!;
    const data = JSON.parse(done.slice("event: done\ndata: ".length));
    assert.deepEqual(Object.keys(data), ["type", "raw", "tokensUsed", "model", "latencyMs"]);
    assert.deepEqual(JSON.parse(data.raw).duplicates, expected, "the stream's done.raw");
    assert.ok(events.includes('event: status\ndata: {"type":"status","stage":"llm"'), "passed on");

    // the stream created "Harbor Guild": remove it, so the next run proposes it again
    const created = JSON.parse(data.raw).created as NoteAnswer[];
    for (const n of created) await h.etapi(`/notes/${n.noteId}`, { method: "DELETE" });
    const auto = await dump(h, "/api/brain-dump", {
      rawText: "Sellers from Harbor Guild want salt by the barrel.",
    });
    assert.equal(auto.status, 200, JSON.stringify(auto.body));
    assert.deepEqual(auto.body.duplicates, expected, "auto");
    for (const r of [review, auto]) assertNoStoredForm(h, r.body, "brain dump");
    assertNoStoredForm(h, JSON.parse(data.raw), "brain-dump stream");
  }));
