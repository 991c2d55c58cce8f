/**
 * Applying an approved copilot proposal through Core. The Parser only proposes (it has no apply
 * route); this module re-checks the contract's scope rules against a
 * freshly loaded scope, refuses changes to the labels that decide what a note is and who sees it,
 * sanitizes every HTML body, and writes each target all or nothing: creates first (so relations
 * to new notes resolve), then updates, each in its own {@linkcode writeSteps} with rollback.
 *
 * @module
 */
import { z } from "zod";
import { ApiError } from "../http/errors.ts";
import { attributeNameSchema, LORE_TYPES } from "./vocabulary.ts";
import { sanitizeLoreHtml } from "../sanitize/html.ts";
import { loadHtmlEngine } from "../sanitize/html_engine.ts";
import type { CoreAttribute, CoreClient, CoreNote } from "../upstream/core.ts";
import { loadArticleScope, writableTargetIds } from "./copilot_context.ts";
import { createLoreNote } from "./new_lore_note.ts";
import { labelValue, ownAttributes } from "./note_view.ts";
import {
  relationName,
  relationNotePrefix,
  relationNoteValue,
  RELATIONSHIP_TYPES,
} from "./relationship_types.ts";
import { type WriteSteps, writeSteps } from "./write_steps.ts";

const text = (max: number) => z.string().max(max);

/** One target of a proposal (the contract's shape; sizes bounded). */
export const proposalTargetSchema = z.object({
  kind: z.enum(["update", "create"]),
  /** An existing note id (`update`), or the proposal's own name for a new note (`create`). */
  targetId: z.string().min(1).max(200),
  title: z.string().trim().min(1).max(500).optional(),
  loreType: z.enum(LORE_TYPES).optional(),
  contentHtml: text(5 * 1024 * 1024).optional(),
  labelUpserts: z.array(z.object({ name: z.string().min(1).max(100), value: text(10_000) }))
    .max(100).default([]),
  labelDeletes: z.array(z.string().min(1).max(100)).max(100).default([]),
  relationAdds: z.array(z.object({
    relationshipType: z.enum(RELATIONSHIP_TYPES),
    targetId: z.string().min(1).max(200),
    targetKind: z.enum(["existing", "new"]),
    description: text(2_000).optional(),
    bidirectional: z.boolean().optional(),
  })).max(100).default([]),
  relationDeletes: z.array(z.object({
    relationshipType: z.enum(RELATIONSHIP_TYPES),
    targetId: z.string().min(1).max(200),
  })).max(100).default([]),
  rationale: text(10_000).default(""),
});

/** A copilot proposal: what the Parser answers and what `apply` takes back. */
export const proposalSchema = z.object({ targets: z.array(proposalTargetSchema).max(50) });

/** A validated proposal. */
export type Proposal = z.output<typeof proposalSchema>;
/** A validated proposal target. */
export type ProposalTarget = Proposal["targets"][number];

/**
 * Whether a label decides what a note is or who may see it (`lore`, `loreType`, `template`,
 * `draft`, `gmOnly`, any `share*`), in any letter case: the copilot never sets or removes those.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(isImmutableLabel("gmOnly"), true);
 * assert.equal(isImmutableLabel("shareAlias"), true);
 * assert.equal(isImmutableLabel("questStatus"), false);
 * ```
 */
export function isImmutableLabel(name: string): boolean {
  const n = name.toLowerCase();
  return ["lore", "loretype", "template", "draft", "gmonly"].includes(n) || n.startsWith("share");
}

/** What happened to each target. */
export interface ApplyReport {
  /** Existing notes that were changed: update targets and notes given an inverse relation. */
  updatedNoteIds: string[];
  /** Notes created, in the order they were created. */
  createdNoteIds: string[];
  /** Each create target's own id and the note it became. */
  created: { targetId: string; noteId: string }[];
  /** Targets not attempted, with why (nothing of them was written). */
  skipped: { targetId: string; reason: string }[];
  /**
   * Targets that failed while being written: rolled back (`details.rolledBack`), or, with
   * `error: "PARTIAL_FAILURE"`, what could not be undone (`details.leftBehind`).
   */
  failed: { targetId: string; error: string; message: string; details?: unknown }[];
}

