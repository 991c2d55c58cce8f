/** Search and discovery routes over HTTP through the real app against the Core double. */
import { coreCredentialsFrom } from "../helpers/credentials.ts";
import assert from "node:assert/strict";
import { loadConfig } from "../../src/config/service_config.ts";
import { jsonLogger } from "../../src/http/log.ts";
import { startServer } from "../../src/server.ts";
import { assertNoSecrets, type Harness, upstreamCalls, withHarness } from "../helpers/harness.ts";
import { eventually, manualDeadlines } from "../helpers/manual_deadlines.ts";
import { DEFAULT_CORE_PASSWORD } from "../../sims/core.ts";
import { reindexForOwner } from "../../sims/parser.ts";
import { W } from "../../sims/world.ts";

const bare = { core: { world: false } };

interface ErrorBody {
  error: string;
  message: string;
  details?: Record<string, unknown>;
}
interface Picked {
  noteId: string;
  title: string;
  loreType: string | null;
  source?: string;
}

/** A note created straight in the double's store (setup, not under test). */
function note(h: Harness, title: string, labels: Record<string, string> = { lore: "" }): string {
  const s = h.core.store;
  const id = s.createNote({ parentNoteId: "root", title, type: "text", content: "" }).note.noteId;
  for (const [name, value] of Object.entries(labels)) {
    s.createAttribute({ noteId: id, type: "label", name, value });
  }
  return id;
}

/** The `search` parameters of the searches the double received. */
const searches = (h: Harness) =>
  h.core.requests.filter((r) => r.method === "GET" && r.path === "/etapi/notes")
    .map((r) => Object.fromEntries(new URLSearchParams(r.search)));

const get = <T>(h: Harness, path: string) => h.requestJson<T & ErrorBody>(path);

Deno.test("mention-search: one fast #lore title search, ranked exact > prefix > word > substring", () =>
  withHarness(async (h) => {
    const exact = note(h, "Quorin", { lore: "", loreType: "character" });
    const sub = note(h, "Haquorine");
    const word = note(h, "Old Quorin Road", { lore: "", loreType: "location" });
    const prefix = note(h, "Quorin's Watch");
    note(h, "Quorin Notes", {}); // not lore
    h.core.clearRequests();
    const r = await get<Picked[]>(h, "/api/lore/mention-search?q=%20quORin%20");
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, [
      { noteId: exact, title: "Quorin", loreType: "character", source: "core" },
      { noteId: prefix, title: "Quorin's Watch", loreType: null, source: "core" },
      { noteId: word, title: "Old Quorin Road", loreType: "location", source: "core" },
      { noteId: sub, title: "Haquorine", loreType: null, source: "core" },
    ]);
    assert.deepEqual(searches(h), [
      { search: '#lore note.title *=* "quORin"', fastSearch: "true" },
    ]);
    assert.equal(h.core.requests.length, 1);
  }, bare));

Deno.test("mention-search: at most 8; note-search: at most 12", () =>
  withHarness(async (h) => {
    for (let i = 1; i <= 15; i++) note(h, `Vexmoor ${i}`, { lore: "", loreType: "location" });
    const m = await get<Picked[]>(h, "/api/lore/mention-search?q=vexmoor");
    assert.deepEqual(
      m.body.map((x) => x.title),
      [1, 2, 3, 4, 5, 6, 7, 8].map((i) => `Vexmoor ${i}`),
    );
    const n = await get<Picked[]>(h, "/api/lore/note-search?q=vexmoor");
    assert.equal(n.body.length, 12);
    assert.deepEqual(n.body.slice(8).map((x) => x.title), [
      "Vexmoor 9",
      "Vexmoor 10",
      "Vexmoor 11",
      "Vexmoor 12",
    ]);
    assert.deepEqual(Object.keys(n.body[0]), ["noteId", "title", "type", "loreType"]);
  }, bare));

