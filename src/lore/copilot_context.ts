/**
 * What the article copilot is told about a note: the Parser's `ArticleCopilotBody`
 * built from Core (the note, the notes it relates to or links to) and
 * from the Parser's semantic index (related passages), loaded in parallel with bounds. The same
 * loader decides which notes a proposal may write ({@linkcode writableTargetIds}), so the chat
 * and the apply step agree on the scope.
 *
 * @module
 */
import { readRelayed } from "../core/titles.ts";
import { ApiError, nullOn404 } from "../http/errors.ts";
import type { Logger } from "../http/log.ts";
import { noteIdFromHref, sanitizeLoreHtml } from "../sanitize/html.ts";
import { loadHtmlEngine } from "../sanitize/html_engine.ts";
import type { CoreAttribute, CoreClient, CoreNote } from "../upstream/core.ts";
import { type ParserClient, ragQueryAnswer } from "../upstream/parser.ts";
import { mapLimit } from "../util/concurrency.ts";
import { hasLabel, labelValue, ownAttributes } from "./note_view.ts";
import { notesByIds } from "./notes_by_ids.ts";
import { relationNotePrefix, relationshipTypeOf } from "./relationship_types.ts";
import { isSystemNote } from "./system_notes.ts";
import { AUTOMATIC_RELATIONS, isUserRelation, userRelations } from "./user_relations.ts";

/** Bounds of the context sent with one copilot turn. */
export const COPILOT_CONTEXT_LIMITS = {
  /** Linked notes loaded (relations first, then content links). */
  linkedNotes: 12,
  /** Characters of the current note's (sanitized) HTML. */
  currentContentChars: 100_000,
  /** Characters of each linked note's (sanitized) HTML. */
  linkedContentChars: 8_000,
  /** Related passages asked of the semantic index. */
  ragTopK: 5,
  /** Characters of each related passage. */
  ragExcerptChars: 1_500,
  /** Characters of the user message used as the semantic query. */
  ragQueryChars: 2_000,
} as const;

/** A note as the copilot sees it (the contract's `NoteCtx`). */
export interface NoteCtx {
  noteId: string;
  title: string;
  /** The `#loreType` label, or `""` for a note without one. */
  loreType: string;
  contentHtml: string;
  parentNoteIds: string[];
  labels: { name: string; value: string }[];
  relations: { name: string; targetNoteId: string; description?: string }[];
}

/** One transcript message. */
export interface CopilotMessage {
  role: "user" | "assistant";
  content: string;
}

/** A related passage from the semantic index. */
export interface RagPassage {
  noteId: string;
  title: string;
  excerpt: string;
  score: number;
}

/** The Parser's `ArticleCopilotBody`. */
export interface ArticleCopilotBody {
  noteId: string;
  sessionId?: string;
  transcript: CopilotMessage[];
  currentNote: NoteCtx;
  linkedNotes: NoteCtx[];
  ragContext: RagPassage[];
  writableTargetIds: string[];
}

/** A loaded note and its sanitized, clipped HTML (`""` when not loaded or not HTML). */
export interface LoadedNote {
  note: CoreNote;
  contentHtml: string;
}

/** The current note and the notes it relates to or links to. */
export interface ArticleScope {
  current: LoadedNote;
  linked: LoadedNote[];
}

// A relation that says "this note is about that one": the user's, or a content link that is not
// an image (images are no linked notes).
const isLink = (a: CoreAttribute) =>
  isUserRelation(a) || (a.type === "relation" && AUTOMATIC_RELATIONS.has(a.name) &&
    a.name !== "imageLink");
// Note types whose content is the article's HTML.
const HTML_TYPES: ReadonlySet<string> = new Set(["text", "book"]);

/**
 * Ids of the notes `note` links to, relations first (its own user relations and non-image
 * content-link relations), then links in its HTML (`#root/…` hrefs, `data-note-id`), without
 * itself or Core's system notes, at most `max`.
 */
