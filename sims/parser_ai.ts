/**
 * Parser test double, AI tools: RAG (`/rag/query`, and `/rag/reindex` for test setup), the
 * consistency scan (`/consistency/check`) and the suggest group (`/suggest/*`: relationships and
 * their application, graph, gaps, autocomplete, history), with the real routes' rate-limit
 * groups, fallback bodies and quirks; `/rag/status` (the global index size) and
 * `/rag/reindex/:noteId` (one note, for the caller). The Parser's streaming variants and
 * `/rag/reindex-stale` are not modelled: the service does not call them.
 *
 * The "AI" is deterministic; what it sees is chosen as in the real service:
 * - semantic scoring is word overlap over the RAG index (parser_rag.ts): LanceDB chunks per
 *   (noteId, userId) plus the global `rag_index_meta` titles. A fresh Parser's index is empty;
 *   `/rag/reindex[/:noteId]` fills it for the caller, the brain dump for user `"default"` only;
 * - `/rag/query`, the consistency sampling (no `noteIds`) and relationship suggestions read only
 *   the caller's chunks, so they find nothing until the caller reindexes; consistency with
 *   `noteIds` searches Core for `#noteId=A OR #noteId=B` and checks whatever Core answers;
 * - autocomplete: titles from `rag_index_meta` (any user), then the caller's chunks, then the
 *   "model" once the meta table has 5 rows;
 * - relationship suggestions are the caller's similar indexed notes whose titles appear in the
 *   text, typed by a keyword in the sentence that names them, else by the target's lore type;
 * - consistency finds ally-and-enemy contradictions, cause-after-effect and undatable events,
 *   duplicate titles and unconnected notes; gaps are worldbuilding pillars with no notes.
 *
 * Every "model" call is logged with `store.recordLlmCall` (tasks `consistency`, `suggest`,
 * `gap-detect`, `autocomplete`). Query strings are validated in the handler, so (unlike Elysia)
 * an invalid query is checked after the owner guard and counted by the rate limiter.
 *
 * @module
 */
import { createHash } from "node:crypto";
import {
  coreRelationName,
  etapi,
  ETAPI_TIMEOUT_MS,
  type EtapiTarget,
  json,
  type ParserCtx,
  type ParserFeatureDeps,
  type ParserRoute,
  RATE_GROUPS,
  RELATIONSHIP_TYPES,
  type Schema,
  t,
  validate,
  validationReply,
} from "./parser_kit.ts";
import { cuid, type RagChunkSet } from "./parser_store.ts";
import { indexNote, plainText, queryLore } from "./parser_rag.ts";
import { sleep } from "./sim_http.ts";

/** Knobs of this feature in the double. */
export interface AiSimOptions {
  /** Milliseconds every "model" call takes (default 0): pacing for timing tests. */
  llmDelayMs?: number;
  /**
   * What the "model" answers (default `valid`): `invalid` (JSON of the wrong shape) or
   * `unparseable` (not JSON) make the routes answer their fallback bodies.
   */
  llmOutput?: "valid" | "invalid" | "unparseable";
}

/** Relationship type by Core relation name (`relMemberOf` → `member_of`). */
const CANONICAL_BY_NAME = new Map<string, string>(
  RELATIONSHIP_TYPES.map((type) => [coreRelationName(type), type]),
);

/** env.ts default model per task (contract §10). */
const TASK_MODELS: Record<string, string> = {
  consistency: "deepseek/deepseek-v4-pro",
  "gap-detect": "deepseek/deepseek-v4-pro",
  suggest: "google/gemini-3.1-flash-lite",
  autocomplete: "openai/gpt-5-nano",
};
const CONSISTENCY_QUERY =
  "characters relationships factions timeline world rules contradictions unresolved plot threads";
const CONSISTENCY_TOP_K = 8;

// ---------------------------------------------------------------------------------------------
// Core reads (ETAPI, through the caller's integration)
// ---------------------------------------------------------------------------------------------

interface EtapiAttribute {
  attributeId: string;
  noteId: string;
  type: "label" | "relation";
  name: string;
  value: string;
}

interface EtapiNote {
  noteId: string;
  title: string;
  type: string;
  isProtected: boolean;
  utcDateModified?: string;
  attributes: EtapiAttribute[];
}

