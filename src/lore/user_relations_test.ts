import assert from "node:assert/strict";
import type { CoreAttribute } from "../upstream/core.ts";
import { isUserRelation, isUserRelationName, userRelations } from "./user_relations.ts";

function attr(type: "label" | "relation", name: string, noteId = "mira"): CoreAttribute {
  return {
    attributeId: `${noteId}_${name}`,
    noteId,
    type,
    name,
    value: "t1",
    isInheritable: false,
  };
}

Deno.test("user relations: own, minus Core's link, structure and behaviour relations", () => {
  const machinery = [
    "internalLink",
    "imageLink",
    "includeNoteLink",
    "relationMapLink",
    "template",
    "inherit",
    "renderNote",
    "widget",
    "searchScript",
    "shareCss",
    "shareJs",
    "shareHtml",
    "shareTemplate",
    "shareFavicon",
    "runOnNoteCreation",
    "runOnAttributeChange",
    "child:template",
    "child:relAlly",
  ];
  const kept = ["relAlly", "portraitImage", "mapImage", "mentor", "runOnce", "shareholder"];
  const note = {
    noteId: "mira",
    attributes: [
      ...machinery.map((n) => attr("relation", n)),
      ...kept.map((n) => attr("relation", n)),
      attr("label", "relEnemy"), // a label is no relation
      attr("relation", "relRival", "parent"), // inherited: the parent's own
    ],
  };
  assert.deepEqual(userRelations(note).map((a) => a.name), kept);
  for (const name of machinery) assert.equal(isUserRelationName(name), false, name);
  assert.equal(isUserRelation(attr("label", "relAlly")), false);
  assert.equal(isUserRelation(attr("relation", "relAlly", "other")), true, "ownership not checked");
});
