/**
 * The Core conformance suite against the Core double: the double must answer it like the real
 * Core does (every step passes), the suite must leave the double exactly as it found it, and
 * every Core-backed route of the table must have a step.
 */
import assert from "node:assert/strict";
import { allRoutes } from "../../src/routes/index.ts";
import { type CoreStore, startCoreSim } from "../../sims/core.ts";
import { coveredRoutes, runCoreSuite, type StepResult } from "./core_suite.ts";
import { FLAGS, routeCoverage } from "./kit.ts";
import { formatReport } from "./report.ts";

/** The double processes pasted images at once: nothing to wait for before the clean-up. */
const NO_SETTLE = { pasteSettleMs: 0 };

/** Every live note with its branches and own attributes (timestamps aside), ids sorted. */
function storeState(store: CoreStore) {
  const strip = <T extends { utcDateModified: string }>({ utcDateModified: _, ...rest }: T) => rest;
  const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return store.noteIds().sort(byId).map((noteId) => {
    const { utcDateModified: _m, dateModified: _d, ...note } = store.getNote(noteId)!;
    return {
      ...note,
      branches: store.branchesOf(noteId).map(strip).sort((a, b) => byId(a.branchId, b.branchId)),
      attributes: store.ownAttributes(noteId).map(strip)
        .sort((a, b) => byId(a.attributeId, b.attributeId)),
    };
  });
}

/** The note owning `#shareRoot` (the sample world has exactly one). */
function shareRootOf(store: CoreStore): string | undefined {
  return store.noteIds().find((id) =>
    store.ownAttributes(id).some((a) => a.type === "label" && a.name === "shareRoot")
  );
}

function failures(rows: readonly StepResult[]): string[] {
  return rows.filter((r) => r.result === "FAIL").map((r) => `${r.method} ${r.path}: ${r.reason}`);
}

Deno.test("conformance: the Core double passes every step with all flags, and is left as found", async () => {
  const sim = await startCoreSim();
  try {
    const before = storeState(sim.store);
    const shareRoot = shareRootOf(sim.store);
    assert.ok(shareRoot, "the sample world has a share root the run must put back");
    const rows = await runCoreSuite({
      coreUrl: sim.url,
      coreToken: sim.token,
      flags: FLAGS,
      ...NO_SETTLE,
    });
    assert.deepEqual(failures(rows), [], formatReport(rows));
    assert.deepEqual(rows.filter((r) => r.result === "skipped"), []);
    assert.match(
      rows.find((r) => r.path === "(restore the share root)")!.reason,
      new RegExp(`${shareRoot}: #shareRoot put back`),
    );
    assert.deepEqual(storeState(sim.store), before);
    assert.equal(shareRootOf(sim.store), shareRoot);
  } finally {
    await sim.close();
  }
});

Deno.test("conformance: without flags the share steps are skipped and the share root untouched", async () => {
  const sim = await startCoreSim();
  try {
    const before = storeState(sim.store);
    const rows = await runCoreSuite({
      coreUrl: sim.url,
      coreToken: sim.token,
      flags: [],
      ...NO_SETTLE,
    });
    assert.deepEqual(failures(rows), [], formatReport(rows));
    const skipped = rows.filter((r) => r.result === "skipped");
    assert.ok(skipped.length > 0);
    assert.ok(skipped.every((r) => r.reason === "skipped (needs --share)"), formatReport(skipped));
    assert.ok(skipped.some((r) => r.method === "PUT" && r.path === "/api/share"));
    assert.equal(
      rows.find((r) => r.path === "(restore the share root)")?.reason,
      "previous share root was untouched",
    );
    assert.deepEqual(storeState(sim.store), before);
  } finally {
    await sim.close();
  }
});

Deno.test("conformance: every Core-backed route of the table has a step", () => {
  const { missing, unknown } = routeCoverage(coveredRoutes(), allRoutes, ["Core", "Both"]);
  assert.deepEqual(missing, []);
  assert.deepEqual(unknown, [], "steps name routes that exist");
});