type Signals = (AbortSignal | undefined)[];

const id = encodeURIComponent;

async function getJson<T>(target: EtapiTarget, path: string, signals: Signals): Promise<T> {
  return JSON.parse((await etapi(target, "GET", path, ETAPI_TIMEOUT_MS, signals)).text) as T;
}

const searchNotes = async (target: EtapiTarget, query: string, signals: Signals) =>
  (await getJson<{ results: EtapiNote[] }>(target, `/notes?search=${id(query)}`, signals))
    .results;

const getNote = (target: EtapiTarget, noteId: string, signals: Signals) =>
  getJson<EtapiNote>(target, `/notes/${id(noteId)}`, signals);

const getContent = async (target: EtapiTarget, noteId: string, signals: Signals) =>
  (await etapi(target, "GET", `/notes/${id(noteId)}/content`, ETAPI_TIMEOUT_MS, signals)).text;

const addAttribute = (
  target: EtapiTarget,
  signals: Signals,
  attr: { noteId: string; type: "label" | "relation"; name: string; value: string },
) => etapi(target, "POST", "/attributes", ETAPI_TIMEOUT_MS, signals, { json: attr });

const labelOf = (note: EtapiNote, name: string) =>
  note.attributes.find((a) => a.type === "label" && a.name === name)?.value;

// ---------------------------------------------------------------------------------------------
// Requests: query validation, SSE
// ---------------------------------------------------------------------------------------------

/** TypeBox `t.Numeric` query fields: numeric strings become numbers before validation. */
function readQuery(
  c: ParserCtx,
  schema: Schema,
  numeric: readonly string[],
): { value: Record<string, unknown> } | { refused: Response } {
  const raw: Record<string, unknown> = Object.fromEntries(c.url.searchParams);
  for (const key of numeric) {
    const v = raw[key];
    if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))) {
      raw[key] = Number(v);
    }
  }
  const { errors, value } = validate(schema, raw);
  if (errors.length) return { refused: validationReply("query", schema, raw, errors) };
  return { value: value as Record<string, unknown> };
}

// ---------------------------------------------------------------------------------------------
// The routes
// ---------------------------------------------------------------------------------------------

/** A `relation_history` row; `applyRelations` never sets `userId` (contract §2.5). */
interface HistoryRow {
  id: string;
  userId: string | null;
  sourceNoteId: string;
  targetNoteId: string;
  type: string;
  relationName: string;
  description: string | null;
  createdAt: Date;
}

interface Suggestion {
  targetNoteId: string;
  targetTitle: string;
  relationshipType: string;
  description: string;
  confidence: "high" | "medium" | "low";
}

const KEYWORD_TYPES: [RegExp, string][] = [
  [/\b(enem(y|ies)|foes?)\b/i, "enemy"],
  [/\brivals?\b/i, "rival"],
  [/\b(all(y|ies)|trusts?|friends?)\b/i, "ally"],
  [/\b(sister|brother|mother|father|daughter|son|cousin|family)\b/i, "family"],
  [/\b(leads?|leader)\b/i, "leader_of"],
  [/\bmembers?\b/i, "member_of"],
  [/\bserves?\b/i, "serves"],
  [/\bworship/i, "worships"],
  [/\bwields?\b/i, "wields"],
  [/\bowns?\b/i, "owns"],
  [/\b(created|built|forged)\b/i, "created"],
  [/\bcaused\b/i, "caused"],
  [/\b(lives in|inhabits?)\b/i, "inhabits"],
  [/\b(born in|hails from)\b/i, "originates_from"],
];

const TYPE_BY_LORE: Record<string, string> = {
  location: "located_in",
  building: "located_in",
  faction: "member_of",
  organization: "member_of",
  event: "participated_in",
  deity: "worships",
  religion: "worships",
  item: "owns",
};

/** Worldbuilding pillars the gap detector checks: lore types that count for each. */
const PILLARS: { area: string; types: string[]; core: boolean }[] = [
  { area: "Characters", types: ["character"], core: true },
  { area: "Geography", types: ["location", "building"], core: true },
  { area: "History", types: ["event", "timeline"], core: true },
  { area: "Factions and power", types: ["faction", "organization"], core: false },
  { area: "Belief", types: ["religion", "deity", "myth", "cosmology"], core: false },
  { area: "Peoples and creatures", types: ["race", "creature"], core: false },
  { area: "Material culture", types: ["item", "spell", "language"], core: false },
];

