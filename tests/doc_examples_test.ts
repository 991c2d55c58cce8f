/**
 * Every example of the documentation — the code blocks of the JSDoc comments and Markdown files —
 * runs here as a test named after its file and lines (`src/app.ts#82-91`), as `deno test --doc`
 * would run it, but all in this one test module: `deno test --doc` starts a test worker per
 * example, which costs far more than the example takes (measured on 578 examples, two CPUs:
 * `deno test --doc --parallel --no-check` 49 s, 92 s of CPU; this module 3.7 s; the whole
 * `deno task test` 71 s with it, 163 s with `--doc` instead). `deno task test` type-checks the
 * examples first (`deno test --doc --no-run`), then runs the tests without `--doc`.
 *
 * The extraction and the module an example becomes are tested first, on made-up files whose
 * example names are those `deno test --doc` gives them, so a change to either shows.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  type DocExample,
  exampleError,
  exampleFiles,
  exampleModule,
  exampleName,
  exampleUrl,
  exportedNames,
  jsDocExamples,
  markdownExamples,
} from "./helpers/doc_examples.ts";

const ROOT = new URL("../", import.meta.url);
const FENCE = "`".repeat(3);

/** Loads an example's module; what runs it (or the error that loading it gave). */
async function load(
  example: DocExample,
  fileUrl: URL,
  exported: readonly string[],
): Promise<{ url: string; run?: () => Promise<void>; error?: unknown }> {
  const url = exampleUrl(exampleModule(example, fileUrl, exported), example.extension);
  try {
    return { url, run: (await import(url)).default };
  } catch (error) {
    return { url, error: exampleError(error, url, example) };
  }
}

// --- extraction and modules, on made-up files ------------------------------------------------

Deno.test("doc examples: JSDoc blocks are found and named as deno test --doc names them", () => {
  const source = [
    `// A line comment with a block: ${FENCE}ts`,
    "/* a plain block comment is not JSDoc:",
    ` * ${FENCE}ts`,
    " * plain();",
    ` * ${FENCE}`,
    " */",
    `const text = "/** ${FENCE}ts\\n * inString();\\n * ${FENCE} */";`,
    "/**",
    " * Adds.",
    " *",
    ` * ${FENCE}ts`,
    ' * import { b } from "./other.ts";',
    " * add(1, b);",
    ` * ${FENCE}`,
    " *",
    ` * ${FENCE}ts ignore`,
    " * ignored();",
    ` * ${FENCE}`,
    " *",
    ` * ${FENCE}sh`,
    " * echo shell",
    ` * ${FENCE}`,
    " *",
    ` * ${FENCE}`,
    " * untagged();",
    ` * ${FENCE}`,
    " *",
    ` * ${FENCE}js`,
    " * # hidden(1);",
    " *   add(2, 3);",
    ` * ${FENCE}`,
    " */",
    "export function add(a: number, b: number): number {",
    "  return a + b + text.length;",
    "}",
    "",
    `/** ${FENCE}typescript`,
    " * add(4, 5);",
    ` * ${FENCE} */`,
    "export const five = 5;",
  ].join("\n");
  const examples = jsDocExamples("lib.ts", source);
  assert.deepEqual(examples.map(exampleName), ["lib.ts#11-15", "lib.ts#28-32", "lib.ts#37-40"]);
  assert.deepEqual(examples.map((e) => e.extension), [".ts", ".js", ".ts"]);
  assert.equal(examples[0].code, 'import { b } from "./other.ts";\nadd(1, b);\n\n');
  assert.equal(examples[1].code, "hidden(1);\n  add(2, 3);\n\n");
  assert.deepEqual(exportedNames(source), ["add", "five"]);
  const shebang = `/**\n * ${FENCE}ts\n * #!/usr/bin/env -S deno run -A\n * ${FENCE}\n */\n`;
  assert.throws(() => jsDocExamples("run.ts", shebang), /run\.ts:2: a shebang line/);
});

