/**
 * The Parser conformance suite against the Parser double (wired to the Core double): the double
 * must answer it like the real Parser does (every step passes), the run must leave Core and the
 * owner's settings as it found them, and every Parser-backed route of the table must have a step.
 */
import assert from "node:assert/strict";
import { allRoutes } from "../../src/routes/index.ts";
import { startCoreSim } from "../../sims/core.ts";
import { DEFAULT_OWNER, startParserSim } from "../../sims/parser.ts";
import { formatReport, type StepResult } from "./report.ts";
import { PARSER_FLAGS, parserCoveredRoutes, runParserSuite } from "./parser_suite.ts";
import { routeCoverage } from "./kit.ts";

/** The real Parser's defaults would make the run wait out minute windows: raised, as documented. */
const RATE_LIMITS = Object.fromEntries(
  ["brain-dump", "consistency", "suggest", "copilot"].map((
    g,
  ) => [g, { max: 500, windowMs: 60_000 }]),
);

/** The double's worker looks for jobs this often; the suite reads a batch's status as often. */
const BATCH_POLL_MS = 50;

function failures(rows: readonly StepResult[]): string[] {
  return rows.filter((r) => r.result === "FAIL").map((r) => `${r.method} ${r.path}: ${r.reason}`);
}

async function withDoubles(
  fn: (ctx: {
    core: Awaited<ReturnType<typeof startCoreSim>>;
    parser: Awaited<ReturnType<typeof startParserSim>>;
  }) => Promise<void>,
) {
  const core = await startCoreSim();
  const parser = await startParserSim({
    core: { url: core.url, token: core.token },
    rateLimits: RATE_LIMITS,
    brainDump: { batchPollMs: BATCH_POLL_MS },
    extras: { vapidPublicKey: "BConformanceVapidPublicKey" },
  });
  try {
    await fn({ core, parser });
  } finally {
    await parser.close();
    await core.close();
  }
}

Deno.test("parser conformance: the Parser double passes every step with all flags, Core left as found", () =>
  withDoubles(async ({ core, parser }) => {
    const notesBefore = core.store.noteIds().sort();
    const rows = await runParserSuite({
      parserUrl: parser.url,
      internalSecret: parser.internalSecret!,
      owner: DEFAULT_OWNER,
      coreUrl: core.url,
      coreToken: core.token,
      flags: PARSER_FLAGS,
      batchWaitMs: 120_000, // a guard: the steps go on as soon as the batch is done
      batchPollMs: BATCH_POLL_MS,
    });
    assert.deepEqual(failures(rows), [], formatReport(rows));
    assert.deepEqual(rows.filter((r) => r.result === "skipped"), [], formatReport(rows));
    assert.deepEqual(core.store.noteIds().sort(), notesBefore, "Core notes after the run");
  }));

Deno.test("parser conformance: without flags the integration steps are skipped and never disconnect", () =>
  withDoubles(async ({ core, parser }) => {
    const rows = await runParserSuite({
      parserUrl: parser.url,
      internalSecret: parser.internalSecret!,
      owner: DEFAULT_OWNER,
      coreUrl: core.url,
      coreToken: core.token,
      flags: [],
      batchWaitMs: 120_000, // a guard: the steps go on as soon as the batch is done
      batchPollMs: BATCH_POLL_MS,
    });
    assert.deepEqual(failures(rows), [], formatReport(rows));
    const skipped = rows.filter((r) => r.result === "skipped");
    assert.deepEqual(
      skipped.map((r) => `${r.method} ${r.path}: ${r.reason}`),
      [
        "DELETE /api/integrations/codex: skipped (needs --integration)",
        "POST /api/integrations/codex/connect: skipped (needs --integration)",
      ],
    );
    assert.ok(
      !parser.requests.some((r) => r.method === "DELETE" && r.path === "/integrations/allcodex"),
      "the owner's Core integration was never removed",
    );
  }));

Deno.test("parser conformance: every Parser-backed route of the table has a step", () => {
  const { missing, unknown } = routeCoverage(parserCoveredRoutes(), allRoutes, ["Parser", "Both"]);
  assert.deepEqual(missing, []);
  assert.deepEqual(unknown, [], "steps name routes that exist");
});