export function linkedNoteIds(note: CoreNote, contentHtml: string, max: number): string[] {
  const ids = new Set<string>();
  for (const a of ownAttributes(note)) {
    if (isLink(a)) ids.add(a.value);
  }
  for (const m of contentHtml.matchAll(/\bhref\s*=\s*(?:"([^"]*)"|'([^']*)')/gi)) {
    const id = noteIdFromHref(m[1] ?? m[2]);
    if (id) ids.add(id);
  }
  for (const m of contentHtml.matchAll(/\bdata-note-id\s*=\s*["']?([A-Za-z0-9_]{1,128})/gi)) {
    ids.add(m[1]);
  }
  return [...ids].filter((id) => id !== note.noteId && !isSystemNote(id)).slice(0, max);
}

/**
 * Loads the note (with its HTML), then the notes it links to in one search, then their HTML
 * with at most `concurrency` calls at once. Missing, protected and binary (image, file) linked
 * notes are left out.
 */
export async function loadArticleScope(
  core: CoreClient,
  noteId: string,
  opts: { concurrency: number; linkedContent: boolean },
): Promise<ArticleScope> {
  const limits = COPILOT_CONTEXT_LIMITS;
  // the note and its content at once: a lore article is HTML, anything else is dropped below
  const [note, raw] = await Promise.all([core.getNote(noteId), core.contentText(noteId)]);
  const html = HTML_TYPES.has(note.type) ? raw : "";
  const ids = linkedNoteIds(note, html, limits.linkedNotes);
  // every linked note in one search, then only the contents that are used
  const found = await notesByIds(core, ids, {
    lore: false,
    concurrency: opts.concurrency,
    complete: true,
  });
  const usable = ids.flatMap((id) => {
    const n = found.get(id);
    return n && !n.isProtected && n.type !== "image" && n.type !== "file" ? [n] : [];
  });
  const linked = await mapLimit(usable, opts.concurrency, async (n): Promise<LoadedNote> => {
    const content = opts.linkedContent && HTML_TYPES.has(n.type)
      ? await core.contentText(n.noteId).catch(nullOn404) ?? ""
      : "";
    return { note: n, contentHtml: await clipHtml(content, limits.linkedContentChars) };
  });
  return {
    current: { note, contentHtml: await clipHtml(html, limits.currentContentChars) },
    linked,
  };
}

/**
 * The notes a proposal may write: the current note and the linked lore notes, never Core's
 * system notes or protected notes. The chat sends it to the Parser; apply recomputes it.
 */
export function writableTargetIds(scope: ArticleScope): string[] {
  const ok = (n: CoreNote) => !isSystemNote(n.noteId) && !n.isProtected;
  return [
    ...(ok(scope.current.note) ? [scope.current.note.noteId] : []),
    ...scope.linked.map((l) => l.note).filter((n) => ok(n) && hasLabel(n, "lore"))
      .map((n) => n.noteId),
  ];
}

/**
 * A loaded note as the contract's `NoteCtx`: own labels, its user relations (user_relations.ts)
 * with the `#relationNote` description when there is one.
 */
export function noteCtx(loaded: LoadedNote): NoteCtx {
  const { note } = loaded;
  const own = ownAttributes(note);
  const notes = own.filter((a) => a.type === "label" && a.name === "relationNote");
  return {
    noteId: note.noteId,
    title: note.title,
    loreType: labelValue(note, "loreType") ?? "",
    contentHtml: loaded.contentHtml,
    parentNoteIds: note.parentNoteIds,
    labels: own.filter((a) => a.type === "label").map((a) => ({ name: a.name, value: a.value })),
    relations: userRelations(note).map((a) => {
      const type = relationshipTypeOf(a.name);
      const prefix = type && relationNotePrefix(type, a.value);
      const described = prefix && notes.find((l) => l.value.startsWith(prefix));
      return {
        name: a.name,
        targetNoteId: a.value,
        ...(described ? { description: described.value.slice(prefix.length).trim() } : {}),
      };
    }),
  };
}

/**
 * Related passages for `text` from the Parser's semantic index (`POST /rag/query`, small topK),
 * without the current note's own. A failing index must not fail the turn: any Parser error
 * gives no passages and a warning in the log.
 */
export async function relatedPassages(
  parser: ParserClient,
  text: string,
  opts: { excludeNoteId: string; log: Logger; requestId: string },
): Promise<RagPassage[]> {
  const limits = COPILOT_CONTEXT_LIMITS;
  let raw: unknown;
  try {
    raw = await parser.json("POST", "/rag/query", {
      text: text.slice(0, limits.ragQueryChars),
      topK: limits.ragTopK,
    });
  } catch (e) {
    if (!(e instanceof ApiError)) throw e; // the client went away: nothing to degrade to
    opts.log.log("warn", "copilot: related lore unavailable", {
      requestId: opts.requestId,
      status: e.status,
      code: e.code,
    });
    return [];
  }
  const parsed = await readRelayed(ragQueryAnswer, raw); // titles decoded to the typed text
  if (!parsed.success) {
    opts.log.log("warn", "copilot: related lore unavailable", {
      requestId: opts.requestId,
      code: "UPSTREAM_ERROR",
    });
    return [];
  }
  return parsed.data.results.filter((r) => r.noteId !== opts.excludeNoteId).map((r) => ({
    noteId: r.noteId,
    title: r.noteTitle,
    excerpt: r.content.slice(0, limits.ragExcerptChars),
    score: r.score,
  }));
}

/** Inputs of {@linkcode buildCopilotBody}. */
export interface CopilotTurn {
  noteId: string;
  transcript: CopilotMessage[];
  sessionId?: string;
}

/**
 * The Parser's `ArticleCopilotBody` for one turn: Core context and related passages in parallel.
 */
export async function buildCopilotBody(
  core: CoreClient,
  parser: ParserClient,
  turn: CopilotTurn,
  opts: { concurrency: number; log: Logger; requestId: string },
): Promise<ArticleCopilotBody> {
  const question = turn.transcript.findLast((m) => m.role === "user")?.content ?? "";
  const [scope, ragContext] = await Promise.all([
    loadArticleScope(core, turn.noteId, { concurrency: opts.concurrency, linkedContent: true }),
    relatedPassages(parser, question, {
      excludeNoteId: turn.noteId,
      log: opts.log,
      requestId: opts.requestId,
    }),
  ]);
  return {
    noteId: turn.noteId,
    ...(turn.sessionId ? { sessionId: turn.sessionId } : {}),
    transcript: turn.transcript,
    currentNote: noteCtx(scope.current),
    linkedNotes: scope.linked.map(noteCtx),
    ragContext,
    writableTargetIds: writableTargetIds(scope),
  };
}

/**
 * Lore HTML cut after at most `max` characters (never inside a tag), then sanitized, which also
 * closes the elements the cut left open (async: the sanitizer's engine is loaded on first use).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(await clipHtml("<p>abc</p><p>def</p>", 14), "<p>abc</p><p>d</p>");
 * ```
 */
export async function clipHtml(raw: string, max: number): Promise<string> {
  if (raw === "") return "";
  await loadHtmlEngine();
  let cut = raw.slice(0, max);
  const open = cut.lastIndexOf("<");
  if (raw.length > max && open > cut.lastIndexOf(">")) cut = cut.slice(0, open);
  return sanitizeLoreHtml(cut);
}
