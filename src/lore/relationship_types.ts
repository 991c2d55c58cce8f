/**
 * The Parser's relationship vocabulary: 17 types, each stored in Core
 * as a relation named `rel<Pascal>` (`member_of` → `relMemberOf`), with an optional
 * `#relationNote` label `"<type>:<targetId>: <description>"` on the source note.
 *
 * @module
 */

/** The 17 relationship types, in the Parser's order. */
export const RELATIONSHIP_TYPES = [
  "ally",
  "enemy",
  "rival",
  "family",
  "member_of",
  "leader_of",
  "serves",
  "located_in",
  "originates_from",
  "participated_in",
  "caused",
  "created",
  "owns",
  "wields",
  "worships",
  "inhabits",
  "related_to",
] as const;

/** One of {@linkcode RELATIONSHIP_TYPES}. */
export type RelationshipType = typeof RELATIONSHIP_TYPES[number];

/**
 * The Core relation name of a relationship type.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(relationName("member_of"), "relMemberOf");
 * ```
 */
export function relationName(type: RelationshipType): string {
  return "rel" + type.split("_").map((w) => w[0].toUpperCase() + w.slice(1)).join("");
}

/**
 * The relationship type of a Core relation name, or undefined for other relations.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(relationshipTypeOf("relAlly"), "ally");
 * assert.equal(relationshipTypeOf("template"), undefined);
 * ```
 */
export function relationshipTypeOf(name: string): RelationshipType | undefined {
  return RELATIONSHIP_TYPES.find((t) => relationName(t) === name);
}

/**
 * The `#relationNote` label value the Parser writes for a described relation.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   relationNoteValue("ally", "abc123", "Sailed together"),
 *   "ally:abc123: Sailed together",
 * );
 * ```
 */
export function relationNoteValue(
  type: RelationshipType,
  targetId: string,
  description: string,
): string {
  return `${relationNotePrefix(type, targetId)} ${description}`;
}

/**
 * The start of every `#relationNote` value describing one relation (for finding it again).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(relationNotePrefix("ally", "abc123"), "ally:abc123:");
 * ```
 */
export function relationNotePrefix(type: RelationshipType, targetId: string): string {
  return `${type}:${targetId}:`;
}
