import assert from "node:assert/strict";
import { VERSION } from "./version.ts";

Deno.test("version: the constant is deno.json's version", async () => {
  const manifest = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));
  assert.equal(typeof manifest.version, "string", "deno.json has a version");
  assert.equal(VERSION, manifest.version);
});
