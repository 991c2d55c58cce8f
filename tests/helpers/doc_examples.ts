/**
 * The repository's documentation examples — the code blocks of its JSDoc comments and Markdown
 * files — found where `deno test --doc` finds them and named as it names them
 * (`src/app.ts#82-91`), and turned into modules that one test process can load one after another.
 * `deno test --doc` makes each example a module and a test worker of its own, and starting a worker
 * costs far more than an example takes; loaded here, they share one.
 *
 * An example module is what `deno test --doc` makes of the block: its imports at the top, with
 * relative specifiers resolved against the file the block sits in; the exports of that file it uses
 * imported too, unless it imports a name of its own; `import.meta` standing for that file; the rest
 * in a function run as the test, or, when the block registers tests itself (`Deno.test(` at the
 * start of a line), run as the module loads.
 *
 * @module
 */
import { codeOnly, type CommentSpan, filesUnder } from "./import_graph.ts";

/** One code block of the documentation. */
export interface DocExample {
  /** The file it sits in, relative to the repository root. */
  path: string;
  /** The line of its opening fence (1-based) and the line after its closing one. */
  lines: readonly [number, number];
  /** Its language, as the extension a module of it has: `.ts`, `.js`, `.tsx`, … */
  extension: string;
  /** The code, comment markers stripped; one line per line of the block. */
  code: string;
}

/** Fence languages that make a block runnable, and the module extension each gives. */
const LANGUAGES: Readonly<Record<string, string>> = {
  ts: ".ts",
  typescript: ".ts",
  mts: ".mts",
  cts: ".cts",
  tsx: ".tsx",
  js: ".js",
  javascript: ".js",
  mjs: ".mjs",
  cjs: ".cjs",
  jsx: ".jsx",
};

/** The media type of a data URL module, by extension; CommonJS has none. */
const MEDIA_TYPES: Readonly<Record<string, string>> = {
  ".ts": "application/typescript",
  ".mts": "application/typescript",
  ".tsx": "text/tsx",
  ".js": "application/javascript",
  ".mjs": "application/javascript",
  ".jsx": "text/jsx",
};

/**
 * The extension a block's module has, from the words after its opening fence; undefined for a
 * block that is not run (another language, no language, or marked `ignore`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(fenceExtension("ts"), ".ts");
 * assert.equal(fenceExtension("ts ignore"), undefined);
 * assert.equal(fenceExtension("sh"), undefined);
 * ```
 */
export function fenceExtension(info: string): string | undefined {
  const words = info.split(" ");
  return words.includes("ignore") ? undefined : LANGUAGES[words[0]];
}

/**
 * The name of an example's test: its file and lines, as `deno test --doc` names its module.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const example = { path: "src/f.ts", lines: [2, 6], extension: ".ts", code: "" } as const;
 * assert.equal(exampleName(example), "src/f.ts#2-6");
 * ```
 */
export function exampleName(example: DocExample): string {
  return `${example.path}#${example.lines[0]}-${example.lines[1]}`;
}

/**
 * One line of an example as written in its comment or Markdown file: what follows the `*` (and
 * one space) in a comment, a leading `#` (and one space) removed, as rustdoc hides lines; a line of
 * a comment without `*` is not part of the code (null).
 */
