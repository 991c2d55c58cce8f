/**
 * The note tree: moving a note (never leaving it without a parent), the notes that link to a
 * note, and the ancestor path shown as breadcrumbs.
 *
 * @module
 */
import { compareByTitle } from "../lore/order.ts";
import { z } from "zod";
import { ApiError, invalidRequest, nullOn404 } from "../http/errors.ts";
import { json } from "../http/response.ts";
import { AUTOMATIC_RELATIONS, labelValue, ownAttributes } from "../lore/note_view.ts";
import {
  planPosition,
  type PositionChange,
  type PositionPlan,
  type SiblingSlot,
} from "../lore/sibling_position.ts";
import { isSystemNote, refuseSystemNote } from "../lore/system_notes.ts";
import { writeSteps } from "../lore/write_steps.ts";
import { defineRoute, type Route } from "../router.ts";
import type { CoreBranch, CoreClient, CoreNote } from "../upstream/core.ts";
import { mapLimit } from "../util/concurrency.ts";
import { idParams, idSchema } from "./schemas.ts";

const moveBody = z.strictObject({
  noteId: idSchema,
  newParentId: idSchema,
  index: z.int().min(0),
  oldParentId: idSchema.optional(),
});

/** Breadcrumbs stop after this many ancestors (Core has no cycle check on clones). */
export const MAX_BREADCRUMB_DEPTH = 64;

/** Every note of a subtree, the subtree's root included (verified on a real Core). */
const SUBTREE_QUERY = "note.noteId != ''";

/** `POST /api/lore/move` — reorder under the same parent, or move to another one. */
export const moveNote = defineRoute({
  method: "POST",
  path: "/api/lore/move",
  summary: "Move a note to another parent at an index, or reorder it under its parent",
  backend: "Core",
  access: "private",
  tag: "tree",
  body: { kind: "json", schema: moveBody },
  responses: {
    200: "`{ noteId, parentNoteId, branchId, notePosition, index, removedBranchId | null }`",
    400: "Invalid body, a system note, a move into the note's own subtree, or an oldParentId " +
      "that is not a parent",
    404: "No such note or new parent",
    502: "PARTIAL_FAILURE: a step failed and could not be undone (the note keeps a parent)",
  },
  handler: async (ctx) => {
    const { noteId, newParentId, index, oldParentId } = ctx.body;
    refuseSystemNote(noteId, "moved");
    refuseSystemParent(newParentId, "newParentId");
    if (oldParentId) refuseSystemParent(oldParentId, "oldParentId");
    if (newParentId === noteId) throw cycleError();
    const core = await ctx.core({ detached: true });
    const [note, parent] = await inOrder(
      core.getNote(noteId),
      core.getNote(newParentId).catch(notFoundAs("New parent note not found", "newParentId")),
    );
    const oldParent = oldParentFor(note, newParentId, oldParentId);
    const hasClone = note.parentNoteIds.includes(newParentId);
    const [, children, oldBranch] = await Promise.all([
      hasClone ? undefined : refuseCycle(core, noteId, newParentId),
      childSlots(core, parent, noteId, ctx.concurrency),
      oldParent && oldParent !== newParentId
        ? core.getBranch(branchIdOf(oldParent, noteId))
        : undefined,
    ]);
    const plan = planPosition(children.siblings, index, children.own?.notePosition);
    const branch = await placeNote(core, ctx.concurrency, {
      noteId,
      newParentId,
      plan,
      own: children.own,
      oldBranch,
    });
    return json({
      noteId,
      parentNoteId: newParentId,
      branchId: branch.branchId,
      notePosition: plan.notePosition,
      index: plan.index,
      removedBranchId: oldBranch?.branchId ?? null,
    });
  },
});

/** `GET /api/lore/:id/backlinks` — notes with a relation (or content link) to this note. */
export const getBacklinks = defineRoute({
  method: "GET",
  path: "/api/lore/:id/backlinks",
  summary: "Notes linking to this note through relations or content links (complete, by title)",
  backend: "Core",
  access: "private",
  tag: "tree",
  params: idParams,
  responses: {
    200: "`{ backlinks: [{ noteId, title, loreType, relations: string[], viaContentLink }] }`",
    404: "No such note",
  },
  handler: async (ctx) => {
    const noteId = ctx.params.id;
    const core = await ctx.core();
    const [, results] = await inOrder(
      core.getNote(noteId),
      core.search(backlinkSearchQuery(noteId), { fastSearch: true, includeArchivedNotes: true }),
    );
    return json({ backlinks: backlinksFrom(results, noteId) });
  },
});

