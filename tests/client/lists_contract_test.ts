/**
 * The front end's contract for lists, navigation and search: each call its pages and components
 * make (named in a comment beside each test), sent as the browser sends it, and the fields the
 * page reads from our answer, checked over HTTP against the doubles and the sample world.
 */
import assert from "node:assert/strict";
import { type Harness, withHarness } from "../helpers/harness.ts";
import { reindexForOwner } from "../../sims/parser.ts";
import { W } from "../../sims/world.ts";

/** What a plain `fetch(url)` of a page sends: no content type, any answer accepted. */
const PAGE_GET = { headers: { accept: "*/*" } };

interface ListedNote {
  noteId: string;
  title: string;
  type: string;
  dateModified: string;
  parentNoteIds: string[];
  attributes: { name: string; value: string; type: string }[];
}

/** The value of a note's attribute as the pages look it up: the first one with that name. */
const attr = (n: ListedNote, name: string) => n.attributes.find((a) => a.name === name)?.value;

async function getArray<T>(h: Harness, path: string): Promise<T[]> {
  const r = await h.requestJson<T[]>(path, PAGE_GET);
  assert.equal(r.status, 200, `${path}: ${JSON.stringify(r.body)}`);
  assert.ok(Array.isArray(r.body), `${path} answers a bare array, got ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Every list page renders the title, a date from `dateModified` and type badges from labels. */
function assertRenderable(notes: ListedNote[]): void {
  for (const n of notes) {
    assert.equal(typeof n.noteId, "string");
    assert.equal(typeof n.title, "string");
    assert.ok(!Number.isNaN(new Date(n.dateModified).getTime()), `${n.noteId}: dateModified`);
    assert.ok(Array.isArray(n.parentNoteIds));
    for (const a of n.attributes) {
      assert.equal(typeof a.name, "string");
      assert.equal(typeof a.value, "string");
      assert.ok(a.type === "label" || a.type === "relation");
    }
  }
}

Deno.test("dashboard, lore browser and category tree: GET /api/lore?q=%23lore is the note array", () =>
  withHarness(async (h) => {
    // app/(portal)/page.tsx DashboardPage, app/(portal)/lore/page.tsx LorePageContent and
    // components/portal/LoreTree.tsx LoreTree all fetch `/api/lore?q=` + encoded "#lore"
    const notes = await getArray<ListedNote>(h, `/api/lore?q=${encodeURIComponent("#lore")}`);
    assertRenderable(notes);
    // the dashboard counts them and shows the first eight; the browser filters by title
    assert.ok(notes.length >= 15, `every lore note of the world, got ${notes.length}`);
    const mira = notes.find((n) => n.noteId === W.charMira);
    assert.ok(mira);
    // badge and category: `loreType`, else the template, from the attributes
    assert.equal(attr(mira, "loreType"), "character");
    // the tree hangs a note under its first parent when that parent is listed too
    const harbor = notes.find((n) => n.noteId === W.locHarbor);
    assert.equal(harbor?.parentNoteIds[0], W.locChart);
    assert.ok(notes.some((n) => n.noteId === W.locChart));
  }));

Deno.test("quests page: GET /api/quests is an array whose questStatus values are the page's columns", () =>
  withHarness(async (h) => {
    // app/(portal)/quests/page.tsx QuestsPage: columns active / complete / failed, by
    // `questStatus` (else `status`), lower-cased
    const quests = await getArray<ListedNote>(h, "/api/quests");
    assertRenderable(quests);
    const status = (q: ListedNote) => (attr(q, "questStatus") ?? attr(q, "status"))?.toLowerCase();
    assert.deepEqual(
      quests.map((q) => [q.noteId, status(q)]),
      [[W.questLamp, "active"], [W.questLedger, "complete"]],
    );
  }));

Deno.test("statblocks page: GET /api/statblocks is an array with the creature's labels", () =>
  withHarness(async (h) => {
    // app/(portal)/statblocks/page.tsx StatblocksPage: name from `crName` or the title, the CR
    // from `challengeRating` or `crLevel`
    const blocks = await getArray<ListedNote>(h, "/api/statblocks");
    assertRenderable(blocks);
    const eel = blocks.find((b) => b.noteId === W.statEel);
    assert.ok(eel);
    assert.equal(attr(eel, "crName") ?? eel.title, "Harbor Eel");
    assert.equal(attr(eel, "challengeRating") ?? attr(eel, "crLevel"), "1");
  }));

Deno.test("timeline page: GET /api/timeline is an array of dated events and timelines", () =>
  withHarness(async (h) => {
    // app/(portal)/timeline/page.tsx TimelinePage: date from `inWorldDate`, badge from `loreType`
    const entries = await getArray<ListedNote>(h, "/api/timeline");
    assertRenderable(entries);
    const flood = entries.find((e) => e.noteId === W.eventFlood);
    assert.ok(flood);
    assert.equal(attr(flood, "inWorldDate"), "1187-03-14");
    assert.equal(attr(flood, "loreType"), "event");
    assert.ok(entries.every((e) => ["event", "timeline"].includes(attr(e, "loreType") ?? "")));
  }));

interface SearchHit {
  noteId: string;
  title: string;
  type?: string;
  attributes?: { name: string; value: string; type: string }[];
}

/** The search and session pages accept `{ results }` or a bare array. */
function hitsOf(body: unknown): SearchHit[] {
  if (Array.isArray(body)) return body;
  const results = (body as { results?: unknown }).results;
  assert.ok(Array.isArray(results), `results: ${JSON.stringify(body)}`);
  return results;
}

Deno.test("search page, attribute mode: GET /api/search?q=&mode=etapi lists matches with title", () =>
  withHarness(async (h) => {
    // app/(portal)/search/page.tsx SearchContent, etapi branch of its query function
    const r = await h.requestJson(
      `/api/search?q=${encodeURIComponent("Mira")}&mode=etapi`,
      PAGE_GET,
    );
    assert.equal(r.status, 200);
    const hits = hitsOf(r.body);
    assert.ok(hits.some((x) => x.noteId === W.charMira && x.title === "Mira Tallowend"));
    for (const x of hits) assert.ok(x.type === undefined || typeof x.type === "string");
  }));

Deno.test("session page: pin search with limit=8 answers at most 8 notes with titles", () =>
  withHarness(async (h) => {
    // app/(portal)/session/page.tsx SessionPage, pin search: `q` as typed, `limit=8`, no mode
    const r = await h.requestJson(`/api/search?q=${encodeURIComponent("the")}&limit=8`, PAGE_GET);
    assert.equal(r.status, 200);
    const hits = hitsOf(r.body);
    assert.equal(hits.length, 8);
    for (const x of hits) assert.ok(typeof x.noteId === "string" && typeof x.title === "string");
  }));

Deno.test("session page: statblock lookup `#statblock <name>` with limit=6 answers statblocks", () =>
  withHarness(async (h) => {
    // app/(portal)/session/page.tsx SessionPage, statblock lookup: "#statblock " + the typed
    // name, `limit=6`; the chosen hit is drawn by StatblockCard from its attributes
    const q = encodeURIComponent("#statblock Eel");
    const r = await h.requestJson(`/api/search?q=${q}&limit=6`, PAGE_GET);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const hits = hitsOf(r.body);
    assert.ok(hits.length <= 6);
    const eel = hits.find((x) => x.noteId === W.statEel);
    assert.ok(eel, "Harbor Eel is among the statblocks");
    assert.ok(Array.isArray(eel.attributes), "the card reads the statblock's attributes");
    assert.equal(eel.attributes.find((a) => a.name === "crLevel")?.value, "1");
  }));

Deno.test("breadcrumbs: GET /api/lore/:id/breadcrumbs is the ancestors, top first, no root crumb", () =>
  withHarness(async (h) => {
    // components/portal/Breadcrumbs.tsx Breadcrumbs: draws "Lore" itself, then one link per entry
    const crumbs = await getArray<{ noteId: string; title: string }>(
      h,
      `/api/lore/${W.locHarbor}/breadcrumbs`,
    );
    assert.deepEqual(crumbs.map((c) => ({ noteId: c.noteId, title: c.title })), [
      { noteId: W.loreRoot, title: "The Shattered Coast" },
      { noteId: W.locChart, title: "Chart of the Shattered Coast" },
    ]);
  }));

Deno.test("note page: GET /api/lore/:id/backlinks is an array of {noteId, title, loreType}", () =>
  withHarness(async (h) => {
    // app/(portal)/lore/[id]/page.tsx, the backlinks query beside the related entries
    const links = await getArray<{ noteId: string; title: string; loreType: string | null }>(
      h,
      `/api/lore/${W.charMira}/backlinks`,
    );
    const iselde = links.find((l) => l.noteId === W.charIselde);
    assert.deepEqual(
      iselde && { noteId: iselde.noteId, title: iselde.title, loreType: iselde.loreType },
      { noteId: W.charIselde, title: "Iselde Crane", loreType: "character" },
    );
    assert.ok(links.some((l) => l.noteId === W.charBrannoch));
  }));

Deno.test("editor mentions: GET /api/lore/mention-search?q= is an array of {noteId, title, loreType}", () =>
  withHarness(async (h) => {
    // components/editor/mention.tsx getMentionMenuItems and components/editor/
    // mention-extension.tsx suggestion items: only called with 2 characters or more
    const hits = await getArray<{ noteId: string; title: string; loreType: string | null }>(
      h,
      `/api/lore/mention-search?q=${encodeURIComponent("Mi")}`,
    );
    const mira = hits.find((x) => x.noteId === W.charMira);
    assert.deepEqual(mira && [mira.title, mira.loreType], ["Mira Tallowend", "character"]);
  }));

Deno.test("portrait picker: GET /api/lore/note-search?q=&type=image is an array with note types", () =>
  withHarness(async (h) => {
    // app/(portal)/lore/[id]/edit/page.tsx, the portrait search (debounced, 2 characters or more);
    // which notes `type=image` selects is the picker's own contract, the shape is this one
    const hits = await getArray<{ noteId: string; title: string; type: string; loreType: unknown }>(
      h,
      `/api/lore/note-search?q=${encodeURIComponent("mira")}&type=image`,
    );
    for (const x of hits) {
      assert.equal(typeof x.noteId, "string");
      assert.equal(typeof x.title, "string");
      assert.equal(typeof x.type, "string");
      assert.ok(x.loreType === null || typeof x.loreType === "string");
    }
  }));

interface Relationships {
  existing: { name: string; targetNoteId: string; targetTitle: string }[];
  suggestions: {
    targetNoteId: string;
    targetTitle: string;
    relationshipType: string;
    description: string;
  }[];
}

Deno.test("relationship map: POST /api/lore/:id/relationships answers existing and suggestions", () =>
  withHarness(async (h) => {
    await reindexForOwner(h.parser!); // the Parser suggests from the notes it has indexed
    // components/portal/RelationshipGraph.tsx RelationshipGraph: a bodiless POST from the page
    const r = await h.requestJson<Relationships>(`/api/lore/${W.charMira}/relationships`, {
      method: "POST",
      headers: { accept: "*/*", origin: h.url },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const ally = r.body.existing.find((e) => e.name === "relAlly");
    assert.deepEqual(ally && [ally.targetNoteId, ally.targetTitle], [W.charOskar, "Oskar Venn"]);
    assert.ok(r.body.suggestions.length > 0, "the Parser suggests connections");
    for (const s of r.body.suggestions) {
      assert.equal(typeof s.targetNoteId, "string");
      assert.equal(typeof s.targetTitle, "string");
      assert.equal(typeof s.relationshipType, "string");
      assert.equal(typeof s.description, "string");
    }
  }, { parser: true, parserSession: true }));

Deno.test("relationship map: without the Parser the map still iterates existing and suggestions", () =>
  withHarness(async (h) => {
    // components/portal/RelationshipGraph.tsx loops over `suggestions` unguarded
    const r = await h.requestJson<Relationships>(`/api/lore/${W.charMira}/relationships`, {
      method: "POST",
      headers: { accept: "*/*", origin: h.url },
    });
    assert.equal(r.status, 200);
    assert.ok(r.body.existing.length > 0);
    assert.deepEqual(r.body.suggestions, []);
  }));
