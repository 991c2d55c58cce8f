/**
 * The public search forgives a typo: a word of five letters or more also matches a visible word
 * one edit away when nothing matches as typed; hidden notes stay unfound either way.
 */
import assert from "node:assert/strict";
import { withHarness } from "../helpers/harness.ts";
import { W } from "../../sims/world.ts";

Deno.test("public search: a typo finds what the visitor may read, and nothing hidden", () =>
  withHarness(async (h) => {
    const ids = async (q: string) =>
      (await h.requestJson<{ results: { id: string; score: number }[] }>(
        `/api/public/search?q=${encodeURIComponent(q)}`,
      )).body.results;
    const guild = await ids("lantren guild"); // "lantern" with two letters swapped
    assert.ok(guild.some((r) => r.id === W.faction), JSON.stringify(guild));
    // an exact match outranks nothing: it is the only answer when there is one
    assert.ok((await ids("lantern")).every((r) => Number.isInteger(r.score)));
    // hidden titles stay unfound, typo or not ("Rumours on the Docks" is a draft)
    assert.deepEqual(await ids("rumours docks"), []);
    assert.deepEqual(await ids("rumuors docks"), []);
    // short words must match as typed
    assert.deepEqual(await ids("gild"), []);
  }));