function codeLine(line: string, inComment: boolean): string | null {
  let text = line;
  if (inComment) {
    const star = line.indexOf("*");
    if (star === -1) return null;
    text = line.slice(star + 1).replace(/^ /, "");
  }
  return text.startsWith("#!") ? text : text.replace(/^# ?/, "");
}

/**
 * The code of a block's body (`where` names it), one output line per line that is code. A shebang
 * line, which `deno test --doc` reads as permissions, is refused.
 */
function blockCode(body: string, inComment: boolean, where: string): string {
  const lines = body.split("\n").map((l) => l.replace(/\r$/, ""));
  if (lines.at(-1) === "") lines.pop();
  const code = lines.map((l) => codeLine(l, inComment)).filter((l) => l !== null);
  if (code.some((l) => l.startsWith("#!"))) throw new Error(`${where}: a shebang line`);
  return code.join("\n") + "\n";
}

const count = (text: string, of: string) => text.split(of).length - 1;

/**
 * The examples in the JSDoc comments (`/**`) of a TypeScript or JavaScript file.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const fence = "`".repeat(3);
 * const source = `/**\n * ${fence}ts\n * f(1);\n * ${fence}\n *\/\nexport function f(n: number) {}\n`;
 * const [example] = jsDocExamples("lib/f.ts", source);
 * assert.equal(exampleName(example), "lib/f.ts#2-5");
 * assert.equal(example.code, "f(1);\n\n");
 * ```
 */
export function jsDocExamples(path: string, source: string): DocExample[] {
  const comments: CommentSpan[] = [];
  codeOnly(source, comments);
  const out: DocExample[] = [];
  for (const { start, end } of comments) {
    if (source[start + 2] !== "*") continue;
    const text = source.slice(start + 2, end - 2);
    const firstLine = count(source.slice(0, start), "\n");
    for (const block of text.matchAll(/```([^\r\n]*)\r?\n([\s\S]*?)```/g)) {
      const extension = fenceExtension(block[1]);
      if (extension === undefined) continue;
      const opening = firstLine + count(text.slice(0, block.index), "\n") + 1;
      const lines = [opening, opening + count(block[0], "\n") + 1] as const;
      const code = blockCode(block[2], true, `${path}:${opening}`);
      out.push({ path, lines, extension, code });
    }
  }
  return out;
}

/**
 * The examples in the fenced code blocks of a Markdown file; a block inside an HTML comment is
 * not one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const fence = "`".repeat(3);
 * const [example] = markdownExamples("README.md", `# Demo\n\n${fence}ts\nf(1);\n${fence}\n`);
 * assert.equal(exampleName(example), "README.md#3-6");
 * ```
 */
export function markdownExamples(path: string, source: string): DocExample[] {
  const lines = source.split("\n");
  const out: DocExample[] = [];
  let inHtmlComment = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/^[ \t]+/, "");
    if (inHtmlComment || line.startsWith("<!--")) {
      inHtmlComment = !lines[i].includes("-->");
      continue;
    }
    const quoted = /^(?:>[ \t]?)+`{3,}(.*)$/.exec(line);
    if (quoted && fenceExtension(quoted[1]) !== undefined) {
      throw new Error(`${path}:${i + 1}: a runnable code block in a quote`);
    }
    const fence = /^(`{3,})(.*)$/.exec(line.replace(/\r$/, ""));
    if (!fence) continue;
    const closing = new RegExp(`^[ \\t]*\`{${fence[1].length},}[ \\t]*\\r?$`);
    const close = lines.findIndex((l, j) => j > i && closing.test(l));
    if (close === -1) continue;
    const extension = fenceExtension(fence[2]);
    if (extension !== undefined) {
      const code = blockCode(
        lines.slice(i + 1, close).join("\n") + "\n",
        false,
        `${path}:${i + 1}`,
      );
      out.push({ path, lines: [i + 1, close + 2], extension, code });
    }
    i = close;
  }
  return out;
}

/**
 * The names a module exports, read from its source: declarations (`export function f`,
 * `export const x`, types and interfaces too) and export lists (`export { a, b as c }`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const source = 'export async function f() {}\nexport { g as h } from "./g.ts";\nexport type T = 1;';
 * assert.deepEqual(exportedNames(source), ["f", "T", "h"]);
 * ```
 */
export function exportedNames(source: string): string[] {
  const code = codeOnly(source);
  const names = new Set<string>();
  const declaration =
    /(?<![\w$.])export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(?:abstract\s+)?(?:function\s*\*?|const\s+enum|const|let|var|class|enum|type|interface|namespace)\s+([\w$]+)/g;
  for (const m of code.matchAll(declaration)) names.add(m[1]);
  for (const m of code.matchAll(/(?<![\w$.])export\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const item of m[1].split(",")) {
      const name = item.trim().split(/\s+as\s+/).at(-1)?.replace(/^type\s+/, "");
      if (name) names.add(name);
    }
  }
  return [...names];
}

