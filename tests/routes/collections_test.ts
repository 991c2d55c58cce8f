/** Content collections (quests, statblocks, timeline) over HTTP against the Core double. */
import assert from "node:assert/strict";
import { type Harness, upstreamCalls, withHarness } from "../helpers/harness.ts";
import { W } from "../../sims/world.ts";

interface Entry {
  noteId: string;
  title: string;
  loreType: string | null;
  parentNoteIds: string[];
  attributes: { noteId: string; type: string; name: string; value: string }[];
}
/** A collection answer: a bare array, as the front end reads it. */
type Collection = Entry[];

/** A note under the lore root with the given own labels (and template relation). */
function addNote(
  h: Harness,
  title: string,
  labels: Record<string, string> = {},
  template?: string,
): string {
  const { note } = h.core.store.createNote({
    parentNoteId: W.loreRoot,
    title,
    type: "text",
    content: "",
  });
  for (const [name, value] of Object.entries(labels)) {
    h.core.store.createAttribute({ noteId: note.noteId, type: "label", name, value });
  }
  if (template) {
    h.core.store.createAttribute({
      noteId: note.noteId,
      type: "relation",
      name: "template",
      value: template,
    });
  }
  return note.noteId;
}

async function list(h: Harness, path: string) {
  h.core.clearRequests();
  const r = await h.requestJson<Collection>(path);
  assert.equal(r.status, 200);
  assert.ok(Array.isArray(r.body));
  return r.body;
}

const titles = (c: Collection) => c.map((e) => e.title);
const ids = (c: Collection) => c.map((e) => e.noteId);

Deno.test("GET /api/quests: template users and own #quest labels, by title, in one search", () =>
  withHarness(async (h) => {
    const own = addNote(h, "Bounty on the Eel", { quest: "" });
    addNote(h, "Quest log notes", { questStatus: "active" }); // a quest-ish label is not #quest
    addNote(h, "Captain Ruel", { loreType: "character" });
    const body = await list(h, "/api/quests");
    assert.deepEqual(ids(body), [own, W.questLamp, W.questLedger]);
    assert.deepEqual(titles(body), [
      "Bounty on the Eel",
      "Relight the Greyfin Lamp",
      "The Smuggler's Ledger",
    ]);
    // the world's quests own no #quest: they match through ~template=_template_quest
    const lamp = body[1];
    assert.equal(lamp.loreType, "quest");
    assert.deepEqual(lamp.parentNoteIds, [W.loreRoot]);
    assert.ok(!lamp.attributes.some((a) => a.name === "quest" && a.noteId === W.questLamp));
    assert.ok(lamp.attributes.some((a) => a.name === "quest" && a.noteId === "_template_quest"));
    assert.equal(body[0].loreType, null);
    assert.deepEqual(upstreamCalls(h), ["GET /etapi/notes?search=%23quest"]);
  }));

Deno.test("GET /api/statblocks: template markers match, templates and other notes do not", () =>
  withHarness(async (h) => {
    const viaTemplate = addNote(h, "Reef Horror", {}, "_template_statblock");
    addNote(h, "Drowned Sentinel notes", { crLevel: "5" });
    const body = await list(h, "/api/statblocks");
    assert.deepEqual(titles(body), ["Drowned Sentinel", "Harbor Eel", "Reef Horror"]);
    assert.equal(body[2].noteId, viaTemplate);
    assert.ok(!ids(body).includes("_template_statblock"));
    assert.ok(body.every((e) => e.loreType === "statblock" || e.noteId === viaTemplate));
    assert.deepEqual(upstreamCalls(h), ["GET /etapi/notes?search=%23statblock"]);
  }));

