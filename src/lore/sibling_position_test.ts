import assert from "node:assert/strict";
import { planPosition, type SiblingSlot } from "./sibling_position.ts";

const slots = (...positions: number[]): SiblingSlot[] =>
  positions.map((notePosition, i) => ({ branchId: `p_${i}`, notePosition }));

Deno.test("planPosition: midpoint between neighbours, ends extend by 10", () => {
  assert.deepEqual(planPosition(slots(10, 20, 30), 1), {
    index: 1,
    notePosition: 15,
    renumber: [],
  });
  assert.deepEqual(planPosition(slots(10, 20), 0).notePosition, 0);
  assert.deepEqual(planPosition(slots(10, 20), 2).notePosition, 30);
  assert.deepEqual(planPosition(slots(), 0), { index: 0, notePosition: 10, renumber: [] });
  assert.equal(planPosition(slots(10, 12), 1).notePosition, 11);
});

Deno.test("planPosition: index is clamped to the end", () => {
  assert.deepEqual(planPosition(slots(10, 20), 99), { index: 2, notePosition: 30, renumber: [] });
});

Deno.test("planPosition: no integer gap renumbers the siblings 10, 20, … around the slot", () => {
  assert.deepEqual(planPosition(slots(10, 11, 11), 1), {
    index: 1,
    notePosition: 20,
    renumber: [
      { branchId: "p_1", from: 11, to: 30 },
      { branchId: "p_2", from: 11, to: 40 },
    ],
  });
  // every resulting position is strictly increasing
  const plan = planPosition(slots(5, 5, 5, 5), 2);
  const after = slots(5, 5, 5, 5).map((s) =>
    plan.renumber.find((r) => r.branchId === s.branchId)?.to ?? s.notePosition
  );
  after.splice(plan.index, 0, plan.notePosition);
  assert.deepEqual(after, [10, 20, 30, 40, 50]);
});

Deno.test("planPosition keeps the current position when it already fits", () => {
  assert.deepEqual(planPosition(slots(10, 20), 1, 17), {
    index: 1,
    notePosition: 17,
    renumber: [],
  });
  assert.equal(planPosition(slots(10, 20), 1, 20).notePosition, 15);
  assert.equal(planPosition(slots(10, 20), 0, 5).notePosition, 5);
});
