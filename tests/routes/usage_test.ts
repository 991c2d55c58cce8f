/**
 * Usage routes over HTTP: summaries computed by the Parser double from model calls recorded at
 * fixed dates, date-range rules, budgets as a partial update, and the alert status.
 */
import assert from "node:assert/strict";
import { assertNoSecrets, type Harness, withHarness } from "../helpers/harness.ts";

/** A settable clock for the Parser double. */
function clock(start: string) {
  let at = Date.parse(start);
  return { now: () => new Date(at), set: (iso: string) => void (at = Date.parse(iso)) };
}

function parserCalls(h: Harness) {
  return h.parser!.requests
    .filter((r) => r.path.startsWith("/usage/"))
    .map((r) => ({
      method: r.method,
      path: r.path + r.search,
      body: JSON.parse(r.bodyText || "null"),
    }));
}

async function send(h: Harness, method: string, path: string, json?: unknown) {
  const res = await h.request(path, { method, json });
  const text = await res.text();
  assertNoSecrets(h, text);
  return { status: res.status, body: JSON.parse(text) };
}

/** Records one model call of the default owner at `at`, then puts the clock back to `back`. */
function record(
  h: Harness,
  c: ReturnType<typeof clock>,
  at: string,
  call: { task: string; model: string; tokens: number; costUsd: number; latencyMs: number },
) {
  const store = h.parser!.store;
  c.set(at);
  store.recordLlmCall({ userId: [...store.users.keys()][0], ...call });
}

Deno.test("summary: days are whole UTC days; totals, zero-filled burn, tasks, models, latency", () => {
  const c = clock("2026-03-10T12:00:00Z");
  return withHarness(async (h) => {
    record(h, c, "2026-03-01T00:10:00Z", {
      task: "brain-dump",
      model: "m-cheap",
      tokens: 100,
      costUsd: 0.25,
      latencyMs: 100,
    });
    record(h, c, "2026-03-03T23:50:00Z", {
      task: "suggest",
      model: "m-dear",
      tokens: 50,
      costUsd: 1,
      latencyMs: 50,
    });
    record(h, c, "2026-03-04T00:00:00Z", {
      task: "suggest",
      model: "m-dear",
      tokens: 9,
      costUsd: 9,
      latencyMs: 9,
    });
    c.set("2026-03-10T12:00:00Z");
    const r = await send(h, "GET", "/api/usage/summary?from=2026-03-01&to=2026-03-03");
    assert.equal(r.status, 200);
    assert.deepEqual(parserCalls(h).map((x) => x.path), [
      "/usage/summary?from=2026-03-01T00%3A00%3A00.000Z&to=2026-03-03T23%3A59%3A59.999Z",
    ]);
    assert.deepEqual(r.body.summary, {
      totalTokens: 150,
      totalRequests: 2,
      avgLatency: 75,
      totalCostUsd: 1.25,
    });
    assert.deepEqual(r.body.dailyBurn, [
      { date: "2026-03-01", tokens: 100, cost: 0.25, count: 1 },
      { date: "2026-03-02", tokens: 0, cost: 0, count: 0 },
      { date: "2026-03-03", tokens: 50, cost: 1, count: 1 },
    ]);
    assert.deepEqual(r.body.taskCosts, [
      { task: "brain-dump", tokens: 100, cost: 0.25, count: 1, avgLatency: 100 },
      { task: "suggest", tokens: 50, cost: 1, count: 1, avgLatency: 50 },
    ]);
    assert.deepEqual(r.body.modelDistribution, [
      { model: "m-dear", tokens: 50, cost: 1, count: 1 },
      { model: "m-cheap", tokens: 100, cost: 0.25, count: 1 },
    ]);
    assert.deepEqual(r.body.latencyStats[1], {
      task: "suggest",
      model: "m-dear",
      count: 1,
      avg: 50,
      p50: 50,
      p90: 50,
      p95: 50,
      p99: 50,
    });

    const zoned = await send(
      h,
      "GET",
      "/api/usage/summary?from=2026-03-04T01:00:00%2B01:00&to=2026-03-04T00:00:00Z",
    );
    assert.equal(zoned.body.summary.totalCostUsd, 9, "an instant with its zone is kept exactly");
    assert.match(parserCalls(h)[1].path, /from=2026-03-04T00%3A00%3A00\.000Z&/);

    const recent = await send(h, "GET", "/api/usage/summary");
    assert.equal(parserCalls(h)[2].path, "/usage/summary", "no range: the Parser's 30 days");
    assert.equal(recent.body.dailyBurn.length, 31);
    assert.equal(recent.body.summary.totalRequests, 3);
  }, { parser: { now: c.now }, parserSession: true });
});

Deno.test("summary: bad or unbounded ranges are 400 and never sent", () =>
  withHarness(async (h) => {
    const cases: [string, string][] = [
      ["from=2026-03-01", "query.to"],
      ["to=2026-03-01", "query.from"],
      ["from=2026-02-30&to=2026-03-01", "query.from"],
      ["from=yesterday&to=today", "query.from"],
      ["from=2026-03-01T10:00:00&to=2026-03-02", "query.from"],
      ["from=2026-03-02&to=2026-03-01", "query.from"],
      ["from=2025-01-01&to=2026-01-02", "query.to"],
      ["from=2025-01-01T00:00:00Z&to=2026-01-02T00:00:00Z", "query.to"],
    ];
    for (const [q, field] of cases) {
      const r = await send(h, "GET", `/api/usage/summary?${q}`);
      assert.equal(r.status, 400, q);
      assert.equal(r.body.error, "INVALID_REQUEST");
      assert.equal(r.body.details.fields[0].path, field, q);
    }
    const year = await send(h, "GET", "/api/usage/summary?from=2024-01-01&to=2024-12-31");
    assert.equal(year.status, 200, "a leap year's 366 days are fine");
    assert.equal(year.body.dailyBurn.length, 366);
    assert.equal(parserCalls(h).length, 1);
  }, { parser: true, parserSession: true }));

