/**
 * The HTML engine loads with the first request that needs it, and that request is sanitized like
 * any later one. Every other route test shares an isolate (with the other files of its part:
 * tests/suite/parts.ts), where the engine stays loaded after the first test; here each case of
 * tests/helpers/cold_cases.ts runs in a worker of its own, so its request really is the first.
 */
import assert from "node:assert/strict";
import { COLD_CASES } from "../helpers/cold_cases.ts";
import { inFreshIsolate } from "../helpers/fresh_isolate.ts";

/** Runs one case in a fresh worker; its error, if any, fails the test. */
function runCold(name: string): Promise<void> {
  return inFreshIsolate(new URL("../helpers/cold_worker.ts", import.meta.url), name);
}

for (const name of Object.keys(COLD_CASES)) {
  Deno.test(`cold process: the first ${name} loads the HTML engine and is sanitized`, () =>
    runCold(name));
}

Deno.test("cold process: a failing case fails its test", async () => {
  await assert.rejects(() => runCold("no such case"), /no case named "no such case"/);
});
