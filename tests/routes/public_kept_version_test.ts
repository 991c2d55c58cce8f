/**
 * Readings kept in `DATA_DIR` are reused after a restart only when the sanitizer that made them
 * is the running one: a reading made by an older version (say, before links to unpublished
 * notes left a mark in their sentence) is made again, never shown.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { SANITIZER_VERSION } from "../../src/sanitize/html.ts";
import { startOnDataDir, withDataDir } from "../helpers/data_dir.ts";
import { withHarness } from "../helpers/harness.ts";

const TAMPERED = "tampered kept reading";
/** A search excerpt showing a tampered reading (the query's word is marked). */
const SHOWN = /<p class="excerpt">(?:<mark>)?tampered(?:<\/mark>)? kept reading/;

/** Rewrites every kept reading on disk: its text is TAMPERED, its key names `version`. */
async function rewriteKept(dataDir: string, version: string): Promise<number> {
  let entries = 0;
  const root = join(dataDir, "public-share");
  for await (const identity of Deno.readDir(root)) {
    for (const kind of ["readings", "texts"]) {
      const file = join(root, identity.name, `${kind}.json`);
      const kept: [string, { answers: unknown; value: unknown }][] = JSON.parse(
        await Deno.readTextFile(file),
      );
      const rewritten = kept.map(([key, { answers, value }]) => {
        const parts = key.split("\n");
        assert.ok(parts.includes(SANITIZER_VERSION), "a key names the sanitizer's version");
        const renamed = parts.map((p) => (p === SANITIZER_VERSION ? version : p)).join("\n");
        const text = typeof value === "string"
          ? TAMPERED
          : { ...(value as object), text: TAMPERED, lead: TAMPERED };
        entries++;
        return [renamed, { answers, value: text }];
      });
      await Deno.writeTextFile(file, JSON.stringify(rewritten));
    }
  }
  return entries;
}

Deno.test("public share: readings kept by another sanitizer version are made again after a restart", () =>
  withHarness((h) =>
    withDataDir(async (dataDir) => {
      /** A search page of a fresh service on DATA_DIR (the search reads every note's readings). */
      const search = async (q: string) => {
        const server = await startOnDataDir(h, dataDir);
        try {
          return await (await fetch(`${server.url}/?q=${encodeURIComponent(q)}`)).text();
        } finally {
          await server.stop(); // keeps what it read in DATA_DIR
        }
      };
      assert.doesNotMatch(await search("harbor"), SHOWN);
      // kept under the running version, a reading is reused as it is (so this test can see it)
      assert.ok(await rewriteKept(dataDir, SANITIZER_VERSION) > 0);
      assert.match(await search("tampered"), SHOWN);
      // kept by another version, none is: each is made again from the note
      await rewriteKept(dataDir, `older-than-${SANITIZER_VERSION}`);
      const again = await search("tampered");
      assert.doesNotMatch(again, SHOWN);
      assert.match(again, /role="status">0 results for/);
    })
  ));
