/**
 * The service's layering, checked on every import of `src/` and `main.ts` (type-only and
 * dynamic imports included). A module may import its own layer and those below it, never one
 * above, and no chain of imports may come back to where it started. Lowest first:
 *
 * 0. leaves — `src/util/`, `src/cache/`, `src/config/` (the settings, backend URLs, the
 *    version): know nothing of the service;
 * 1. http basics — `src/http/`: errors, logging, bodies, SSE, deadlines; no routes, no
 *    credentials;
 * 2. infrastructure — `src/session/`, `src/sanitize/`, `src/media/`, `src/core/`,
 *    `src/upstream/`, `src/store/`: sessions, sanitizing, images, the backend clients, the store
 *    instances share;
 * 3. domain — `src/lore/`: what a lore note is and how it is written;
 * 4. public domain — `src/share/`: what visitors may see (reads lore);
 * 5. pages — `src/site/`: the public site's HTML;
 * 6. frame — `src/api/` (route declarations, the answers they declare, and what is derived
 *    from them: the OpenAPI document and the reference pages), `src/credentials/`, `src/state/`
 *    (what the service keeps between requests: caches, readiness, the portal config, the
 *    start-up report) and `src/pipeline/` (the request pipeline's pieces);
 * 7. routes — `src/routes/`: the handlers;
 * 8. composition — `src/app.ts`, `src/server.ts`, `src/cli.ts`, `main.ts`: put it all together;
 *    `src/reference_docs_task.ts`: `deno task docs`, which writes the derived pages.
 *
 * Besides: `src/` never imports `sims/`, `tests/` or `bench/`, and `sims/` never imports
 * `tests/`. The checks themselves are tested first, on made-up graphs, so a check that cannot
 * fail would show.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  forbiddenImports,
  importCycles,
  type ImportGraph,
  importSpecifiers,
  type Layer,
  readImportGraph,
  resolveImport,
  upwardImports,
  type Violation,
} from "./helpers/import_graph.ts";

const LAYERS: readonly Layer[] = [
  {
    name: "leaves",
    modules: ["src/util/", "src/cache/", "src/config/"],
  },
  { name: "http basics", modules: ["src/http/"] },
  {
    name: "infrastructure",
    modules: [
      "src/session/",
      "src/sanitize/",
      "src/media/",
      "src/core/",
      "src/upstream/",
      "src/store/",
    ],
  },
  { name: "domain", modules: ["src/lore/"] },
  { name: "public domain", modules: ["src/share/"] },
  { name: "pages", modules: ["src/site/"] },
  {
    name: "frame",
    modules: ["src/api/", "src/credentials/", "src/state/", "src/pipeline/"],
  },
  { name: "routes", modules: ["src/routes/"] },
  {
    name: "composition",
    modules: [
      "src/app.ts",
      "src/server.ts",
      "src/cli.ts",
      "src/reference_docs_task.ts",
      "main.ts",
    ],
  },
];

const ROOT = new URL("../", import.meta.url);
const isTest = (path: string) => path.endsWith("_test.ts");
const inService = (path: string) => path === "main.ts" || path.startsWith("src/");

/** One line per violation, naming the importing file and what it imports. */
const describe = (violations: readonly Violation[]) =>
  violations.map((v) => `  ${v.from}${v.to ? ` imports ${v.to}` : ""}: ${v.reason}`).join("\n");

// --- the parser and the checks, on made-up input ---------------------------------------------

Deno.test("architecture: every kind of import is read; comments, strings and regexes are not", () => {
  const source = [
    'import assert from "node:assert/strict";',
    'import type { A } from "./a.ts";',
    "import {\n  type B,\n  c,\n} from '../b.ts';",
    'export * from "./c.ts";',
    'export type { D } from "./d.ts";',
    'import "./side_effect.ts";',
    'const e = await import("./e.ts");',
    'type F = typeof import("./f.ts");',
    '// import { x } from "./commented.ts";',
    '/** ```ts\n * import { y } from "./example.ts";\n * ``` */',
    "const s = 'import { z } from \"./in_string.ts\"';",
    'const t = `${1 + 1} import("./in_template.ts")`;',
    'const r = /import "\\.\\/in_regex.ts"/;',
    "const half = 4 / 2; const g = (await import('./g.ts')).default;",
  ].join("\n");
  assert.deepEqual(importSpecifiers(source), [
    "node:assert/strict",
    "./a.ts",
    "../b.ts",
    "./c.ts",
    "./d.ts",
    "./side_effect.ts",
    "./e.ts",
    "./f.ts",
    "./g.ts",
  ]);
  assert.equal(resolveImport("src/share/public_api.ts", "../router.ts"), "src/router.ts");
  assert.equal(resolveImport("src/share/public_api.ts", "./snapshot.ts"), "src/share/snapshot.ts");
  assert.equal(resolveImport("main.ts", "./src/app.ts"), "src/app.ts");
  assert.equal(resolveImport("src/app.ts", "zod"), null);
  assert.equal(resolveImport("src/app.ts", "node:crypto"), null);
});

