/**
 * Core's ETAPI, called directly by the conformance suite for what must not depend on the service
 * under test: creating and removing the scratch note, one revision snapshot (the service has no
 * route that makes one), a label set behind the service's back (as a GM editing in Core would),
 * and recording and restoring the share configuration (`--share`), down to the attribute ids, so
 * a run leaves Core as it found it even when the service misbehaves.
 *
 * @module
 */
import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import { short } from "./kit.ts";

/** Core's ETAPI at one base URL with one token. */
export interface DirectCore {
  /** Parsed JSON of a 2xx answer (undefined for 204); throws naming the status and code. */
  json<S extends z.ZodType>(
    method: string,
    path: string,
    schema: S,
    body?: unknown,
  ): Promise<z.output<S>>;
  /** A call whose answer does not matter beyond success (204s). */
  send(method: string, path: string, body?: unknown): Promise<void>;
}

/** Per call: a stalled Core fails the call, never the clean-up after it. */
const CORE_TIMEOUT_MS = 30_000;

/**
 * A direct ETAPI client.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * // Declared, not run here: it calls a live Core.
 * async function coreVersion(token: string): Promise<string> {
 *   const core = directCore("http://core:8080", token);
 *   const info = await core.json("GET", "/etapi/app-info", z.object({ appVersion: z.string() }));
 *   return info.appVersion;
 * }
 * ```
 */
export function directCore(baseUrl: string, token: string): DirectCore {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(baseUrl + path, {
      method,
      headers: {
        authorization: token,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(CORE_TIMEOUT_MS),
    });
    const text = await res.text();
    if (!res.ok) {
      throw new Error(`Core ${method} ${path.split("?")[0]}: ${res.status} ${short(text, 120)}`);
    }
    return text;
  };
  return {
    async json(method, path, schema, body) {
      const text = await call(method, path, body);
      return schema.parse(text ? JSON.parse(text) : undefined);
    },
    async send(method, path, body) {
      await call(method, path, body);
    },
  };
}

const attributeSchema = z.looseObject({
  attributeId: z.string(),
  noteId: z.string(),
  type: z.enum(["label", "relation"]),
  name: z.string(),
  value: z.string(),
  position: z.number(),
  isInheritable: z.boolean(),
});

const noteSchema = z.looseObject({
  noteId: z.string(),
  title: z.string(),
  parentNoteIds: z.array(z.string()),
  attributes: z.array(attributeSchema),
});

const branchSchema = z.looseObject({
  branchId: z.string(),
  notePosition: z.number(),
  prefix: z.string().nullable(),
  isExpanded: z.boolean(),
});

const searchSchema = z.object({ results: z.array(noteSchema) });

/** A search URL; ETAPI reads its options from the query string. */
function searchPath(search: string, opts: Record<string, string> = {}): string {
  return `/etapi/notes?${new URLSearchParams({ search, ...opts })}`;
}

/**
 * Creates the scratch note under `root`: `conformance-<tag>`, an empty text note.
 */
export async function createScratch(
  core: DirectCore,
  tag: string,
): Promise<{ noteId: string; title: string }> {
  const { note } = await core.json(
    "POST",
    "/etapi/create-note",
    z.object({ note: noteSchema }),
    { parentNoteId: "root", title: `conformance-${tag}`, type: "text", content: "" },
  );
  return { noteId: note.noteId, title: note.title };
}

/**
 * Deletes the scratch note (Core deletes its subtree with it, `_share` clones included), then
 * looks for any note whose title carries `tag` — in the normal tree and inside `_share` — and
 * deletes those too. Throws naming what was left behind; returns a sentence otherwise.
 */
export async function removeScratch(
  core: DirectCore,
  scratchId: string,
  tag: string,
): Promise<string> {
  const inside = await ourNotes(core, tag, { ancestorNoteId: scratchId });
  await core.send("DELETE", `/etapi/notes/${scratchId}`);
  const left = [
    ...await ourNotes(core, tag, {}),
    ...await ourNotes(core, tag, { ancestorNoteId: "_share" }),
  ];
  const ids = [...new Set(left.map((n) => n.noteId))];
  for (const id of ids) await core.send("DELETE", `/etapi/notes/${id}`);
  if (ids.length) {
    throw new Error(`${ids.length} note(s) outside the scratch note were left and removed: ${ids}`);
  }
  return `scratch note and the ${inside.length - 1} notes in it removed; none left elsewhere`;
}