/** `GET /api/lore/:id/breadcrumbs` — the path from `root` to the note. */
export const getBreadcrumbs = defineRoute({
  method: "GET",
  path: "/api/lore/:id/breadcrumbs",
  summary: "Ancestor path from root to the note (first visible parent at each step)",
  backend: "Core",
  access: "private",
  tag: "tree",
  params: idParams,
  responses: { 200: "`{ breadcrumbs: [{ noteId, title }] }`, root first", 404: "No such note" },
  handler: async (ctx) => {
    const path = await ancestorPath(await ctx.core(), ctx.params.id);
    return json({ breadcrumbs: path.map((n) => ({ noteId: n.noteId, title: n.title })) });
  },
});

/** One entry of the backlinks answer. */
export interface Backlink {
  noteId: string;
  title: string;
  loreType: string | null;
  /** Names of the user relations pointing here (Core's automatic link relations left out). */
  relations: string[];
  /** Whether the note's content links here (`internalLink`, `imageLink`, `includeNoteLink`…). */
  viaContentLink: boolean;
}

/**
 * The search that finds backlink candidates: the bare note id as a full-text term, which matches
 * every note whose flat text holds a relation `~name=<id>` (verified on a real Core). Only a
 * plain id may be used: anything else could add search syntax.
 *
 * @example
 * ```ts
 * core.search(backlinkSearchQuery("abc123"), { fastSearch: true });
 * ```
 */
export function backlinkSearchQuery(noteId: string): string {
  if (!/^[A-Za-z0-9_]{1,128}$/.test(noteId)) throw new TypeError("invalid note id");
  return noteId;
}

/**
 * Keeps the search results that own a relation to `noteId` (inherited relations belong to
 * their owner, which is listed on its own), sorted by title.
 *
 * @example
 * ```ts
 * backlinksFrom(await core.search(backlinkSearchQuery(id), { fastSearch: true }), id);
 * ```
 */
export function backlinksFrom(results: readonly CoreNote[], noteId: string): Backlink[] {
  // sorted as notes, so protected ones (their title a placeholder) go last
  return [...results].sort(compareByTitle).flatMap((n): Backlink[] => {
    if (n.noteId === noteId) return [];
    const links = ownAttributes(n).filter((a) => a.type === "relation" && a.value === noteId);
    if (!links.length) return [];
    const names = links.map((a) => a.name).filter((name) => !AUTOMATIC_RELATIONS.has(name));
    return [{
      noteId: n.noteId,
      title: n.title,
      loreType: labelValue(n, "loreType") ?? null,
      relations: [...new Set(names)].sort(),
      viaContentLink: links.some((a) => AUTOMATIC_RELATIONS.has(a.name)),
    }];
  });
}

/**
 * The note and its ancestors, root first, following at each step the first parent that is not
 * a hidden system note (`_share`, `_hidden`… come last in `parentNoteIds`). The walk is
 * inherently sequential: each parent is only known once its child has been read.
 *
 * @example
 * ```ts
 * (await ancestorPath(core, "abc123")).map((n) => n.title); // ["root", "Lore", "Ashford"]
 * ```
 */
export async function ancestorPath(core: CoreClient, noteId: string): Promise<CoreNote[]> {
  const path = [await core.getNote(noteId)];
  const seen = new Set([noteId]);
  for (let depth = 0; depth < MAX_BREADCRUMB_DEPTH; depth++) {
    const parentId = visibleParent(path[0]);
    if (!parentId || seen.has(parentId)) break;
    seen.add(parentId);
    // an ancestor deleted meanwhile ends the path where it is
    const parent = await core.getNote(parentId).catch(nullOn404);
    if (!parent) break;
    path.unshift(parent);
  }
  return path;
}

function visibleParent(note: CoreNote): string | undefined {
  if (note.noteId === "root") return undefined;
  return note.parentNoteIds.find((p) => !p.startsWith("_")) ?? note.parentNoteIds[0];
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

/** Awaits two calls started together; with two failures, the first one's error wins. */
async function inOrder<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [ra, rb] = await Promise.allSettled([a, b]);
  if (ra.status === "rejected") throw ra.reason;
  if (rb.status === "rejected") throw rb.reason;
  return [ra.value, rb.value];
}

function notFoundAs(message: string, field: string) {
  return (e: unknown): never => {
    if (e instanceof ApiError && e.status === 404) {
      throw new ApiError(404, "NOT_FOUND", message, { field: `body.${field}` });
    }
    throw e;
  };
}

/** The tree routes. */
export const treeRoutes: Route[] = [moveNote, getBacklinks, getBreadcrumbs];
