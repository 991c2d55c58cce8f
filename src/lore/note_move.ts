/**
 * Moving a note in the tree, or reordering it under its parent, without ever leaving it without a
 * parent: open a gap among the new siblings, place the note under the new parent, and only then
 * remove the old branch. Each write is a step of a {@linkcode writeSteps}, so a failure undoes
 * what came before or reports exactly what could not be undone. Core has no cycle check, so a
 * move into the note's own subtree is refused here.
 *
 * @module
 */
import { z } from "zod";
import { ApiError, invalidRequest, nullOn404 } from "../http/errors.ts";
import type { CoreBranch, CoreClient, CoreNote } from "../upstream/core.ts";
import { mapLimit } from "../util/concurrency.ts";
import { inOrder } from "../util/in_order.ts";
import {
  planPosition,
  type PositionChange,
  type PositionPlan,
  type SiblingSlot,
} from "./sibling_position.ts";
import { isSystemNote, refuseSystemNote } from "./system_notes.ts";
import { writeSteps } from "./write_steps.ts";

/** A requested move; the field names are the request body's (errors name `body.<field>`). */
export interface NoteMove {
  noteId: string;
  newParentId: string;
  /** Index among the new parent's other children (clamped). */
  index: number;
  /** The parent whose branch is removed; default: the first ordinary parent. */
  oldParentId?: string;
}

/**
 * Where the note ended up (the answer of `POST /api/lore/move`).
 */
export const noteMovedSchema = z.object({
  noteId: z.string(),
  parentNoteId: z.string(),
  branchId: z.string().describe("The note's branch under the new parent"),
  notePosition: z.number().describe("Core's position value of that branch"),
  index: z.number().int().nonnegative().describe(
    "The index the note got (the requested one, clamped)",
  ),
  removedBranchId: z.string().nullable().describe(
    "The branch removed under the old parent; null when the note only changed its position",
  ),
});
/** Where the note ended up. */
export type NoteMoved = z.output<typeof noteMovedSchema>;

/** Every note of a subtree, the subtree's root included (verified on a real Core). */
const SUBTREE_QUERY = "note.noteId != ''";

/**
 * The checks that need no Core call (400): system notes, a system parent, the note as its own
 * parent. {@linkcode relocateNote} assumes they passed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * refuseImpossibleMove({ noteId: "abc123", newParentId: "def456", index: 0 }); // passes
 * assert.throws(
 *   () => refuseImpossibleMove({ noteId: "abc123", newParentId: "_share", index: 0 }),
 *   {
 *     status: 400,
 *     message: "newParentId cannot be a system note (use the share routes for _share)",
 *   },
 * );
 * ```
 */
export function refuseImpossibleMove(move: NoteMove): void {
  refuseSystemNote(move.noteId, "moved");
  refuseSystemParent(move.newParentId, "newParentId");
  if (move.oldParentId) refuseSystemParent(move.oldParentId, "oldParentId");
  if (move.newParentId === move.noteId) throw cycleError();
}

/**
 * Moves the note (see the module doc); reads run in parallel, at most `concurrency` at once. A
 * missing note is 404, a missing new parent 404 naming `body.newParentId`, an `oldParentId` that
 * is not a parent or a move into the subtree 400; then nothing was written.
 */
export async function relocateNote(
  core: CoreClient,
  move: NoteMove,
  opts: { concurrency: number },
): Promise<NoteMoved> {
  const { noteId, newParentId, index } = move;
  const [note, parent] = await inOrder(
    core.getNote(noteId),
    core.getNote(newParentId).catch(notFoundAs("New parent note not found", "newParentId")),
  );
  const oldParent = oldParentFor(note, newParentId, move.oldParentId);
  const hasClone = note.parentNoteIds.includes(newParentId);
  const [, children, oldBranch] = await Promise.all([
    hasClone ? undefined : refuseCycle(core, noteId, newParentId),
    childSlots(core, parent, noteId, opts.concurrency),
    oldParent && oldParent !== newParentId
      ? core.getBranch(branchIdOf(oldParent, noteId))
      : undefined,
  ]);
  const plan = planPosition(children.siblings, index, children.own?.notePosition);
  const branch = await placeNote(core, opts.concurrency, {
    noteId,
    newParentId,
    plan,
    own: children.own,
    oldBranch,
  });
  return {
    noteId,
    parentNoteId: newParentId,
    branchId: branch.branchId,
    notePosition: plan.notePosition,
    index: plan.index,
    removedBranchId: oldBranch?.branchId ?? null,
  };
}

/** Core's branch ids are deterministic. */
function branchIdOf(parentNoteId: string, noteId: string): string {
  return `${parentNoteId}_${noteId}`;
}

function refuseSystemParent(id: string, field: string): void {
  if (id.startsWith("_")) {
    throw invalidRequest(`${field} cannot be a system note (use the share routes for _share)`, [
      { path: `body.${field}`, message: "is a system note" },
    ]);
  }
}

function cycleError(): ApiError {
  return invalidRequest("A note cannot be moved into itself or its own subtree", [
    { path: "body.newParentId", message: "is the note or one of its descendants" },
  ]);
}