Deno.test("mention/note-search: hostile text stays one quoted literal in the Core query", () =>
  withHarness(async (h) => {
    note(h, "Secret Draft", { lore: "", draft: "" });
    const quoted = note(h, "Placeholder");
    h.core.store.patchNote(quoted, { title: 'Say "Hi" \\ bye' });
    const cases: [string, string][] = [
      ['"hi"', '"\\"hi\\""'],
      ["a\\b", '"a\\\\b"'],
      ["#draft", '"#draft"'],
      ["~x.title", '"~x.title"'],
      [") or (#draft", '") or (#draft"'],
      ['x" or #draft or "', '"x\\" or #draft or \\""'],
      ["note.title", '"note.title"'],
      ["\\\\", '"\\\\\\\\"'],
    ];
    for (const [q, literal] of cases) {
      h.core.clearRequests();
      const m = await get<Picked[]>(
        h,
        `/api/lore/mention-search?q=${encodeURIComponent(q)}`,
      );
      assert.equal(m.status, 200, q);
      assert.ok(!m.body.some((x) => x.title === "Secret Draft"), q);
      const n = await get<Picked[]>(
        h,
        `/api/lore/note-search?q=${encodeURIComponent(q)}&type=location`,
      );
      assert.equal(n.status, 200, q);
      assert.deepEqual(searches(h).map((x) => x.search), [
        `#lore note.title *=* ${literal}`,
        `#loreType="location" note.title *=* ${literal}`,
      ]);
    }
    const hit = await get<Picked[]>(
      h,
      `/api/lore/note-search?q=${encodeURIComponent('"hi" \\')}`,
    );
    assert.deepEqual(hit.body.map((x) => x.noteId), [quoted]);
  }, bare));

Deno.test("note-search: type filter, non-lore notes included without one", () =>
  withHarness(async (h) => {
    const c = note(h, "Ember Knight", { lore: "", loreType: "character" });
    const l = note(h, "Ember Falls", { lore: "", loreType: "location" });
    const plain = note(h, "Ember sketches", {});
    h.core.clearRequests();
    const typed = await get<Picked[]>(
      h,
      "/api/lore/note-search?q=ember&type=character",
    );
    assert.deepEqual(typed.body, [{
      noteId: c,
      title: "Ember Knight",
      type: "text",
      loreType: "character",
    }]);
    assert.deepEqual(searches(h), [
      { search: '#loreType="character" note.title *=* "ember"', fastSearch: "true" },
    ]);
    const all = await get<Picked[]>(h, "/api/lore/note-search?q=ember");
    assert.deepEqual(all.body.map((x) => x.noteId), [l, c, plain]);
  }, bare));

Deno.test("mention/note-search: q under 2 or over 200 characters, bad type → 400, nothing sent", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    const long = "x".repeat(201);
    for (const base of ["/api/lore/mention-search", "/api/lore/note-search"]) {
      for (const qs of ["", "?q=", "?q=a", "?q=%20a%20", "?q=%20%20%20", `?q=${long}`]) {
        const r = await get(h, base + qs);
        assert.equal(r.status, 400, base + qs);
        assert.equal(r.body.error, "INVALID_REQUEST");
      }
      const ok = await get<unknown[]>(h, `${base}?q=${"x".repeat(200)}`);
      assert.equal(ok.status, 200);
    }
    for (const type of ["a%20b", "char%22acter", "x%2Fy", "", "t".repeat(65)]) {
      const r = await get(h, `/api/lore/note-search?q=ab&type=${type}`);
      assert.equal(r.status, 400, type);
    }
    assert.equal(h.core.requests.length, 2, "only the two 200-character queries were sent");
  }, bare));

interface Matches {
  matches: { term: string; noteId: string; title: string }[];
}
const autolink = (h: Harness, text: string, headers?: HeadersInit) =>
  h.requestJson<Matches & ErrorBody>("/api/lore/autolink", {
    method: "POST",
    json: { text },
    headers,
  });

