/**
 * Where a note goes among its new siblings. Core orders children by `notePosition` (an integer);
 * placing a note at an index means finding an integer strictly between its new neighbours, or,
 * when they are adjacent integers, renumbering the siblings first (10, 20, …) to open a gap.
 *
 * @module
 */

/** A sibling branch in display order, as Core reports it. */
export interface SiblingSlot {
  branchId: string;
  notePosition: number;
}

/** One branch whose position must change before the note is placed. */
export interface PositionChange {
  branchId: string;
  from: number;
  to: number;
}

/** The outcome of {@linkcode planPosition}. */
export interface PositionPlan {
  /** The requested index clamped to `[0, siblings.length]`. */
  index: number;
  /** The moved note's `notePosition`. */
  notePosition: number;
  /** PATCHes to apply first (empty when there was a gap). */
  renumber: PositionChange[];
}

/** Spacing Core itself uses between new children. */
export const POSITION_STEP = 10;

/**
 * Plans the moved note's position at `index` among `siblings` (in order, the note itself left
 * out). `current` is the note's present position under this parent, if it has one: it is kept
 * when it already lies between the new neighbours, so a no-op reorder writes nothing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(
 *   planPosition(
 *     [{ branchId: "p_a", notePosition: 10 }, { branchId: "p_b", notePosition: 20 }],
 *     1,
 *   ),
 *   { index: 1, notePosition: 15, renumber: [] },
 * );
 * assert.deepEqual(
 *   planPosition(
 *     [{ branchId: "p_a", notePosition: 10 }, { branchId: "p_b", notePosition: 11 }],
 *     1,
 *   ),
 *   { index: 1, notePosition: 20, renumber: [{ branchId: "p_b", from: 11, to: 30 }] },
 * );
 * ```
 */
export function planPosition(
  siblings: readonly SiblingSlot[],
  index: number,
  current?: number,
): PositionPlan {
  const at = Math.max(0, Math.min(Math.trunc(index), siblings.length));
  const prev = siblings[at - 1]?.notePosition;
  const next = siblings[at]?.notePosition;
  const fits = (p: number) => (prev === undefined || p > prev) && (next === undefined || p < next);
  if (current !== undefined && fits(current)) {
    return { index: at, notePosition: current, renumber: [] };
  }
  const free = gapPosition(prev, next);
  if (free !== undefined) return { index: at, notePosition: free, renumber: [] };
  const renumber: PositionChange[] = [];
  siblings.forEach((s, i) => {
    const to = POSITION_STEP * (i < at ? i + 1 : i + 2);
    if (to !== s.notePosition) renumber.push({ branchId: s.branchId, from: s.notePosition, to });
  });
  return { index: at, notePosition: POSITION_STEP * (at + 1), renumber };
}

/** An integer strictly between the neighbours, or undefined when they leave no room. */
function gapPosition(prev: number | undefined, next: number | undefined): number | undefined {
  if (prev === undefined && next === undefined) return POSITION_STEP;
  if (next === undefined) return Math.floor(prev!) + POSITION_STEP;
  if (prev === undefined) return Math.ceil(next) - POSITION_STEP;
  const low = Math.floor(prev) + 1;
  const high = Math.ceil(next) - 1;
  return low <= high ? Math.floor((low + high) / 2) : undefined;
}
