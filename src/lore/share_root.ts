/**
 * The share root as Core marks it, and changing it. Core serves what lies under its fixed
 * `_share` note; the service's convention is one note there owning `#shareRoot`. Making a note
 * the share root places it under `_share` and labels it; every other owner of the label loses it
 * and leaves `_share`, all as steps of one {@linkcode writeSteps}, so a failure is undone or
 * reported exactly.
 *
 * @module
 */
import { z } from "zod";
import type { CoreAttribute, CoreClient, CoreNote } from "../upstream/core.ts";
import { ownAttributes } from "./note_view.ts";
import { type WriteSteps, writeSteps } from "./write_steps.ts";

/**
 * Core's fixed share note: only what lies under it is served.
 */
export const SHARE_NOTE_ID = "_share";

/**
 * The label that marks the share root.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(`#${SHARE_ROOT_LABEL}`, "#shareRoot"); // the Core search for its owners
 * ```
 */
export const SHARE_ROOT_LABEL = "shareRoot";

// Clones under these do not keep a note alive: losing its last other branch deletes it.
const WEAK_PARENTS: ReadonlySet<string> = new Set([SHARE_NOTE_ID, "_lbBookmarks"]);

/**
 * The `#shareRoot` labels a note owns (inherited ones belong to another note).
 */
export function ownShareRootLabels(
  note: Pick<CoreNote, "noteId" | "attributes">,
): CoreAttribute[] {
  return ownAttributes(note).filter((a) => a.type === "label" && a.name === SHARE_ROOT_LABEL);
}

/**
 * What changing the share root did besides placing the new one.
 */
export const shareRootChangeSchema = z.object({
  unsharedNoteIds: z.array(z.string()).describe("Former owners of `#shareRoot` that lost it"),
  keptBranches: z.array(z.string()).describe(
    "`_share` branches left in place: removing them would have deleted their note, which has " +
      "no other strong parent",
  ),
});
/** What changing the share root did besides placing the new one. */
export type ShareRootChange = z.output<typeof shareRootChangeSchema>;

/**
 * Makes `note` the one share root, or with `null` unshares: `owners` are the notes that own
 * `#shareRoot` now; each one but `note` loses the label and leaves `_share` (unless that would
 * delete it: then the branch is kept and reported).
 */
export async function setShareRoot(
  core: CoreClient,
  note: CoreNote | null,
  owners: readonly CoreNote[],
): Promise<ShareRootChange> {
  const w = writeSteps();
  if (note) await makeShareRoot(core, w, note);
  return await retireOtherRoots(core, w, owners, note?.noteId ?? null);
}

/** Places the note under `_share` (unless it is already there) and gives it its own label. */
async function makeShareRoot(core: CoreClient, w: WriteSteps, note: CoreNote): Promise<void> {
  const noteId = note.noteId;
  // POST /etapi/branches on an existing branch overwrites its position and prefix: only create.
  if (!note.parentNoteIds.includes(SHARE_NOTE_ID)) {
    await w.step(
      `place ${noteId} under ${SHARE_NOTE_ID}`,
      () => core.createBranch({ noteId, parentNoteId: SHARE_NOTE_ID }),
      (branch) => core.deleteBranch(branch.branchId),
    );
  }
  if (ownShareRootLabels(note).length === 0) {
    await w.step(
      `label ${noteId} #${SHARE_ROOT_LABEL}`,
      () => core.createAttribute({ noteId, type: "label", name: SHARE_ROOT_LABEL, value: "" }),
      (attr) => core.deleteAttribute(attr.attributeId),
    );
  }
}

/**
 * Removes `#shareRoot` from every owner but `keepId` (which also resolves a conflict), and takes
 * each out of `_share` — unless it has no strong parent besides: deleting a note's last strong
 * branch deletes the note, so such a branch is kept and reported instead.
 */
async function retireOtherRoots(
  core: CoreClient,
  w: WriteSteps,
  owners: readonly CoreNote[],
  keepId: string | null,
): Promise<ShareRootChange> {
  const unsharedNoteIds: string[] = [];
  const keptBranches: string[] = [];
  for (const old of owners.filter((n) => n.noteId !== keepId)) {
    for (const label of ownShareRootLabels(old)) {
      await w.step(
        `remove #${SHARE_ROOT_LABEL} from ${old.noteId}`,
        () => core.deleteAttribute(label.attributeId),
        () =>
          core.createAttribute({
            noteId: old.noteId,
            type: "label",
            name: label.name,
            value: label.value,
            isInheritable: label.isInheritable,
            position: label.position,
          }),
      );
    }
    unsharedNoteIds.push(old.noteId);
    if (!old.parentNoteIds.includes(SHARE_NOTE_ID)) continue;
    // Core's branch ids are `<parent>_<note>`.
    const branchId = `${SHARE_NOTE_ID}_${old.noteId}`;
    if (!old.parentNoteIds.some((p) => !WEAK_PARENTS.has(p))) {
      keptBranches.push(branchId);
      continue;
    }
    await w.step(
      `take ${old.noteId} out of ${SHARE_NOTE_ID}`,
      async () => {
        // Read first so an undo can put the branch back where it was.
        const branch = await core.getBranch(branchId);
        await core.deleteBranch(branchId);
        return branch;
      },
      (branch) =>
        core.createBranch({
          noteId: old.noteId,
          parentNoteId: SHARE_NOTE_ID,
          notePosition: branch.notePosition,
          prefix: branch.prefix ?? null,
        }),
    );
  }
  return { unsharedNoteIds, keptBranches };
}