Deno.test("autolink: whole words, longest match, Unicode titles, each note once", () =>
  withHarness(async (h) => {
    const keep = note(h, "Ashvale Keep");
    note(h, "Ashvale");
    const eo = note(h, "Éowyn Stormcrow");
    const koln = note(h, "Köln");
    note(h, "Ox");
    note(h, "Not Lore At All", {});
    const r = await autolink(
      h,
      "At ASHVALE keep, éowyn stormcrow met Kölner folk near köln. Ashvale Keep again. Ox!",
    );
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.matches, [
      { term: "ASHVALE keep", noteId: keep, title: "Ashvale Keep" },
      { term: "éowyn stormcrow", noteId: eo, title: "Éowyn Stormcrow" },
      { term: "köln", noteId: koln, title: "Köln" },
    ]);
    const none = await autolink(h, "Ashvalekeep and nothing else");
    assert.deepEqual(none.body.matches, []);
  }, bare));

Deno.test("autolink: the title index is one search per 60 s, shared by concurrent requests", () =>
  withHarness(async (h) => {
    note(h, "Brinehold");
    h.core.clearRequests();
    h.core.fault({ method: "GET", path: "/etapi/notes", delayMs: 100, times: 1 });
    const burst = await Promise.all(
      Array.from({ length: 10 }, () => autolink(h, "Off to brinehold")),
    );
    assert.ok(burst.every((r) => r.status === 200 && r.body.matches.length === 1));
    note(h, "Saltmarsh");
    const later = await autolink(h, "Brinehold and Saltmarsh");
    assert.deepEqual(later.body.matches.map((m) => m.term), ["Brinehold"], "cached index");
    assert.deepEqual(searches(h), [{ search: "#lore", fastSearch: "true" }]);
  }, bare));

Deno.test("autolink: bad bodies → 400/415 and nothing sent", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    // the editor autolinks an empty note as "": nothing can match, so nothing is asked
    const empty = await autolink(h, "");
    assert.deepEqual([empty.status, empty.body], [200, { matches: [] }]);
    for (const json of [{}, { text: 5 }, { text: "x", extra: 1 }]) {
      const r = await h.requestJson<ErrorBody>("/api/lore/autolink", { method: "POST", json });
      assert.equal(r.status, 400, JSON.stringify(json));
      assert.equal(r.body.error, "INVALID_REQUEST");
    }
    const long = await autolink(h, "x".repeat(200_001));
    assert.equal(long.status, 400);
    const form = await h.requestJson<ErrorBody>("/api/lore/autolink", {
      method: "POST",
      body: "text=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    assert.equal(form.status, 415);
    assert.deepEqual(upstreamCalls(h), []);
    const max = await autolink(h, "Brinehold ".repeat(20_000));
    assert.equal(max.status, 200);
  }, bare));

/**
 * A second service on the same double whose Core token comes from a test header, with its own
 * clock: one app state, several credentials.
 */
async function multiTokenService(h: Harness, clock: { now: number }) {
  const config = loadConfig({
    HOST: "127.0.0.1",
    PORT: "0",
    LOG_LEVEL: "silent",
    AUTOLINK_CACHE_MS: "60000",
  });
  const server = await startServer({
    config,
    log: jsonLogger("silent", () => {}),
    now: () => clock.now,
    credentials: coreCredentialsFrom((req) => ({
      baseUrl: h.core.url,
      token: req.headers.get("x-test-token") ?? "",
    })),
  });
  const call = async (token: string, text: string): Promise<Matches> => {
    const res = await fetch(`${server.url}/api/lore/autolink`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-test-token": token },
      body: JSON.stringify({ text }),
    });
    assert.equal(res.status, 200);
    return await res.json();
  };
  return { call, stop: () => server.stop() };
}

