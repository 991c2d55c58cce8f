import assert from "node:assert/strict";
import type { CoreAttribute, CoreNote } from "../upstream/core.ts";
import { backlinksFrom } from "./backlinks.ts";

function note(noteId: string, title: string, relations: [string, string][]): CoreNote {
  const attributes: CoreAttribute[] = relations.map(([name, value], i) => ({
    attributeId: `${noteId}_${i}`,
    noteId,
    type: "relation",
    name,
    value,
    isInheritable: false,
  }));
  return {
    noteId,
    title,
    type: "text",
    mime: "text/html",
    isProtected: false,
    parentNoteIds: ["root"],
    childNoteIds: [],
    parentBranchIds: [],
    childBranchIds: [],
    attributes,
  };
}

Deno.test("backlinksFrom: a note linked only through Core machinery is no backlink", () => {
  const results = [
    note("inst1", "Mira (from the template)", [["template", "tpl"]]),
    note("heir1", "Heir", [["inherit", "tpl"], ["runOnNoteCreation", "tpl"]]),
    note("ally1", "Ally", [["relAlly", "tpl"], ["template", "tpl"]]),
    note("page1", "Page", [["internalLink", "tpl"]]),
  ];
  assert.deepEqual(
    backlinksFrom(results, "tpl").map((b) => [b.noteId, b.relations, b.viaContentLink]),
    [["ally1", ["relAlly"], false], ["page1", [], true]],
  );
});
