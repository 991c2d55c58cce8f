import assert from "node:assert/strict";
import { loadPart, partFiles, PARTS, splitByCost, testFiles } from "./parts.ts";

Deno.test("test parts: together they hold every test file once, each part about a quarter", async () => {
  const files = await testFiles();
  assert.ok(files.includes("tests/suite/parts_test.ts"), "this file");
  assert.ok(files.includes("src/sanitize/html_engine_test.ts"), "a test beside its module");
  assert.ok(files.includes("sims/core_sim_test.ts"), "a double's test");
  assert.ok(!files.some((f) => f.startsWith("dist/") || f.includes("/.")), "excluded folders");
  assert.ok(!files.includes("tests/suite/part_1.ts"), "a part is not a test file");
  const parts = await Promise.all(Array.from({ length: PARTS }, (_, i) => partFiles(i + 1)));
  assert.deepEqual(parts.flat().sort(), files);
  for (const part of parts) assert.ok(part.length > files.length / (PARTS * 3), "balanced");
  for (let i = 1; i <= PARTS; i++) {
    const text = await Deno.readTextFile(new URL(`./part_${i}.ts`, import.meta.url));
    assert.match(text, /await loadPart\(import\.meta\.url\)/, `part_${i}.ts loads its part`);
  }
  assert.deepEqual(await partFiles(PARTS + 1), []);
});

Deno.test("test parts: the costliest files are spread, a part's list is sorted", () => {
  const costs: Record<string, number> = { "z_test.ts": 9, "y_test.ts": 8, "a_test.ts": 1 };
  const parts = splitByCost(["a_test.ts", "y_test.ts", "z_test.ts"], 2, (f) => costs[f]);
  assert.deepEqual(parts, [["z_test.ts"], ["a_test.ts", "y_test.ts"]]);
  assert.deepEqual(splitByCost([], 3, () => 1), [[], [], []]);
});

Deno.test("test parts: a module not named part_<n>.ts within the count is refused", async () => {
  await assert.rejects(() => loadPart("file:///x/part_9.ts"), /not one of the 4 parts/);
  await assert.rejects(() => loadPart("file:///x/other.ts"), /not one of the 4 parts/);
});