/** Inputs of {@linkcode applyProposal}. */
export interface ApplyInput {
  /** The note the copilot was opened on (the route's id). */
  noteId: string;
  proposal: Proposal;
  concurrency: number;
  /** Where new notes go. */
  loreRootId(): Promise<string>;
}

/**
 * Applies a proposal and reports per target. Throws only when the scope itself cannot be
 * loaded (the note is missing, Core fails): then nothing was written.
 */
export async function applyProposal(core: CoreClient, input: ApplyInput): Promise<ApplyReport> {
  const scope = await loadArticleScope(core, input.noteId, {
    concurrency: input.concurrency,
    linkedContent: false,
  });
  const notes = new Map<string, CoreNote>(
    [scope.current, ...scope.linked].map((l) => [l.note.noteId, l.note]),
  );
  const rules: Rules = {
    noteId: input.noteId,
    writable: new Set(writableTargetIds(scope)),
    notes,
    createIds: new Set(
      input.proposal.targets.filter((t) => t.kind === "create").map((t) => t.targetId),
    ),
  };
  const report: ApplyReport = {
    updatedNoteIds: [],
    createdNoteIds: [],
    created: [],
    skipped: [],
    failed: [],
  };
  const createdIds = new Map<string, string>();
  const unresolved = new Set<string>();
  const changed = new Set<string>();
  const skip = (t: ProposalTarget, reason: string) => {
    report.skipped.push({ targetId: t.targetId, reason });
    if (t.kind === "create") unresolved.add(t.targetId);
  };
  const fail = (t: ProposalTarget, e: unknown) => {
    const err = e instanceof ApiError
      ? e
      : new ApiError(500, "INTERNAL_ERROR", "The write failed inside the service");
    report.failed.push({
      targetId: t.targetId,
      error: err.code,
      message: err.message,
      ...(err.details === undefined ? {} : { details: err.details }),
    });
    if (t.kind === "create") unresolved.add(t.targetId);
  };
  const writer: Writer = {
    core,
    notes,
    resolve: (r) => r.targetKind === "new" ? createdIds.get(r.targetId)! : r.targetId,
    isNew: (id) => [...createdIds.values()].includes(id),
  };

  const accepted: ProposalTarget[] = [];
  for (const t of input.proposal.targets) {
    const reason = refusal(t, rules);
    if (reason) skip(t, reason);
    else accepted.push(t);
  }
  const missingDependency = (t: ProposalTarget) =>
    newTargets(t).find((id) => unresolved.has(id) && id !== t.targetId);

  let pending = accepted.filter((t) => t.kind === "create");
  const parentNoteId = pending.length ? await input.loreRootId() : "";
  while (pending.length) {
    const ready = pending.find((t) =>
      newTargets(t).every((id) => createdIds.has(id) || unresolved.has(id))
    );
    if (!ready) {
      for (const t of pending) skip(t, "depends on new notes that depend on it in turn");
      break;
    }
    pending = pending.filter((t) => t !== ready);
    const missing = missingDependency(ready);
    if (missing) {
      skip(ready, `depends on "${missing}", which was not created`);
      continue;
    }
    try {
      const touched = new Set<string>();
      const noteId = await writeCreate(writer, ready, parentNoteId, touched);
      createdIds.set(ready.targetId, noteId);
      report.createdNoteIds.push(noteId);
      report.created.push({ targetId: ready.targetId, noteId });
      for (const id of touched) changed.add(id);
    } catch (e) {
      fail(ready, e);
    }
  }

  for (const t of accepted.filter((t) => t.kind === "update")) {
    const missing = missingDependency(t);
    if (missing) {
      skip(t, `depends on "${missing}", which was not created`);
      continue;
    }
    try {
      const touched = new Set<string>([t.targetId]);
      await writeUpdate(writer, t, notes.get(t.targetId)!, touched);
      for (const id of touched) changed.add(id);
    } catch (e) {
      fail(t, e);
    }
  }
  report.updatedNoteIds = [...changed];
  return report;
}