Deno.test("doc examples: Markdown blocks are found, not those in HTML comments", () => {
  const source = [
    "# Guide",
    "",
    `${FENCE}ts`,
    "console.log(1);",
    FENCE,
    "",
    "<!--",
    `${FENCE}ts`,
    "hidden();",
    FENCE,
    "-->",
    "",
    `${FENCE}sh`,
    "echo no",
    FENCE,
    "",
    `${FENCE}\`ts`,
    `const s = "${FENCE}";`,
    `${FENCE}\``,
  ].join("\n");
  const examples = markdownExamples("guide.md", source);
  assert.deepEqual(examples.map(exampleName), ["guide.md#3-6", "guide.md#17-20"]);
  assert.equal(examples[1].code, `const s = "${FENCE}";\n`);
  assert.throws(() => markdownExamples("q.md", `> ${FENCE}ts\n> f();\n> ${FENCE}\n`), /quote/);
});

Deno.test("doc examples: a module resolves imports and import.meta against the example's file", async () => {
  const fileUrl = new URL("tests/helpers/import_graph.ts", ROOT);
  const example: DocExample = {
    path: "tests/helpers/import_graph.ts",
    lines: [40, 47],
    extension: ".ts",
    code: [
      'import assert from "node:assert/strict";',
      'import { filesUnder as walk } from "./import_graph.ts";',
      "// the file's own exports are there without an import",
      'assert.equal(resolveImport("a/b.ts", "./c.ts"), "a/c.ts");',
      'assert.equal(new URL(".", import.meta.url).href, new URL("./", import.meta.resolve("./x.ts")).href);',
      'assert.ok((await walk(new URL("../../", import.meta.url), "tests/helpers", [".ts"])).length > 0);',
      'assert.equal(typeof (await import("./prng.ts")).propertySeed, "function");',
    ].join("\n") + "\n",
  };
  const source = await Deno.readTextFile(fileUrl);
  const module = exampleModule(example, fileUrl, exportedNames(source));
  assert.equal(module.split("\n")[4], example.code.split("\n")[3], "lines stay where they were");
  assert.match(module.split("\n")[0], /^import \{ resolveImport \} from "file:\/\/\//);
  const { run, error } = await load(example, fileUrl, exportedNames(source));
  assert.equal(error, undefined);
  await run!();
});

Deno.test("doc examples: a failing example fails its test, at the example's line", async () => {
  const example: DocExample = {
    path: "tests/helpers/prng.ts",
    lines: [30, 35],
    extension: ".ts",
    code: 'import assert from "node:assert/strict";\nconst n = 1;\nassert.equal(n, 2);\n',
  };
  const fileUrl = new URL(example.path, ROOT);
  const { url, run } = await load(example, fileUrl, []);
  const error = await run!().then(() => undefined, (e) => exampleError(e, url, example));
  assert.ok(error instanceof assert.AssertionError, "the assertion's error");
  assert.match(error.stack ?? "", /\(tests\/helpers\/prng\.ts:33:\d+\)/);
  assert.ok(!(error.stack ?? "").includes("data:"), "no module URL in the stack");

  const broken = { ...example, code: 'import { nothing } from "./prng.ts";\nnothing();\n' };
  assert.ok((await load(broken, fileUrl, [])).error instanceof SyntaxError, "a missing export");
  assert.throws(() => exampleModule({ ...example, code: "export const x = 1;\n" }, fileUrl, []));
});

// --- the repository's examples ---------------------------------------------------------------

let examples = 0;
for (const path of await exampleFiles(ROOT)) {
  const source = await Deno.readTextFile(new URL(path, ROOT));
  const markdown = /\.(md|markdown)$/.test(path);
  const found = markdown ? markdownExamples(path, source) : jsDocExamples(path, source);
  const exported = markdown ? [] : exportedNames(source);
  for (const example of found) {
    examples++;
    // An example that registers tests itself did so as it loaded, and has nothing to run.
    const { url, run, error } = await load(example, new URL(path, ROOT), exported);
    if (error !== undefined) {
      Deno.test(exampleName(example), () => {
        throw error;
      });
    } else if (run) {
      Deno.test(exampleName(example), () =>
        run().catch((e) => {
          throw exampleError(e, url, example);
        }));
    }
  }
}

Deno.test("doc examples: the repository's examples were found", () => {
  assert.ok(examples > 100, `only ${examples} examples found`);
});