Deno.test("autolink: cache entries are per credential and expire after 60 s", () =>
  withHarness(async (h) => {
    note(h, "Brinehold");
    const { authToken: second } = await h.etapi<{ authToken: string }>("/auth/login", {
      method: "POST",
      json: { password: DEFAULT_CORE_PASSWORD, tokenName: "second user" },
    });
    const clock = { now: 1_000_000 };
    const svc = await multiTokenService(h, clock);
    try {
      const text = "Brinehold and Saltmarsh";
      h.core.clearRequests();
      assert.equal((await svc.call(h.core.token, text)).matches.length, 1);
      note(h, "Saltmarsh");
      assert.equal((await svc.call(h.core.token, text)).matches.length, 1, "first user: cached");
      assert.equal((await svc.call(second, text)).matches.length, 2, "second user: own index");
      assert.equal((await svc.call(second, text)).matches.length, 2);
      const tokens = h.core.requests.filter((r) => r.path === "/etapi/notes")
        .map((r) => r.headers.get("authorization"));
      assert.deepEqual(tokens, [h.core.token, second]);

      clock.now += 59_000;
      assert.equal((await svc.call(h.core.token, text)).matches.length, 1, "still cached");
      clock.now += 2_000;
      assert.equal((await svc.call(h.core.token, text)).matches.length, 2, "reloaded");
      assert.equal(searches(h).length, 3);
    } finally {
      await svc.stop();
    }
  }, bare));

Deno.test("search: etapi mode passes the caller's Core query and answers its notes, complete", () =>
  withHarness(async (h) => {
    const ids = Array.from(
      { length: 230 },
      (_, i) => note(h, `Tide ${i}`, { lore: "", loreType: "event" }),
    );
    h.core.clearRequests();
    const q = '#loreType=event note.title *=* "tide"';
    const r = await get<{ mode: string; results: Record<string, unknown>[]; count: number }>(
      h,
      `/api/search?q=${encodeURIComponent(q)}`,
    );
    assert.equal(r.status, 200);
    assert.equal(r.body.mode, "etapi");
    assert.equal(r.body.count, 230);
    assert.equal(r.headers.get("x-total-count"), "230");
    assert.deepEqual(new Set(r.body.results.map((x) => x.noteId)), new Set(ids));
    // Core's note with its attributes (the session page draws a statblock from them), plus loreType
    const first: Record<string, unknown> = r.body.results.find((x) => x.noteId === ids[0])!;
    const core = await h.etapi<Record<string, unknown>>(`/notes/${ids[0]}`);
    assert.deepEqual([first.title, first.loreType, first.type], ["Tide 0", "event", "text"]);
    assert.deepEqual(first, { ...core, loreType: "event" });
    assert.deepEqual(searches(h), [{ search: q }]);
    const explicit = await get<{ mode: string }>(h, "/api/search?q=tide&mode=etapi");
    assert.equal(explicit.body.mode, "etapi");
  }, bare));

Deno.test("search: limit keeps the first results in Core's order; X-Total-Count is the rest too", () =>
  withHarness(async (h) => {
    const all = await get<{ results: { noteId: string }[]; count: number }>(h, "/api/search?q=the");
    assert.ok(all.body.count > 8);
    h.core.clearRequests();
    const r = await get<{ results: { noteId: string }[]; count: number }>(
      h,
      "/api/search?q=the&limit=8",
    );
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.results, all.body.results.slice(0, 8));
    assert.equal(r.body.count, 8);
    assert.equal(r.headers.get("x-total-count"), String(all.body.count));
    assert.deepEqual(searches(h), [{ search: "the" }], "Core's search is the complete one");
    h.core.clearRequests();
    for (const limit of ["0", "-1", "1.5", "x", "1001"]) {
      const bad = await get(h, `/api/search?q=the&limit=${limit}`);
      assert.equal(bad.status, 400, limit);
      assert.equal(bad.body.error, "INVALID_REQUEST");
      assert.match(JSON.stringify(bad.body.details), /query\.limit/, limit);
    }
    assert.deepEqual(searches(h), [], "a bad limit is never sent");
  }));