/**
 * The parent whose branch the move removes: `oldParentId` when given (it must be a parent), else
 * the first parent that is neither a system note (`_share` and other weak/hidden placements stay)
 * nor the new parent. Undefined: the move only places the note under the new parent.
 */
function oldParentFor(
  note: CoreNote,
  newParentId: string,
  oldParentId: string | undefined,
): string | undefined {
  if (oldParentId !== undefined) {
    if (!note.parentNoteIds.includes(oldParentId)) {
      throw invalidRequest("oldParentId is not a parent of the note", [
        { path: "body.oldParentId", message: "is not a parent of the note" },
      ]);
    }
    return oldParentId;
  }
  return note.parentNoteIds.find((p) => p !== newParentId && !isSystemNoteButRoot(p));
}

function isSystemNoteButRoot(id: string): boolean {
  return id !== "root" && isSystemNote(id);
}

/** One subtree search instead of walking up from the new parent (Core has no cycle check). */
async function refuseCycle(core: CoreClient, noteId: string, newParentId: string): Promise<void> {
  const subtree = await core.search(SUBTREE_QUERY, {
    ancestorNoteId: noteId,
    includeArchivedNotes: true,
  });
  if (subtree.some((n) => n.noteId === newParentId)) throw cycleError();
}

/** The new parent's children in order, the moved note's own branch there (if any) set apart. */
async function childSlots(
  core: CoreClient,
  parent: CoreNote,
  noteId: string,
  concurrency: number,
): Promise<{ siblings: SiblingSlot[]; own?: CoreBranch }> {
  const branches = await mapLimit(
    parent.childBranchIds,
    concurrency,
    (id) => core.getBranch(id).catch(nullOn404),
  );
  const present = branches.filter((b): b is CoreBranch => b !== null)
    .sort((a, b) => a.notePosition - b.notePosition);
  return {
    siblings: present.filter((b) => b.noteId !== noteId),
    own: present.find((b) => b.noteId === noteId),
  };
}

interface Placement {
  noteId: string;
  newParentId: string;
  plan: PositionPlan;
  /** The note's existing branch under the new parent (reorder, or a pre-existing clone). */
  own?: CoreBranch;
  /** The branch to remove, last. */
  oldBranch?: CoreBranch;
}

/**
 * The writes, in an order that never leaves the note without a parent: open a gap among the
 * siblings, place the note under the new parent (reposition its existing branch, or create one
 * with the old branch's prefix), and only then remove the old branch.
 */
async function placeNote(core: CoreClient, concurrency: number, p: Placement): Promise<CoreBranch> {
  const w = writeSteps();
  if (p.plan.renumber.length) {
    await w.step(
      "renumber the siblings under the new parent",
      () => applyPositions(core, p.plan.renumber, concurrency),
      (applied) => applyPositions(core, applied.map(reversed), concurrency),
    );
  }
  let branch: CoreBranch;
  const own = p.own;
  if (own) {
    branch = own.notePosition === p.plan.notePosition ? own : await w.step(
      "reposition the note under the new parent",
      () => core.patchBranch(own.branchId, { notePosition: p.plan.notePosition }),
      () => core.patchBranch(own.branchId, { notePosition: own.notePosition }),
    );
  } else {
    branch = await w.step(
      "create the branch under the new parent",
      () =>
        core.createBranch({
          noteId: p.noteId,
          parentNoteId: p.newParentId,
          notePosition: p.plan.notePosition,
          prefix: p.oldBranch?.prefix ?? null,
        }),
      (created) => core.deleteBranch(created.branchId),
    );
  }
  const old = p.oldBranch;
  if (old) {
    await w.step(
      "remove the branch under the old parent",
      () => core.deleteBranch(old.branchId),
      "irreversible",
    );
  }
  return branch;
}

/**
 * PATCHes positions in parallel. A partial failure is reverted here (the step never completed,
 * so writeSteps cannot undo it) before the error is passed on.
 */
async function applyPositions(
  core: CoreClient,
  changes: readonly PositionChange[],
  concurrency: number,
): Promise<PositionChange[]> {
  const outcomes = await mapLimit(
    changes,
    concurrency,
    (c) => core.patchBranch(c.branchId, { notePosition: c.to }).then(() => null, (e) => ({ e })),
  );
  const failure = outcomes.find((o) => o !== null);
  if (!failure) return [...changes];
  const applied = changes.filter((_, i) => outcomes[i] === null);
  try {
    await mapLimit(
      applied,
      concurrency,
      (c) => core.patchBranch(c.branchId, { notePosition: c.from }),
    );
  } catch {
    throw new ApiError(
      502,
      "PARTIAL_FAILURE",
      "Renumbering the siblings failed and could not be fully reverted",
      { failedStep: "renumber the siblings under the new parent", leftBehind: applied },
    );
  }
  throw failure.e;
}

function reversed(c: PositionChange): PositionChange {
  return { branchId: c.branchId, from: c.to, to: c.from };
}

function notFoundAs(message: string, field: string) {
  return (e: unknown): never => {
    if (e instanceof ApiError && e.status === 404) {
      throw new ApiError(404, "NOT_FOUND", message, { field: `body.${field}` });
    }
    throw e;
  };
}