/**
 * This feature's route rows.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createParserStore } from "./parser_store.ts";
 * import { NOT_CONNECTED, type ParserFeatureDeps } from "./parser_kit.ts";
 * const deps: ParserFeatureDeps = {
 *   store: createParserStore(),
 *   selfUrl: () => "http://parser:3001",
 *   models: () => ({}),
 *   coreFor: () => {
 *     throw new Error(NOT_CONNECTED);
 *   },
 * };
 * const rows = aiSimRoutes(deps, { llmDelayMs: 50 });
 * assert.ok(rows.some((r) => r.method === "POST" && r.path === "/rag/query"));
 * ```
 */
export function aiSimRoutes(deps: ParserFeatureDeps, opts: AiSimOptions): ParserRoute[] {
  const { store } = deps;
  const history: HistoryRow[] = [];
  /** `relation_suggestions` rows, one per (noteId, userId), and the in-flight computations. */
  const suggestionCache = new Map<string, { hash: string; suggestions: Suggestion[] }>();
  const inflight = new Map<string, Promise<Suggestion[]>>();
  // /config/wipe drops the whole LanceDB table and rag_index_meta (not only the caller's)
  store.wipeHooks.push(() => {
    store.rag.chunks.clear();
    store.rag.meta.clear();
  });

  const signalsOf = (c: ParserCtx): Signals => [c.req.signal, deps.closed];
  const userOf = (c: ParserCtx) => c.auth!.user.id;

  /** One "model" call: paced, logged, and answering as configured. */
  const model = async (task: string, userId: string | null, prompt: string, signals: Signals) => {
    const delay = opts.llmDelayMs ?? 0;
    if (delay > 0) await sleep(delay, signals, deps.deadlines);
    const tokens = Math.ceil(prompt.length / 4) + 120;
    store.recordLlmCall({
      userId,
      task,
      model: deps.models()[task]?.models[0] ?? TASK_MODELS[task],
      tokens,
      costUsd: Math.round(tokens * 0.2) / 100_000,
      latencyMs: delay,
    });
    return opts.llmOutput ?? "valid";
  };

  // --- consistency ---------------------------------------------------------------------------

  type Checked = { note: EtapiNote; text: string };

  /** A note as the double's "model" knows it from an index chunk set. */
  const indexedNote = (set: RagChunkSet): EtapiNote => ({
    noteId: set.noteId,
    title: set.noteTitle,
    type: "text",
    isProtected: false,
    attributes: set.attributes.map((a, i) => ({
      attributeId: `${set.noteId}-${i}`,
      noteId: set.noteId,
      ...a,
    })),
  });

  /**
   * `resolveConsistencyNotes`: with `noteIds`, the Core search `#noteId=A OR #noteId=B` (a label
   * lore notes do not carry, so usually nothing); without, the caller's top 8 index chunks.
   */
  const consistencyNotes = async (
    target: EtapiTarget,
    userId: string,
    noteIds: string[] | undefined,
    s: Signals,
  ): Promise<Checked[]> => {
    if (noteIds?.length) {
      const search = noteIds.map((noteId) => `#noteId=${noteId}`).join(" OR ");
      const found = await searchNotes(target, search, s);
      return await Promise.all(found.map(async (note) => ({
        note,
        text: plainText(await getContent(target, note.noteId, s).catch(() => "")),
      })));
    }
    return queryLore(store, CONSISTENCY_QUERY, CONSISTENCY_TOP_K, { userId, anyScore: true })
      .map((h) => ({ note: indexedNote(h.set), text: h.content }));
  };

  const findIssues = (checked: Checked[]) => {
    const issues: {
      type: string;
      severity: string;
      description: string;
      affectedNoteIds: string[];
    }[] = [];
    const byId = new Map(checked.map((c) => [c.note.noteId, c.note]));
    const rel = (a: EtapiNote, name: string, b: string) =>
      a.attributes.some((x) =>
        x.noteId === a.noteId && x.type === "relation" && x.name === name && x.value === b
      );
    const pairs = new Set<string>();
    for (const a of byId.values()) {
      for (const b of byId.values()) {
        const key = [a.noteId, b.noteId].sort().join("|");
        if (a === b || pairs.has(key)) continue;
        if (
          rel(a, "relAlly", b.noteId) &&
          (rel(a, "relEnemy", b.noteId) || rel(b, "relEnemy", a.noteId))
        ) {
          pairs.add(key);
          issues.push({
            type: "contradiction",
            severity: "high",
            description: `${a.title} is recorded as both an ally and an enemy of ${b.title}.`,
            affectedNoteIds: [a.noteId, b.noteId],
          });
        }
        const [da, db] = [labelOf(a, "inWorldDate"), labelOf(b, "inWorldDate")];
        if (rel(a, "relCaused", b.noteId) && da && db && da > db) {
          issues.push({
            type: "timeline",
            severity: "high",
            description:
              `${a.title} (${da}) is said to cause ${b.title}, which happened earlier (${db}).`,
            affectedNoteIds: [a.noteId, b.noteId],
          });
        }
      }
    }
    for (const n of byId.values()) {
      const date = labelOf(n, "inWorldDate");
      if (date !== undefined && !/\d/.test(date)) {
        issues.push({
          type: "timeline",
          severity: "medium",
          description: `${n.title} has an in-world date that cannot be placed on the timeline.`,
          affectedNoteIds: [n.noteId],
        });
      }
    }
    const byTitle = Map.groupBy(byId.values(), (n) => n.title.trim().toLowerCase());
    for (const same of byTitle.values()) {
      if (same.length < 2) continue;
      issues.push({
        type: "naming",
        severity: "medium",
        description: `${same.length} entries share the name "${same[0].title}".`,
        affectedNoteIds: same.map((n) => n.noteId),
      });
    }
    const linked = new Set<string>();
    for (const n of byId.values()) {
      for (const a of n.attributes) {
        if (a.noteId !== n.noteId || a.type !== "relation") continue;
        if (!CANONICAL_BY_NAME.has(a.name) && a.name !== "internalLink") continue;
        linked.add(n.noteId);
        linked.add(a.value);
      }
    }
    for (const n of byId.values()) {
      if (linked.has(n.noteId)) continue;
      issues.push({
        type: "orphan",
        severity: "low",
        description: `${n.title} is not connected to any other lore entry.`,
        affectedNoteIds: [n.noteId],
      });
    }
    const summary = issues.length
      ? `Found ${issues.length} issue(s) across ${checked.length} lore entries.`
      : `No consistency issues found across ${checked.length} lore entries.`;
    return { issues, summary };
  };

  const runConsistency = async (c: ParserCtx, target: EtapiTarget) => {
    const s = signalsOf(c);
    const checked = await consistencyNotes(
      target,
      userOf(c),
      (c.body as { noteIds?: string[] } | undefined)?.noteIds,
      s,
    );
    if (checked.length === 0) return { issues: [], summary: "No lore notes found to check." };
    const prompt = checked.map((x) =>
      `## ${x.note.title} (${x.note.noteId})\n${x.text.slice(0, 600)}`
    )
      .join("\n\n");
    const output = await model("consistency", userOf(c), prompt, s);
    if (output === "invalid") return { issues: [], summary: "LLM response failed validation." };
    if (output === "unparseable") {
      return { issues: [], summary: "Failed to parse consistency check response." };
    }
    return findIssues(checked);
  };

  // --- gaps ----------------------------------------------------------------------------------

  const runGaps = async (c: ParserCtx, target: EtapiTarget, logUserId: string | null) => {
    const s = signalsOf(c);
    const notes = await searchNotes(target, "#lore", s);
    const typeCounts: Record<string, number> = {};
    for (const n of notes) {
      const type = labelOf(n, "loreType") ?? "unknown";
      typeCounts[type] = (typeCounts[type] ?? 0) + 1;
    }
    const census = Object.entries(typeCounts).map(([k, v]) => `${k}: ${v}`).join("\n");
    const output = await model("gap-detect", logUserId, census, s);
    const totals = { typeCounts, totalNotes: notes.length };
    if (output === "invalid") {
      return { gaps: [], summary: "LLM response failed validation.", ...totals };
    }
    if (output === "unparseable") {
      return { gaps: [], summary: "Failed to parse gap analysis.", ...totals };
    }
    const gaps = PILLARS.flatMap((p) => {
      const count = p.types.reduce((sum, type) => sum + (typeCounts[type] ?? 0), 0);
      if (count === 0) {
        return [{
          area: p.area,
          severity: p.core ? "high" : "medium",
          description: `No lore entries cover ${p.area.toLowerCase()} yet.`,
          suggestion: `Write a first ${p.types[0]} entry and connect it to existing lore.`,
        }];
      }
      if (count === 1) {
        return [{
          area: p.area,
          severity: "low",
          description: `Only one entry covers ${p.area.toLowerCase()}.`,
          suggestion: `Add a second ${p.types[0]} entry to give it depth.`,
        }];
      }
      return [];
    }).slice(0, 5);
    return {
      gaps,
      summary: `${notes.length} lore entries across ${
        Object.keys(typeCounts).length
      } types; ${gaps.length} gap(s) found.`,
      ...totals,
    };
  };

  // --- relationship suggestions --------------------------------------------------------------

  const computeSuggestions = async (
    c: ParserCtx,
    _target: EtapiTarget,
    noteId: string,
    text: string,
  ): Promise<Suggestion[]> => {
    const s = signalsOf(c);
    // `suggestRelationsForNote`: the caller's index first; nothing similar → no model call
    const lore = queryLore(store, text, 15, { userId: userOf(c) }).map((h) => indexedNote(h.set));
    if (lore.length === 0) return [];
    const output = await model("suggest", userOf(c), text, s);
    if (output !== "valid") return [];
    const sentences = text.split(/(?<=[.!?])\s+|\n+/);
    const lower = text.toLowerCase();
    const out: Suggestion[] = [];
    for (const n of lore) {
      const title = plainText(n.title);
      if (n.noteId === noteId || title.length < 3 || !lower.includes(title.toLowerCase())) continue;
      const sentence = sentences.find((x) => x.toLowerCase().includes(title.toLowerCase())) ?? "";
      const rest = sentence.replace(
        new RegExp(title.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "ig"),
        " ",
      );
      const keyword = KEYWORD_TYPES.find(([re]) => re.test(rest))?.[1];
      const byLore = TYPE_BY_LORE[labelOf(n, "loreType") ?? ""];
      out.push({
        targetNoteId: n.noteId,
        targetTitle: n.title,
        relationshipType: keyword ?? byLore ?? "related_to",
        description: sentence.trim().slice(0, 200) || `Mentioned together with ${title}.`,
        confidence: keyword ? "high" : byLore ? "medium" : "low",
      });
    }
    return out;
  };

  // --- relationship apply --------------------------------------------------------------------

  const applyRelations = async (c: ParserCtx, target: EtapiTarget) => {
    const s = signalsOf(c);
    const body = c.body as {
      sourceNoteId: string;
      relations: { targetNoteId: string; relationshipType: string; description?: string }[];
      bidirectional?: boolean;
    };
    const { sourceNoteId } = body;
    const applied: unknown[] = [];
    const skipped: unknown[] = [];
    const failed: unknown[] = [];
    let source: EtapiNote;
    try {
      source = await getNote(target, sourceNoteId, s);
    } catch (e) {
      failed.push({
        sourceNoteId,
        targetNoteId: "N/A",
        relationshipType: "N/A",
        error: `Failed to fetch source note: ${(e as Error).message}`,
      });
      return { applied, skipped, failed };
    }
    // computed once, before any write (inherited relations included, as in the real code)
    const existing = source.attributes.filter((a) => a.type === "relation");
    for (const r of body.relations) {
      const item = {
        sourceNoteId,
        targetNoteId: r.targetNoteId,
        relationshipType: r.relationshipType,
      };
      if (!(RELATIONSHIP_TYPES as readonly string[]).includes(r.relationshipType)) {
        skipped.push({ ...item, reason: `Unknown relationship type: ${r.relationshipType}` });
        continue;
      }
      const relationName = coreRelationName(r.relationshipType);
      if (existing.some((a) => a.name === relationName && a.value === r.targetNoteId)) {
        skipped.push({ ...item, reason: "Relation already exists." });
        continue;
      }
      try {
        await addAttribute(target, s, {
          noteId: sourceNoteId,
          type: "relation",
          name: relationName,
          value: r.targetNoteId,
        });
        if (r.description) {
          await addAttribute(target, s, {
            noteId: sourceNoteId,
            type: "label",
            name: "relationNote",
            value: `${r.relationshipType}:${r.targetNoteId}: ${r.description}`,
          });
        }
        if (body.bidirectional ?? true) {
          await addAttribute(target, s, {
            noteId: r.targetNoteId,
            type: "relation",
            name: relationName,
            value: sourceNoteId,
          });
        }
        history.push({
          id: cuid(),
          userId: null,
          sourceNoteId,
          targetNoteId: r.targetNoteId,
          type: r.relationshipType,
          relationName,
          description: r.description ?? null,
          createdAt: store.now(),
        });
        applied.push({ ...item, relationName });
      } catch (e) {
        failed.push({ ...item, error: (e as Error).message });
      }
    }
    return { applied, skipped, failed };
  };

  // --- graph ---------------------------------------------------------------------------------

  const traverse = async (
    target: EtapiTarget,
    centerNoteId: string,
    maxDepth: number,
    maxNodes: number,
    s: Signals,
  ) => {
    const nodes = new Map<
      string,
      { noteId: string; title: string; loreType: string; depth: number }
    >();
    const edges: { sourceNoteId: string; targetNoteId: string; relationshipType: string }[] = [];
    const edgeSeen = new Set<string>();
    const queued = new Set([centerNoteId]);
    let queue = [{ noteId: centerNoteId, depth: 0 }];
    while (queue.length > 0 && nodes.size < maxNodes) {
      const depth = queue[0].depth;
      const batch = queue.filter((q) => q.depth === depth && !nodes.has(q.noteId));
      queue = queue.filter((q) => q.depth !== depth);
      const settled = await Promise.allSettled(batch.map((b) => getNote(target, b.noteId, s)));
      const next: typeof queue = [];
      settled.forEach((r, i) => {
        if (r.status === "rejected" || nodes.size >= maxNodes) return;
        const note = r.value;
        const item = batch[i];
        nodes.set(item.noteId, {
          noteId: item.noteId,
          title: note.title,
          loreType: labelOf(note, "loreType") ?? "unknown",
          depth: item.depth,
        });
        for (const a of note.attributes) {
          const canonical = a.type === "relation" ? CANONICAL_BY_NAME.get(a.name) : undefined;
          if (!canonical || a.value === item.noteId) continue;
          const key = [item.noteId, a.value, canonical].sort().join("::");
          if (edgeSeen.has(key)) continue;
          edgeSeen.add(key);
          edges.push({
            sourceNoteId: item.noteId,
            targetNoteId: a.value,
            relationshipType: canonical,
          });
          if (item.depth < maxDepth && !queued.has(a.value)) {
            queued.add(a.value);
            next.push({ noteId: a.value, depth: item.depth + 1 });
          }
        }
      });
      queue = [...next, ...queue];
    }
    const all = [...nodes.values()];
    return {
      nodes: all,
      edges,
      centerNoteId,
      maxDepthReached: all.length ? Math.max(...all.map((n) => n.depth)) : 0,
      truncated: nodes.size >= maxNodes,
    };
  };

  // --- autocomplete --------------------------------------------------------------------------

  /** The three phases, each adding the new items it finds. */
  const autocomplete = async (c: ParserCtx, q: string, limit: number) => {
    const seen = new Set<string>();
    const suggestions: { noteId: string; title: string }[] = [];
    const add = (items: { noteId: string; title: string }[]) => {
      const fresh = items.filter((i) => !seen.has(i.noteId));
      for (const i of fresh) seen.add(i.noteId);
      suggestions.push(...fresh);
    };
    const lowerQ = q.toLowerCase();
    const meta = [...store.rag.meta.values()];
    // phase 1: the global rag_index_meta titles (contains, case-insensitive, by title)
    add(
      meta.filter((e) => e.noteTitle.toLowerCase().includes(lowerQ))
        .sort((a, b) => a.noteTitle.localeCompare(b.noteTitle)).slice(0, limit)
        .map((e) => ({ noteId: e.noteId, title: e.noteTitle })),
    );
    // phase 2: the caller's chunks, by similarity
    if (suggestions.length < limit) {
      const hits = queryLore(store, q, limit - suggestions.length + seen.size, {
        userId: userOf(c),
      }).map((h) => ({ noteId: h.noteId, title: h.noteTitle }))
        .filter((h) => !seen.has(h.noteId)).slice(0, limit - suggestions.length);
      add(hits);
    }
    // phase 3: the model proposes titles, each matched back to rag_index_meta
    if (suggestions.length < Math.min(3, limit) && meta.length >= 5) {
      const output = await model("autocomplete", userOf(c), `Complete: "${q}"`, signalsOf(c));
      if (output === "valid") {
        const stem = lowerQ.slice(0, 3);
        const proposed = meta.filter((e) =>
          e.noteTitle.toLowerCase().split(/\s+/).some((w) => w.startsWith(stem))
        );
        const found: { noteId: string; title: string }[] = [];
        for (const p of proposed) {
          if (suggestions.length + found.length >= limit) break;
          const match = meta.find((e) =>
            e.noteTitle.toLowerCase().includes(p.noteTitle.toLowerCase())
          );
          if (match && !seen.has(match.noteId) && !found.some((f) => f.noteId === match.noteId)) {
            found.push({ noteId: match.noteId, title: match.noteTitle });
          }
        }
        add(found);
      }
    }
    return suggestions;
  };

  const autocompleteQuery = t.Object({
    q: t.String({ minLength: 1 }),
    limit: t.Optional(t.Number({ minimum: 1, maximum: 20 })),
  });

  // --- the table -----------------------------------------------------------------------------

  const owner = "owner" as const;
  const suggest = RATE_GROUPS.suggest;
  const checkBody = t.Object({ noteIds: t.Optional(t.Array(t.String())) });

  return [
    {
      method: "POST",
      path: "/rag/query",
      auth: owner,
      body: t.Object({
        text: t.String({ minLength: 1 }),
        topK: t.Optional(t.Number({ minimum: 1, maximum: 50 })),
      }),
      handler: (c) => {
        const { text, topK } = c.body as { text: string; topK?: number };
        const results = queryLore(store, text, topK ?? 10, { userId: userOf(c) })
          .map(({ set: _set, ...hit }) => hit);
        return json(200, { results });
      },
    },
    {
      method: "POST",
      path: "/rag/reindex",
      auth: owner,
      handler: async (c) => {
        const target = deps.coreFor(userOf(c));
        const s = signalsOf(c);
        let indexed = 0;
        let failed = 0;
        for (const note of await searchNotes(target, "#lore", s)) {
          try {
            await indexNote(store, target, note.noteId, userOf(c), s);
            indexed++;
          } catch {
            failed++;
          }
        }
        return json(200, { indexed, failed });
      },
    },
    {
      method: "POST",
      path: "/rag/reindex/:noteId",
      auth: owner,
      handler: async (c) => {
        const noteId = c.params.noteId;
        try {
          await indexNote(store, deps.coreFor(userOf(c)), noteId, userOf(c), signalsOf(c));
          return json(200, { ok: true, noteId });
        } catch (e) {
          // the real route reads the failure's text: Core's 404 is a missing note
          const missing = /missing note|not found|\b404\b/i.test(String((e as Error).message));
          return json(missing ? 404 : 500, {
            error: missing ? "NOTE_NOT_FOUND" : "REINDEX_FAILED",
            message: missing ? "Note not found." : "Reindex failed.",
            noteId,
          });
        }
      },
    },
    {
      method: "GET",
      path: "/rag/status",
      auth: owner,
      // global, not per user: rag_index_meta; the keys are left out while it is empty
      handler: () => {
        const rows = [...store.rag.meta.values()];
        const latest = rows.reduce<(typeof rows)[number] | undefined>(
          (a, r) => (!a || r.embeddedAt > a.embeddedAt ? r : a),
          undefined,
        );
        return json(200, {
          indexedNotes: rows.length,
          ...(latest ? { lastIndexed: latest.embeddedAt.toISOString(), model: latest.model } : {}),
        });
      },
    },
    {
      method: "POST",
      path: "/consistency/check",
      auth: owner,
      body: checkBody,
      rate: RATE_GROUPS.consistency,
      handler: async (c) => json(200, await runConsistency(c, deps.coreFor(userOf(c)))),
    },
    {
      method: "POST",
      path: "/suggest/relationships",
      auth: owner,
      body: t.Object({ text: t.String(), noteId: t.Optional(t.String()) }),
      rate: suggest,
      handler: async (c) => {
        const { text, noteId = "unknown" } = c.body as { text: string; noteId?: string };
        const userId = userOf(c);
        const target = deps.coreFor(userId);
        const key = `${noteId}::${userId}`;
        const hash = createHash("sha256").update(text).digest("hex");
        const cached = suggestionCache.get(key);
        if (cached?.hash === hash) return json(200, { suggestions: cached.suggestions });
        let pending = inflight.get(key); // joined even when the text differs (sic)
        if (!pending) {
          pending = computeSuggestions(c, target, noteId, text).then((suggestions) => {
            suggestionCache.set(key, { hash, suggestions });
            return suggestions;
          }).finally(() => inflight.delete(key));
          inflight.set(key, pending);
        }
        return json(200, { suggestions: await pending });
      },
    },
    {
      method: "POST",
      path: "/suggest/relationships/apply",
      auth: owner,
      body: t.Object({
        sourceNoteId: t.String(),
        relations: t.Array(t.Object({
          targetNoteId: t.String(),
          relationshipType: t.String(),
          description: t.Optional(t.String()),
        })),
        bidirectional: t.Optional(t.Boolean()),
      }),
      rate: suggest,
      handler: async (c) => json(200, await applyRelations(c, deps.coreFor(userOf(c)))),
    },
    {
      method: "GET",
      path: "/suggest/graph/:noteId",
      auth: owner,
      rate: suggest,
      handler: async (c) => {
        const q = readQuery(
          c,
          t.Object({
            depth: t.Optional(t.Number({ minimum: 1, maximum: 3 })),
            maxNodes: t.Optional(t.Number({ minimum: 5, maximum: 100 })),
          }),
          ["depth", "maxNodes"],
        );
        if ("refused" in q) return q.refused;
        const { depth = 2, maxNodes = 50 } = q.value as { depth?: number; maxNodes?: number };
        const target = deps.coreFor(userOf(c));
        return json(
          200,
          await traverse(target, c.params.noteId, Math.min(depth, 3), maxNodes, signalsOf(c)),
        );
      },
    },
    {
      method: "GET",
      path: "/suggest/gaps",
      auth: owner,
      rate: suggest,
      handler: async (c) => json(200, await runGaps(c, deps.coreFor(userOf(c)), userOf(c))),
    },
    {
      method: "POST",
      path: "/suggest/gaps",
      auth: owner,
      rate: suggest,
      // the POST variants do not pass userId into the model log (contract §2.5)
      handler: async (c) => json(200, await runGaps(c, deps.coreFor(userOf(c)), null)),
    },
    {
      method: "GET",
      path: "/suggest/autocomplete",
      auth: owner,
      rate: suggest,
      handler: async (c) => {
        const q = readQuery(c, autocompleteQuery, ["limit"]);
        if ("refused" in q) return q.refused;
        const { q: text, limit = 10 } = q.value as { q: string; limit?: number };
        return json(200, { suggestions: await autocomplete(c, text, limit) });
      },
    },
    {
      method: "GET",
      path: "/suggest/history/:noteId",
      auth: owner,
      rate: suggest,
      handler: (c) => {
        const q = readQuery(
          c,
          t.Object({ limit: t.Optional(t.Number({ minimum: 1, maximum: 50 })) }),
          ["limit"],
        );
        if ("refused" in q) return q.refused;
        const { limit = 20 } = q.value as { limit?: number };
        const { noteId } = c.params;
        // rows are written without userId but read with it: always empty (contract §2.5)
        const entries = history
          .filter((h) =>
            h.userId === userOf(c) && (h.sourceNoteId === noteId || h.targetNoteId === noteId)
          )
          .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
          .slice(0, limit)
          .map(({ userId: _userId, ...row }) => row);
        return json(200, { entries });
      },
    },
  ];
}
