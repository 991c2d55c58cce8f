/**
 * Worker entry for tests/routes/cold_html_engine_test.ts: a worker has a module graph of its
 * own, so the service it starts is as cold as a new process. It gets a case name from
 * {@linkcode COLD_CASES}, checks that start-up and `/healthz` left the HTML engine unloaded, runs
 * the case (its request loads the engine) and posts back `{ error }`, empty when all held.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import assert from "node:assert/strict";
import { htmlEngine } from "../../src/sanitize/html_engine.ts";
import { COLD_CASES } from "./cold_cases.ts";
import { startHarness } from "./harness.ts";

const notLoaded = /HTML engine is not loaded/;

self.onmessage = async (e: MessageEvent<string>) => {
  try {
    const coldCase = COLD_CASES[e.data];
    assert.ok(coldCase, `no case named "${e.data}"`);
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
    self.postMessage({});
  } catch (error) {
    self.postMessage({
      error: error instanceof Error ? error.stack ?? error.message : String(error),
    });
  }
};
