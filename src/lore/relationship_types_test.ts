import assert from "node:assert/strict";
import {
  relationName,
  relationNotePrefix,
  relationNoteValue,
  RELATIONSHIP_TYPES,
  relationshipTypeOf,
} from "./relationship_types.ts";

Deno.test("relationName: rel<Pascal> for all 17 types, and back", () => {
  assert.equal(RELATIONSHIP_TYPES.length, 17);
  assert.equal(relationName("ally"), "relAlly");
  assert.equal(relationName("originates_from"), "relOriginatesFrom");
  for (const t of RELATIONSHIP_TYPES) {
    assert.match(relationName(t), /^rel[A-Z][A-Za-z]+$/);
    assert.equal(relationshipTypeOf(relationName(t)), t);
  }
  for (const other of ["template", "internalLink", "relally", "rel"]) {
    assert.equal(relationshipTypeOf(other), undefined, other);
  }
});

Deno.test("relationNoteValue: the Parser's `<type>:<targetId>: <description>`", () => {
  const v = relationNoteValue("member_of", "abc123", "Joined after the flood");
  assert.equal(v, "member_of:abc123: Joined after the flood");
  assert.ok(v.startsWith(relationNotePrefix("member_of", "abc123")));
  assert.ok(!v.startsWith(relationNotePrefix("member_of", "abc12")));
});
