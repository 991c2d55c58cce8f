/**
 * One object per attribute Core repeats, one string per short value it repeats. ETAPI lists a
 * note's inherited attributes with its own (a template's field definitions, an inheritable
 * `#draft`), and a parsed answer holds a string of its own for every occurrence of a date, a name
 * or a noteId: in a generated world of 3,000 notes, 54,000 attribute objects were copies of
 * 29,000, and 25,000 strings were one date.
 *
 * @module
 */
import type { CoreAttribute, CoreNote } from "../upstream/core.ts";

/** What the notes of one snapshot share: attributes by id, short strings by value. */
export interface RepeatPool {
  attributes: Map<string, CoreAttribute>;
  strings: Map<string, string>;
}

/** A pool with nothing in it yet. */
export function repeatPool(): RepeatPool {
  return { attributes: new Map(), strings: new Map() };
}

/** Strings longer than this are not pooled: long values (prose) rarely repeat. */
const POOLED_MAX = 64;

/** A note's fields that repeat across notes. */
const NOTE_FIELDS = [
  "type",
  "mime",
  "dateCreated",
  "dateModified",
  "utcDateCreated",
  "utcDateModified",
];

/** An attribute's fields that repeat across attributes. */
const ATTRIBUTE_FIELDS = ["noteId", "name", "value", "utcDateModified"];

/** Whether two attributes read the same: the same fields, each with the same value. */
function sameAttribute(a: CoreAttribute, b: CoreAttribute): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  const fieldsOf = (x: CoreAttribute) => x as unknown as Record<string, unknown>;
  return keys.every((k) => Object.is(fieldsOf(a)[k], fieldsOf(b)[k]));
}

/**
 * Makes `note` (in place) hold the pool's objects and strings wherever it repeats what an
 * earlier note held: each attribute that reads exactly like one met before (by attributeId) is
 * that one; its dates, types, listed ids and its attributes' owners, names and values are the
 * pool's strings. The note reads the same after.
 *
 * @example A template's attribute, listed with two notes, becomes one object
 * ```ts
 * import assert from "node:assert/strict";
 * import type { CoreNote } from "../upstream/core.ts";
 * const field = () => ({
 *   attributeId: "t1", noteId: "_template_character", type: "label" as const,
 *   name: "label:race", value: "promoted,text", isInheritable: false,
 * });
 * const note = (noteId: string) => ({
 *   noteId, type: "text", utcDateModified: ["2026-01-05 08:00:00.000", "Z"].join(""),
 *   parentNoteIds: ["root"], childNoteIds: [], attributes: [field()],
 * }) as unknown as CoreNote;
 * const pool = repeatPool();
 * const [a, b] = [note("n1"), note("n2")];
 * shareRepeats(a, pool);
 * shareRepeats(b, pool);
 * assert.equal(b.attributes[0], a.attributes[0]);
 * assert.equal(b.utcDateModified, "2026-01-05 08:00:00.000Z");
 * const changed = note("n3");
 * changed.attributes[0].value = "promoted,number"; // same id, another value: kept apart
 * shareRepeats(changed, pool);
 * assert.notEqual(changed.attributes[0], a.attributes[0]);
 * assert.equal(changed.attributes[0].value, "promoted,number");
 * ```
 */
export function shareRepeats(note: CoreNote, pool: RepeatPool): void {
  const pooled = (value: string): string => {
    if (value.length > POOLED_MAX) return value;
    const held = pool.strings.get(value);
    if (held !== undefined) return held;
    pool.strings.set(value, value);
    return value;
  };
  /** The pool's strings for the named fields of `record` that hold one; absent ones stay so. */
  const poolFields = (record: object, keys: readonly string[]) => {
    const fields = record as Record<string, unknown>;
    for (const key of keys) {
      if (typeof fields[key] === "string") fields[key] = pooled(fields[key] as string);
    }
  };
  poolFields(note, NOTE_FIELDS);
  for (const list of [note.parentNoteIds, note.childNoteIds]) {
    for (let i = 0; i < list.length; i++) list[i] = pooled(list[i]);
  }
  const attributes = note.attributes;
  for (let i = 0; i < attributes.length; i++) {
    const attribute = attributes[i];
    const met = pool.attributes.get(attribute.attributeId);
    if (met !== undefined && sameAttribute(met, attribute)) {
      attributes[i] = met;
      continue;
    }
    if (met === undefined) pool.attributes.set(attribute.attributeId, attribute);
    poolFields(attribute, ATTRIBUTE_FIELDS);
  }
}
