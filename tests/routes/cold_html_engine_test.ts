/**
 * The HTML engine loads with the first request that needs it, and that request is sanitized like
 * any later one. Every other route test shares one process, where the engine stays loaded after
 * the first test; here each case of tests/helpers/cold_cases.ts runs in a worker of its own,
 * so its request really is the process's first.
 */
import assert from "node:assert/strict";
import { COLD_CASES } from "../helpers/cold_cases.ts";

/** Runs one case in a fresh worker; its error, if any, fails the test. */
async function runCold(name: string): Promise<void> {
  const worker = new Worker(new URL("../helpers/cold_worker.ts", import.meta.url), {
    type: "module",
  });
  try {
    const answer = new Promise<{ error?: string }>((resolve, reject) => {
      worker.onmessage = (e) => resolve(e.data);
      worker.onerror = (e) => {
        e.preventDefault();
        reject(new Error(e.message));
      };
    });
    worker.postMessage(name);
    const { error } = await answer;
    assert.equal(error, undefined, error);
  } finally {
    worker.terminate();
  }
}

for (const name of Object.keys(COLD_CASES)) {
  Deno.test(`cold process: the first ${name} loads the HTML engine and is sanitized`, () =>
    runCold(name));
}

Deno.test("cold process: a failing case fails its test", async () => {
  await assert.rejects(() => runCold("no such case"), /no case named "no such case"/);
});
