/**
 * The Core double's search for notes named by id (`note.noteId = … or …`): it only looks at the
 * named notes, and still applies Core's default filters, case rule and other conditions; and
 * `note.children.…` paths, which find the notes above one.
 */
import assert from "node:assert/strict";
import { createCoreStore } from "./core_store.ts";
import { seedSystemNotes } from "./world.ts";

function setup() {
  const store = createCoreStore();
  seedSystemNotes(store);
  const note = (title: string, parentNoteId = "root", noteId?: string) =>
    store.createNote({ parentNoteId, title, type: "text", content: "", noteId }, {
      ignoreForbiddenParents: true,
    }).note.noteId;
  const plain = note("Plain", "root", "plainNote001");
  const twin = note("Twin", "root", "PLAINNOTE001");
  const lore = note("Lore", "root", "loreNote0001");
  store.createAttribute({ noteId: lore, type: "label", name: "lore" });
  const archived = note("Archived", "root", "archNote0001");
  store.createAttribute({ noteId: archived, type: "label", name: "archived" });
  const hidden = note("Hidden", "_hidden", "hiddNote0001");
  note("Other", "root", "otherNote001");
  return { store, plain, twin, lore, archived, hidden };
}

const ids = (...list: string[]) => list.map((id) => `note.noteId = "${id}"`).join(" or ");
const hitIds = (hits: { noteId: string }[]) => hits.map((h) => h.noteId).sort();

Deno.test("core double search by ids: any case, default filters kept", () => {
  const { store, plain, twin, lore, archived, hidden } = setup();
  const q = ids(plain, lore, archived, hidden, "missingNote1");
  assert.deepEqual(hitIds(store.search(q).hits), [lore, plain, twin].sort());
  assert.deepEqual(
    hitIds(store.search(q, { includeArchivedNotes: true }).hits),
    [archived, lore, plain, twin].sort(),
  );
  assert.deepEqual(hitIds(store.search(q, { ancestorNoteId: "_hidden" }).hits), [hidden]);
});

Deno.test("core double search by ids: other conditions still apply", () => {
  const { store, plain, lore } = setup();
  assert.deepEqual(hitIds(store.search(`#lore and (${ids(plain, lore)})`).hits), [lore]);
  assert.equal(store.search(`#lore or ${ids(plain)}`).hits.length, 3);
  assert.deepEqual(hitIds(store.search(`note.noteId != "${plain}"`).hits).includes(plain), false);
});

Deno.test("core double search: note.children.… finds the notes above one, hidden ones left out", () => {
  const { store } = setup();
  const note = (title: string, parentNoteId: string) =>
    store.createNote({ parentNoteId, title, type: "text", content: "" }).note.noteId;
  const world = note("World", "root");
  const coast = note("Coast", world);
  const town = note("Town", coast);
  store.createBranch({ noteId: town, parentNoteId: "_share" });
  const parents = `note.children.noteId = "${town}"`;
  const grandparents = `note.children.children.noteId = "${town}"`;
  assert.deepEqual(hitIds(store.search(parents).hits), [coast]);
  assert.deepEqual(
    hitIds(store.search(`${parents} or ${grandparents}`).hits),
    [coast, world].sort(),
  );
  const third = `note.children.children.children.noteId = "${town}"`;
  assert.deepEqual(hitIds(store.search(third).hits), ["root"], "three levels up");
  assert.deepEqual(hitIds(store.search(`#lore and ${parents}`).hits), []);
});
