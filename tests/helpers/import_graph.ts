/**
 * The module import graph of the repository, read from source text, and the checks the
 * architecture test runs on it: imports into a higher layer, import cycles, and imports between
 * trees that must not know each other. Every function but {@linkcode readImportGraph} works on
 * plain strings and maps, so the checks can be tested on small graphs made up in a test.
 *
 * @module
 */

/** Module path (relative to the repository root, `/`-separated) → the modules it imports. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

/** One forbidden import, with the reason in words. */
export interface Violation {
  from: string;
  /** The imported module; "" when `from` itself is the problem (it is in no layer). */
  to: string;
  reason: string;
}

/** Where a layer sits: its rank (lower ranks never import higher ones) and its name. */
export interface Layer {
  name: string;
  /** Module paths; one ending in `/` stands for everything under that directory. */
  modules: readonly string[];
}

/**
 * The specifiers a module imports: `import … from`, `import type … from`, `export … from`,
 * side-effect `import "…"`, and `import("…")` with a literal (also in type positions; left out
 * with `dynamic: false`). Comments, strings, template literals and regular expressions are
 * skipped, so an import written inside one (a JSDoc example, a test fixture) does not count.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const source = 'import type { A } from "./a.ts";\nconst b = await import("./b.ts");';
 * assert.deepEqual(importSpecifiers(source), ["./a.ts", "./b.ts"]);
 * assert.deepEqual(importSpecifiers(source, { dynamic: false }), ["./a.ts"]);
 * ```
 */
