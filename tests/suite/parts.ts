/**
 * The test task's parts: every test file of the repository, split into {@linkcode PARTS} parts
 * of about the same cost, each part one module that imports its files. `deno test --parallel`
 * gives each module an isolate of its own, which loads the service's module graph anew (about a
 * third of a second of CPU); one isolate per part instead of one per file took the suite from 104 s
 * to under 60 s on 2 cores. Files still run on their own with `deno test <file>`.
 *
 * A test that needs a fresh isolate (nothing loaded yet) starts a worker for it
 * (`tests/helpers/fresh_isolate.ts`): within a part, modules loaded by earlier files stay loaded.
 *
 * @module
 */
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** How many parts the suite is split into: `tests/suite/part_1.ts` … `part_4.ts`. */
export const PARTS = 4;

/**
 * Seconds a file's tests took on 2 cores, for files over a second; every other file counts as
 * {@linkcode USUAL_COST}. Only the balance of the parts depends on these figures: a stale one
 * costs seconds of wall time, never a test.
 */
const COSTS: Readonly<Record<string, number>> = {
  "tests/browser/public_world_test.ts": 21,
  "tests/routes/cold_html_engine_test.ts": 5.5,
  "tests/browser/dns_rebinding_test.ts": 5,
  "tests/browser/public_site_test.ts": 5,
  "tests/routes/public_leak_property_test.ts": 5,
  "tests/browser/sanitizer_differential_test.ts": 3.9,
  "tests/deploy/instances_test.ts": 3.3,
  "tests/routes/fault_suite_test.ts": 3.2,
  "tests/browser/cross_site_test.ts": 3,
  "tests/browser/public_map_test.ts": 3,
  "tests/protocol/flood_test.ts": 3,
  "tests/protocol/slow_clients_test.ts": 2.7,
  "tests/main_cli_test.ts": 2.6,
  "tests/routes/public_etag_test.ts": 2.5,
  "tests/routes/public_test.ts": 2.1,
  "tests/routes/brain_dump_test.ts": 2,
  "tests/conformance/parser_conformance_test.ts": 1.7,
  "tests/routes/public_incremental_test.ts": 1.6,
  "sims/parser_brain_dump_test.ts": 1.5,
  "tests/conformance/core_conformance_test.ts": 1.5,
  "src/sanitize/html_test.ts": 1.4,
  "tests/doc_examples_test.ts": 1.4,
  "tests/routes/ai_deadlines_test.ts": 1.4,
};

/** Cost of a file not in the table (the median file's). */
const USUAL_COST = 0.3;

/** The repository's root: two folders up from this module. */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Names `deno test` runs by default: `*_test.ts`, `*.test.ts`, `test.ts` and the JS kinds. */
const TEST_FILE = /(^|[._])test\.(ts|tsx|mts|js|mjs|jsx)$/;

/**
 * Splits `files` into `parts` lists of about equal cost: the costliest first, each to the part
 * with the least so far. Every file lands in exactly one part; each part stays sorted.
 *
 * @example Two heavy files go to different parts
 * ```ts
 * import assert from "node:assert/strict";
 * import { splitByCost } from "./parts.ts";
 *
 * const costs = { "a_test.ts": 5, "b_test.ts": 5, "c_test.ts": 1, "d_test.ts": 1 };
 * assert.deepEqual(splitByCost(Object.keys(costs), 2, (f) => costs[f as keyof typeof costs]), [
 *   ["a_test.ts", "c_test.ts"],
 *   ["b_test.ts", "d_test.ts"],
 * ]);
 * ```
 */
export function splitByCost(
  files: readonly string[],
  parts: number,
  cost: (file: string) => number,
): string[][] {
  const split = Array.from({ length: parts }, () => ({ files: [] as string[], cost: 0 }));
  const costliestFirst = [...files].sort((a, b) => cost(b) - cost(a) || a.localeCompare(b));
  for (const file of costliestFirst) {
    const lightest = split.reduce((min, part) => part.cost < min.cost ? part : min);
    lightest.files.push(file);
    lightest.cost += cost(file);
  }
  return split.map((part) => part.files.sort());
}

/** Folders `deno test` leaves out: hidden ones, `node_modules`, and deno.json's `test.exclude`. */
async function excludedFolders(root: string): Promise<Set<string>> {
  const config = JSON.parse(await Deno.readTextFile(join(root, "deno.json")));
  const listed: string[] = config.test?.exclude ?? [];
  return new Set(["node_modules", ...listed.map((path) => path.replace(/\/+$/, ""))]);
}

/** Every test file under `root`, as paths relative to it with `/` separators, sorted. */
export async function testFiles(root: string = ROOT): Promise<string[]> {
  const excluded = await excludedFolders(root);
  const found: string[] = [];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      const name = relative(root, path).split(sep).join("/");
      if (entry.isDirectory) {
        if (!entry.name.startsWith(".") && !excluded.has(name)) await walk(path);
      } else if (entry.isFile && TEST_FILE.test(entry.name)) {
        found.push(name);
      }
    }
  };
  await walk(root);
  return found.sort();
}

/** The files of part `index` (1-based) of {@linkcode PARTS}. */
export async function partFiles(index: number): Promise<string[]> {
  const split = splitByCost(await testFiles(), PARTS, (file) => COSTS[file] ?? USUAL_COST);
  return split[index - 1] ?? [];
}

/** Imports the files of the part `partUrl` names (`…/part_<n>.ts`): their tests register. */
export async function loadPart(partUrl: string): Promise<void> {
  const index = Number(/part_(\d+)\.ts$/.exec(partUrl)?.[1]);
  if (!Number.isInteger(index) || index < 1 || index > PARTS) {
    throw new Error(`${partUrl} is not one of the ${PARTS} parts`);
  }
  for (const file of await partFiles(index)) {
    await import(new URL(`../../${file}`, import.meta.url).href);
  }
}
