/**
 * `deno task docs`: writes the generated reference pages, `docs/api.md` (the route table) and
 * `docs/configuration.md` (the environment schema), formatted exactly as `deno fmt` leaves them
 * so that `deno fmt --check` and the staleness test agree. `--check` writes nothing and exits
 * with status 1 when a page is out of date.
 *
 * @module
 */
import { envSchema } from "./config/service_config.ts";
import { configurationMarkdown } from "./api/configuration_docs.ts";
import { apiReferenceMarkdown } from "./api/reference_docs.ts";
import { allRoutes } from "./routes/index.ts";

const root = new URL("../", import.meta.url);

/**
 * Formats Markdown with the repository's own `deno fmt` settings.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   await formatMarkdown("| a | b |\n|---|---|\n| 1 | 2 |\n"),
 *   "| a | b |\n| - | - |\n| 1 | 2 |\n",
 * );
 * ```
 */
export async function formatMarkdown(markdown: string): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--config", new URL("deno.json", root).pathname, "--ext=md", "-"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(markdown));
  await writer.close();
  const { code, stdout, stderr } = await child.output();
  if (code !== 0) throw new Error(`deno fmt failed: ${new TextDecoder().decode(stderr)}`);
  return new TextDecoder().decode(stdout);
}

/**
 * Every generated page: path relative to the repository root → its formatted content.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const pages = await generatedDocs();
 * assert.deepEqual(Object.keys(pages), ["docs/api.md", "docs/configuration.md"]);
 * ```
 */
export async function generatedDocs(): Promise<Record<string, string>> {
  return {
    "docs/api.md": await formatMarkdown(apiReferenceMarkdown(allRoutes)),
    "docs/configuration.md": await formatMarkdown(configurationMarkdown(envSchema)),
  };
}

if (import.meta.main) {
  const check = Deno.args.includes("--check");
  let stale = 0;
  for (const [path, text] of Object.entries(await generatedDocs())) {
    const file = new URL(path, root);
    const current = await Deno.readTextFile(file).catch(() => "");
    if (current === text) continue;
    if (check) {
      console.error(`${path} is out of date: run \`deno task docs\``);
      stale++;
    } else {
      await Deno.writeTextFile(file, text);
      console.log(`wrote ${path}`);
    }
  }
  if (stale) Deno.exit(1);
}
