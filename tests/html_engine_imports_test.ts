/**
 * The HTML engine (parse5, sanitize-html) stays out of the service's start-up: only its loader,
 * `src/sanitize/html_engine.ts`, names the two packages, and only in `import()`, so the modules
 * `main.ts` loads before serving its first request hold neither. The checks are tested first, on
 * made-up sources, so a check that cannot fail would show.
 *
 * @module
 */
import assert from "node:assert/strict";
import { importSpecifiers, readImportGraph, resolveImport } from "./helpers/import_graph.ts";

const ENGINE_PACKAGES = ["sanitize-html", "parse5"];
const LOADER = "src/sanitize/html_engine.ts";

/** The engine package a specifier names (bare, a subpath, or `npm:`), else undefined. */
function enginePackage(specifier: string): string | undefined {
  const name = specifier.replace(/^npm:\/?/, "");
  return ENGINE_PACKAGES.find((p) =>
    name === p || name.startsWith(`${p}/`) || name.startsWith(`${p}@`)
  );
}

/** One import of an engine package where it may not be. */
interface Finding {
  from: string;
  specifier: string;
  reason: string;
}

/** Imports of an engine package by any module but `loader`, and static ones by `loader` too. */
function engineImportsOutsideLoader(
  sources: ReadonlyMap<string, string>,
  loader: string,
): Finding[] {
  const out: Finding[] = [];
  for (const [from, source] of sources) {
    const named = from === loader
      ? importSpecifiers(source, { dynamic: false })
      : importSpecifiers(source);
    for (const specifier of named.filter((s) => enginePackage(s) !== undefined)) {
      const reason = from === loader ? "the loader imports it statically" : "only the loader may";
      out.push({ from, specifier, reason });
    }
  }
  return out;
}

/** Engine packages in the static import graph of `entry` (type-only imports count too). */
function engineInStaticGraph(sources: ReadonlyMap<string, string>, entry: string): Finding[] {
  const out: Finding[] = [];
  const seen = new Set([entry]);
  for (const from of seen) {
    for (const specifier of importSpecifiers(sources.get(from) ?? "", { dynamic: false })) {
      if (enginePackage(specifier)) out.push({ from, specifier, reason: `${entry} loads it` });
      const to = resolveImport(from, specifier);
      if (to !== null && sources.has(to)) seen.add(to);
    }
  }
  return out;
}

const describe = (found: readonly Finding[]) =>
  found.map((f) => `  ${f.from} imports ${f.specifier}: ${f.reason}`).join("\n");

// --- the checks, on made-up sources ------------------------------------------------------------

Deno.test("html engine imports: the checks find static imports, wherever they hide", () => {
  const sources = new Map([
    ["main.ts", 'import { serve } from "./src/app.ts";'],
    ["src/app.ts", 'import { clean } from "./sanitize/html.ts";\nimport "./lazy.ts";'],
    ["src/sanitize/html.ts", 'import type { IOptions } from "sanitize-html";'],
    ["src/sanitize/html_engine.ts", 'export const load = () => import("parse5");'],
    ["src/lazy.ts", 'const p = import("npm:parse5@8");'],
    ["src/unused.ts", 'export * from "npm:/sanitize-html@2/index.js";'],
  ]);
  assert.deepEqual(engineImportsOutsideLoader(sources, "src/sanitize/html_engine.ts"), [
    { from: "src/sanitize/html.ts", specifier: "sanitize-html", reason: "only the loader may" },
    { from: "src/lazy.ts", specifier: "npm:parse5@8", reason: "only the loader may" },
    {
      from: "src/unused.ts",
      specifier: "npm:/sanitize-html@2/index.js",
      reason: "only the loader may",
    },
  ]);
  assert.deepEqual(
    engineImportsOutsideLoader(new Map([["l.ts", 'import "parse5";']]), "l.ts"),
    [{ from: "l.ts", specifier: "parse5", reason: "the loader imports it statically" }],
  );
  // reached through two static imports; the dynamic `import()` and the unreached module are not
  assert.deepEqual(engineInStaticGraph(sources, "main.ts"), [
    { from: "src/sanitize/html.ts", specifier: "sanitize-html", reason: "main.ts loads it" },
  ]);
  assert.equal(enginePackage("parse5-htmlparser2-tree-adapter"), undefined);
  assert.equal(enginePackage("zod"), undefined);
});

// --- the real tree -----------------------------------------------------------------------------

const ROOT = new URL("../", import.meta.url);
const paths = [...(await readImportGraph(ROOT, ["src"], ["main.ts"])).keys()];
const sources = new Map(
  await Promise.all(
    paths.map(async (p) => [p, await Deno.readTextFile(new URL(p, ROOT))] as const),
  ),
);

Deno.test("html engine imports: only the loader names parse5 or sanitize-html, in import()", () => {
  assert.ok(sources.has(LOADER), `${LOADER} is missing`);
  const found = engineImportsOutsideLoader(sources, LOADER);
  assert.equal(found.length, 0, `engine imports outside the loader:\n${describe(found)}`);
  const loaded = importSpecifiers(sources.get(LOADER)!).filter((s) => enginePackage(s));
  assert.deepEqual([...new Set(loaded)].sort(), [...ENGINE_PACKAGES].sort());
});

Deno.test("html engine imports: main.ts's static import graph holds neither package", () => {
  const found = engineInStaticGraph(sources, "main.ts");
  assert.equal(found.length, 0, `the engine loads at start-up:\n${describe(found)}`);
});
