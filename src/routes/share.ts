/**
 * Share settings: which note is the public share root, moving or removing it, and every lore
 * note with the flags that decide whether the public sees it.
 *
 * @module
 */
import { z } from "zod";
import { json } from "../http/response.ts";
import { idSchema } from "../lore/ids.ts";
import { coreUtcToIso, hasLabel, labelValue } from "../lore/note_view.ts";
import { compareByTitle } from "../lore/order.ts";
import { setShareRoot, shareRootChangeSchema } from "../lore/share_root.ts";
import { refuseSystemNote } from "../lore/system_notes.ts";
import { defineRoute, type Route } from "../api/router.ts";
import { findShareRoots, loadShareSnapshot, type ShareRoots } from "../share/snapshot.ts";
import { loreHref } from "../site/format.ts";
import { ownShareAlias } from "../share/tree_filter.ts";
import type { CoreNote } from "../upstream/core.ts";
import { siteOrigin } from "./site.ts";

/**
 * The share root as the settings page shows it.
 */
export const shareRootInfoSchema = z.object({
  noteId: z.string(),
  title: z.string(),
  shareAlias: z.string().nullable().describe("The note's own `#shareAlias`"),
  isPublished: z.boolean().describe("Core serves it: the note lies in the `_share` tree"),
});
/** The share root as the settings page shows it. */
export type ShareRootInfo = z.output<typeof shareRootInfoSchema>;

/** The label that puts a note (and what lies below it) behind a share password. */
const CREDENTIALS = "shareCredentials";

/**
 * One row of `GET /api/share/tree`.
 */
export const shareTreeEntrySchema = z.object({
  noteId: z.string(),
  title: z.string(),
  loreType: z.string().nullable().describe("`#loreType`, own or inherited"),
  isDraft: z.boolean().describe("`#draft`, own or inherited, any value"),
  isGmOnly: z.boolean().describe("`#gmOnly`, own or inherited, any value"),
  shareAlias: z.string().nullable().describe("The note's own `#shareAlias`"),
  isProtected: z.boolean().describe(
    "Not open to every visitor: protected (encrypted) in Core, or behind a share password " +
      "(`#shareCredentials` on it or on a path to it from the root)",
  ),
  isShared: z.boolean().describe(
    "Visitors can reach it (behind HTTP Basic for notes under `#shareCredentials`)",
  ),
  dateModified: z.string().nullable().describe("ISO 8601, null when Core sent none"),
});
/** One row of `GET /api/share/tree`. */
export type ShareTreeEntry = z.output<typeof shareTreeEntrySchema>;

const conflictField = z.array(shareRootInfoSchema).describe(
  "Every note owning `#shareRoot` when several do (then nothing is shared), by title; else empty",
);

function rootInfo(note: CoreNote, isPublished: boolean): ShareRootInfo {
  return { noteId: note.noteId, title: note.title, shareAlias: ownShareAlias(note), isPublished };
}

/** Every owner of `#shareRoot` when there are several (then nothing is public), else empty. */
function conflictOf({ owners, publishedIds }: ShareRoots): ShareRootInfo[] {
  return owners.length > 1 ? owners.map((n) => rootInfo(n, publishedIds.has(n.noteId))) : [];
}

/**
 * The share root as `GET /api/share` answers it, in the front end's words.
 */
export const shareConfigSchema = z.object({
  configured: z.boolean().describe("Exactly one note owns `#shareRoot`"),
  noteId: z.string().nullable(),
  title: z.string().nullable(),
  alias: z.string().nullable().describe("The root's own `#shareAlias`"),
  url: z.string().nullable().describe(
    "The root's page on this service's public site (`PUBLIC_ORIGIN`, else the origin the " +
      "request used), while Core serves it; never a backend's URL",
  ),
  isPublished: z.boolean().describe("Core serves it: the root lies in the `_share` tree"),
  conflict: conflictField,
});

