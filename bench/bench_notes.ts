/**
 * Extra lore for benchmarks, added to the Core double's sample world: a number of plain lore
 * notes (so a list has a realistic length) and one note with four relations to world notes.
 *
 * @module
 */
import type { CoreStore } from "../sims/core_store.ts";
import { LORE_TYPES, markLore, W } from "../sims/world.ts";

/**
 * Id of the note {@linkcode seedBenchNotes} gives four user relations.
 */
export const RELATED_NOTE_ID = "benchRelated";

/**
 * Adds `count` lore notes (ids `bNote0000001`…, lore types in turn, each with its template and
 * a paragraph of content) under the world's lore root, and the {@linkcode RELATED_NOTE_ID} note
 * with relations to four world notes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createCoreStore } from "../sims/core_store.ts";
 * import { seedWorld } from "../sims/world.ts";
 *
 * const store = createCoreStore();
 * seedWorld(store);
 * seedBenchNotes(store, 300);
 * assert.ok(store.getNote("bNote0000300"));
 * assert.equal(store.getNote("bNote0000301"), undefined);
 * const relations = store.ownAttributes(RELATED_NOTE_ID).filter((a) => a.name.startsWith("rel"));
 * assert.equal(relations.length, 4);
 * ```
 */
export function seedBenchNotes(store: CoreStore, count: number): void {
  const loreNote = (noteId: string, title: string, type: (typeof LORE_TYPES)[number]) => {
    store.createNote({
      noteId,
      parentNoteId: W.loreRoot,
      title,
      type: "text",
      content: `<p>${title} is part of the coast's long memory.</p>`,
    }, { rawTitle: true });
    markLore(store, noteId, type);
  };
  for (let i = 1; i <= count; i++) {
    loreNote(
      `bNote${String(i).padStart(7, "0")}`,
      `Bench Note ${i}`,
      LORE_TYPES[i % LORE_TYPES.length],
    );
  }
  loreNote(RELATED_NOTE_ID, "Harbour Council", "faction");
  for (
    const [name, value] of [
      ["relMember", W.charMira],
      ["relMember", W.charOskar],
      ["relEnemy", W.charBrannoch],
      ["relLocatedIn", W.locHarbor],
    ]
  ) {
    store.createAttribute({ noteId: RELATED_NOTE_ID, type: "relation", name, value });
  }
}