Deno.test("search: the session page's `#statblock <name>` answers the statblocks Core finds", () =>
  withHarness(async (h) => {
    // Core drops a word it cannot place after `#statblock` and answers every statblock
    const r = await get<{ results: { noteId: string }[] }>(
      h,
      `/api/search?q=${encodeURIComponent("#statblock Eel")}&limit=6`,
    );
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.results.map((n) => n.noteId).sort(),
      [W.statEel, W.statSentinel].sort(),
    );
  }));

Deno.test("search: rag mode without a Parser is 503 NOT_CONFIGURED (parser); bad input → 400; nothing sent", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    const rag = await get(h, "/api/search?q=who%20rules%20the%20coast&mode=rag");
    assert.equal(rag.status, 503);
    assert.equal(rag.body.error, "NOT_CONFIGURED");
    assert.deepEqual(rag.body.details, { service: "parser" });
    for (const qs of ["", "?q=", "?q=%20", `?q=${"x".repeat(2001)}`, "?q=x&mode=vector"]) {
      const r = await get(h, `/api/search${qs}`);
      assert.equal(r.status, 400, qs);
      assert.equal(r.body.error, "INVALID_REQUEST");
    }
    assert.deepEqual(upstreamCalls(h), []);
  }, bare));

// ---------------------------------------------------------------------------------------------
// With the Parser: semantic search and Parser suggestions in mention search
// ---------------------------------------------------------------------------------------------

/**
 * Both doubles, the service's deadlines on a clock that never moves: the Parser's budget for
 * mentions (`MENTION_PARSER_BUDGET_MS`) passes only where a test moves it, never because the
 * double was slow to answer on a busy machine.
 */
const withParser = { parser: true, parserSession: true, deadlines: manualDeadlines() } as const;

/** The Parser double builds its index (autocomplete reads it) from the sample world. */
async function reindex(h: Harness) {
  const res = await fetch(`${h.parser!.url}/rag/reindex`, {
    method: "POST",
    headers: { authorization: `Bearer ${h.parserToken}` },
  });
  assert.equal(res.status, 200, await res.text());
}

/** The Parser answers its next `path` call with `body` (a crafted, valid answer). */
function parserAnswers(h: Harness, path: string, body: unknown) {
  h.parser!.fault({ path, status: 200, body: JSON.stringify(body), times: 1 });
}

const suggestCalls = (h: Harness) =>
  h.parser!.requests.filter((r) => r.path === "/suggest/autocomplete");

Deno.test("search: rag mode answers the Parser's best notes as Core summaries with score and excerpt", () =>
  withHarness(async (h) => {
    await reindexForOwner(h.parser!); // the real Parser answers from the owner's index only
    const r = await get<{ mode: string; results: Record<string, unknown>[]; count: number }>(
      h,
      "/api/search?q=lighthouse%20keepers&mode=rag",
    );
    assert.equal(r.status, 200);
    assert.equal(r.body.mode, "rag");
    assert.equal(r.body.count, r.body.results.length);
    const iselde = r.body.results.find((x) => x.noteId === W.charIselde)!;
    assert.deepEqual(Object.keys(iselde).sort(), [
      "dateModified",
      "excerpt",
      "isProtected",
      "loreType",
      "noteId",
      "parentNoteIds",
      "score",
      "title",
      "type",
    ]);
    assert.deepEqual([iselde.title, iselde.loreType, iselde.type], [
      "Iselde Crane",
      "character",
      "text",
    ]);
    assert.match(String(iselde.excerpt), /Greyfin Lighthouse/);
    const scores = r.body.results.map((x) => x.score as number);
    assert.deepEqual(scores, [...scores].sort((a, b) => b - a), "best first");
    const sent = h.parser!.requests.filter((x) => x.path === "/rag/query");
    assert.deepEqual(sent.map((x) => JSON.parse(x.bodyText!)), [
      { text: "lighthouse keepers", topK: 10 },
    ]);

    const hit = (noteId: string, score: number) => ({
      noteId,
      noteTitle: "stale title",
      content: "chunk",
      score,
    });
    parserAnswers(h, "/rag/query", {
      results: [hit("gone12345678", 0.9), hit(W.locReef, 0.8), hit(W.media, 0.5)],
    });
    h.core.clearRequests();
    const stale = await get<{ results: Record<string, unknown>[]; count: number }>(
      h,
      "/api/search?q=reef&mode=rag",
    );
    assert.deepEqual(
      stale.body.results.map((x) => [x.noteId, x.title, x.score, x.excerpt]),
      [[W.locReef, "The Knucklebone Reef", 0.8, "chunk"], [W.media, "Media", 0.5, "chunk"]],
      "notes Core no longer has are left out; titles are Core's",
    );
    assert.equal(stale.body.count, 2);
    assert.equal(searches(h).length, 1, "one Core search for all hits");
  }, withParser));

