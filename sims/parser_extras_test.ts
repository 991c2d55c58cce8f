/**
 * Contract tests of the Parser double's imports, notifications and usage routes
 * , over HTTP against a Core double.
 */
import assert from "node:assert/strict";
import type { CoreSim } from "./core.ts";
import { extrasTables } from "./parser_extras.ts";
import { withParserWorld } from "./parser_sim_client.ts";
import { W } from "./world.ts";

/** A Core note as the import left it: title, parents, own labels and template. */
function describe(core: CoreSim, noteId: string) {
  const own = core.store.ownAttributes(noteId);
  return {
    title: core.store.getNote(noteId)?.title,
    parents: core.store.branchesOf(noteId).map((b) => b.parentNoteId),
    labels: own.filter((a) => a.type === "label").map((a) => `${a.name}=${a.value}`),
    template: own.find((a) => a.type === "relation" && a.name === "template")?.value,
  };
}

// ---------------------------------------------------------------------------------------------
// System pack

Deno.test("system-pack: notes with template, #statblock, mapped labels; Core duplicates skipped", () =>
  withParserWorld(async ({ core, call }) => {
    const r = await call("/import/system-pack", {
      body: {
        parentNoteId: W.loreRoot,
        notes: [
          {
            name: " Reef Drake ",
            cr: "1/2",
            ac: 13,
            str: 14,
            speed: "30 ft.",
            content: "<p>Hi</p>",
          },
          { name: "drowned sentinel" }, // the world's statblock, by lower-cased title
          { name: "   " },
        ],
      },
    });
    assert.equal(r.status, 200);
    assert.deepEqual(
      { created: r.json.created, skipped: r.json.skipped, errors: r.json.errors },
      { created: 1, skipped: 1, errors: 1 },
    );
    assert.deepEqual(r.json.detail.skipped, [{ name: "drowned sentinel", reason: "duplicate" }]);
    assert.deepEqual(r.json.detail.errors, [{ name: "(unnamed)", error: "Missing name" }]);
    const [{ noteId, name }] = r.json.detail.created;
    assert.equal(name, "Reef Drake");
    assert.deepEqual(describe(core, noteId), {
      title: "Reef Drake",
      parents: [W.loreRoot],
      template: "_template_statblock",
      labels: [
        "crName=Reef Drake",
        "statblock=",
        "importSource=system-pack",
        "challengeRating=1/2",
        "ac=13",
        "speed=30 ft.",
        "str=14",
      ],
    });
    assert.equal(core.store.getContent(noteId), "<p>Hi</p>");
  }));

Deno.test("system-pack: equal names in one pack are both created (no in-pack dedup)", () =>
  withParserWorld(async ({ call }) => {
    const r = await call("/import/system-pack", {
      body: { notes: [{ name: "Gull Swarm" }, { name: "gull swarm" }] },
    });
    assert.equal(r.json.created, 2);
    const again = await call("/import/system-pack", {
      body: { notes: [{ name: "GULL SWARM" }], skipDuplicates: false },
    });
    assert.equal(again.json.created, 1, "skipDuplicates: false creates it once more");
  }));

Deno.test("system-pack: empty list 400, bad types 422, no integration 500 text, bad parent per note", () =>
  withParserWorld(async ({ parser, call }) => {
    const empty = await call("/import/system-pack", { body: { notes: [] } });
    assert.equal(empty.status, 400);
    assert.deepEqual(empty.json, {
      error: "notes array is required and must not be empty",
      code: "INVALID_INPUT",
    });
    const typed = await call("/import/system-pack", {
      body: { notes: [{ name: "X", ac: true }] },
    });
    assert.equal(typed.status, 422);
    assert.equal(typed.json.property, "/notes/0/ac");
    const orphan = await call("/import/system-pack", {
      body: { notes: [{ name: "Lost Crab" }], parentNoteId: "nope404" },
    });
    assert.equal(orphan.status, 200);
    assert.equal(orphan.json.errors, 1);
    assert.match(orphan.json.detail.errors[0].error, /^ETAPI POST \/create-note → 400: /);
    parser.store.integrations.clear();
    const unconnected = await call("/import/system-pack", {
      body: { notes: [{ name: "Y" }] },
    });
    assert.equal(unconnected.status, 500);
    assert.match(unconnected.headers.get("content-type")!, /^text\/plain/);
    assert.match(unconnected.text, /^AllCodex is not connected/);
  }));