interface Rules {
  noteId: string;
  writable: ReadonlySet<string>;
  notes: ReadonlyMap<string, CoreNote>;
  createIds: ReadonlySet<string>;
}

/** The contract's scope rules plus ours (immutable labels, valid names), first broken one. */
function refusal(t: ProposalTarget, rules: Rules): string | null {
  if (t.kind === "update") {
    if (!rules.writable.has(t.targetId)) {
      return "not writable from this note (only the note itself and the lore notes it links to)";
    }
    const note = rules.notes.get(t.targetId)!;
    if (t.loreType !== undefined && t.loreType !== labelValue(note, "loreType")) {
      return "the lore type cannot be changed";
    }
    if (t.contentHtml !== undefined && note.type !== "text" && note.type !== "book") {
      return `this ${note.type} note holds no HTML content`;
    }
  } else {
    if (!t.loreType || t.title === undefined || t.contentHtml === undefined) {
      return "a new note needs loreType, title and contentHtml";
    }
    const linksHere = t.relationAdds.some((r) =>
      r.targetKind === "existing" && r.targetId === rules.noteId
    );
    if (!linksHere) return "a new note must be related to this note";
  }
  for (const name of [...t.labelUpserts.map((l) => l.name), ...t.labelDeletes]) {
    if (isImmutableLabel(name)) return `#${name} cannot be changed by the copilot`;
    if (!attributeNameSchema.safeParse(name).success) return `#${name} is not a valid label name`;
  }
  for (const r of t.relationAdds) {
    if (r.targetKind === "existing" && !rules.writable.has(r.targetId)) {
      return `relation target "${r.targetId}" is not writable from this note`;
    }
    if (r.targetKind === "new" && !rules.createIds.has(r.targetId)) {
      return `relation target "${r.targetId}" is not a new note of this proposal`;
    }
    if (r.targetKind === "new" && r.targetId === t.targetId) {
      return "a note cannot be related to itself";
    }
  }
  return null;
}

/** The new notes a target's relations point at. */
function newTargets(t: ProposalTarget): string[] {
  return t.relationAdds.filter((r) => r.targetKind === "new").map((r) => r.targetId);
}

interface Writer {
  core: CoreClient;
  /** Notes of the scope, as loaded (their attributes tell what already exists). */
  notes: ReadonlyMap<string, CoreNote>;
  /** The Core id of a relation's target (new notes: the id they were created with). */
  resolve(r: ProposalTarget["relationAdds"][number]): string;
  isNew(noteId: string): boolean;
}

async function writeCreate(
  wr: Writer,
  t: ProposalTarget,
  parentNoteId: string,
  touched: Set<string>,
): Promise<string> {
  const w = writeSteps();
  await loadHtmlEngine();
  const { note } = await createLoreNote(wr.core, w, {
    parentNoteId,
    title: t.title!,
    type: "text",
    content: sanitizeLoreHtml(t.contentHtml!),
    loreType: t.loreType,
    labels: Object.fromEntries(t.labelUpserts.map((l) => [l.name, l.value])),
  });
  // everything on the new note goes with it when its creation is undone
  await addRelations(wr, w, note.noteId, [], t, "covered", touched);
  return note.noteId;
}

