/** README's route list and configuration table must say what the code does. */
import assert from "node:assert/strict";
import { envSchema } from "../src/config.ts";
import { routeTableMarkdown } from "../src/openapi.ts";
import { allRoutes } from "../src/routes/index.ts";

const readme = await Deno.readTextFile(new URL("../README.md", import.meta.url));

/** Table rows compared without the padding `deno fmt` adds to Markdown tables. */
const normalize = (table: string) =>
  table.trim().split("\n").map((l) => l.replace(/\s*\|\s*/g, "|").replace(/-{3,}/g, "---"))
    .join("\n");

Deno.test("README: the route list is the table's own output (deno task routes)", () => {
  const block = readme.match(/<!-- routes:start -->\n([\s\S]*?)\n<!-- routes:end -->/);
  assert.ok(block, "README has the routes markers");
  assert.equal(
    normalize(block[1]),
    normalize(routeTableMarkdown(allRoutes)),
    "run `deno task routes` and paste the output",
  );
});

Deno.test("README: every environment variable is in the configuration table", () => {
  for (const key of Object.keys(envSchema.shape)) {
    assert.match(
      readme,
      new RegExp("^\\|\\s*`" + key + "`\\s*\\|", "m"),
      `${key} missing from README`,
    );
  }
});
