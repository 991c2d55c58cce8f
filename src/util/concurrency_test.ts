import assert from "node:assert/strict";
import { mapLimit } from "./concurrency.ts";

Deno.test("mapLimit: keeps order and never exceeds the bound", async () => {
  let running = 0;
  let peak = 0;
  const out = await mapLimit([5, 1, 4, 2, 3, 0], 2, async (n) => {
    running++;
    peak = Math.max(peak, running);
    await new Promise((r) => setTimeout(r, n));
    running--;
    return n * 10;
  });
  assert.deepEqual(out, [50, 10, 40, 20, 30, 0]);
  assert.equal(peak, 2);
});

Deno.test("mapLimit: the first failure rejects and stops starting new work", async () => {
  const started: number[] = [];
  await assert.rejects(
    mapLimit([1, 2, 3, 4], 1, (n) => {
      started.push(n);
      return n === 2 ? Promise.reject(new Error("x")) : Promise.resolve(n);
    }),
  );
  assert.deepEqual(started, [1, 2]);
});

Deno.test("mapLimit: no items, no calls and an empty result", async () => {
  let calls = 0;
  const out = await mapLimit([], 4, () => Promise.resolve(calls++));
  assert.deepEqual(out, []);
  assert.equal(calls, 0);
});