Deno.test("summary: the Parser's INVALID_DATE_RANGE is 400; an unexpected answer 502", () =>
  withHarness(async (h) => {
    h.parser!.fault({
      path: "/usage/summary",
      status: 400,
      body: '{"error":"INVALID_DATE_RANGE","message":"Query params must be valid dates."}',
      times: 1,
    });
    const r = await send(h, "GET", "/api/usage/summary");
    assert.equal(r.status, 400);
    assert.equal(r.body.error, "INVALID_REQUEST");
    assert.equal(r.body.details.upstreamCode, "INVALID_DATE_RANGE");
    h.parser!.fault({ path: "/usage/summary", status: 200, body: '{"summary":{}}' });
    assert.equal((await send(h, "GET", "/api/usage/summary")).status, 502);
  }, { parser: true, parserSession: true }));

Deno.test("budgets: PUT changes only the given fields (the Parser's PUT replaces all)", () =>
  withHarness(async (h) => {
    const empty = { dailyBudgetUsd: null, monthlyBudgetUsd: null, alertEmail: null };
    assert.deepEqual((await send(h, "GET", "/api/usage/budgets")).body, empty);
    const first = await send(h, "PUT", "/api/usage/budgets", {
      dailyBudgetUsd: 2.5,
      alertEmail: "gm@example.com",
    });
    assert.deepEqual(first, {
      status: 200,
      body: { dailyBudgetUsd: 2.5, monthlyBudgetUsd: null, alertEmail: "gm@example.com" },
    });
    const second = await send(h, "PUT", "/api/usage/budgets", { monthlyBudgetUsd: 40 });
    const kept = { dailyBudgetUsd: 2.5, monthlyBudgetUsd: 40, alertEmail: "gm@example.com" };
    assert.deepEqual(second.body, kept);
    assert.deepEqual((await send(h, "GET", "/api/usage/budgets")).body, kept);
    const puts = parserCalls(h).filter((x) => x.method === "PUT");
    assert.deepEqual(puts.at(-1)!.body, kept, "the Parser is always sent all three fields");
    const cleared = await send(h, "PUT", "/api/usage/budgets", { alertEmail: null });
    assert.deepEqual(cleared.body, { ...kept, alertEmail: null });
  }, { parser: true, parserSession: true }));

Deno.test("budgets: bad thresholds are 400 and never sent", () =>
  withHarness(async (h) => {
    const cases: [unknown, string][] = [
      [{}, "body"],
      [{ dailyBudgetUsd: -1 }, "body.dailyBudgetUsd"],
      [{ dailyBudgetUsd: 0 }, "body.dailyBudgetUsd"],
      [{ dailyBudgetUsd: "5" }, "body.dailyBudgetUsd"],
      [{ monthlyBudgetUsd: 1.005 }, "body.monthlyBudgetUsd"],
      [{ monthlyBudgetUsd: 2e6 }, "body.monthlyBudgetUsd"],
      [{ alertEmail: "not-an-address" }, "body.alertEmail"],
      [{ weeklyBudgetUsd: 3 }, "body"],
    ];
    for (const [body, field] of cases) {
      const r = await send(h, "PUT", "/api/usage/budgets", body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.details.fields[0].path, field, JSON.stringify(body));
    }
    assert.deepEqual(parserCalls(h), []);
  }, { parser: true, parserSession: true }));

Deno.test("alert-status: today's and this month's spend (UTC) against the budgets", () => {
  const c = clock("2026-04-30T23:00:00Z");
  return withHarness(async (h) => {
    const call = { task: "brain-dump", model: "m", tokens: 10, latencyMs: 5 };
    record(h, c, "2026-03-31T23:59:00Z", { ...call, costUsd: 50 });
    record(h, c, "2026-04-02T08:00:00Z", { ...call, costUsd: 3 });
    record(h, c, "2026-04-30T00:00:00Z", { ...call, costUsd: 0.5 });
    c.set("2026-04-30T23:00:00Z");
    const before = await send(h, "GET", "/api/usage/alert-status");
    assert.deepEqual(before.body, {
      configured: false,
      dailySpendUsd: 0.5,
      monthlySpendUsd: 3.5,
      dailyBudgetUsd: null,
      monthlyBudgetUsd: null,
      dailyOverBudget: false,
      monthlyOverBudget: false,
    });
    await send(h, "PUT", "/api/usage/budgets", { dailyBudgetUsd: 1, monthlyBudgetUsd: 3 });
    const after = await send(h, "GET", "/api/usage/alert-status");
    assert.deepEqual(after.body, {
      configured: true,
      dailySpendUsd: 0.5,
      monthlySpendUsd: 3.5,
      dailyBudgetUsd: 1,
      monthlyBudgetUsd: 3,
      dailyOverBudget: false,
      monthlyOverBudget: true,
    });
  }, { parser: { now: c.now }, parserSession: true });
});