/** `GET /api/share` — the share root, or every note claiming to be one when they conflict. */
export const getShare = defineRoute({
  method: "GET",
  path: "/api/share",
  summary:
    "Current share root: the note owning #shareRoot, its public page and whether Core serves it",
  backend: "Core",
  access: "private",
  tag: "share",
  description: "Only notes that own `#shareRoot` count; `isPublished` says the root lies inside " +
    "Core's `_share` tree (Core serves nothing else), and only then is `url` its page on the " +
    "public site, `/public/lore/<alias|id>` on this service's public origin. Several owners are " +
    "a conflict (Core itself would serve whichever label it loaded last): no root is picked and " +
    "nothing is public until `PUT /api/share` names one; `configured` is then false, the root's " +
    "fields null, and every owner is in `conflict` (empty otherwise).",
  responses: {
    200: {
      description: "`{ configured, noteId, title, alias, url, isPublished, conflict: " +
        "ShareRootInfo[] }` (all null and false without one root)",
      schema: shareConfigSchema,
    },
  },
  handler: async (ctx) => {
    const roots = await findShareRoots(await ctx.core());
    const { root, publishedIds } = roots;
    // without exactly one root every field is empty; the conflict (if any) says why
    const alias = root ? ownShareAlias(root) : null;
    const isPublished = !!root && publishedIds.has(root.noteId);
    return json({
      configured: !!root,
      noteId: root?.noteId ?? null,
      title: root?.title ?? null,
      alias,
      url: root && isPublished ? siteOrigin(ctx) + loreHref(alias ?? root.noteId) : null,
      isPublished,
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
  description: "One share root at a time: the note gets a branch under `_share` (unless it has " +
    "one) and `#shareRoot`; every other owner (every note of a conflict too) loses its label and " +
    "its `_share` branch, except where `_share` is that note's only parent: removing it would " +
    "delete the note, so it is kept and reported in `keptBranches`. `null` removes every owner. " +
    "All or nothing, like note creation.",
  responses: {
    200: {
      description: "`{ shareRoot: ShareRootInfo | null, unsharedNoteIds: string[], " +
        "keptBranches: string[] }`",
      schema: shareRootChangeSchema.extend({ shareRoot: shareRootInfoSchema.nullable() }),
    },
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
  description: "A bare array: every lore note and every note inside the share root's subtree " +
    "(what visitors can reach, lore or not), by title. `isShared` follows the public-share " +
    "rule: inside the published root's subtree with no `#draft`, `#gmOnly` or protected note " +
    "on any path to it; during a conflict of share roots nothing is shared. Which note is the " +
    "root, and the notes of a conflict, are `GET /api/share`'s answer.",
  responses: {
    200: {
      description: "`ShareTreeEntry[]`, by title",
      schema: z.array(shareTreeEntrySchema),
    },
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
    const shared = (id: string) =>
      snapshot !== null && snapshot.published && snapshot.view.isPublic(id);
    return json(
      [...byId.values()].sort(compareByTitle).map((n): ShareTreeEntry => {
        // Notes behind #shareCredentials stay shared: they are public, behind HTTP Basic.
        const isShared = shared(n.noteId);
        return {
          noteId: n.noteId,
          title: n.title,
          loreType: labelValue(n, "loreType") ?? null,
          // Any value, own or inherited, counts: that is how Core's share renderer reads them.
          isDraft: hasLabel(n, "draft"),
          isGmOnly: hasLabel(n, "gmOnly"),
          shareAlias: ownShareAlias(n),
          isProtected: n.isProtected || hasLabel(n, CREDENTIALS) ||
            (isShared && snapshot!.view.credentialGroups(n.noteId).length > 0),
          isShared,
          dateModified: coreUtcToIso(n.utcDateModified),
        };
      }),
    );
  },
});

/** The share settings routes. */
export const shareRoutes: Route[] = [getShare, putShare, getShareTree];