Deno.test("search: rag mode Parser errors are mapped, its words not passed on", () =>
  withHarness(async (h) => {
    h.parser!.fault({
      path: "/rag/query",
      status: 500,
      body: "embedding endpoint http://10.0.0.5:9000 unreachable",
      contentType: "text/plain",
    });
    const r = await get(h, "/api/search?q=reef&mode=rag");
    assert.equal(r.status, 502);
    assert.equal(r.body.error, "UPSTREAM_ERROR");
    assert.ok(!JSON.stringify(r.body).includes("10.0.0.5"));
    assertNoSecrets(h, JSON.stringify(r.body));
  }, withParser));

Deno.test("mention-search: Core title matches first, then the Parser's semantic hits", () =>
  withHarness(async (h) => {
    await reindex(h);
    const r = await get<Picked[]>(h, "/api/lore/mention-search?q=reef");
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, [
      { noteId: W.locReef, title: "The Knucklebone Reef", loreType: "location", source: "core" },
      // her text mentions the reefs; the Parser also named the reef itself (deduplicated)
      { noteId: W.charMira, title: "Mira Tallowend", loreType: "character", source: "parser" },
    ]);
    assert.deepEqual(suggestCalls(h).map((x) => x.search), ["?q=reef&limit=8"]);
  }, withParser));

Deno.test("mention-search: Parser hits are confirmed by one Core search; Core's titles win", () =>
  withHarness(async (h) => {
    await reindex(h);
    // renamed after indexing: the Parser still knows the old title, Core's title search does not
    h.core.store.patchNote(W.charIselde, { title: "Iselde Heron" });
    const renamed = await get<Picked[]>(h, "/api/lore/mention-search?q=crane");
    assert.deepEqual(renamed.body, [
      { noteId: W.charIselde, title: "Iselde Heron", loreType: "character", source: "parser" },
    ]);

    const offer = (noteId: string) => ({ noteId, title: "Trust me" });
    parserAnswers(h, "/suggest/autocomplete", {
      suggestions: [
        offer(W.guideWelcome), // a note, but not lore
        offer("gone12345678"), // missing
        offer("../etapi/x"), // not an id at all
        offer(W.charOskar),
        offer(W.charOskar), // twice
      ],
    });
    h.core.clearRequests();
    const r = await get<Picked[]>(h, "/api/lore/mention-search?q=zzz");
    assert.deepEqual(r.body, [
      { noteId: W.charOskar, title: "Oskar Venn", loreType: "character", source: "parser" },
    ]);
    const s = searches(h).map((x) => x.search);
    assert.equal(s.length, 2, "the title search and one confirmation search");
    assert.equal(
      s[1],
      `#lore and (note.noteId = "${W.guideWelcome}" or note.noteId = "gone12345678" or note.noteId = "${W.charOskar}")`,
    );
  }, withParser));