Deno.test("architecture: the layer check finds an upward import and an unplaced module", () => {
  const layers: Layer[] = [
    { name: "low", modules: ["lib/"] },
    { name: "high", modules: ["app.ts", "lib/wiring.ts"] },
  ];
  const graph: ImportGraph = new Map([
    ["app.ts", ["lib/a.ts"]], // down: fine
    ["lib/a.ts", ["lib/b.ts"]], // same layer: fine
    ["lib/b.ts", ["app.ts"]], // up
    ["lib/wiring.ts", ["lib/a.ts"]], // the more specific entry places it high: fine
    ["stray.ts", []],
  ]);
  assert.deepEqual(upwardImports(graph, layers, () => true), [
    { from: "lib/b.ts", to: "app.ts", reason: "low (0) may not import high (1)" },
    { from: "stray.ts", to: "", reason: "this module is in no layer: add it to the layer list" },
  ]);
  assert.deepEqual(upwardImports(graph, layers, (p) => p !== "stray.ts" && p !== "lib/b.ts"), []);
});

Deno.test("architecture: the cycle check reports each cycle's path, type-only edges included", () => {
  const graph: ImportGraph = new Map([
    ["a.ts", ["b.ts", "d.ts"]],
    ["b.ts", ["c.ts"]],
    ["c.ts", ["a.ts", "d.ts"]],
    ["d.ts", []],
    ["e.ts", ["e.ts"]],
    ["f.ts", ["g.ts"]],
    ["g.ts", ["f.ts"]],
  ]);
  assert.deepEqual(importCycles(graph), [
    ["a.ts", "b.ts", "c.ts", "a.ts"],
    ["e.ts", "e.ts"],
    ["f.ts", "g.ts", "f.ts"],
  ]);
  assert.deepEqual(importCycles(new Map([["a.ts", ["b.ts"]], ["b.ts", []]])), []);
});

Deno.test("architecture: the tree check finds imports between trees that must not meet", () => {
  const graph: ImportGraph = new Map([
    ["src/a.ts", ["src/b.ts", "tests/helpers/h.ts"]],
    ["sims/core.ts", ["src/a.ts"]],
  ]);
  assert.deepEqual(forbiddenImports(graph, ["src/"], ["sims/", "tests/", "bench/"]), [
    { from: "src/a.ts", to: "tests/helpers/h.ts", reason: "src/ may not import tests/" },
  ]);
  assert.deepEqual(forbiddenImports(graph, ["sims/"], ["tests/"]), []);
});

// --- the real tree ---------------------------------------------------------------------------

const service = await readImportGraph(ROOT, ["src"], ["main.ts"], (p) => !isTest(p));

Deno.test("architecture: no module imports a higher layer", () => {
  const found = upwardImports(service, LAYERS, inService);
  assert.equal(found.length, 0, `imports into a higher layer:\n${describe(found)}`);
});

Deno.test("architecture: no import cycles between modules", () => {
  const cycles = importCycles(service);
  assert.equal(
    cycles.length,
    0,
    `import cycles (break each one):\n${cycles.map((c) => `  ${c.join(" -> ")}`).join("\n")}`,
  );
});

Deno.test("architecture: the service never imports the doubles, tests or benchmarks", async () => {
  const sims = await readImportGraph(ROOT, ["sims"]);
  const found = [
    ...forbiddenImports(service, ["src/", "main.ts"], ["sims/", "tests/", "bench/"]),
    ...forbiddenImports(sims, ["sims/"], ["tests/"]),
  ];
  assert.equal(found.length, 0, `imports across trees:\n${describe(found)}`);
});
