import assert from "node:assert/strict";
import type { CoreNote } from "../upstream/core.ts";
import { repeatPool, shareRepeats } from "./repeat_pool.ts";

/** A note as a fresh parse gives it: every string its own copy. */
function parsed(noteId: string, attributes: Record<string, unknown>[]): CoreNote {
  return JSON.parse(JSON.stringify({
    noteId,
    title: `Title of ${noteId}`,
    type: "text",
    mime: "text/html",
    utcDateModified: "2026-01-05 08:00:00.000Z",
    parentNoteIds: ["root"],
    childNoteIds: [],
    attributes,
  }));
}

const templateField = {
  attributeId: "tpl1",
  noteId: "_template_character",
  type: "label",
  name: "label:race",
  value: "promoted,text",
  isInheritable: false,
  utcDateModified: "2026-01-05 08:00:00.000Z",
};

Deno.test("repeat pool: notes read exactly as before, sharing what repeats", () => {
  const notes = ["a", "b", "c"].map((id) =>
    parsed(id, [templateField, {
      attributeId: `own-${id}`,
      noteId: id,
      type: "relation",
      name: "internalLink",
      value: "root",
    }])
  );
  const before = JSON.stringify(notes);
  const pool = repeatPool();
  for (const n of notes) shareRepeats(n, pool);
  assert.equal(JSON.stringify(notes), before, "nothing reads differently");
  assert.equal(
    notes[1].attributes[0],
    notes[0].attributes[0],
    "the template's field is one object",
  );
  assert.notEqual(notes[1].attributes[1], notes[0].attributes[1], "own attributes stay apart");
  assert.equal(pool.strings.get("internalLink"), "internalLink");
  assert.equal(pool.attributes.size, 4);
});

Deno.test("repeat pool: an attribute with the same id but other fields is never swapped in", () => {
  const pool = repeatPool();
  const first = parsed("a", [templateField]);
  shareRepeats(first, pool);
  for (
    const changed of [
      { ...templateField, value: "promoted,number" },
      { ...templateField, isInheritable: true },
      { ...templateField, extra: "a newer Core's field" },
      (({ utcDateModified: _, ...rest }) => rest)(templateField),
    ]
  ) {
    const note = parsed("b", [changed]);
    const text = JSON.stringify(note);
    shareRepeats(note, pool);
    assert.notEqual(note.attributes[0], first.attributes[0]);
    assert.equal(JSON.stringify(note), text);
  }
});