/** Notes whose title carries the run's tag (a random token: nobody else's notes have it). */
async function ourNotes(core: DirectCore, tag: string, opts: Record<string, string>) {
  const { results } = await core.json(
    "GET",
    searchPath(tag, { includeArchivedNotes: "true", ...opts }),
    searchSchema,
  );
  return results.filter((n) => n.title.includes(tag));
}

/**
 * Asks Core for a revision snapshot of the note's current content (`POST …/revision`).
 */
export async function snapshotRevision(core: DirectCore, noteId: string): Promise<void> {
  await core.send("POST", `/etapi/notes/${noteId}/revision`);
}

/**
 * Moves a note someone else created (the Parser writes brain-dumped lore under its own lore
 * root) into `parentId`: a branch there first, then every other branch removed, so the note
 * goes with the scratch note. Returns false when the note is gone.
 */
export async function adoptNote(
  core: DirectCore,
  noteId: string,
  parentId: string,
): Promise<boolean> {
  const notePath = `/etapi/notes/${encodeURIComponent(noteId)}`;
  const note = await core.json(
    "GET",
    notePath,
    z.looseObject({
      parentNoteIds: z.array(z.string()),
      parentBranchIds: z.array(z.string()),
    }),
  ).catch((e: Error) => {
    if (/: 404 /.test(e.message)) return null;
    throw e;
  });
  if (!note) return false;
  if (note.parentNoteIds.length === 1 && note.parentNoteIds[0] === parentId) return true;
  const kept = note.parentNoteIds.includes(parentId) ? null : await core.json(
    "POST",
    "/etapi/branches",
    z.looseObject({ branchId: z.string() }),
    { noteId, parentNoteId: parentId },
  );
  const own = await core.json(
    "GET",
    notePath,
    z.looseObject({ parentBranchIds: z.array(z.string()) }),
  );
  for (const branchId of own.parentBranchIds) {
    const branch = await core.json(
      "GET",
      `/etapi/branches/${branchId}`,
      z.looseObject({ parentNoteId: z.string() }),
    );
    if (branch.parentNoteId !== parentId && branchId !== kept?.branchId) {
      await core.send("DELETE", `/etapi/branches/${branchId}`);
    }
  }
  return true;
}

/**
 * Deletes a note if it still exists (a 404 is fine).
 */
export async function deleteIfPresent(core: DirectCore, noteId: string): Promise<boolean> {
  try {
    await core.json("GET", `/etapi/notes/${encodeURIComponent(noteId)}`, z.unknown());
  } catch (e) {
    if (/: 404 /.test(e instanceof Error ? e.message : "")) return false;
    throw e;
  }
  await core.send("DELETE", `/etapi/notes/${encodeURIComponent(noteId)}`);
  return true;
}

/**
 * Gives a note a label straight through ETAPI, the way a GM editing in Core's own UI would,
 * without the service knowing; returns the new attribute's id.
 */
export async function labelDirectly(
  core: DirectCore,
  noteId: string,
  name: string,
  value = "",
): Promise<string> {
  const label = await core.json("POST", "/etapi/attributes", attributeSchema, {
    noteId,
    type: "label",
    name,
    value,
  });
  return label.attributeId;
}

// ---------------------------------------------------------------------------------------------
// The share configuration (`--share`)
// ---------------------------------------------------------------------------------------------

type Attribute = z.output<typeof attributeSchema>;
type Branch = z.output<typeof branchSchema>;

/** What `PUT /api/share` may change on a note that owns `#shareRoot`. */
interface RootRecord {
  noteId: string;
  title: string;
  /** Its own `#shareRoot` labels, as Core holds them. */
  labels: Attribute[];
  /** Its branch under `_share`, or null. */
  shareBranch: Branch | null;
}

/** Every note owning `#shareRoot`, by id. */
export interface ShareState {
  roots: RootRecord[];
}

/**
 * Records every `#shareRoot` owner with its labels and `_share` branch. Two searches: Core's plain
 * search skips notes that live only under `_share`.
 */