// ---------------------------------------------------------------------------------------------
// Azgaar

const MAP = {
  info: { mapName: "Brinemarch" },
  pack: {
    states: [
      { i: 0, name: "Neutrals" },
      {
        i: 1,
        name: "Vell",
        fullName: "Kingdom of Vell",
        form: "Kingdom",
        formName: "Monarchy",
        capital: 1,
      },
      { i: 2, name: "Gone", removed: true },
    ],
    burgs: [
      {},
      {
        i: 1,
        name: "Tarnholm",
        capital: 1,
        port: 3,
        state: 1,
        culture: 1,
        population: 2.5,
        walls: 1,
      },
      { i: 2, name: "Saltmarrow Harbor", state: 1, type: "Generic" },
      { i: 3, name: "Tarnholm" },
    ],
    religions: [{ i: 0, name: "No religion" }, { i: 1, name: "Tide Faith", deity: "Ulo" }],
    cultures: [{ i: 0, name: "Wildlands" }, { i: 1, name: "Vellish", type: "Naval" }],
  },
  notes: [{ id: "n1", name: "Old Wreck", legend: "<p>Ribs of a ship.</p>" }, {
    id: "n2",
    name: "",
  }],
};

Deno.test("azgaar preview: counts live entities; not an export 400 INVALID_FORMAT", () =>
  withParserWorld(async ({ call }) => {
    const r = await call("/import/azgaar/preview", { body: { mapData: MAP } });
    assert.deepEqual(r.json, {
      mapName: "Brinemarch",
      stateCnt: 1,
      burgCnt: 3,
      religionCnt: 1,
      cultureCnt: 1,
      noteCnt: 2,
    });
    for (const mapData of [null, { pack: {} }, { pack: { cultures: [] } }, "x"]) {
      const bad = await call("/import/azgaar/preview", { body: { mapData } });
      assert.equal(bad.status, 400);
      assert.equal(bad.json.code, "INVALID_FORMAT");
    }
    assert.equal((await call("/import/azgaar/preview", { body: {} })).status, 422);
  }));

Deno.test("azgaar import: categories in order, duplicates within and against Core, options", () =>
  withParserWorld(async ({ core, call }) => {
    const r = await call("/import/azgaar", {
      body: { mapData: MAP, parentNoteId: W.loreRoot, options: { importReligions: false } },
    });
    assert.equal(r.status, 200);
    assert.equal(r.json.mapName, "Brinemarch");
    assert.deepEqual(r.json.states.created.map((c: { name: string }) => c.name), [
      "Kingdom of Vell",
    ]);
    assert.deepEqual(r.json.burgs.created.map((c: { name: string }) => c.name), [
      "Tarnholm",
      "Saltmarrow Harbor", // the world's harbour has no #location label: not a duplicate
    ]);
    assert.deepEqual(r.json.burgs.skipped, [{ name: "Tarnholm", reason: "duplicate" }]);
    assert.deepEqual(r.json.religions, { created: [], skipped: [], errors: [] });
    assert.deepEqual(r.json.totals, { created: 5, skipped: 1, errors: 0 });
    const again = await call("/import/azgaar", { body: { mapData: MAP } });
    assert.deepEqual(again.json.totals, { created: 1, skipped: 6, errors: 0 }, "only the religion");
    const tarnholm = describe(core, r.json.burgs.created[0].noteId);
    assert.equal(tarnholm.template, "_template_location");
    assert.deepEqual(tarnholm.labels, [
      "location=",
      "locationType=Capital",
      "importSource=azgaar",
      "population=2,500",
      "region=Kingdom of Vell",
      "culture=Vellish",
    ]);
    const wreck = r.json.notes.created[0];
    assert.equal(wreck.name, "Old Wreck");
    assert.deepEqual(describe(core, r.json.cultures.created[0].noteId).labels, [
      "race=",
      "importSource=azgaar",
      "cultureType=Naval",
    ]);
  }));