export function importSpecifiers(source: string, { dynamic = true } = {}): string[] {
  const code = codeOnly(source);
  const out: { at: number; specifier: string }[] = [];
  const patterns = [
    /(?<![.\w$])(?:import|export)\b\s*[\w$\s{},*]*?\bfrom\s*(["'])/g,
    /(?<![.\w$])import\b\s*(["'])/g,
    ...(dynamic ? [/(?<![.\w$])import\b\s*\(\s*(["'])/g] : []),
  ];
  for (const pattern of patterns) {
    for (const m of code.matchAll(pattern)) {
      const open = m.index + m[0].length - 1;
      const close = source.indexOf(m[1], open + 1);
      out.push({ at: open, specifier: source.slice(open + 1, close) });
    }
  }
  return out.sort((a, b) => a.at - b.at).map((s) => s.specifier);
}

const REGEX_AFTER_WORD = new Set([
  "return",
  "typeof",
  "instanceof",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "case",
  "do",
  "else",
  "yield",
  "await",
]);

/** Where a block comment starts (at its opening slash) and ends (after its closing one). */
export interface CommentSpan {
  start: number;
  end: number;
}

/**
 * The source with the inside of every comment, string, template literal and regular expression
 * blanked out (string quotes stay, so a match can find its literal at the same offset). Each
 * block comment's span is pushed to `blockComments` when given.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const spans: CommentSpan[] = [];
 * assert.equal(codeOnly('/** a *\/ f("x/y");', spans), '         f("   ");');
 * assert.deepEqual(spans, [{ start: 0, end: 8 }]);
 * ```
 */
export function codeOnly(source: string, blockComments?: CommentSpan[]): string {
  const out = source.split("");
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== "\n") out[k] = " ";
  };
  /** Brace depth at each open `${`, innermost last. */
  const templates: number[] = [];
  let depth = 0;
  let last = ""; // the last significant character of code
  let lastWord = "";
  let i = 0;
  /** Scans template text from `i` (after a backtick or `}`) to its end or the next `${`. */
  const templateText = () => {
    const start = i;
    while (i < source.length && source[i] !== "`") {
      if (source[i] === "\\") i += 2;
      else if (source[i] === "$" && source[i + 1] === "{") {
        blank(start, i);
        templates.push(depth);
        i += 2;
        return;
      } else i++;
    }
    blank(start, i);
    i++; // the closing backtick
    last = "`";
  };
  while (i < source.length) {
    const c = source[i];
    if (c === "/" && source[i + 1] === "/") {
      const end = source.indexOf("\n", i);
      const stop = end === -1 ? source.length : end;
      blank(i, stop);
      i = stop;
    } else if (c === "/" && source[i + 1] === "*") {
      const end = source.indexOf("*/", i + 2);
      const stop = end === -1 ? source.length : end + 2;
      blockComments?.push({ start: i, end: stop });
      blank(i, stop);
      i = stop;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < source.length && source[j] !== c && source[j] !== "\n") {
        j += source[j] === "\\" ? 2 : 1;
      }
      blank(i + 1, j);
      i = j + 1;
      last = c;
    } else if (c === "`") {
      i++;
      templateText();
    } else if (c === "}" && templates.length > 0 && templates.at(-1) === depth) {
      templates.pop();
      i++;
      templateText();
    } else if (c === "/" && regexMayStart(last, lastWord)) {
      let j = i + 1;
      let inClass = false;
      while (j < source.length && source[j] !== "\n" && (inClass || source[j] !== "/")) {
        if (source[j] === "\\") j++;
        else if (source[j] === "[") inClass = true;
        else if (source[j] === "]") inClass = false;
        j++;
      }
      blank(i, j + 1);
      i = j + 1;
      last = "/";
    } else {
      if (c === "{") depth++;
      if (c === "}") depth--;
      if (/[\w$]/.test(c)) {
        lastWord = /[\w$]/.test(last) ? lastWord + c : c;
        last = c;
      } else if (!/\s/.test(c)) {
        last = c;
        lastWord = "";
      }
      i++;
    }
  }
  return out.join("");
}

/** Whether a `/` after this token starts a regular expression rather than a division. */
function regexMayStart(last: string, lastWord: string): boolean {
  if (last === "") return true;
  if (/[\w$]/.test(last)) return REGEX_AFTER_WORD.has(lastWord);
  return !/[)\]}"'`]/.test(last);
}

/**
 * The repository path a specifier names, or null for anything outside the repository (`zod`,
 * `node:…`, `npm:…`, URLs).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(resolveImport("src/share/public_api.ts", "../router.ts"), "src/router.ts");
 * ```
 */
export function resolveImport(from: string, specifier: string): string | null {
  if (!specifier.startsWith("./") && !specifier.startsWith("../")) return null;
  const parts = from.split("/").slice(0, -1);
  for (const part of specifier.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== ".") parts.push(part);
  }
  return parts.join("/");
}

/**
 * The import graph of the `.ts` files under `dirs` and the single `files`, relative to `root`;
 * `include` picks which of them count (e.g. not tests). Only imports of repository files are
 * kept.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const graph = await readImportGraph(new URL("../../", import.meta.url), ["src"], ["main.ts"]);
 * assert.ok(graph.get("main.ts")?.includes("src/server.ts"));
 * ```
 */
export async function readImportGraph(
  root: URL,
  dirs: readonly string[],
  files: readonly string[] = [],
  include: (path: string) => boolean = () => true,
): Promise<ImportGraph> {
  const paths = [...files];
  for (const dir of dirs) paths.push(...await filesUnder(root, dir, [".ts"]));
  const graph = new Map<string, string[]>();
  for (const path of paths.filter(include).sort()) {
    const source = await Deno.readTextFile(new URL(path, root));
    graph.set(
      path,
      importSpecifiers(source)
        .map((s) => resolveImport(path, s))
        .filter((p): p is string => p !== null),
    );
  }
  return graph;
}

/**
 * The files under `dir` (relative to `root`) whose names end with one of `suffixes`, as repository
 * paths; directories for which `skip` says so are not entered.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const paths = await filesUnder(new URL("../../", import.meta.url), "tests/helpers", [".ts"]);
 * assert.ok(paths.includes("tests/helpers/import_graph.ts"));
 * ```
 */
export async function filesUnder(
  root: URL,
  dir: string,
  suffixes: readonly string[],
  skip: (path: string) => boolean = () => false,
): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(new URL(`${dir}/`, root))) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) {
      if (!skip(path)) out.push(...await filesUnder(root, path, suffixes, skip));
    } else if (entry.isFile && suffixes.some((s) => entry.name.endsWith(s))) out.push(path);
  }
  return out;
}

