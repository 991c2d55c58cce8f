/**
 * Core notes for unit tests that stand in for Core: one well-formed default, so a test writes only
 * what its case is about.
 *
 * @module
 */
import type { CoreNote } from "../../src/upstream/core.ts";

/**
 * A text note as Core's ETAPI returns it: under `root`, titled `Title <noteId>`, no attributes;
 * `over` replaces any field.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const note = coreNote("n1", { title: "Harbor" });
 * assert.equal(note.title, "Harbor");
 * assert.deepEqual([note.parentNoteIds, note.parentBranchIds], [["root"], ["root_n1"]]);
 * ```
 */
export function coreNote(noteId: string, over: Partial<CoreNote> = {}): CoreNote {
  return {
    noteId,
    isProtected: false,
    title: `Title ${noteId}`,
    type: "text",
    mime: "text/html",
    parentNoteIds: ["root"],
    childNoteIds: [],
    parentBranchIds: [`root_${noteId}`],
    childBranchIds: [],
    attributes: [],
    ...over,
  };
}