Deno.test("azgaar import: a name that is not text fails the whole import with IMPORT_ERROR", () =>
  withParserWorld(async ({ call }) => {
    const mapData = { pack: { states: [{ i: 1, name: 7 }] } };
    const r = await call("/import/azgaar", { body: { mapData } });
    assert.equal(r.status, 500);
    assert.deepEqual(r.json, { error: "Import failed unexpectedly.", code: "IMPORT_ERROR" });
  }));

// ---------------------------------------------------------------------------------------------
// Notifications

const KEYS = { p256dh: "BNc…", auth: "tBH…" };

Deno.test("notifications: no VAPID key → publicKey null and subscribe 503 PUSH_NOT_CONFIGURED", () =>
  withParserWorld(async ({ call }) => {
    assert.deepEqual((await call("/notifications/vapid-public-key")).json, {
      publicKey: null,
    });
    const r = await call("/notifications/subscribe", {
      body: { endpoint: "https://push.example.com/a", keys: KEYS },
    });
    assert.equal(r.status, 503);
    assert.deepEqual(r.json, {
      error: "PUSH_NOT_CONFIGURED",
      message: "Push notifications not configured.",
    });
  }));

Deno.test("notifications: one row per endpoint; unsubscribe only the caller's, idempotent", () =>
  withParserWorld(async ({ parser, call }) => {
    assert.deepEqual((await call("/notifications/vapid-public-key")).json, {
      publicKey: "BVapid",
    });
    const { subscriptions } = extrasTables(parser.store);
    const endpoint = "https://push.example.com/a";
    for (const auth of ["one", "two"]) {
      const r = await call("/notifications/subscribe", {
        body: { endpoint, keys: { ...KEYS, auth }, expirationTime: null },
      });
      assert.deepEqual([r.status, r.json], [200, { ok: true }]);
    }
    assert.equal(subscriptions.size, 1);
    assert.equal(subscriptions.get(endpoint)?.auth, "two");
    const bad = await call("/notifications/subscribe", { body: { endpoint: "" } });
    assert.equal(bad.status, 422);
    subscriptions.set("https://push.example.com/other", {
      ...subscriptions.get(endpoint)!,
      endpoint: "https://push.example.com/other",
      userId: "someone-else",
    });
    for (const e of [endpoint, endpoint, "https://push.example.com/other"]) {
      const r = await call("/notifications/unsubscribe", {
        method: "DELETE",
        body: { endpoint: e },
      });
      assert.deepEqual([r.status, r.json], [200, { ok: true }]);
    }
    assert.deepEqual([...subscriptions.keys()], ["https://push.example.com/other"]);
  }, { extras: { vapidPublicKey: "BVapid" } }));

// ---------------------------------------------------------------------------------------------
// Usage

function clock(start: string) {
  let at = Date.parse(start);
  return { now: () => new Date(at), set: (iso: string) => (at = Date.parse(iso)) };
}

