/**
 * Import routes over HTTP: system packs and map-generator exports become real notes in the Core
 * double (written by the Parser double); bad input never reaches the Parser.
 */
import assert from "node:assert/strict";
import { assertNoSecrets, type Harness, withHarness } from "../helpers/harness.ts";
import { W } from "../../sims/world.ts";

const OPTS = { parser: true, parserSession: true, env: { LORE_ROOT_NOTE_ID: W.loreRoot } };

/** The Parser requests of this feature (not session or credential lookups), with bodies. */
function parserCalls(h: Harness) {
  return h.parser!.requests
    .filter((r) => !/^\/(api\/auth|internal)\//.test(r.path))
    .map((r) => ({
      method: r.method,
      path: r.path + r.search,
      body: JSON.parse(r.bodyText || "null"),
    }));
}

async function post(h: Harness, path: string, json: unknown) {
  const res = await h.request(path, { method: "POST", json });
  const text = await res.text();
  assertNoSecrets(h, text);
  return { status: res.status, body: JSON.parse(text) };
}

const MAP_SMALL = { pack: { states: [{ i: 0, name: "Neutrals" }, { i: 1, name: "Vell" }] } };

// ---------------------------------------------------------------------------------------------
// System pack

Deno.test("system-pack: statblocks become #statblock notes under the lore root, listed by /api/statblocks", () =>
  withHarness(async (h) => {
    const r = await post(h, "/api/import/system-pack", {
      notes: [
        {
          name: " Reef Drake ",
          cr: "1/2",
          ac: 13,
          hp: 22,
          speed: "30 ft., swim 40 ft.",
          actions: "Bite: +4 to hit.",
          content: '<p onclick="steal()">Scaled<script>alert(1)</script></p>' +
            '<img src="https://tracker.example/p.gif"><a href="javascript:alert(1)">x</a>',
          languages: "Aquan", // not a statblock field: dropped
        },
        { name: "Harbor Eel" }, // already in the world
      ],
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.created, 1);
    assert.equal(r.body.skipped, 1);
    assert.equal(r.body.errors, 0);
    assert.deepEqual(r.body.detail.skipped, [{ name: "Harbor Eel", reason: "duplicate" }]);
    const [{ noteId, name }] = r.body.detail.created;
    assert.equal(name, "Reef Drake");

    const [sent] = parserCalls(h);
    assert.equal(sent.path, "/import/system-pack");
    assert.equal(sent.body.parentNoteId, W.loreRoot, "default parent: the lore root");
    assert.equal(sent.body.notes[0].name, "Reef Drake");
    assert.equal(sent.body.notes[0].languages, undefined);
    assert.equal(sent.body.notes[0].content, "<p>Scaled</p><a>x</a>");

    const list = await h.requestJson<{ noteId: string; title: string }[]>("/api/statblocks");
    assert.deepEqual(list.body.map((n) => n.title), [
      "Drowned Sentinel",
      "Harbor Eel",
      "Reef Drake",
    ]);
    const note = await h.etapi<
      { parentNoteIds: string[]; attributes: { name: string; value: string }[] }
    >(
      `/notes/${noteId}`,
    );
    assert.deepEqual(note.parentNoteIds, [W.loreRoot]);
    const label = (n: string) => note.attributes.find((a) => a.name === n)?.value;
    assert.equal(label("challengeRating"), "1/2");
    assert.equal(label("speed"), "30 ft., swim 40 ft.");
    assert.equal(label("actions"), "Bite: +4 to hit.");
    assert.equal(label("template"), "_template_statblock");
  }, OPTS));

Deno.test("system-pack: invalid packs are 400 and never sent to the Parser", () =>
  withHarness(async (h) => {
    const many = Array.from({ length: 1001 }, (_, i) => ({ name: `Crab ${i}` }));
    const cases: [unknown, string][] = [
      [{ notes: [] }, "body.notes"],
      [{ notes: many }, "body.notes"],
      [{}, "body.notes"],
      [{ notes: [{ cr: 1 }] }, "body.notes.0.name"],
      [{ notes: [{ name: "  " }] }, "body.notes.0.name"],
      [{ notes: [{ name: "X", ac: true }] }, "body.notes.0.ac"],
      [{ notes: [{ name: "X", str: "9".repeat(51) }] }, "body.notes.0.str"],
      [{ notes: [{ name: "X", content: 5 }] }, "body.notes.0.content"],
      [{ notes: [{ name: "X" }], parentNoteId: "../x" }, "body.parentNoteId"],
      [{ notes: [{ name: "X" }], extra: 1 }, "body"],
      [{ notes: [{ name: "Gull" }, { name: "GULL " }] }, "body.notes.1.name"],
    ];
    for (const [body, field] of cases) {
      const r = await post(h, "/api/import/system-pack", body);
      assert.equal(r.status, 400, JSON.stringify(body).slice(0, 80));
      assert.equal(r.body.error, "INVALID_REQUEST");
      assert.ok(
        r.body.details.fields.some((f: { path: string }) => f.path === field),
        `${field}: ${JSON.stringify(r.body.details.fields)}`,
      );
    }
    const missing = await post(h, "/api/import/system-pack", {
      notes: [{ name: "X" }],
      parentNoteId: "noSuchNote1",
    });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body.details.fields, [
      { path: "body.parentNoteId", message: "not found" },
    ]);
    assert.deepEqual(parserCalls(h), []);
    const twice = await post(h, "/api/import/system-pack", {
      notes: [{ name: "Gull" }, { name: "gull" }],
      skipDuplicates: false,
    });
    assert.equal(twice.body.created, 2, "repeats are allowed when duplicates are not skipped");
  }, OPTS));

Deno.test("system-pack: a pack over 50 goes to the Parser in parts of 50; one report", () =>
  withHarness(async (h) => {
    const notes = Array.from({ length: 120 }, (_, i) => ({ name: `Crab ${i}`, cr: i % 5 }));
    const { note } = h.core.store.createNote({
      parentNoteId: W.loreRoot,
      title: "Crab 7",
      type: "text",
      content: "",
    });
    h.core.store.createAttribute({ noteId: note.noteId, type: "label", name: "statblock" });
    const r = await post(h, "/api/import/system-pack", { notes, skipDuplicates: true });
    assert.equal(r.status, 200);
    assert.deepEqual([r.body.created, r.body.skipped, r.body.errors], [119, 1, 0]);
    assert.deepEqual(r.body.detail.skipped, [{ name: "Crab 7", reason: "duplicate" }]);
    assert.deepEqual(
      r.body.detail.created.map((c: { name: string }) => c.name),
      notes.map((n) => n.name).filter((n) => n !== "Crab 7"),
    );
    const sent = parserCalls(h).filter((c) => c.path === "/import/system-pack");
    assert.deepEqual(sent.map((c) => c.body.notes.length), [50, 50, 20]);
    assert.deepEqual(sent.map((c) => c.body.notes[0].name), ["Crab 0", "Crab 50", "Crab 100"]);
  }, OPTS));

Deno.test("imports: when Core cannot confirm the parent, nothing is sent to the Parser", () =>
  withHarness(async (h) => {
    h.core.fault({ path: /^\/etapi\/notes\//, status: 500 });
    const pack = await post(h, "/api/import/system-pack", { notes: [{ name: "X" }] });
    assert.equal(pack.status, 502);
    assert.deepEqual([pack.body.error, pack.body.details.service], ["UPSTREAM_ERROR", "core"]);
    const map = await post(h, "/api/import/mapgen", { mapData: MAP_SMALL });
    assert.equal(map.status, 502);
    assert.deepEqual(parserCalls(h), []);
  }, OPTS));

Deno.test("system-pack: a note Core refused is reported without Core's or the Parser's words", () =>
  withHarness(async (h) => {
    h.core.fault({ path: "/etapi/attributes", status: 500, times: 1 });
    const res = await h.request("/api/import/system-pack", {
      method: "POST",
      json: { notes: [{ name: "Reef Drake" }, { name: "Tide Hag" }] },
    });
    const text = await res.text();
    assertNoSecrets(h, text);
    assert.doesNotMatch(text, /ETAPI|etapi|attributes/);
    const body = JSON.parse(text);
    assert.equal(res.status, 200);
    assert.deepEqual([body.created, body.errors], [1, 1]);
    assert.deepEqual(body.detail.errors, [
      { name: "Reef Drake", error: "The Parser could not write this note to Core" },
    ]);
    assert.equal(body.detail.created[0].name, "Tide Hag");
  }, OPTS));

Deno.test("system-pack: the Parser's INVALID_INPUT is 400, its IMPORT_ERROR 502", () =>
  withHarness(async (h) => {
    h.parser!.fault({
      path: "/import/system-pack",
      status: 400,
      body: '{"error":"notes array is required and must not be empty","code":"INVALID_INPUT"}',
      times: 1,
    });
    const a = await post(h, "/api/import/system-pack", { notes: [{ name: "X" }] });
    assert.equal(a.status, 400);
    assert.equal(a.body.error, "INVALID_REQUEST");
    assert.equal(a.body.details.upstreamCode, "INVALID_INPUT");
    assert.doesNotMatch(JSON.stringify(a.body), /must not be empty/);
    h.parser!.fault({
      path: "/import/system-pack",
      status: 500,
      body: '{"error":"Import failed unexpectedly.","code":"IMPORT_ERROR"}',
    });
    const b = await post(h, "/api/import/system-pack", { notes: [{ name: "X" }] });
    assert.equal(b.status, 502);
    assert.equal(b.body.error, "UPSTREAM_ERROR");
    assert.equal(b.body.details.upstreamCode, "IMPORT_ERROR");
  }, OPTS));

// ---------------------------------------------------------------------------------------------
// Map generator

const MAP = {
  info: { mapName: "Brinemarch", seed: "123", width: 1920 },
  settings: { mapName: "Brinemarch", populationRate: 1000 },
  grid: { cells: { h: [1, 2, 3] } },
  pack: {
    cells: { i: [0, 1, 2], burg: [0, 1, 2] },
    features: [0, { i: 1, type: "ocean" }],
    states: [
      { i: 0, name: "Neutrals", urban: 0 },
      { i: 1, name: "Vell", fullName: "Kingdom of Vell", form: "Kingdom", formName: "Monarchy" },
    ],
    burgs: [
      {},
      { i: 1, name: "Tarnholm", capital: 1, port: 2, state: 1, culture: 1, population: 2.5 },
      { i: 2, name: "Gullreach", state: 1, population: null, removed: false },
    ],
    religions: [{ i: 0, name: "No religion" }, { i: 1, name: "Tide Faith", deity: "Ulo" }],
    cultures: [{ i: 0, name: "Wildlands" }, { i: 1, name: "Vellish", type: "Naval" }],
    provinces: [0, { i: 1, name: "Lowmarch" }],
  },
  notes: [{
    id: "burg1",
    name: "Tarnholm Docks",
    legend: '<p style="color:red" onmouseover="x()">Tar and rope<iframe src="//x"></iframe></p>',
  }],
};

Deno.test("mapgen: an Azgaar export becomes lore notes; only what the Parser reads is sent", () =>
  withHarness(async (h) => {
    const r = await post(h, "/api/import/mapgen", {
      mapData: MAP,
      options: { importReligions: false },
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.mapName, "Brinemarch");
    const names = (b: { created: { name: string }[] }) => b.created.map((c) => c.name);
    assert.deepEqual(names(r.body.states), ["Kingdom of Vell"]);
    assert.deepEqual(names(r.body.burgs), ["Tarnholm", "Gullreach"]);
    assert.deepEqual(names(r.body.religions), []);
    assert.deepEqual(names(r.body.cultures), ["Vellish"]);
    assert.deepEqual(names(r.body.notes), ["Tarnholm Docks"]);
    assert.deepEqual(r.body.totals, { created: 5, skipped: 0, errors: 0 });

    const [sent] = parserCalls(h);
    assert.equal(sent.path, "/import/azgaar");
    assert.deepEqual(sent.body.options, { importReligions: false });
    assert.equal(sent.body.parentNoteId, W.loreRoot);
    assert.deepEqual(Object.keys(sent.body.mapData).sort(), ["info", "notes", "pack", "settings"]);
    assert.deepEqual(Object.keys(sent.body.mapData.pack).sort(), [
      "burgs",
      "cultures",
      "religions",
      "states",
    ]);
    assert.deepEqual(sent.body.mapData.info, { mapName: "Brinemarch" });
    assert.equal(sent.body.mapData.notes[0].legend, "<p>Tar and rope</p>");

    const docs = r.body.notes.created[0].noteId;
    assert.equal(
      await (await h.request(`/api/lore/${docs}/content`)).text(),
      "<p>Tar and rope</p>",
    );
    const locations = await h.etapi<{ results: { title: string }[] }>(
      `/notes?search=${encodeURIComponent("#importSource=azgaar")}`,
    );
    assert.equal(locations.results.length, 5);

    const again = await post(h, "/api/import/mapgen", { mapData: MAP });
    assert.deepEqual(again.body.totals, { created: 1, skipped: 5, errors: 0 }, "a re-run resumes");
  }, OPTS));

Deno.test("mapgen?action=preview: counts without writing; unknown action 400", () =>
  withHarness(async (h) => {
    const before = h.core.store.noteIds().length;
    const r = await post(h, "/api/import/mapgen?action=preview", {
      mapData: MAP,
      options: { importBurgs: false },
    });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      mapName: "Brinemarch",
      stateCnt: 1,
      burgCnt: 2,
      religionCnt: 1,
      cultureCnt: 1,
      noteCnt: 1,
    });
    const [sent] = parserCalls(h);
    assert.equal(sent.path, "/import/azgaar/preview");
    assert.deepEqual(Object.keys(sent.body), ["mapData"]);
    assert.equal(h.core.store.noteIds().length, before);
    // the front end's path for the same route
    const alias = await post(h, "/api/import/azgaar?action=preview", { mapData: MAP });
    assert.deepEqual(alias, r);
    h.parser!.clearRequests();
    const bad = await post(h, "/api/import/mapgen?action=delete", { mapData: MAP });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.details.fields[0].path, "query.action");
    assert.deepEqual(parserCalls(h), []);
  }, OPTS));

Deno.test("mapgen: malformed exports, markup in names and unknown options are 400, never sent", () =>
  withHarness(async (h) => {
    const withPack = (pack: unknown) => ({ mapData: { ...MAP, pack } });
    const cases: [unknown, string][] = [
      [{ mapData: "map" }, "body.mapData"],
      [{ mapData: { info: {} } }, "body.mapData.pack"],
      [withPack({ cultures: [] }), "body.mapData.pack"],
      [withPack({ burgs: {} }), "body.mapData.pack.burgs"],
      [withPack({ states: [{ i: 1, name: 7 }] }), "body.mapData.pack.states.0.name"],
      [withPack({ states: [null] }), "body.mapData.pack.states.0"],
      [withPack({ burgs: [{ i: -1 }] }), "body.mapData.pack.burgs.0.i"],
      [
        withPack({ burgs: [{}, { i: 1, name: "<img src=x onerror=alert(1)>" }] }),
        "body.mapData.pack.burgs.1.name",
      ],
      [{ mapData: { ...MAP, info: { mapName: "a<b" } } }, "body.mapData.info.mapName"],
      [{ mapData: MAP, options: { importRivers: true } }, "body.options"],
      [{ mapData: MAP, parentNoteId: "a/b" }, "body.parentNoteId"],
    ];
    for (const [body, field] of cases) {
      const r = await post(h, "/api/import/mapgen", body);
      assert.equal(r.status, 400, JSON.stringify(body).slice(0, 100));
      assert.ok(
        r.body.details.fields.some((f: { path: string }) => f.path === field),
        `${field}: ${JSON.stringify(r.body.details.fields)}`,
      );
    }
    const missing = await post(h, "/api/import/mapgen", { mapData: MAP, parentNoteId: "gone1" });
    assert.equal(missing.status, 400);
    assert.deepEqual(parserCalls(h), []);
  }, OPTS));

Deno.test("mapgen: exports up to 16 MiB are accepted (above MAX_JSON_BYTES), larger ones 413", () =>
  withHarness(async (h) => {
    const big = JSON.stringify({ mapData: { ...MAP, grid: { cells: "x".repeat(3 << 20) } } });
    const ok = await h.request("/api/import/mapgen?action=preview", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: big,
    });
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
    const [sent] = h.parser!.requests.filter((r) => r.path === "/import/azgaar/preview");
    assert.ok(sent.bodyText!.length < 2000, `forwarded ${sent.bodyText!.length} bytes`);

    h.parser!.clearRequests();
    const huge = await h.request("/api/import/mapgen", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ mapData: { ...MAP, grid: { cells: "x".repeat(17 << 20) } } }),
    });
    assert.equal(huge.status, 413);
    assert.equal((await huge.json()).error, "PAYLOAD_TOO_LARGE");
    assert.deepEqual(parserCalls(h), []);
  }, { ...OPTS, env: { ...OPTS.env, MAX_JSON_BYTES: String(1 << 20) } }));

Deno.test("mapgen: the Parser's INVALID_FORMAT is a clear 400, a bad answer 502", () =>
  withHarness(async (h) => {
    h.parser!.fault({
      path: "/import/azgaar/preview",
      status: 400,
      body: JSON.stringify({
        error:
          "Uploaded data does not look like an Azgaar FMG export. Expected pack.burgs or pack.states arrays.",
        code: "INVALID_FORMAT",
      }),
      times: 1,
    });
    const r = await post(h, "/api/import/mapgen?action=preview", { mapData: MAP });
    assert.equal(r.status, 400);
    assert.equal(r.body.error, "INVALID_REQUEST");
    assert.equal(r.body.details.upstreamCode, "INVALID_FORMAT");
    assert.match(r.body.message, /map generator export/);
    assert.doesNotMatch(r.body.message, /Azgaar FMG/);
    h.parser!.fault({ path: "/import/azgaar/preview", status: 200, body: '{"mapName":1}' });
    const garbage = await post(h, "/api/import/mapgen?action=preview", { mapData: MAP });
    assert.equal(garbage.status, 502);
    assert.equal(garbage.body.error, "UPSTREAM_ERROR");
  }, OPTS));