/**
 * The rank of a module in `layers` (its index), by its most specific entry; undefined when no
 * entry covers it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(layerOf([{ name: "leaves", modules: ["src/util/"] }], "src/util/bytes.ts"), 0);
 * ```
 */
export function layerOf(layers: readonly Layer[], path: string): number | undefined {
  let best: { rank: number; length: number } | undefined;
  layers.forEach((layer, rank) => {
    for (const m of layer.modules) {
      const fits = m.endsWith("/") ? path.startsWith(m) : path === m;
      if (fits && (!best || m.length > best.length)) best = { rank, length: m.length };
    }
  });
  return best?.rank;
}

/**
 * Imports that point up the layering, and modules of `scope` that no layer covers (a new module
 * must be placed before it can be checked).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const layers = [{ name: "low", modules: ["a.ts"] }, { name: "high", modules: ["b.ts"] }];
 * assert.deepEqual(
 *   upwardImports(new Map([["a.ts", ["b.ts"]], ["b.ts", []]]), layers, () => true),
 *   [{ from: "a.ts", to: "b.ts", reason: "low (0) may not import high (1)" }],
 * );
 * ```
 */
export function upwardImports(
  graph: ImportGraph,
  layers: readonly Layer[],
  scope: (path: string) => boolean,
): Violation[] {
  const out: Violation[] = [];
  for (const [from, targets] of graph) {
    if (!scope(from)) continue;
    const own = layerOf(layers, from);
    if (own === undefined) {
      out.push({ from, to: "", reason: "this module is in no layer: add it to the layer list" });
      continue;
    }
    for (const to of targets) {
      const theirs = layerOf(layers, to);
      if (theirs !== undefined && theirs > own) {
        const reason = `${layers[own].name} (${own}) may not import ${
          layers[theirs].name
        } (${theirs})`;
        out.push({ from, to, reason });
      }
    }
  }
  return out;
}

/**
 * Imports from modules under one of `from`'s directories into one of `to`'s.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   forbiddenImports(new Map([["src/a.ts", ["tests/h.ts"]]]), ["src/"], ["tests/"]),
 *   [{ from: "src/a.ts", to: "tests/h.ts", reason: "src/ may not import tests/" }],
 * );
 * ```
 */
export function forbiddenImports(
  graph: ImportGraph,
  from: readonly string[],
  to: readonly string[],
): Violation[] {
  const out: Violation[] = [];
  for (const [path, targets] of graph) {
    const own = from.find((dir) => path.startsWith(dir));
    if (own === undefined) continue;
    for (const target of targets) {
      const theirs = to.find((dir) => target.startsWith(dir));
      if (theirs !== undefined) {
        out.push({ from: path, to: target, reason: `${own} may not import ${theirs}` });
      }
    }
  }
  return out;
}

/**
 * One import cycle per strongly connected group of modules, each as the path that closes it
 * (first module repeated at the end), starting from the group's first module by name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   importCycles(new Map([["a.ts", ["b.ts"]], ["b.ts", ["a.ts"]]])),
 *   [["a.ts", "b.ts", "a.ts"]],
 * );
 * ```
 */
export function importCycles(graph: ImportGraph): string[][] {
  return stronglyConnected(graph)
    .filter((group) => group.length > 1 || (graph.get(group[0]) ?? []).includes(group[0]))
    .map((group) => shortestCycle(graph, new Set(group), [...group].sort()[0]))
    .sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

/** Tarjan's strongly connected components. */
function stronglyConnected(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      groups.push(group);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return groups;
}

/** The shortest path from `start` back to itself inside `group` (breadth first). */
function shortestCycle(graph: ImportGraph, group: ReadonlySet<string>, start: string): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let k = 0; k < queue.length; k++) {
    const v = queue[k];
    for (const w of graph.get(v) ?? []) {
      if (!group.has(w)) continue;
      if (w === start) {
        const chain: string[] = [];
        for (let p = v; p !== start; p = cameFrom.get(p)!) chain.unshift(p);
        return [start, ...chain, start];
      }
      if (!cameFrom.has(w)) {
        cameFrom.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}
