import assert from "node:assert/strict";
import { coreNote } from "../../tests/helpers/core_notes.ts";
import { ApiError } from "../http/errors.ts";
import type { CoreClient, CoreNote, CoreSearchOptions } from "../upstream/core.ts";
import { IDS_PER_SEARCH, notesByIds } from "./notes_by_ids.ts";

const noteOf = (noteId: string, labels: string[] = []): CoreNote =>
  coreNote(noteId, {
    attributes: labels.map((name, i) => ({
      attributeId: `${noteId}a${i}`,
      noteId,
      type: "label" as const,
      name,
      value: "",
      isInheritable: false,
    })),
  });

/**
 * A Core stand-in: `searchable` notes are what a search can return (ids compared in any case,
 * like Core), `readable` what `GET /etapi/notes/:id` has besides them; every call is logged.
 */
function fakeCore(searchable: CoreNote[], readable: CoreNote[] = []) {
  const calls: string[] = [];
  const core = {
    search: (query: string, opts?: CoreSearchOptions) => {
      calls.push(`search ${query} ${JSON.stringify(opts)}`);
      const ids = [...query.matchAll(/note\.noteId = "([^"]*)"/g)].map((m) => m[1].toLowerCase());
      return Promise.resolve(searchable.filter((n) => ids.includes(n.noteId.toLowerCase())));
    },
    getNote: (id: string) => {
      calls.push(`get ${id}`);
      const n = [...searchable, ...readable].find((x) => x.noteId === id);
      return n
        ? Promise.resolve(n)
        : Promise.reject(new ApiError(404, "NOT_FOUND", "Note not found"));
    },
  } as unknown as CoreClient;
  return { core, calls };
}

Deno.test("notesByIds: one search per chunk of ids, exact ids only, bad ids never queried", async () => {
  const ids = Array.from({ length: IDS_PER_SEARCH * 2 + 1 }, (_, i) => `n${i}`);
  const { core, calls } = fakeCore([...ids.map((id) => noteOf(id)), noteOf("N0")]);
  const found = await notesByIds(core, [...ids, "n0", "a/b", 'x" or #lore'], {
    lore: false,
    concurrency: 4,
  });
  assert.deepEqual([...found.keys()].sort(), [...ids].sort());
  assert.equal(calls.length, 3);
  assert.ok(calls.every((c) => c.startsWith("search ") && !c.includes("a/b") && !c.includes("#")));
});

Deno.test("notesByIds: with lore, only #lore notes count", async () => {
  const { core, calls } = fakeCore([noteOf("lore1", ["lore"]), noteOf("plain1")]);
  const found = await notesByIds(core, ["lore1", "plain1"], { lore: true, concurrency: 4 });
  assert.deepEqual([...found.keys()], ["lore1"]);
  assert.match(calls[0], /^search #lore and \(note\.noteId = "lore1" or note\.noteId = "plain1"\)/);
});

Deno.test("notesByIds complete: archived searched, the unseen read once each, the gone left out", async () => {
  const { core, calls } = fakeCore([noteOf("seen1"), noteOf("seen2")], [noteOf("hidden1")]);
  const found = await notesByIds(core, ["seen1", "hidden1", "gone1", "seen2", "seen1"], {
    lore: false,
    concurrency: 4,
    complete: true,
  });
  assert.deepEqual([...found.keys()].sort(), ["hidden1", "seen1", "seen2"]);
  assert.equal(calls.length, 3);
  assert.match(calls[0], /"includeArchivedNotes":true/);
  assert.deepEqual(calls.slice(1).sort(), ["get gone1", "get hidden1"]);
});

Deno.test("notesByIds complete: a Core failure other than 404 is not swallowed", async () => {
  const core = {
    search: () => Promise.resolve([]),
    getNote: () => Promise.reject(new ApiError(502, "UPSTREAM_ERROR", "Core failed")),
  } as unknown as CoreClient;
  await assert.rejects(
    notesByIds(core, ["x1"], { lore: false, concurrency: 2, complete: true }),
    { status: 502 },
  );
});

Deno.test("notesByIds: nothing asked, nothing sent", async () => {
  const { core, calls } = fakeCore([]);
  assert.equal(
    (await notesByIds(core, [], { lore: false, concurrency: 2, complete: true })).size,
    0,
  );
  assert.deepEqual(calls, []);
});