Deno.test("usage summary: totals, zero-filled days, tasks, models by cost, latency percentiles", () => {
  const c = clock("2026-03-01T10:00:00Z");
  return withParserWorld(async ({ parser, call }) => {
    const owner = [...parser.store.users.keys()][0];
    const rec = (
      at: string,
      task: string,
      model: string,
      tokens: number,
      costUsd: number,
      ms: number,
    ) => {
      c.set(at);
      parser.store.recordLlmCall({ userId: owner, task, model, tokens, costUsd, latencyMs: ms });
    };
    rec("2026-03-01T10:00:00Z", "brain-dump", "m-cheap", 100, 0.25, 100);
    rec("2026-03-01T11:00:00Z", "brain-dump", "m-cheap", 300, 0.25, 300);
    rec("2026-03-03T09:00:00Z", "suggest", "m-dear", 50, 1, 50);
    rec("2026-03-05T09:00:00Z", "suggest", "m-dear", 1, 1, 1); // after `to`
    parser.store.recordLlmCall({
      userId: "other",
      task: "suggest",
      model: "m",
      tokens: 9,
      costUsd: 9,
      latencyMs: 9,
    });
    const r = await call(
      "/usage/summary?from=2026-03-01T00:00:00.000Z&to=2026-03-03T23:59:59.999Z",
    );
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.summary, {
      totalTokens: 450,
      totalRequests: 3,
      avgLatency: 150,
      totalCostUsd: 1.5,
    });
    assert.deepEqual(r.json.dailyBurn, [
      { date: "2026-03-01", tokens: 400, cost: 0.5, count: 2 },
      { date: "2026-03-02", tokens: 0, cost: 0, count: 0 },
      { date: "2026-03-03", tokens: 50, cost: 1, count: 1 },
    ]);
    assert.deepEqual(r.json.taskCosts, [
      { task: "brain-dump", tokens: 400, cost: 0.5, count: 2, avgLatency: 200 },
      { task: "suggest", tokens: 50, cost: 1, count: 1, avgLatency: 50 },
    ]);
    assert.deepEqual(r.json.modelDistribution.map((m: { model: string }) => m.model), [
      "m-dear",
      "m-cheap",
    ]);
    assert.deepEqual(r.json.latencyStats[0], {
      task: "brain-dump",
      model: "m-cheap",
      count: 2,
      avg: 200,
      p50: 300,
      p90: 300,
      p95: 300,
      p99: 300,
    });
    const bad = await call("/usage/summary?from=yesterday");
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.json, {
      error: "INVALID_DATE_RANGE",
      message: "Query params 'from' and 'to' must be valid dates.",
    });
    c.set("2026-03-05T12:00:00Z");
    const recent = await call("/usage/summary");
    assert.equal(recent.json.dailyBurn.length, 31, "default: the last 30 days, zero-filled");
    assert.equal(recent.json.dailyBurn.at(-1).date, "2026-03-05");
    assert.equal(recent.json.summary.totalRequests, 4);
  }, { now: c.now });
});

Deno.test("budgets: full replace (omitted → null); alert-status in UTC day and month; wipe", () => {
  const c = clock("2026-03-31T23:30:00Z");
  return withParserWorld(async ({ parser, call }) => {
    const owner = [...parser.store.users.keys()][0];
    const empty = await call("/usage/alert-status");
    assert.equal(empty.json.configured, false);
    assert.deepEqual((await call("/usage/budgets")).json, {
      dailyBudgetUsd: null,
      monthlyBudgetUsd: null,
      alertEmail: null,
    });
    const put = (body: unknown) => call("/usage/budgets", { method: "PUT", body });
    assert.deepEqual((await put({ dailyBudgetUsd: 1, alertEmail: "gm@example.com" })).json, {
      ok: true,
    });
    await put({ monthlyBudgetUsd: 5 });
    assert.deepEqual((await call("/usage/budgets")).json, {
      dailyBudgetUsd: null,
      monthlyBudgetUsd: 5,
      alertEmail: null,
    });
    assert.equal((await put({ monthlyBudgetUsd: "5" })).status, 422);
    await put({ dailyBudgetUsd: 1, monthlyBudgetUsd: 5 });
    c.set("2026-02-28T12:00:00Z");
    parser.store.recordLlmCall({
      userId: owner,
      task: "t",
      model: "m",
      tokens: 1,
      costUsd: 100,
      latencyMs: 1,
    });
    c.set("2026-03-01T00:00:00Z");
    parser.store.recordLlmCall({
      userId: owner,
      task: "t",
      model: "m",
      tokens: 1,
      costUsd: 4,
      latencyMs: 1,
    });
    c.set("2026-03-31T00:00:00Z");
    parser.store.recordLlmCall({
      userId: owner,
      task: "t",
      model: "m",
      tokens: 1,
      costUsd: 1.5,
      latencyMs: 1,
    });
    c.set("2026-03-31T23:30:00Z");
    assert.deepEqual((await call("/usage/alert-status")).json, {
      configured: true,
      dailySpendUsd: 1.5,
      monthlySpendUsd: 5.5,
      dailyBudgetUsd: 1,
      monthlyBudgetUsd: 5,
      dailyOverBudget: true,
      monthlyOverBudget: true,
    });
    parser.store.wipeHooks.forEach((hook) => hook(owner));
    assert.equal(parser.store.llmCalls.length, 0, "wipe deletes the user's llm_call_log rows");
    assert.equal((await call("/usage/budgets")).json.monthlyBudgetUsd, 5, "budgets stay");
  }, { now: c.now });
});