export async function captureShareState(core: DirectCore): Promise<ShareState> {
  const found = new Map<string, z.output<typeof noteSchema>>();
  for (const opts of [{}, { ancestorNoteId: "_share" }] as Record<string, string>[]) {
    const { results } = await core.json(
      "GET",
      searchPath("#shareRoot", { includeArchivedNotes: "true", ...opts }),
      searchSchema,
    );
    for (const n of results) {
      if (shareLabels(n).length) found.set(n.noteId, n);
    }
  }
  const roots: RootRecord[] = [];
  for (const n of [...found.values()].sort((a, b) => a.noteId.localeCompare(b.noteId))) {
    roots.push({
      noteId: n.noteId,
      title: n.title,
      labels: shareLabels(n).map(comparable),
      shareBranch: n.parentNoteIds.includes("_share")
        ? comparable(await core.json("GET", `/etapi/branches/_share_${n.noteId}`, branchSchema))
        : null,
    });
  }
  return { roots };
}

function shareLabels(n: z.output<typeof noteSchema>): Attribute[] {
  return n.attributes.filter((a) =>
    a.noteId === n.noteId && a.type === "label" && a.name === "shareRoot"
  );
}

/** Only the fields a restore sets (timestamps change with any write). */
function comparable<T extends Record<string, unknown>>(entity: T): T {
  const { utcDateModified: _, ...rest } = entity;
  return rest as T;
}

/**
 * Puts every recorded root back as it was: missing `#shareRoot` labels recreated with their old
 * ids, values and positions, labels added since removed, the `_share` branch recreated (its id is
 * deterministic) or re-patched to its old position, prefix and expansion, and a `_share` branch
 * the note did not have removed. Roots the run added are not touched (they live in the scratch
 * note and go with it). Returns a sentence saying what was done.
 */
export async function restoreShareState(core: DirectCore, before: ShareState): Promise<string> {
  const fixed: string[] = [];
  for (const root of before.roots) {
    const note = await core.json("GET", `/etapi/notes/${root.noteId}`, noteSchema);
    const now = shareLabels(note);
    for (
      const extra of now.filter((a) => !root.labels.some((l) => l.attributeId === a.attributeId))
    ) {
      await core.send("DELETE", `/etapi/attributes/${extra.attributeId}`);
      fixed.push(`${root.noteId}: extra #shareRoot removed`);
    }
    for (
      const label of root.labels.filter((l) => !now.some((a) => a.attributeId === l.attributeId))
    ) {
      const { attributeId, noteId, type, name, value, position, isInheritable } = label;
      await core.send("POST", "/etapi/attributes", {
        attributeId,
        noteId,
        type,
        name,
        value,
        position,
        isInheritable,
      });
      fixed.push(`${root.noteId}: #shareRoot put back`);
    }
    const branchId = `_share_${root.noteId}`;
    const has = note.parentNoteIds.includes("_share");
    if (root.shareBranch) {
      const { notePosition, prefix, isExpanded } = root.shareBranch;
      const current = has
        ? await core.json("GET", `/etapi/branches/${branchId}`, branchSchema)
        : null;
      if (!current) {
        await core.send("POST", "/etapi/branches", {
          noteId: root.noteId,
          parentNoteId: "_share",
          notePosition,
          prefix,
          isExpanded,
        });
        fixed.push(`${root.noteId}: _share branch put back`);
      } else if (!isDeepStrictEqual(comparable(current), root.shareBranch)) {
        await core.send("PATCH", `/etapi/branches/${branchId}`, {
          notePosition,
          prefix,
          isExpanded,
        });
        fixed.push(`${root.noteId}: _share branch repositioned`);
      }
    } else if (has) {
      await core.send("DELETE", `/etapi/branches/${branchId}`);
      fixed.push(`${root.noteId}: added _share branch removed`);
    }
  }
  if (!before.roots.length) return "there was no share root before the run";
  return fixed.length ? fixed.join("; ") : "previous share root was untouched";
}

/**
 * What differs between two recorded share states, or null when they are the same.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(shareStateDiff({ roots: [] }, { roots: [] }), null);
 * const root = { noteId: "r1", title: "World", labels: [], shareBranch: null };
 * assert.equal(
 *   shareStateDiff({ roots: [] }, { roots: [root] }),
 *   'share roots before: none; after: r1 ([{"noteId":"r1","title":"World","labels":[],"shareBranch":null}])',
 * );
 * ```
 */
export function shareStateDiff(before: ShareState, after: ShareState): string | null {
  if (isDeepStrictEqual(before, after)) return null;
  const ids = (s: ShareState) => s.roots.map((r) => r.noteId).join(",") || "none";
  return `share roots before: ${ids(before)}; after: ${ids(after)} ` +
    `(${short(JSON.stringify(after.roots), 200)})`;
}
