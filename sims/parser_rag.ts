/**
 * Parser test double, the RAG index: what is in it, for which user,
 * and when it is filled, as in the real service.
 *
 * - The index is LanceDB chunks keyed by (noteId, userId) plus the global `rag_index_meta`
 *   title table keyed by noteId ({@link RagIndex} on the store). A fresh Parser has both empty.
 * - `indexNote` reads the note's content first (empty content: nothing is indexed, no meta row),
 *   then the note, replaces that note's chunks for `userId` and upserts the meta row.
 * - `userId` defaults to `"default"`: the brain-dump routes (auto, commit and the stream) reindex
 *   created and updated notes without passing the caller, so those chunks belong to no real user
 *   and the owner's RAG, consistency sampling and relationship suggestions do not see them; only
 *   their titles reach the global meta table (autocomplete phase 1). The `/rag/reindex*` routes
 *   pass the caller's id. Imports and the batch worker do not index.
 * - {@link queryLore} filters chunks by `userId` (and `loreType`) when given; the double's
 *   similarity is word overlap, one best chunk per note, score > 0.
 *
 * Tests seed the index with {@link seedRagIndex} (what a `/rag/reindex` by the owner leaves).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createParserStore } from "./parser_store.ts";
 * const store = createParserStore();
 * seedRagIndex(store, {
 *   noteId: "abc",
 *   title: "Aria",
 *   content: "A ranger of the north.",
 *   userId: "u1",
 * });
 * assert.deepEqual(queryLore(store, "ranger", 5, { userId: "u1" }).map((h) => h.noteId), ["abc"]);
 * assert.deepEqual(queryLore(store, "ranger", 5, { userId: "u2" }), []); // another user's index
 * ```
 * @module
 */
import { etapi, ETAPI_TIMEOUT_MS, type EtapiTarget } from "./parser_kit.ts";
import type { ParserStore, RagChunkSet } from "./parser_store.ts";

/** The indexer's default `userId` (what the brain-dump reindex stores). */
export const RAG_DEFAULT_USER = "default";
/** env.ts `EMBEDDING_CLOUD` default: the `rag_index_meta.model` value. */
const EMBEDDING_MODEL = "openai/text-embedding-3-small";
const MAX_CHUNK_CHARS = 300;

// ---------------------------------------------------------------------------------------------
// Text, chunks and word-overlap scoring
// ---------------------------------------------------------------------------------------------

const STOPWORDS = new Set(
  ("the and for with from that this into onto than then them they their there what when who " +
    "whom whose which while was were are has have had his her its our your you she him not but " +
    "all any can").split(" "),
);

/** The real Parser's HTML to text: tags become spaces, whitespace collapses. */
export function plainText(html: string): string {
  return html.replace(/<[^>]+>/g, " ")
    .replace(
      /&(amp|lt|gt|quot|#39|nbsp);/g,
      (_, e: string) =>
        ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'", nbsp: " " })[e] ?? " ",
    )
    .replace(/\s+/g, " ").trim();
}

function words(text: string): string[] {
  return text.toLowerCase().split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length >= 3 && !STOPWORDS.has(w));
}

/** Sentences grouped into chunks of about {@link MAX_CHUNK_CHARS}; a bare title otherwise. */
function chunksOf(title: string, text: string): string[] {
  const chunks: string[] = [];
  let current = "";
  for (const sentence of text.split(/(?<=[.!?])\s+/)) {
    if (current && current.length + sentence.length + 1 > MAX_CHUNK_CHARS) {
      chunks.push(current);
      current = "";
    }
    current = current ? `${current} ${sentence}` : sentence;
  }
  if (current.trim()) chunks.push(current.trim());
  return chunks.length ? chunks : [title];
}

/** A scorable document: one note's chunks. */
export interface Doc {
  noteId: string;
  noteTitle: string;
  chunks: string[];
}

/** A note's best chunk for a query (`RagChunk`). */
export interface Hit {
  noteId: string;
  noteTitle: string;
  content: string;
  score: number;
}

function overlap(query: Set<string>, text: string): number {
  const found = new Set(words(text));
  if (query.size === 0 || found.size === 0) return 0;
  let matched = 0;
  for (const q of query) {
    for (const w of found) {
      if (w.startsWith(q) || q.startsWith(w)) {
        matched++;
        break;
      }
    }
  }
  return Math.round((matched / Math.sqrt(query.size * found.size)) * 10_000) / 10_000;
}

/** Each doc's best chunk for `text`, best first (ties by title, then id). */
export function rank(text: string, docs: readonly Doc[]): Hit[] {
  const query = new Set(words(text));
  return docs.map((d) => {
    let best: Hit = { noteId: d.noteId, noteTitle: d.noteTitle, content: d.chunks[0], score: -1 };
    for (const chunk of d.chunks) {
      const score = overlap(query, `${d.noteTitle} ${chunk}`);
      if (score > best.score) best = { ...best, content: chunk, score };
    }
    return best;
  }).sort((a, b) =>
    b.score - a.score || a.noteTitle.localeCompare(b.noteTitle) || a.noteId.localeCompare(b.noteId)
  );
}

// ---------------------------------------------------------------------------------------------
// The index
// ---------------------------------------------------------------------------------------------

/**
 * `queryLore`: the best chunk per note among `userId`'s chunks (all users when omitted), score
 * > 0 unless `anyScore` (a broad probe whose words no note shares: the real vector search still
 * returns its nearest chunks).
 */