async function writeUpdate(
  wr: Writer,
  t: ProposalTarget,
  note: CoreNote,
  touched: Set<string>,
): Promise<void> {
  const { core } = wr;
  const id = note.noteId;
  const own = ownAttributes(note);
  const w = writeSteps();
  if (t.title !== undefined && t.title !== note.title) {
    await w.step(
      "rename the note",
      () => core.patchNote(id, { title: t.title }),
      () => core.patchNote(id, { title: note.title }),
    );
  }
  if (t.contentHtml !== undefined) {
    await loadHtmlEngine();
    const html = sanitizeLoreHtml(t.contentHtml);
    await w.step(
      "replace the content",
      async () => {
        const before = await core.contentText(id);
        await core.putContent(id, html, "text/plain");
        return before;
      },
      (before) => core.putContent(id, before, "text/plain"),
    );
  }
  const labels = (name: string) => own.filter((a) => a.type === "label" && a.name === name);
  // one upsert per name, the last one given wins
  const upserts = new Map(t.labelUpserts.map((l) => [l.name, l.value]));
  for (const [name, value] of upserts) {
    const existing = labels(name);
    if (existing.length === 1 && existing[0].value === value) continue;
    await w.step(
      `set #${name}`,
      () => core.createAttribute({ noteId: id, type: "label", name, value }),
      (a) => core.deleteAttribute(a.attributeId),
    );
    for (const old of existing) await removeAttribute(core, w, old, `remove the old #${name}`);
  }
  for (const name of new Set(t.labelDeletes)) {
    for (const old of labels(name)) await removeAttribute(core, w, old, `remove #${name}`);
  }
  for (const r of t.relationDeletes) {
    const name = relationName(r.relationshipType);
    const prefix = relationNotePrefix(r.relationshipType, r.targetId);
    const doomed = own.filter((a) =>
      (a.type === "relation" && a.name === name && a.value === r.targetId) ||
      (a.type === "label" && a.name === "relationNote" && a.value.startsWith(prefix))
    );
    for (const old of doomed) await removeAttribute(core, w, old, `remove ~${name}`);
  }
  await addRelations(wr, w, id, own, t, "delete", touched);
}

/** Adds the target's relations (with `#relationNote` and inverse), skipping existing ones. */
async function addRelations(
  wr: Writer,
  w: WriteSteps,
  sourceId: string,
  sourceAttrs: readonly CoreAttribute[],
  t: ProposalTarget,
  sourceUndo: "covered" | "delete",
  touched: Set<string>,
): Promise<void> {
  const { core } = wr;
  const has = (attrs: readonly CoreAttribute[], type: string, name: string, value: string) =>
    attrs.some((a) => a.type === type && a.name === name && a.value === value);
  const undo = (kind: "covered" | "delete") =>
    kind === "covered"
      ? "covered" as const
      : (a: CoreAttribute) => core.deleteAttribute(a.attributeId);
  for (const r of t.relationAdds) {
    const targetId = wr.resolve(r);
    const name = relationName(r.relationshipType);
    if (!has(sourceAttrs, "relation", name, targetId)) {
      await w.step(
        `add ~${name} to ${targetId}`,
        () => core.createAttribute({ noteId: sourceId, type: "relation", name, value: targetId }),
        undo(sourceUndo),
      );
    }
    const description = r.description?.trim();
    if (description) {
      const value = relationNoteValue(r.relationshipType, targetId, description);
      if (!has(sourceAttrs, "label", "relationNote", value)) {
        await w.step(
          `describe ~${name}`,
          () =>
            core.createAttribute({ noteId: sourceId, type: "label", name: "relationNote", value }),
          undo(sourceUndo),
        );
      }
    }
    if (r.bidirectional) {
      const targetAttrs = ownAttributes(wr.notes.get(targetId) ?? { noteId: "", attributes: [] });
      if (!has(targetAttrs, "relation", name, sourceId)) {
        // the inverse lives on another note: it is always undone explicitly
        await w.step(
          `add the inverse ~${name} on ${targetId}`,
          () => core.createAttribute({ noteId: targetId, type: "relation", name, value: sourceId }),
          undo("delete"),
        );
        if (!wr.isNew(targetId)) touched.add(targetId);
      }
    }
  }
}

function removeAttribute(
  core: CoreClient,
  w: WriteSteps,
  a: CoreAttribute,
  name: string,
): Promise<void> {
  return w.step(
    name,
    () => core.deleteAttribute(a.attributeId),
    () =>
      core.createAttribute({
        noteId: a.noteId,
        type: a.type,
        name: a.name,
        value: a.value,
        isInheritable: a.isInheritable,
        position: a.position,
      }),
  );
}
