/**
 * Composite routes read their targets in one Core search, not one call per target: counted on
 * the Core double's request log, so the bound is asserted by behaviour, never by time.
 */
import assert from "node:assert/strict";
import { type Harness, upstreamCalls, withHarness } from "../helpers/harness.ts";
import { W } from "../../sims/world.ts";

const bare = { core: { world: false } };

/** A note created straight in the double's store (setup, not under test). */
function note(h: Harness, title: string, parentNoteId = "root", noteId?: string): string {
  return h.core.store.createNote({ parentNoteId, title, type: "text", content: "", noteId }, {
    ignoreForbiddenParents: true,
  }).note.noteId;
}

function label(h: Harness, noteId: string, name: string, value = "") {
  h.core.store.createAttribute({ noteId, type: "label", name, value });
}

function relation(h: Harness, noteId: string, name: string, value: string) {
  h.core.store.createAttribute({ noteId, type: "relation", name, value });
}

interface Resolved {
  name: string;
  targetNoteId: string;
  targetTitle: string;
  loreType: string | null;
}

const searches = (h: Harness) => upstreamCalls(h).filter((c) => c.startsWith("GET /etapi/notes?"));

Deno.test("GET /api/lore/:id: every relation target in one search, however many", () =>
  withHarness(async (h) => {
    const source = note(h, "Ilsa Thorne");
    const targets = Array.from({ length: 7 }, (_, i) => note(h, `Target ${i}`));
    label(h, targets[0], "loreType", "character");
    for (const [i, t] of targets.entries()) relation(h, source, `relKnows${i}`, t);
    relation(h, source, "relAlly", targets[1]); // a second relation to one target

    h.core.clearRequests();
    const r = await h.requestJson<{ resolvedRelations: Resolved[] }>(`/api/lore/${source}`);
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.resolvedRelations.map((x) => `${x.name}>${x.targetTitle}:${x.loreType}`),
      [
        ...targets.map((_, i) => `relKnows${i}>Target ${i}:${i === 0 ? "character" : null}`),
        "relAlly>Target 1:null",
      ],
    );
    const calls = upstreamCalls(h);
    assert.equal(calls.length, 2, calls.join("\n"));
    assert.equal(calls[0], `GET /etapi/notes/${source}`);
    assert.equal(searches(h).length, 1);
  }, bare));

Deno.test("GET /api/lore/:id: no relations, no search", () =>
  withHarness(async (h) => {
    const source = note(h, "Hermit");
    h.core.clearRequests();
    const r = await h.requestJson<{ resolvedRelations: Resolved[] }>(`/api/lore/${source}`);
    assert.deepEqual(r.body.resolvedRelations, []);
    assert.deepEqual(upstreamCalls(h), [`GET /etapi/notes/${source}`]);
  }, bare));

/** A note related to an archived note and to one only under Core's hidden notes. */
function withArchivedAndHiddenTargets(h: Harness) {
  const source = note(h, "Cartographer");
  const archived = note(h, "Old Harbor Map");
  label(h, archived, "archived");
  const hidden = note(h, "Hidden Ledger", "_hidden");
  relation(h, source, "relDepicts", archived);
  relation(h, source, "relKeeps", hidden);
  return { source, archived, hidden };
}

Deno.test("GET /api/lore/:id: archived, hidden and case-twin targets resolve as a note read would", () =>
  withHarness(async (h) => {
    const { source, archived, hidden } = withArchivedAndHiddenTargets(h);
    const exact = note(h, "The Right One", "root", "caseTwin0001");
    note(h, "The Other Case", "root", "CASETWIN0001"); // Core's search matches ids in any case
    relation(h, source, "relAlly", exact);

    h.core.clearRequests();
    const r = await h.requestJson<{ resolvedRelations: Resolved[] }>(`/api/lore/${source}`);
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.resolvedRelations.map((x) => `${x.name}>${x.targetNoteId}:${x.targetTitle}`),
      [
        `relDepicts>${archived}:Old Harbor Map`,
        `relKeeps>${hidden}:Hidden Ledger`,
        "relAlly>caseTwin0001:The Right One",
      ],
    );
    // the note, one search, then only the target the search cannot see
    assert.deepEqual(upstreamCalls(h).filter((c) => !c.startsWith("GET /etapi/notes?")), [
      `GET /etapi/notes/${source}`,
      `GET /etapi/notes/${hidden}`,
    ]);
    assert.equal(searches(h).length, 1);
    assert.match(searches(h)[0], /includeArchivedNotes=true/);
  }, bare));

Deno.test("a note's relationships: archived and hidden targets resolve as a note read would", () =>
  withHarness(async (h) => {
    const { source, archived, hidden } = withArchivedAndHiddenTargets(h);

    const r = await h.requestJson<{ existing: Resolved[]; suggestions: unknown }>(
      `/api/lore/${source}/relationships`,
      { method: "POST" },
    );
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.existing.map((x) => `${x.name}>${x.targetNoteId}:${x.targetTitle}`),
      [`relDepicts>${archived}:Old Harbor Map`, `relKeeps>${hidden}:Hidden Ledger`],
    );
    assert.deepEqual(r.body.suggestions, []); // no Parser here: Core's part still answers
  }, bare));

Deno.test("copilot chat: the linked notes are read in one search, then only their contents", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    const r = await h.requestJson(`/api/lore/${W.charMira}/copilot/chat`, {
      method: "POST",
      json: { transcript: [{ role: "user", content: "Who is Mira?" }] },
    });
    assert.equal(r.status, 200);
    const linked = [W.charOskar, W.locHarbor, W.faction];
    const calls = upstreamCalls(h);
    // no note read one by one besides the current note
    assert.deepEqual(
      calls.filter((c) => /^GET \/etapi\/notes\/[^/?]+$/.test(c)),
      [`GET /etapi/notes/${W.charMira}`],
    );
    assert.equal(searches(h).length, 1);
    for (const id of linked) assert.ok(calls.includes(`GET /etapi/notes/${id}/content`), id);
  }, { parser: true, parserSession: true }));
