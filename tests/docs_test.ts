/** The documentation must say what the code does, and every link in it must lead somewhere. */
import assert from "node:assert/strict";
import { generatedDocs } from "../src/reference_docs_task.ts";
import { envSchema } from "../src/config/service_config.ts";
import { configurationRows } from "../src/api/configuration_docs.ts";
import { GENERATED_NOTE, headingAnchors } from "../src/api/reference_docs.ts";

const root = new URL("../", import.meta.url);
const read = (path: string) => Deno.readTextFile(new URL(path, root));
const readme = await read("README.md");
const docPages = [...Deno.readDirSync(new URL("docs/", root))]
  .filter((e) => e.isFile && e.name.endsWith(".md"))
  .map((e) => `docs/${e.name}`)
  .sort();

Deno.test("docs: the generated pages are what `deno task docs` writes now", async () => {
  const pages = await generatedDocs();
  assert.deepEqual(Object.keys(pages), ["docs/api.md", "docs/configuration.md"]);
  for (const [path, text] of Object.entries(pages)) {
    assert.ok(text.startsWith(GENERATED_NOTE + "\n"), `${path} starts with the generated note`);
    assert.equal(await read(path), text, `${path} is out of date: run \`deno task docs\``);
  }
});

Deno.test("docs: every environment variable has a row in docs/configuration.md", async () => {
  const page = await read("docs/configuration.md");
  for (const key of Object.keys(envSchema.shape)) {
    assert.match(page, new RegExp("^\\|\\s*`" + key + "`\\s*\\|", "m"), `${key} missing`);
  }
  for (const row of configurationRows(envSchema)) {
    assert.ok(row.meaning, `${row.name} has no description in src/config/service_config.ts`);
  }
});

Deno.test("README: its essential variables exist, with the defaults the schema gives", () => {
  const section = readme.split(/^## Configuration$/m)[1]?.split(/^## /m)[0] ?? "";
  const rows = [...section.matchAll(/^\|\s*`([A-Z_]+)`\s*\|\s*(.*?)\s*\|/gm)];
  assert.ok(rows.length >= 6, "README's Configuration section has its table");
  const reference = new Map(configurationRows(envSchema).map((r) => [r.name, r]));
  for (const [, name, def] of rows) {
    assert.ok(reference.has(name), `${name} is not a variable the service reads`);
    assert.equal(def, reference.get(name)!.default, `README's default for ${name}`);
  }
});

Deno.test("README: short, and names the two commands", () => {
  assert.ok(new TextEncoder().encode(readme).length <= 12 * 1024, "README is at most 12 KB");
  assert.ok(readme.includes("deno task dev"), "README mentions `deno task dev`");
  assert.ok(readme.includes("deno task test"), "README mentions `deno task test`");
});

/** `[text](target)` links outside fenced code, with their line numbers. */
function links(markdown: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = [];
  let fenced = false;
  markdown.split("\n").forEach((text, i) => {
    if (/^\s*(```|~~~)/.test(text)) fenced = !fenced;
    if (fenced) return;
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) out.push({ target: m[1], line: i + 1 });
  });
  return out;
}

Deno.test("docs: every relative link in README.md and docs/ leads to a file and heading", async () => {
  const broken: string[] = [];
  let checked = 0;
  for (const page of ["README.md", ...docPages]) {
    const base = new URL(page, root);
    for (const { target, line } of links(await read(page))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      checked++;
      const [path, anchor] = target.split("#");
      const file = path ? new URL(path, base) : base;
      const where = `${page}:${line} → ${target}`;
      const text = await Deno.readTextFile(file).catch(() => undefined);
      if (text === undefined) broken.push(`${where}: no such file`);
      else if (anchor !== undefined && !headingAnchors(text).has(anchor)) {
        broken.push(`${where}: no such heading`);
      }
    }
  }
  assert.ok(checked > 50, "the pages' links were found");
  assert.deepEqual(broken, []);
});

Deno.test("docs: link checking catches a missing heading and a missing file", () => {
  const anchors = headingAnchors(
    "# Title\n\n## GET `/api/lore/{id}`\n\n```\n# not a heading\n```\n",
  );
  assert.ok(anchors.has("get-apiloreid"));
  assert.ok(!anchors.has("not-a-heading"));
  assert.deepEqual(links("[a](x.md#y) `code` [b](#z)\n```\n[c](nowhere.md)\n```\n"), [
    { target: "x.md#y", line: 1 },
    { target: "#z", line: 1 },
  ]);
});
