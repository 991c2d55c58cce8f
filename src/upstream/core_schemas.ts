/**
 * Zod schemas for what Core's ETAPI sends back. Core is a trust boundary too: a response that
 * does not have this shape is a 502, never a crash or a half-read object. Objects are loose so a
 * newer Core with extra fields keeps working.
 *
 * @module
 */
import { z } from "zod";

/** An attribute as ETAPI returns it (inherited ones keep their owner's `noteId`). */
export const coreAttributeSchema = z.looseObject({
  attributeId: z.string(),
  noteId: z.string(),
  type: z.enum(["label", "relation"]),
  name: z.string(),
  value: z.string(),
  position: z.number().optional(),
  isInheritable: z.boolean().optional().default(false),
  utcDateModified: z.string().optional(),
});
/** An ETAPI attribute. */
export type CoreAttribute = z.output<typeof coreAttributeSchema>;

/**
 * The title shown for a protected note or revision. ETAPI never opens a protected session, so
 * it sends a protected note's title as ciphertext (revisions already as this placeholder); the
 * service never passes the ciphertext on. Core's share API uses the same words.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const protectedNote = {
 *   noteId: "abc123",
 *   isProtected: true,
 *   title: "U2FsdGVkX1+ciphertext", // what ETAPI sends without a protected session
 *   type: "text",
 *   mime: "text/html",
 *   parentNoteIds: ["root"],
 *   childNoteIds: [],
 *   parentBranchIds: ["root_abc123"],
 *   childBranchIds: [],
 *   attributes: [],
 * };
 * assert.equal(coreNoteSchema.parse(protectedNote).title, PROTECTED_TITLE);
 * ```
 */
export const PROTECTED_TITLE = "[protected]";

/** Replaces the title of a protected entity with {@linkcode PROTECTED_TITLE}. */
function hideProtectedTitle<T extends { isProtected: boolean; title: string }>(entity: T): T {
  return entity.isProtected ? { ...entity, title: PROTECTED_TITLE } : entity;
}

/** A note as ETAPI returns it; a protected note's title is {@linkcode PROTECTED_TITLE}. */
export const coreNoteSchema = z.looseObject({
  noteId: z.string(),
  isProtected: z.boolean(),
  title: z.string(),
  type: z.string(),
  mime: z.string(),
  blobId: z.string().optional(),
  dateCreated: z.string().optional(),
  dateModified: z.string().optional(),
  utcDateCreated: z.string().optional(),
  utcDateModified: z.string().optional(),
  parentNoteIds: z.array(z.string()),
  childNoteIds: z.array(z.string()),
  parentBranchIds: z.array(z.string()),
  childBranchIds: z.array(z.string()),
  attributes: z.array(coreAttributeSchema),
}).transform(hideProtectedTitle);
/** An ETAPI note. */
export type CoreNote = z.output<typeof coreNoteSchema>;

/** A branch (a note's placement under one parent). */
export const coreBranchSchema = z.looseObject({
  branchId: z.string(),
  noteId: z.string(),
  parentNoteId: z.string(),
  prefix: z.string().nullable().optional(),
  notePosition: z.number(),
  isExpanded: z.boolean().optional(),
  utcDateModified: z.string().optional(),
});
/** An ETAPI branch. */
export type CoreBranch = z.output<typeof coreBranchSchema>;

/** `POST /etapi/create-note` answer. */
export const coreNoteWithBranchSchema = z.object({
  note: coreNoteSchema,
  branch: coreBranchSchema,
});

/** A revision (list entries carry `contentLength`); protected: {@linkcode PROTECTED_TITLE}. */
export const coreRevisionSchema = z.looseObject({
  revisionId: z.string(),
  noteId: z.string(),
  type: z.string(),
  mime: z.string(),
  isProtected: z.boolean(),
  title: z.string(),
  blobId: z.string().optional(),
  dateLastEdited: z.string().optional(),
  dateCreated: z.string().optional(),
  utcDateLastEdited: z.string().optional(),
  utcDateCreated: z.string().optional(),
  utcDateModified: z.string().optional(),
  contentLength: z.number().optional(),
}).transform(hideProtectedTitle);
/** An ETAPI revision. */
export type CoreRevision = z.output<typeof coreRevisionSchema>;

