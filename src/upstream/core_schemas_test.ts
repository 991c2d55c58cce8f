import assert from "node:assert/strict";
import type { z } from "zod";
import { prng } from "../../tests/helpers/prng.ts";
import {
  coreNoteAnswerSchema,
  coreNoteSchema,
  coreSearchAnswerSchema,
  coreSearchSchema,
  verbatimResults,
  wellFormedNote,
  wellFormedSearchAnswer,
} from "./core_schemas.ts";

const note = (i: number, protectedNote = false) => ({
  noteId: `note${i}`,
  isProtected: protectedNote,
  title: `Title ${i}`,
  type: "text",
  mime: "text/html",
  blobId: `blob${i}`,
  dateCreated: "2026-03-01 09:04:00.000+0000",
  utcDateModified: "2026-03-01 09:04:00.000Z",
  parentNoteIds: ["root"],
  childNoteIds: [],
  parentBranchIds: [`root_note${i}`],
  childBranchIds: [],
  isFuture: "an unknown field Core may add",
  attributes: [
    { attributeId: `a${i}`, noteId: `note${i}`, type: "label", name: "lore", value: "" },
    {
      attributeId: `b${i}`,
      noteId: `note${i}`,
      type: "relation",
      name: "ally",
      value: "note0",
      position: 20,
      isInheritable: true,
    },
  ],
});

/** Ways an answer can be wrong (or merely unusual) at a random spot. */
const MUTATIONS: ((n: Record<string, unknown>, attr: Record<string, unknown>) => void)[] = [
  (n) => delete n.noteId,
  (n) => n.title = 7,
  (n) => n.isProtected = "yes",
  (n) => n.blobId = null,
  (n) => n.childNoteIds = ["x", 3],
  (n) => n.attributes = "none",
  (n) => n.isProtected = true,
  (n) => delete n.dateCreated,
  (_, a) => a.type = "link",
  (_, a) => a.position = "1",
  (_, a) => a.isInheritable = null,
  (_, a) => delete a.value,
  (_, a) => delete a.isInheritable,
  (_, a) => a.extra = { nested: true },
];

/** Applies up to two random mutations to `n` (or to one of its attributes). */
function mutate(random: () => number, n: Record<string, unknown>): void {
  for (let m = Math.floor(random() * 3); m > 0; m--) {
    const attrs = Array.isArray(n.attributes) ? n.attributes : [{}, {}]; // a mutation may drop them
    MUTATIONS[Math.floor(random() * MUTATIONS.length)](n, attrs[Math.floor(random() * 2)]);
  }
}

/**
 * Holds a fast path equal to zod over `rounds` random answers: whatever it accepts, zod accepts
 * with the same result, and the combined schema always agrees with zod. Returns how many answers
 * took the fast path.
 */
function holdsEqualToZod(
  rounds: number,
  answerFor: (round: number) => unknown,
  paths: { zod: z.ZodType; fast: (raw: unknown) => unknown; combined: z.ZodType },
): number {
  let fastUsed = 0;
  for (let round = 0; round < rounds; round++) {
    const answer = answerFor(round);
    const byZod = paths.zod.safeParse(structuredClone(answer));
    const fast = paths.fast(structuredClone(answer));
    if (fast) {
      fastUsed++;
      assert.ok(byZod.success, "the fast path accepted what zod refuses");
      assert.deepEqual(fast, byZod.data);
    }
    const combined = paths.combined.safeParse(structuredClone(answer));
    assert.equal(combined.success, byZod.success);
    if (combined.success && byZod.success) assert.deepEqual(combined.data, byZod.data);
  }
  return fastUsed;
}

Deno.test("core search answers: the fast path gives exactly zod's result, or leaves it to zod", () => {
  const random = prng(7);
  const fastUsed = holdsEqualToZod(400, () => {
    const notes = Array.from({ length: 1 + Math.floor(random() * 4) }, (_, i) => note(i));
    mutate(
      random,
      notes[Math.floor(random() * notes.length)] as unknown as Record<string, unknown>,
    );
    return random() < 0.05 ? { results: "not a list" } : { results: notes };
  }, { zod: coreSearchSchema, fast: wellFormedSearchAnswer, combined: coreSearchAnswerSchema });
  assert.ok(fastUsed > 100, `the fast path took only ${fastUsed} of 400 answers`);
});

Deno.test("core search answers: a well-formed list takes the fast path, protected titles hidden", () => {
  const answer = { results: [note(1), note(2, true)] };
  const fast = wellFormedSearchAnswer(structuredClone(answer));
  assert.ok(fast, "a plain list of notes takes the fast path");
  assert.deepEqual(fast.results.map((n) => n.title), ["Title 1", "[protected]"]);
  assert.deepEqual(fast.results[0].attributes.map((a) => a.isInheritable), [false, true]);
});

Deno.test("core notes: the one-note fast path gives exactly zod's result, or leaves it to zod", () => {
  const random = prng(11);
  const fastUsed = holdsEqualToZod(300, (round) => {
    const n = note(round) as unknown as Record<string, unknown>;
    mutate(random, n);
    return random() < 0.05 ? [n] : n;
  }, { zod: coreNoteSchema, fast: wellFormedNote, combined: coreNoteAnswerSchema });
  assert.ok(fastUsed > 80, `the fast path took only ${fastUsed} of 300 notes`);
});

Deno.test("core lists: Core's own text is passed on only when it is exactly the validated list", () => {
  const complete = (i: number, protectedNote = false) => {
    const n = note(i, protectedNote);
    for (const a of n.attributes) a.isInheritable ??= false;
    return n;
  };
  const verbatim = (answer: unknown, text = JSON.stringify(answer)) => {
    const { results } = coreSearchAnswerSchema.parse(JSON.parse(text));
    return verbatimResults(text, results);
  };
  const plain = { results: [complete(1), complete(2)] };
  assert.equal(verbatim(plain), JSON.stringify(plain.results));
  // each of these needs the list rebuilt, or could carry a list nobody validated
  assert.equal(verbatim({ results: [complete(1), complete(2, true)] }), null, "protected title");
  assert.equal(verbatim({ results: [note(1)] }), null, "isInheritable added");
  assert.equal(verbatim({ ...plain, debugInfo: {} }), null, "another key");
  assert.equal(verbatim(plain, JSON.stringify(plain, null, 1)), null, "other formatting");
  const duplicate = `{"results":[],"results":${JSON.stringify(plain.results)}}`;
  assert.equal(verbatim(plain, duplicate), null, "a duplicate key");
  const nested = { results: [{ ...complete(1), results: "an extra field" }] };
  assert.equal(verbatim(nested), null, "a nested results key");
  const broken = { results: [{ ...complete(1), title: 7 }] }; // zod refuses it: no fast path
  assert.equal(coreSearchAnswerSchema.safeParse(broken).success, false);
});