Deno.test("mention-search: merged and deduplicated, Core first, at most 8", () =>
  withHarness(async (h) => {
    const core = Array.from({ length: 5 }, (_, i) => note(h, `Vexmoor ${i + 1}`));
    const others = Array.from({ length: 6 }, (_, i) => note(h, `Drift ${i + 1}`));
    parserAnswers(h, "/suggest/autocomplete", {
      suggestions: [core[0], others[0], core[4], others[1], others[2], others[3], others[4]].map(
        (noteId) => ({ noteId, title: "x" }),
      ),
    });
    const r = await get<Picked[]>(h, "/api/lore/mention-search?q=vexmoor");
    assert.deepEqual(
      r.body.map((x) => [x.title, x.source]),
      [
        ["Vexmoor 1", "core"],
        ["Vexmoor 2", "core"],
        ["Vexmoor 3", "core"],
        ["Vexmoor 4", "core"],
        ["Vexmoor 5", "core"],
        ["Drift 1", "parser"],
        ["Drift 2", "parser"],
        ["Drift 3", "parser"],
      ],
    );
    for (let i = 6; i <= 8; i++) note(h, `Vexmoor ${i}`);
    h.core.clearRequests();
    parserAnswers(h, "/suggest/autocomplete", { suggestions: [{ noteId: others[5], title: "x" }] });
    const full = await get<Picked[]>(h, "/api/lore/mention-search?q=vexmoor");
    assert.equal(full.body.length, 8);
    assert.ok(full.body.every((x) => x.source === "core"));
    assert.equal(searches(h).length, 1, "Core already filled the list: nothing to confirm");
  }, { ...withParser, core: { world: false } }));

Deno.test("mention-search: a hanging Parser costs the budget, not the upstream timeout", () => {
  const time = manualDeadlines();
  return withHarness(async (h) => {
    h.parser!.fault({ path: "/suggest/autocomplete", hang: true });
    const answer = get<Picked[]>(h, "/api/lore/mention-search?q=reef");
    await eventually("the Parser holds the call", () => suggestCalls(h).length === 1);
    time.advance(300); // the budget, far short of the upstream timeout
    const r = await answer;
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.map((x) => [x.noteId, x.source]), [[W.locReef, "core"]]);
    assert.equal(suggestCalls(h).length, 1, "the Parser was asked");
    assert.ok(h.logs.some((l) => l.includes("mention search without Parser")));
  }, {
    ...withParser,
    deadlines: time,
    env: { MENTION_PARSER_BUDGET_MS: "300", UPSTREAM_TIMEOUT_MS: "600000" },
  });
});

Deno.test("mention-search: a failing Parser or none at all leaves Core's answer", async () => {
  await withHarness(async (h) => {
    await reindex(h);
    for (const status of [500, 401, 429]) {
      h.parser!.fault({ path: "/suggest/autocomplete", status, times: 1 });
      const r = await get<Picked[]>(h, "/api/lore/mention-search?q=reef");
      assert.equal(r.status, 200, String(status));
      assert.deepEqual(r.body.map((x) => x.source), ["core"], String(status));
    }
    h.parser!.fault({ path: "/suggest/autocomplete", status: 200, body: "not json", times: 1 });
    const garbage = await get<Picked[]>(h, "/api/lore/mention-search?q=reef");
    assert.deepEqual(garbage.body.map((x) => x.source), ["core"]);
  }, withParser);
  await withHarness(async (h) => {
    const r = await get<Picked[]>(h, "/api/lore/mention-search?q=reef");
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.map((x) => x.noteId), [W.locReef]);
    assert.deepEqual(suggestCalls(h), [], "no Parser session: the Parser is not asked");
  }, { parser: true });
});