/** The local names an import declaration binds (`a`, `b` of `import a, { x as b } from …`). */
function importedNames(declaration: string): string[] {
  const clause = /^\s*import\s+(?:type\s+)?([\s\S]*?)\s*\bfrom\s*["']/.exec(declaration)?.[1];
  if (!clause) return [];
  const names: string[] = [];
  for (const part of clause.replace(/[{}]/g, ",").split(",")) {
    const name = part.trim().replace(/^type\s+/, "").split(/\s+as\s+/).at(-1)?.trim();
    if (name && name !== "*") names.push(name);
  }
  return names;
}

/**
 * The source of a module that runs `example`: `fileUrl` is the file the example sits in and
 * `exported` the names that file exports. The module's default export runs the example; one that
 * registers tests itself does so as the module loads, and has no default export. Its first line
 * holds what the module adds, so line `n` of the example is line `n + 1` of the module.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const example = {
 *   path: "src/f.ts",
 *   lines: [2, 6],
 *   extension: ".ts",
 *   code: 'import { g } from "./g.ts";\nassert(f(g));\n',
 * } as const;
 * const module = exampleModule(example, new URL("file:///repo/src/f.ts"), ["f", "h"]);
 * assert.match(module.split("\n")[0], /^import \{ f \} from "file:\/\/\/repo\/src\/f\.ts";/);
 * assert.match(module.split("\n")[0], /import \{ g \} from "file:\/\/\/repo\/src\/g\.ts";/);
 * assert.equal(module.split("\n")[2], "assert(f(g));");
 * ```
 */
export function exampleModule(
  example: DocExample,
  fileUrl: URL,
  exported: readonly string[],
): string {
  const name = exampleName(example);
  if (/^[ \t]*export\b/m.test(codeOnly(example.code))) {
    throw new Error(`${name}: an example may not export`);
  }
  const resolved = (specifier: string) =>
    JSON.stringify(/^\.{0,2}\//.test(specifier) ? new URL(specifier, fileUrl).href : specifier);
  const imports: string[] = [];
  const own = new Set<string>();
  // Import declarations move to the module's first line; blanks keep the lines where they were.
  let body = example.code;
  const declaration =
    /^[ \t]*import\b(?![ \t]*[(.])[^"';]*(["'])[^"'\n]*\1(?:[ \t]*with[ \t]*\{[^}]*\})?[ \t]*;?/gm;
  for (const m of codeOnly(body).matchAll(declaration)) {
    const text = body.slice(m.index, m.index + m[0].length);
    const open = text.indexOf(m[1]);
    const close = text.indexOf(m[1], open + 1);
    const rest = text.slice(close + 1).replace(/;?$/, ";");
    imports.push((text.slice(0, open) + resolved(text.slice(open + 1, close)) + rest).trim());
    for (const n of importedNames(text)) own.add(n);
    body = body.slice(0, m.index) + text.replace(/[^\n]/g, " ") + body.slice(m.index + text.length);
  }
  // Dynamic imports and `import.meta` are rewritten where they are code, not text.
  const blanked = codeOnly(body);
  const edits: { at: number; length: number; text: string }[] = [];
  for (const m of blanked.matchAll(/(?<![\w$.])import\s*\(\s*(["'])/g)) {
    const open = m.index + m[0].length - 1;
    const close = body.indexOf(m[1], open + 1);
    edits.push({ at: open, length: close + 1 - open, text: resolved(body.slice(open + 1, close)) });
  }
  for (const m of blanked.matchAll(/(?<![\w$.])import\s*\.\s*meta\b/g)) {
    edits.push({ at: m.index, length: m[0].length, text: "__exampleMeta" });
  }
  for (const e of edits.sort((a, b) => b.at - a.at)) {
    body = body.slice(0, e.at) + e.text + body.slice(e.at + e.length);
  }
  const used = new Set(codeOnly(body).match(/[\w$]+/g));
  const fromFile = exported.filter((n) => used.has(n) && !own.has(n));
  const url = `${fileUrl.href}#${example.lines[0]}-${example.lines[1]}${example.extension}`;
  const path = decodeURIComponent(fileUrl.pathname);
  const meta = {
    url: JSON.stringify(url),
    main: "false",
    filename: JSON.stringify(path),
    dirname: JSON.stringify(path.slice(0, path.lastIndexOf("/"))),
    resolve: `(s: string): string => /^\\.{0,2}\\//.test(s) ? new URL(s, ${
      JSON.stringify(url)
    }).href : import.meta.resolve(s)`,
  };
  const header = [
    ...(fromFile.length
      ? [`import { ${fromFile.join(", ")} } from ${resolved(fileUrl.href)};`]
      : []),
    ...imports.map((i) => i.replace(/\s*\n\s*/g, " ")),
    `const __exampleMeta = { ${Object.entries(meta).map(([k, v]) => `${k}: ${v}`).join(", ")} };`,
    /^\s*Deno\.test\(/m.test(example.code)
      ? "{"
      : "export default async function (): Promise<void> {",
  ];
  return `${header.join(" ")}\n${body}}\n`;
}

/**
 * A `data:` URL of an example's module, to import it without writing a file.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.ok(exampleUrl("export {};\n", ".ts").startsWith("data:application/typescript;base64,"));
 * ```
 */
export function exampleUrl(source: string, extension: string): string {
  const type = MEDIA_TYPES[extension];
  if (!type) throw new Error(`examples in ${extension} files cannot be run in one process`);
  const bytes = new TextEncoder().encode(source);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return `data:${type};base64,${btoa(binary)}`;
}

/**
 * An error from an example's module (`url`), told in the example's terms: positions in a `data:`
 * module (a stack shows the URL shortened) become lines of the file the example sits in, and the
 * example's name replaces its URL elsewhere.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const example = { path: "src/f.ts", lines: [10, 14], extension: ".ts", code: "" } as const;
 * const error = new Error("boom");
 * error.stack = "Error: boom\n    at data:a;base64,x......y:3:7\n    at main (file:///m.ts:1:1)";
 * assert.equal(
 *   exampleError(error, "data:a;base64,xzy", example).stack,
 *   "Error: boom\n    at src/f.ts:12:7\n    at main (file:///m.ts:1:1)",
 * );
 * ```
 */
export function exampleError<E>(error: E, url: string, example: DocExample): E {
  if (!(error instanceof Error)) return error;
  const told = (text: string) =>
    text.replaceAll(url, exampleName(example)).replace(
      /\bdata:[^\s()]+:(\d+):(\d+)/g,
      (_, line, column) => `${example.path}:${example.lines[0] + Number(line) - 1}:${column}`,
    );
  error.message = told(error.message);
  if (error.stack) error.stack = told(error.stack);
  return error;
}

/**
 * The files `deno test --doc` reads examples from: every TypeScript, JavaScript and Markdown file
 * of the repository outside `.git`, `node_modules` and the test excludes of `deno.json`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const files = await exampleFiles(new URL("../../", import.meta.url));
 * assert.ok(files.includes("README.md") && files.includes("tests/helpers/doc_examples.ts"));
 * ```
 */
export async function exampleFiles(root: URL): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", root)));
  const excluded: string[] = (config.test?.exclude ?? []).map((p: string) => p.replace(/\/$/, ""));
  const skip = (path: string) =>
    [".git", "node_modules", ...excluded].includes(path.replace(/^\.\//, "")) ||
    path.endsWith("/node_modules");
  const suffixes = [".md", ".markdown", ...new Set(Object.values(LANGUAGES))];
  const paths = await filesUnder(root, ".", suffixes, skip);
  return paths.map((p) => p.replace(/^\.\//, "")).sort();
}