Deno.test("collections: titles in natural, case- and accent-insensitive order", () =>
  withHarness(async (h) => {
    for (const t of ["banana run", "Cherry Cove", "Äpfel", "apple", "Act 10", "Act 2"]) {
      addNote(h, t, { quest: "" });
    }
    const body = await list(h, "/api/quests");
    assert.deepEqual(titles(body), [
      "Act 2",
      "Act 10",
      "Äpfel",
      "apple",
      "banana run",
      "Cherry Cove",
      "Relight the Greyfin Lamp",
      "The Smuggler's Ledger",
    ]);
    // equal titles (case ignored) fall back to noteId, so the order never depends on Core's
    const twins = [
      addNote(h, "twin tides", { quest: "" }),
      addNote(h, "Twin Tides", { quest: "" }),
    ];
    const again = await list(h, "/api/quests");
    assert.deepEqual(
      again.filter((e) => /^twin tides$/i.test(e.title)).map((e) => e.noteId),
      twins.sort(),
    );
  }));

Deno.test("GET /api/timeline: numeric dates as numbers, others naturally, undated last", () =>
  withHarness(async (h) => {
    const event = (title: string, date?: string) =>
      addNote(
        h,
        title,
        date === undefined ? { loreType: "event" } : {
          loreType: "event",
          inWorldDate: date,
        },
      );
    event("Minus Two", "-2");
    event("Minus Ten", "-10");
    event("Two and a half", "2.5");
    event("Two and a quarter", "2.25");
    event("Another Flood Story", "1187-03-14"); // same date as The Brine Flood: title decides
    event("Year 10 of the Tide", "Year 10 of the Tide");
    event("Year 9 of the Tide", "Year 9 of the Tide");
    event("Aardvark Day");
    event("Blank Date", "   ");
    addNote(h, "Second Age", { loreType: "timeline" });
    addNote(h, "World Event Ledger", { loreType: "world event" }); // Core's word match; not exact
    addNote(h, "Captain Ruel", { loreType: "character", inWorldDate: "1" });
    const body = await list(h, "/api/timeline");
    assert.deepEqual(titles(body), [
      "Minus Ten",
      "Minus Two",
      "Two and a quarter",
      "Two and a half",
      "Another Flood Story",
      "The Brine Flood",
      "The Lantern Pact",
      "Year 9 of the Tide",
      "Year 10 of the Tide",
      "Aardvark Day",
      "Blank Date",
      "Chronicle of the Coast",
      "Second Age",
    ]);
    assert.deepEqual(
      [...new Set(body.map((e) => e.loreType))].sort(),
      ["event", "timeline"],
    );
    assert.deepEqual(upstreamCalls(h), [
      "GET /etapi/notes?search=%23loreType%3D%22event%22+OR+%23loreType%3D%22timeline%22",
    ]);
  }));

Deno.test("collections: complete beyond 200 matches, one search without a limit", () =>
  withHarness(async (h) => {
    const created = Array.from(
      { length: 230 },
      (_, i) => addNote(h, `Errand ${i + 1}`, { quest: "" }),
    );
    const body = await list(h, "/api/quests");
    assert.equal(body.length, 232);
    assert.deepEqual(new Set(ids(body)), new Set([...created, W.questLamp, W.questLedger]));
    assert.equal(body[0].title, "Errand 1");
    assert.equal(body[229].title, "Errand 230");
    assert.deepEqual(upstreamCalls(h), ["GET /etapi/notes?search=%23quest"]);
  }));

Deno.test("collections: client query parameters never reach Core's search", () =>
  withHarness(async (h) => {
    const expected: Record<string, string> = {
      "/api/quests": "GET /etapi/notes?search=%23quest",
      "/api/statblocks": "GET /etapi/notes?search=%23statblock",
      "/api/timeline":
        "GET /etapi/notes?search=%23loreType%3D%22event%22+OR+%23loreType%3D%22timeline%22",
    };
    for (const [path, call] of Object.entries(expected)) {
      h.core.clearRequests();
      const res = await h.request(
        `${path}?search=%23lore&q=%22%20or%20%23lore&limit=1&ancestorNoteId=..%2F_share`,
      );
      assert.equal(res.status, 200);
      assert.ok(((await res.json()) as Collection).length >= 2);
      assert.deepEqual(upstreamCalls(h), [call]);
    }
  }));