Deno.test("GET /api/lore and /api/search: a query Core would fail on is 400 and never sent", () =>
  withHarness(async (h) => {
    // Core answers these with 500 GENERIC (an uncompilable %= operand, a blank quoted term), or
    // silently drops the whole condition (a quoted or unclosed parenthesis)
    const bad: [string, RegExp][] = [
      [
        "note.content %= '['",
        /regular expression after %= is invalid: "\[" \(Unterminated character class\)/,
      ],
      ["#loreType %= '('", /a quoted "\(" is read by Core as a parenthesis/],
      ["#loreType %= '(a'", /regular expression after %= is invalid: "\(a" \(Unterminated group\)/],
      ["#lore (#loreType = event", /a parenthesis is not closed/],
      ["#lore note.title %= '[Z-a]'", /"\[z-a\]" \(Range out of order in character class\)/],
      // unquoted, Core's lexer splits at "-": the operand it compiles is "[z"
      ["#lore note.title %= [Z-a]", /"\[z" \(Unterminated character class\)/],
      ['dragon "" #lore', /empty quoted search term/],
    ];
    h.core.clearRequests();
    for (const [q, why] of bad) {
      for (const path of ["/api/lore", "/api/search"]) {
        const r = await get<unknown>(h, `${path}?q=${encodeURIComponent(q)}`);
        assert.equal(r.status, 400, `${path} ${q}`);
        assert.equal(r.body.error, "INVALID_REQUEST");
        const fields = r.body.details?.fields as { path: string; message: string }[];
        assert.deepEqual(fields.map((f) => f.path), ["query.q"]);
        assert.match(fields[0].message, why);
        assert.match(r.body.message, why);
      }
    }
    assert.deepEqual(upstreamCalls(h), []);

    // what Core can run passes unchanged (the regex operand as Core reads it: lowercased)
    const ok = await get<{ noteId: string }[]>(
      h,
      `/api/lore?q=${encodeURIComponent("#loreType %= '^(EVENT|timeline)$'")}`,
    );
    assert.equal(ok.status, 200);
    assert.deepEqual(
      ok.body.map((n) => n.noteId).sort(),
      [W.eventFlood, W.eventPact, W.timeline].sort(),
    );
    // a quoted "[" that is not a %= operand is just text; rag text is not Core syntax at all
    assert.equal((await get(h, `/api/search?q=${encodeURIComponent("'['")}`)).status, 200);
    const rag = await get(h, `/api/search?mode=rag&q=${encodeURIComponent('""')}`);
    assert.equal(rag.body.error, "NOT_CONFIGURED");
  }));

Deno.test("GET /api/lore and /api/search: Core failing on the query is 400, not blamed on Core", () =>
  withHarness(async (h) => {
    // a failure our check cannot foresee (e.g. Core's JavaScript engine rejects a pattern this
    // one accepts): Core's own 500 decides, and its text is never shown
    const coreText = "Invalid regular expression: /(?<a>x)|(?<a>y)/: Duplicate capture group name";
    h.core.fault({
      path: "/etapi/notes",
      status: 500,
      body: JSON.stringify({ status: 500, code: "GENERIC", message: coreText }),
      times: 2,
    });
    const q = encodeURIComponent("#lore note.title %= '(?<a>x)|(?<a>y)'");
    for (const path of ["/api/lore", "/api/search"]) {
      const r = await get<unknown>(h, `${path}?q=${q}`);
      assert.equal(r.status, 400, path);
      assert.deepEqual(
        [r.body.error, r.body.message],
        [
          "INVALID_REQUEST",
          "Core cannot run this search: the regular expression after %= is invalid",
        ],
      );
      assert.deepEqual(r.body.details?.fields, [
        { path: "query.q", message: "the regular expression after %= is invalid" },
      ]);
      assert.ok(!JSON.stringify(r.body).includes("Duplicate capture group"));
    }
    // any other Core failure is still Core's: 502, with none of its text
    h.core.fault({
      path: "/etapi/notes",
      status: 500,
      body: JSON.stringify({ status: 500, code: "GENERIC", message: "Can't find note path /srv" }),
      times: 1,
    });
    const other = await get<unknown>(h, "/api/lore?q=%23lore");
    assert.equal(other.status, 502);
    assert.equal(other.body.error, "UPSTREAM_ERROR");
    assert.ok(!JSON.stringify(other.body).includes("/srv"));
  }));
