import assert from "node:assert/strict";
import { createPublicCaches, refreshPublicShare } from "./public_snapshot.ts";
import { buildPublicSnapshot } from "./snapshot_index.ts";
import { answerBytes, renderedAnswer } from "./rendered_answer.ts";

/** Pages of one size, told apart by their digit (n < 10). */
const page = (n: number) =>
  renderedAnswer(`<p>${n}${"x".repeat(1000)}</p>`, [["content-type", "text/html"]]);

Deno.test("public caches: the byte bound of rendered answers evicts the least recently used", () => {
  const size = answerBytes(page(1));
  const caches = createPublicCaches({ PUBLIC_CACHE_MS: 60_000 }, size * 2 + size / 2);
  caches.rendered.set("a", page(1));
  caches.rendered.set("b", page(2));
  caches.rendered.get("a"); // a is now the most recent
  caches.rendered.set("c", page(3)); // over the bound: b goes
  assert.equal(caches.rendered.get("b"), undefined);
  assert.equal(caches.rendered.get("a")?.etag, page(1).etag);
  assert.equal(caches.rendered.get("c")?.etag, page(3).etag);
  assert.ok(caches.rendered.bytes <= size * 2 + size / 2);
});

Deno.test("public caches: a failed refresh drops the share and what was rendered, keeps content", async () => {
  const caches = createPublicCaches({ PUBLIC_CACHE_MS: 60_000 });
  caches.snapshots.set("identity", null);
  caches.rendered.set("identity\nv1\napi\nnote:abc", page(1));
  caches.contents.set("identity:blob", "<p>Harbor</p>");
  const coreDown = () => Promise.reject(new Error("Core is down"));
  assert.equal(await refreshPublicShare(caches, coreDown), false);
  assert.deepEqual([caches.snapshots.size, caches.rendered.size, caches.rendered.bytes], [0, 0, 0]);
  assert.equal(caches.contents.get("identity:blob"), "<p>Harbor</p>"); // content-addressed
});

Deno.test("public caches: with PUBLIC_CACHE_MS 0 nothing rendered is kept", () => {
  const caches = createPublicCaches({ PUBLIC_CACHE_MS: 0 });
  caches.rendered.set("k", page(1));
  assert.equal(caches.rendered.size, 0);
});

/** A note as Core's search gives it (a fresh parse each time). */
const coreNote = (noteId: string, parent: string, labels: string[] = []) =>
  JSON.parse(JSON.stringify({
    noteId,
    title: noteId,
    type: "text",
    mime: "text/html",
    isProtected: false,
    blobId: `blob-${noteId}`,
    utcDateModified: "2026-01-05 08:00:00.000Z",
    parentNoteIds: [parent],
    childNoteIds: [],
    attributes: labels.map((name, i) => ({
      attributeId: `${noteId}-${i}`,
      noteId,
      type: "label",
      name,
      value: "",
      isInheritable: false,
    })),
  }));

const share = (rootLabels: string[] = []) => {
  const root = { ...coreNote("root1", "_share", ["shareRoot", ...rootLabels]) };
  root.childNoteIds = ["a", "b"];
  return [root, coreNote("a", "root1"), coreNote("b", "root1")];
};

Deno.test("public snapshot: the same share is the previous snapshot; a change keeps what did not change", () => {
  const first = buildPublicSnapshot("root1", share());
  assert.equal(buildPublicSnapshot("root1", share(), first), first, "nothing changed");
  const changed = share();
  changed[2] = coreNote("b", "root1", ["draft"]);
  const second = buildPublicSnapshot("root1", changed, first);
  assert.notEqual(second.version, first.version);
  assert.equal(second.byId.get("a"), first.byId.get("a"), "an unchanged note is the same object");
  assert.notEqual(second.byId.get("b"), first.byId.get("b"));
  // the filter is built over the snapshot's own notes: the draft is hidden
  assert.deepEqual([first.view.isPublic("b"), second.view.isPublic("b")], [true, false]);
  assert.equal(second.view.isPublic("a"), true);
});
