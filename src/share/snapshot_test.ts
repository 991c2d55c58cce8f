import assert from "node:assert/strict";
import { startCoreSim } from "../../sims/core.ts";
import { type CoreNote, createCoreClient } from "../upstream/core.ts";
import { reloadShareNotes } from "./snapshot.ts";

Deno.test("share reload: Core's same answer is not parsed again; any change in Core is read", async () => {
  const core = await startCoreSim();
  try {
    const client = createCoreClient({ baseUrl: core.url, token: core.token }, {
      timeoutMs: 5_000,
      fetch,
    });
    const first = await reloadShareNotes(client);
    assert.ok(first?.notes && first.notes.length > 1, "the sample world has a share");
    const rootId = first.root.noteId;
    const again = await reloadShareNotes(client, { rootId, digest: first.digest });
    assert.equal(again?.notes, null);
    assert.equal(again?.digest, first.digest);
    assert.equal(again?.published, first.published);

    // changes made in Core itself, not through the service: each is read at the next reload
    const note = first.notes.find((n) => n.noteId !== rootId)!;
    let digest = first.digest;
    const changes: [string, () => void, (notes: CoreNote[]) => boolean][] = [
      [
        "a title",
        () => core.store.patchNote(note.noteId, { title: "Renamed in Core" }),
        (notes) => notes.some((n) => n.noteId === note.noteId && n.title === "Renamed in Core"),
      ],
      [
        "a label that hides the note",
        () => core.store.createAttribute({ noteId: note.noteId, type: "label", name: "draft" }),
        (notes) =>
          notes.some((n) =>
            n.noteId === note.noteId && n.attributes.some((a) => a.name === "draft")
          ),
      ],
      [
        "a deleted note",
        () => core.store.deleteNote(note.noteId),
        (notes) => !notes.some((n) => n.noteId === note.noteId),
      ],
    ];
    for (const [what, change, shows] of changes) {
      change();
      const read = await reloadShareNotes(client, { rootId, digest });
      assert.ok(read?.notes && shows(read.notes), what);
      assert.notEqual(read.digest, digest, what);
      digest = read.digest;
    }
    // a digest is compared only for the root it was read under
    const other = await reloadShareNotes(client, { rootId: "another-root", digest });
    assert.ok(other?.notes && other.notes.length > 0);
  } finally {
    await core.close();
  }
});
