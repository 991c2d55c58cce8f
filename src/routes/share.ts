/**
 * Share settings: which note is the public share root, moving or removing it, and every lore
 * note with the flags that decide whether the public sees it.
 *
 * @module
 */
import { z } from "zod";
import { json } from "../http/response.ts";
import { idSchema } from "../lore/ids.ts";
import { hasLabel } from "../lore/note_view.ts";
import { compareByTitle } from "../lore/order.ts";
import { setShareRoot } from "../lore/share_root.ts";
import { refuseSystemNote } from "../lore/system_notes.ts";
import { defineRoute, type Route } from "../router.ts";
import { findShareRoots, loadShareSnapshot, type ShareRoots } from "../share/snapshot.ts";
import { ownShareAlias } from "../share/tree_filter.ts";
import type { CoreNote } from "../upstream/core.ts";

/** The share root as the settings page shows it. */
export interface ShareRootInfo {
  noteId: string;
  title: string;
  shareAlias: string | null;
  /** Core serves it: the note lies in the `_share` tree. */
  isPublished: boolean;
}

/** One row of `GET /api/share/tree`. */
export interface ShareTreeEntry {
  noteId: string;
  title: string;
  isDraft: boolean;
  isGmOnly: boolean;
  shareAlias: string | null;
  isProtected: boolean;
  isShared: boolean;
}

function rootInfo(note: CoreNote, isPublished: boolean): ShareRootInfo {
  return { noteId: note.noteId, title: note.title, shareAlias: ownShareAlias(note), isPublished };
}

/** Every owner of `#shareRoot` when there are several (then nothing is public), else empty. */
function conflictOf({ owners, publishedIds }: ShareRoots): ShareRootInfo[] {
  return owners.length > 1 ? owners.map((n) => rootInfo(n, publishedIds.has(n.noteId))) : [];
}

/** `GET /api/share` — the share root, or every note claiming to be one when they conflict. */
export const getShare = defineRoute({
  method: "GET",
  path: "/api/share",
  summary: "Current share root: the note owning #shareRoot and whether Core serves it",
  backend: "Core",
  access: "private",
  tag: "share",
  responses: {
    200: "`{ shareRoot: { noteId, title, shareAlias, isPublished } | null, otherRoots: string[], " +
      "conflict: ShareRootInfo[] }`; several owners → `shareRoot` null, all of them in `conflict`",
  },
  handler: async (ctx) => {
    const roots = await findShareRoots(await ctx.core());
    const { root, owners, publishedIds } = roots;
    return json({
      shareRoot: root ? rootInfo(root, publishedIds.has(root.noteId)) : null,
      otherRoots: owners.filter((n) => n !== root).map((n) => n.noteId),
      conflict: conflictOf(roots),
    });
  },
});

const putBody = z.strictObject({ noteId: idSchema.nullable() });

/** `PUT /api/share` — make one note the only share root (or, with `null`, unshare). */
export const putShare = defineRoute({
  method: "PUT",
  path: "/api/share",
  summary:
    "Make a note the one share root (placed under _share, labelled #shareRoot) or unshare with null",
  backend: "Core",
  access: "private",
  tag: "share",
  body: { kind: "json", schema: putBody },
  responses: {
    200: "`{ shareRoot: ShareRootInfo | null, unsharedNoteIds: string[], keptBranches: string[] }`",
    400: "Invalid body, or a Core system note",
    404: "No such note (nothing changed)",
    502: "PARTIAL_FAILURE: a step failed and could not be fully undone (details list each step)",
  },
  handler: async (ctx) => {
    const { noteId } = ctx.body;
    if (noteId !== null) refuseSystemNote(noteId, "made the share root");
    const core = await ctx.core({ detached: true });
    const [note, roots] = await Promise.all([
      noteId === null ? null : core.getNote(noteId),
      findShareRoots(core),
    ]);
    const change = await setShareRoot(core, note, roots.owners);
    return json({ shareRoot: note ? rootInfo(note, true) : null, ...change });
  },
});

/** `GET /api/share/tree` — every lore note and every note of the share subtree, with flags. */
export const getShareTree = defineRoute({
  method: "GET",
  path: "/api/share/tree",
  summary:
    "All lore notes plus the share root's subtree, with share flags (draft, GM-only, alias, protected, public)",
  backend: "Core",
  access: "private",
  tag: "share",
  responses: {
    200: "`{ shareRootId: string | null, conflict: ShareRootInfo[], notes: ShareTreeEntry[], " +
      "count }`, notes by title; a conflict shares nothing",
  },
  handler: async (ctx) => {
    const core = await ctx.core();
    const roots = await findShareRoots(core);
    const [lore, snapshot] = await Promise.all([
      core.search("#lore"),
      loadShareSnapshot(core, roots),
    ]);
    // Every note of the share subtree is listed too, lore or not: it is what visitors can reach,
    // and Core's plain search skips notes that live only under `_share`.
    const byId = new Map(lore.map((n) => [n.noteId, n]));
    for (const n of snapshot?.notes ?? []) if (!byId.has(n.noteId)) byId.set(n.noteId, n);
    const notes = [...byId.values()].sort(compareByTitle).map((n): ShareTreeEntry => ({
      noteId: n.noteId,
      title: n.title,
      // Any value, own or inherited, counts: that is how Core's share renderer reads them.
      isDraft: hasLabel(n, "draft"),
      isGmOnly: hasLabel(n, "gmOnly"),
      shareAlias: ownShareAlias(n),
      isProtected: n.isProtected,
      // Notes behind #shareCredentials stay true: they are public, behind HTTP Basic.
      isShared: snapshot !== null && snapshot.published && snapshot.view.isPublic(n.noteId),
    }));
    return json({
      shareRootId: roots.root?.noteId ?? null,
      conflict: conflictOf(roots),
      notes,
      count: notes.length,
    });
  },
});

/** The share settings routes. */
export const shareRoutes: Route[] = [getShare, putShare, getShareTree];