/** An attachment (`role: "image"` for images referenced from text as `api/attachments/<id>/image/…`). */
export const coreAttachmentSchema = z.looseObject({
  attachmentId: z.string(),
  ownerId: z.string(),
  role: z.string(),
  mime: z.string(),
  title: z.string(),
  blobId: z.string().optional(),
  utcDateModified: z.string().optional(),
});
/** An ETAPI attachment. */
export type CoreAttachment = z.output<typeof coreAttachmentSchema>;

/** `GET /etapi/notes?search=` answer. */
export const coreSearchSchema = z.object({ results: z.array(coreNoteSchema) });

/**
 * {@linkcode coreSearchSchema} with a fast path for its usual answer, hundreds of well-formed
 * notes: zod's copy of every note and attribute costs several milliseconds per list, so a plain
 * walk checks the same fields and, when all fit, completes the answer in place (the parsed JSON
 * is ours): `isInheritable` defaults to false and protected titles are hidden, as zod would.
 * Anything else goes through zod, which names what is wrong; a test holds both paths equal.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const note = {
 *   noteId: "n1", isProtected: true, title: "cipher", type: "text", mime: "text/html",
 *   parentNoteIds: [], childNoteIds: [], parentBranchIds: [], childBranchIds: [],
 *   attributes: [{ attributeId: "a1", noteId: "n1", type: "label", name: "lore", value: "" }],
 * };
 * const { results } = coreSearchAnswerSchema.parse({ results: [note] });
 * assert.equal(results[0].title, "[protected]");
 * assert.equal(results[0].attributes[0].isInheritable, false);
 * assert.equal(coreSearchAnswerSchema.safeParse({ results: [{ noteId: 1 }] }).success, false);
 * ```
 */
export const coreSearchAnswerSchema = withFastPath(coreSearchSchema, wellFormedSearchAnswer);

/**
 * {@linkcode coreNoteSchema} with the same fast path for one note (every note a route reads or
 * writes passes here).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const note = {
 *   noteId: "n1", isProtected: false, title: "Harbor", type: "text", mime: "text/html",
 *   parentNoteIds: ["root"], childNoteIds: [], parentBranchIds: ["root_n1"], childBranchIds: [],
 *   attributes: [{ attributeId: "a1", noteId: "n1", type: "label", name: "lore", value: "" }],
 * };
 * assert.equal(coreNoteAnswerSchema.parse(note).attributes[0].isInheritable, false);
 * assert.equal(coreNoteAnswerSchema.safeParse({ ...note, title: 7 }).success, false);
 * ```
 */
export const coreNoteAnswerSchema = withFastPath(coreNoteSchema, wellFormedNote);

/** `schema`, but an input `wellFormed` completes in place skips zod's copy of it. */
function withFastPath<S extends z.ZodType>(
  schema: S,
  wellFormed: (raw: unknown) => z.output<S> | undefined,
) {
  return z.unknown().transform((raw, ctx): z.output<S> => {
    const fast = wellFormed(raw);
    if (fast) return fast;
    const parsed = schema.safeParse(raw);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, input: undefined });
    return z.NEVER;
  });
}

/** The fast path of {@linkcode coreSearchAnswerSchema}: the completed answer, or undefined. */
export function wellFormedSearchAnswer(
  raw: unknown,
): z.output<typeof coreSearchSchema> | undefined {
  if (!isRecord(raw) || !Array.isArray(raw.results)) return undefined;
  const notes: unknown[] = raw.results;
  if (!notes.every(isWellFormedNote)) return undefined;
  let changed = false;
  for (const note of notes as CoreNote[]) changed = complete(note) || changed;
  const results = notes as CoreNote[];
  if (!changed && Object.keys(raw).length === 1) untouched.add(results);
  return { results };
}

