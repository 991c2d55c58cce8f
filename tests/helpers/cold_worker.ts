/**
 * Worker entry for tests/routes/cold_html_engine_test.ts: the service it starts is as cold as a
 * new process (see fresh_isolate.ts). It gets a case name from {@linkcode COLD_CASES}, checks that
 * start-up and `/healthz` left the HTML engine unloaded, then runs the case (its request loads the
 * engine).
 *
 * @module
 */
import assert from "node:assert/strict";
import { htmlEngine } from "../../src/sanitize/html_engine.ts";
import { COLD_CASES } from "./cold_cases.ts";
import { answerInWorker } from "./fresh_isolate.ts";
import { startHarness } from "./harness.ts";

const notLoaded = /HTML engine is not loaded/;

answerInWorker(async (name: string) => {
  const coldCase = COLD_CASES[name];
  assert.ok(coldCase, `no case named "${name}"`);
  assert.throws(() => htmlEngine(), notLoaded, "loaded before the service started");
  const h = await startHarness(coldCase.harness);
  try {
    const health = await h.request("/healthz");
    await health.body?.cancel();
    assert.throws(() => htmlEngine(), notLoaded, "loaded by start-up or /healthz");
    await coldCase.run(h);
    htmlEngine(); // the case's request loaded it
  } finally {
    await h.close();
  }
});