export function queryLore(
  store: ParserStore,
  text: string,
  topK: number,
  filter: { userId?: string; loreType?: string; anyScore?: boolean } = {},
): (Hit & { set: RagChunkSet })[] {
  const sets = [...store.rag.chunks.values()].filter((s) =>
    (filter.userId === undefined || s.userId === filter.userId) &&
    (filter.loreType === undefined || s.loreType === filter.loreType)
  );
  const byNote = new Map<string, RagChunkSet>();
  for (const s of sets) byNote.set(s.noteId, s); // one best chunk per note, whoever indexed it
  const docs = sets.map((s) => ({ noteId: s.noteId, noteTitle: s.noteTitle, chunks: s.chunks }));
  const seen = new Set<string>();
  return rank(text, docs).filter((h) => filter.anyScore || h.score > 0)
    .filter((h) => !seen.has(h.noteId) && seen.add(h.noteId) !== undefined)
    .slice(0, topK)
    .map((h) => ({ ...h, set: byNote.get(h.noteId)! }));
}

/** Puts one note's chunks for `userId` and upserts its `rag_index_meta` row. */
function upsert(
  store: ParserStore,
  entry: Omit<RagChunkSet, "chunks"> & { text: string; utcDateModified?: string },
): void {
  const chunks = chunksOf(entry.noteTitle, entry.text);
  store.rag.chunks.set(`${entry.noteId}::${entry.userId}`, {
    noteId: entry.noteId,
    noteTitle: entry.noteTitle,
    userId: entry.userId,
    loreType: entry.loreType,
    labels: entry.labels,
    chunks,
    attributes: entry.attributes,
  });
  store.rag.meta.set(entry.noteId, {
    noteId: entry.noteId,
    noteTitle: entry.noteTitle,
    chunkCount: chunks.length,
    embeddedAt: store.now(),
    model: EMBEDDING_MODEL,
    utcDateModified: entry.utcDateModified,
  });
}

/**
 * `indexNote(noteId, credentials, userId = "default")`: content first (empty → nothing), then
 * the note; throws what ETAPI throws.
 */
export async function indexNote(
  store: ParserStore,
  target: EtapiTarget,
  noteId: string,
  userId: string,
  signals: (AbortSignal | undefined)[],
): Promise<void> {
  const path = `/notes/${encodeURIComponent(noteId)}`;
  const content = (await etapi(target, "GET", `${path}/content`, ETAPI_TIMEOUT_MS, signals)).text;
  if (content.trim().length === 0) return;
  const note = JSON.parse((await etapi(target, "GET", path, ETAPI_TIMEOUT_MS, signals)).text) as {
    title: string;
    utcDateModified?: string;
    attributes?: { type: "label" | "relation"; name: string; value: string; noteId?: string }[];
  };
  const attrs = (note.attributes ?? []).filter((a) =>
    a.noteId === undefined || a.noteId === noteId
  );
  upsert(store, {
    noteId,
    noteTitle: note.title,
    userId,
    loreType: attrs.find((a) => a.type === "label" && a.name === "loreType")?.value ?? "",
    labels: attrs.filter((a) => a.type === "label").map((a) => a.name),
    attributes: attrs.map(({ type, name, value }) => ({ type, name, value })),
    text: plainText(content),
    utcDateModified: note.utcDateModified,
  });
}

/**
 * Seeds the index as a reindex would: the note's chunks for `userId` (default: the store's
 * owner, i.e. what the owner's `POST /rag/reindex` leaves) and its `rag_index_meta` row.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createParserStore } from "./parser_store.ts";
 * const store = createParserStore();
 * const owner = store.createUser({ email: "a@b.c", password: "password123", name: "A" });
 * store.ensureOwner(owner.id);
 * seedRagIndex(store, { noteId: "n1", title: "Aria", content: "<p>A ranger.</p>" }); // the owner's
 * seedRagIndex(store, { noteId: "n2", title: "Bren", content: "x", userId: "default" });
 * assert.equal(store.rag.meta.size, 2);
 * assert.deepEqual(queryLore(store, "ranger", 5, { userId: owner.id }).map((h) => h.noteId), [
 *   "n1",
 * ]);
 * ```
 */
export function seedRagIndex(
  store: ParserStore,
  note: {
    noteId: string;
    /** As Core stores it (what the indexer reads and relays): `Salt &amp; Smoke`. */
    title: string;
    /** HTML or text; tags are stripped like the real indexer does. */
    content: string;
    userId?: string;
    loreType?: string;
    attributes?: { type: "label" | "relation"; name: string; value: string }[];
    utcDateModified?: string;
  },
): void {
  const userId = note.userId ?? store.ownerUserId();
  if (!userId) throw new Error("parser sim: seedRagIndex needs a userId (no owner)");
  const attributes = note.attributes ??
    (note.loreType ? [{ type: "label" as const, name: "loreType", value: note.loreType }] : []);
  upsert(store, {
    noteId: note.noteId,
    noteTitle: note.title,
    userId,
    loreType: note.loreType ??
      attributes.find((a) => a.type === "label" && a.name === "loreType")?.value ?? "",
    labels: attributes.filter((a) => a.type === "label").map((a) => a.name),
    attributes,
    text: plainText(note.content),
    utcDateModified: note.utcDateModified,
  });
}

/**
 * Runs the owner's `POST /rag/reindex` on a running double: what the real Parser needs before
 * the owner's RAG, consistency sampling and relationship suggestions see Core's lore.
 */
export async function reindexForOwner(
  sim: { url: string; ownerToken(): string },
): Promise<{ indexed: number; failed: number }> {
  const res = await fetch(`${sim.url}/rag/reindex`, {
    method: "POST",
    headers: { Authorization: `Bearer ${sim.ownerToken()}` },
  });
  if (!res.ok) throw new Error(`parser sim: reindex failed: ${res.status} ${await res.text()}`);
  return await res.json();
}