/** Result lists the fast path took as Core sent them: nothing added, nothing hidden, no extra key. */
const untouched = new WeakSet<readonly CoreNote[]>();

/**
 * The JSON text of `results` as Core sent it, when `results` is exactly what `text` holds: the
 * fast path of {@linkcode coreSearchAnswerSchema} validated it and changed nothing, and `text`
 * is `{"results":[…]}` with no other `"results"` key anywhere (so no duplicate key could hide an
 * unvalidated list). A route can then pass the list on without serializing it again.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const text = '{"results":[{"noteId":"n1","isProtected":false,"title":"Harbor","type":"text",' +
 *   '"mime":"text/html","parentNoteIds":[],"childNoteIds":[],"parentBranchIds":[],' +
 *   '"childBranchIds":[],"attributes":[]}]}';
 * const { results } = coreSearchAnswerSchema.parse(JSON.parse(text));
 * assert.equal(verbatimResults(text, results), text.slice(11, -1));
 * assert.equal(verbatimResults(text, structuredClone(results)), null); // not the validated list
 * ```
 */
export function verbatimResults(text: string, results: readonly CoreNote[]): string | null {
  if (!untouched.has(results)) return null;
  const head = '{"results":';
  if (!text.startsWith(head) || !text.endsWith("]}") || text.indexOf('"results":', 2) !== -1) {
    return null;
  }
  return text.slice(head.length, -1);
}

/** The fast path of {@linkcode coreNoteAnswerSchema}: the completed note, or undefined. */
export function wellFormedNote(raw: unknown): CoreNote | undefined {
  if (!isWellFormedNote(raw)) return undefined;
  complete(raw as CoreNote);
  return raw as CoreNote;
}

/**
 * What zod's defaults and transform would add: `isInheritable`, the hidden protected title.
 * Whether it changed anything.
 */
function complete(note: CoreNote): boolean {
  let changed = false;
  for (const a of note.attributes) {
    if (a.isInheritable === undefined) {
      a.isInheritable = false;
      changed = true;
    }
  }
  if (note.isProtected) {
    note.title = PROTECTED_TITLE;
    changed = true;
  }
  return changed;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const isString = (v: unknown) => typeof v === "string";
const optional = (v: unknown, is: (v: unknown) => boolean) => v === undefined || is(v);
const stringArray = (v: unknown) => Array.isArray(v) && v.every(isString);

function isWellFormedNote(n: unknown): boolean {
  return isRecord(n) && isString(n.noteId) && typeof n.isProtected === "boolean" &&
    isString(n.title) && isString(n.type) && isString(n.mime) &&
    optional(n.blobId, isString) && optional(n.dateCreated, isString) &&
    optional(n.dateModified, isString) && optional(n.utcDateCreated, isString) &&
    optional(n.utcDateModified, isString) && stringArray(n.parentNoteIds) &&
    stringArray(n.childNoteIds) && stringArray(n.parentBranchIds) &&
    stringArray(n.childBranchIds) && Array.isArray(n.attributes) &&
    n.attributes.every(isWellFormedAttribute);
}

function isWellFormedAttribute(a: unknown): boolean {
  return isRecord(a) && isString(a.attributeId) && isString(a.noteId) &&
    (a.type === "label" || a.type === "relation") && isString(a.name) && isString(a.value) &&
    optional(a.position, (v) => typeof v === "number" && Number.isFinite(v)) &&
    optional(a.isInheritable, (v) => typeof v === "boolean") &&
    optional(a.utcDateModified, isString);
}

/** `GET /etapi/app-info` answer (only what we show). */
export const coreAppInfoSchema = z.looseObject({ appVersion: z.string() });

/** ETAPI's error body. */
export const coreErrorSchema = z.object({
  status: z.number().optional(),
  code: z.string().optional(),
  message: z.string().optional(),
});
