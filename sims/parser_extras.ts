/**
 * Parser test double, feature module: imports (system packs and Azgaar maps, §2.8), web-push
 * subscriptions (§2.10) and usage/budgets (§2.11), as the real routes behave, quirks included:
 *
 * - imports write real notes into the caller's Core through ETAPI, one call at a time: create,
 *   `~template`, then labels (`#statblock`, `#crName`, `#importSource`, the mapped stats; Azgaar:
 *   `#faction`, `#location`, `#religion`, `#race` plus details). Duplicates are found by one
 *   label search per kind, by lower-cased trimmed title; a failed search is ignored. A system
 *   pack never adds its own new titles to that set (two equal names in one pack are both
 *   created); an Azgaar import does. Per-note failures are listed with the raw ETAPI error text.
 * - a push subscription is one row per endpoint (subscribing again moves it to the caller);
 *   unsubscribe deletes only the caller's row and is idempotent.
 * - usage is computed from `store.llmCalls`; `dailyBurn` steps one day at a time from `from`
 *   while the cursor is ≤ `to`; budgets are one row per user, replaced in full by PUT.
 * - `/config/wipe` deletes the caller's `llm_call_log` rows (budgets and subscriptions stay).
 *
 * @module
 */
import {
  etapi,
  ETAPI_TIMEOUT_MS,
  type EtapiTarget,
  json,
  type ParserCtx,
  type ParserFeatureDeps,
  type ParserRoute,
  type Schema,
  t,
} from "./parser_kit.ts";
import type { LlmCall, ParserStore } from "./parser_store.ts";

/** Knobs of this feature in the double. */
export interface ExtrasSimOptions {
  /** `VAPID_PUBLIC_KEY`; empty or absent: no key, and subscribing answers 503. */
  vapidPublicKey?: string;
}

/** A `push_subscriptions` row. */
export interface PushSubscriptionRow {
  userId: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  createdAt: Date;
}

/** A `user_budgets` row. */
export interface BudgetRow {
  dailyBudgetUsd: number | null;
  monthlyBudgetUsd: number | null;
  alertEmail: string | null;
}

/** This feature's tables (the real Parser keeps them in Postgres). */
export interface ExtrasTables {
  /** Push subscriptions by endpoint (unique, like the real column). */
  subscriptions: Map<string, PushSubscriptionRow>;
  /** Budgets by user id. */
  budgets: Map<string, BudgetRow>;
}

const TABLES = new WeakMap<ParserStore, ExtrasTables>();

/**
 * This feature's tables for a store (created on first use), for test setup and assertions.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createParserStore } from "./parser_store.ts";
 * const store = createParserStore();
 * const { subscriptions } = extrasTables(store);
 * assert.equal(subscriptions.size, 0);
 * assert.equal(extrasTables(store).subscriptions, subscriptions); // one set of tables per store
 * ```
 */
export function extrasTables(store: ParserStore): ExtrasTables {
  let tables = TABLES.get(store);
  if (!tables) {
    tables = { subscriptions: new Map(), budgets: new Map() };
    TABLES.set(store, tables);
  }
  return tables;
}

const DAY_MS = 86_400_000;

// ---------------------------------------------------------------------------------------------
// Imports (§2.8)
// ---------------------------------------------------------------------------------------------

const numOrString = t.Optional(t.Union([t.String(), t.Number()]));
const optString = t.Optional(t.String());

const statblockEntry = t.Object({
  name: t.String(),
  cr: numOrString,
  type: optString,
  size: optString,
  alignment: optString,
  ac: numOrString,
  hp: numOrString,
  speed: optString,
  str: numOrString,
  dex: numOrString,
  con: numOrString,
  int: numOrString,
  wis: numOrString,
  cha: numOrString,
  immunities: optString,
  resistances: optString,
  vulnerabilities: optString,
  abilities: optString,
  actions: optString,
  legendaryActions: optString,
  content: optString,
});

/** Entry field → label name, in the order the real route writes them. */
const STATBLOCK_LABELS: [string, string][] = [
  ["cr", "challengeRating"],
  ["type", "creatureType"],
  ["size", "size"],
  ["alignment", "alignment"],
  ["ac", "ac"],
  ["hp", "hp"],
  ["speed", "speed"],
  ["str", "str"],
  ["dex", "dex"],
  ["con", "con"],
  ["int", "int"],
  ["wis", "wis"],
  ["cha", "cha"],
  ["immunities", "immunities"],
  ["resistances", "resistances"],
  ["vulnerabilities", "vulnerabilities"],
  ["abilities", "abilities"],
  ["actions", "actions"],
  ["legendaryActions", "legendaryActions"],
];

/** TypeBox `t.Any()`: accepts any value, but a required key must be present. */
const ANY: Schema = {};
/** TypeBox `t.Null()` (the kit has no such builder): a literal `null`. */
const NULL: Schema = { const: null };

const INVALID_FORMAT = {
  error:
    "Uploaded data does not look like an Azgaar FMG export. Expected pack.burgs or pack.states arrays.",
  code: "INVALID_FORMAT",
};

interface Bucket {
  created: { noteId: string; name: string }[];
  skipped: { name: string; reason: string }[];
  errors: { name: string; error: string }[];
}

const bucket = (): Bucket => ({ created: [], skipped: [], errors: [] });

// deno-lint-ignore no-explicit-any
type Loose = any; // Azgaar data is read like the real pipeline reads it: unchecked

/** `isAzgaarMapData`: `pack` is an object with a `burgs`, `states` or `religions` array. */
function isAzgaar(map: Loose): boolean {
  if (!map || typeof map !== "object") return false;
  const pack = map.pack;
  if (typeof pack !== "object" || !pack) return false;
  return Array.isArray(pack.burgs) || Array.isArray(pack.states) ||
    Array.isArray(pack.religions);
}

/** The live entries of an Azgaar array: slot 0 is reserved, removed ones keep their slot. */
function live(list: Loose): Loose[] {
  return ((list ?? []) as Loose[]).filter((e) => e.i > 0 && !e.removed && e.name?.trim());
}

function previewOf(map: Loose) {
  const pack = map.pack ?? {};
  const count = (list: Loose) => ((list ?? []) as Loose[]).filter((e) => e.i > 0 && !e.removed);
  return {
    mapName: map.info?.mapName ?? map.settings?.mapName ?? "Unnamed Map",
    stateCnt: count(pack.states).length,
    burgCnt: count(pack.burgs).length,
    religionCnt: count(pack.religions).length,
    cultureCnt: count(pack.cultures).length,
    noteCnt: (map.notes ?? []).length,
  };
}

/** Writes one note the way the real client does: create, template, then each label. */
async function writeNote(
  core: EtapiTarget,
  signals: (AbortSignal | undefined)[],
  note: { parentNoteId: string; title: string; content: string; template: string },
  labels: [string, string][],
): Promise<string> {
  const created = await etapi(core, "POST", "/create-note", ETAPI_TIMEOUT_MS, signals, {
    json: {
      parentNoteId: note.parentNoteId,
      title: note.title,
      type: "text",
      content: note.content,
    },
  });
  const noteId = JSON.parse(created.text).note.noteId as string;
  const attribute = (type: string, name: string, value: string) =>
    etapi(core, "POST", "/attributes", ETAPI_TIMEOUT_MS, signals, {
      json: { noteId, type, name, value },
    });
  await attribute("relation", "template", note.template);
  for (const [name, value] of labels) await attribute("label", name, value);
  return noteId;
}

/** Lower-cased titles of the notes carrying `#label`; empty when the search fails. */
async function existingTitles(
  core: EtapiTarget,
  signals: (AbortSignal | undefined)[],
  label: string,
): Promise<Set<string>> {
  const out = new Set<string>();
  try {
    const r = await etapi(
      core,
      "GET",
      `/notes?search=${encodeURIComponent(`#${label}`)}`,
      ETAPI_TIMEOUT_MS,
      signals,
    );
    for (const n of JSON.parse(r.text).results as { title?: string }[]) {
      if (n.title) out.add(n.title.toLowerCase().trim());
    }
  } catch { /* non-fatal in the real pipeline: continue without duplicate check */ }
  return out;
}

interface AzgaarOptions {
  importStates?: boolean;
  importBurgs?: boolean;
  importReligions?: boolean;
  importCultures?: boolean;
  importNotes?: boolean;
  skipDuplicates?: boolean;
}

/** One Azgaar category: which label dedups it and how an entity becomes a note. */
interface Category {
  key: "states" | "burgs" | "religions" | "cultures" | "notes";
  option: keyof AzgaarOptions;
  dedupLabel: string;
  template: string;
  entities(map: Loose): Loose[];
  note(e: Loose, ctx: { mapName: string; names: Names }): {
    title: string;
    content: string;
    labels: [string, string][];
  };
}

interface Names {
  state: Map<number, string>;
  culture: Map<number, string>;
  burg: Map<number, string>;
}

const CATEGORIES: Category[] = [
  {
    key: "states",
    option: "importStates",
    dedupLabel: "faction",
    template: "_template_faction",
    entities: (map) => live(map.pack?.states),
    note: (s, { mapName, names }) => {
      const title = s.fullName && s.fullName !== s.name ? s.fullName : s.name;
      const labels: [string, string][] = [["faction", ""], ["importSource", "azgaar"]];
      if (s.form) labels.push(["factionType", s.form]);
      if (s.formName) labels.push(["government", s.formName]);
      const capital = s.capital != null ? names.burg.get(s.capital) : undefined;
      if (capital) labels.push(["capital", capital]);
      const gov = s.formName ? ` (${s.formName})` : "";
      return {
        title,
        content: `<p><strong>${title}</strong>${gov} — imported from Azgaar map "${mapName}".</p>`,
        labels,
      };
    },
  },
  {
    key: "burgs",
    option: "importBurgs",
    dedupLabel: "location",
    template: "_template_location",
    entities: (map) => live(map.pack?.burgs),
    note: (b, { mapName, names }) => {
      const isCapital = b.capital === 1;
      const isPort = (b.port ?? 0) > 0;
      const type = isCapital ? "Capital" : isPort ? "Port" : b.type ?? "Settlement";
      const labels: [string, string][] = [
        ["location", ""],
        ["locationType", type],
        ["importSource", "azgaar"],
      ];
      if (b.population != null && b.population > 0) {
        labels.push(["population", Math.round(b.population * 1000).toLocaleString("en-US")]);
      }
      const state = b.state != null ? names.state.get(b.state) : undefined;
      if (state) labels.push(["region", state]);
      const culture = b.culture != null ? names.culture.get(b.culture) : undefined;
      if (culture) labels.push(["culture", culture]);
      const traits = [
        ...(isCapital ? ["capital"] : []),
        ...(isPort ? ["port"] : []),
        ...(b.citadel === 1 ? ["citadel"] : []),
        ...(b.walls === 1 ? ["walled"] : []),
      ];
      const text = `<strong>${b.name}</strong> — ${type.toLowerCase()}` +
        (state ? ` in ${state}` : "") + (traits.length ? ` (${traits.join(", ")})` : "") +
        `. Imported from Azgaar map "${mapName}".`;
      return { title: b.name, content: `<p>${text}</p>`, labels };
    },
  },
  {
    key: "religions",
    option: "importReligions",
    dedupLabel: "religion",
    template: "_template_religion",
    entities: (map) => live(map.pack?.religions),
    note: (r, { mapName }) => {
      const labels: [string, string][] = [["religion", ""], ["importSource", "azgaar"]];
      if (r.faith && r.faith !== r.name) labels.push(["faith", r.faith]);
      if (r.form) labels.push(["faithForm", r.form]);
      if (r.type) labels.push(["faithType", r.type]);
      if (r.deity) labels.push(["deity", r.deity]);
      const parts = [r.faith ?? r.name, ...(r.form ? [r.form] : [])];
      if (r.deity) parts.push(`deity: ${r.deity}`);
      return {
        title: r.name,
        content: `<p><strong>${r.name}</strong> — ${
          parts.join(", ")
        }. Imported from Azgaar map "${mapName}".</p>`,
        labels,
      };
    },
  },
  {
    key: "cultures",
    option: "importCultures",
    dedupLabel: "race",
    template: "_template_race",
    entities: (map) => live(map.pack?.cultures),
    note: (c, { mapName }) => {
      const labels: [string, string][] = [["race", ""], ["importSource", "azgaar"]];
      if (c.type) labels.push(["cultureType", c.type]);
      const type = c.type ? ` (${c.type})` : "";
      return {
        title: c.name,
        content:
          `<p><strong>${c.name}</strong>${type} culture — imported from Azgaar map "${mapName}".</p>`,
        labels,
      };
    },
  },
  {
    key: "notes",
    option: "importNotes",
    dedupLabel: "location",
    template: "_template_location",
    entities: (map) => ((map.notes ?? []) as Loose[]).filter((n) => n.name?.trim()),
    note: (n, { mapName }) => ({
      title: n.name,
      content: n.legend?.trim()
        ? n.legend
        : `<p>Map note "${n.name}" imported from Azgaar map "${mapName}".</p>`,
      labels: [["location", ""], ["locationType", "Point of Interest"], ["importSource", "azgaar"]],
    }),
  },
];

/** `importAzgaarMap`: categories in order, each deduplicated against Core and itself. */
async function importAzgaar(
  core: EtapiTarget,
  signals: (AbortSignal | undefined)[],
  map: Loose,
  parentNoteId: string,
  options: AzgaarOptions,
) {
  const mapName = map.info?.mapName ?? map.settings?.mapName ?? "Azgaar Map";
  const pack = map.pack ?? {};
  const byIndex = (list: Loose, name: (e: Loose) => string) =>
    new Map<number, string>(live(list).map((e) => [e.i, name(e)]));
  const names: Names = {
    state: byIndex(pack.states, (s) => s.fullName ?? s.name),
    culture: byIndex(pack.cultures, (c) => c.name),
    burg: byIndex(pack.burgs, (b) => b.name),
  };
  const skipDuplicates = options.skipDuplicates ?? true;
  const result: Record<Category["key"], Bucket> = {
    states: bucket(),
    burgs: bucket(),
    religions: bucket(),
    cultures: bucket(),
    notes: bucket(),
  };
  for (const category of CATEGORIES) {
    if (options[category.option] === false) continue;
    const existing = skipDuplicates
      ? await existingTitles(core, signals, category.dedupLabel)
      : new Set<string>();
    const out = result[category.key];
    for (const entity of category.entities(map)) {
      const note = category.note(entity, { mapName, names });
      const key = note.title.toLowerCase().trim();
      if (skipDuplicates && existing.has(key)) {
        out.skipped.push({ name: note.title, reason: "duplicate" });
        continue;
      }
      try {
        const noteId = await writeNote(
          core,
          signals,
          { parentNoteId, title: note.title, content: note.content, template: category.template },
          note.labels,
        );
        out.created.push({ noteId, name: note.title });
        existing.add(key);
      } catch (e) {
        out.errors.push({ name: note.title, error: (e as Error).message });
      }
    }
  }
  const all = Object.values(result);
  const sum = (f: (b: Bucket) => unknown[]) => all.reduce((n, b) => n + f(b).length, 0);
  return {
    mapName,
    ...result,
    totals: {
      created: sum((b) => b.created),
      skipped: sum((b) => b.skipped),
      errors: sum((b) => b.errors),
    },
  };
}

function importRoutes(deps: ParserFeatureDeps): ParserRoute[] {
  const signals = (c: ParserCtx) => [c.req.signal, deps.closed];
  return [
    {
      method: "POST",
      path: "/import/system-pack",
      auth: "owner",
      body: t.Object({
        notes: t.Array(statblockEntry),
        parentNoteId: optString,
        skipDuplicates: t.Optional(t.Boolean()),
      }),
      handler: async (c) => {
        const body = c.body as {
          notes: Record<string, string | number | undefined>[];
          parentNoteId?: string;
          skipDuplicates?: boolean;
        };
        if (body.notes.length === 0) {
          return json(400, {
            error: "notes array is required and must not be empty",
            code: "INVALID_INPUT",
          });
        }
        const core = deps.coreFor(c.auth!.user.id);
        const parentNoteId = body.parentNoteId ?? "root";
        const skipDuplicates = body.skipDuplicates ?? true;
        const existing = skipDuplicates
          ? await existingTitles(core, signals(c), "statblock")
          : new Set<string>();
        const out = bucket();
        for (const entry of body.notes) {
          const name = String(entry.name).trim();
          if (!name) {
            out.errors.push({ name: "(unnamed)", error: "Missing name" });
            continue;
          }
          if (skipDuplicates && existing.has(name.toLowerCase())) {
            out.skipped.push({ name, reason: "duplicate" });
            continue;
          }
          const labels: [string, string][] = [
            ["crName", name],
            ["statblock", ""],
            ["importSource", "system-pack"],
          ];
          for (const [field, label] of STATBLOCK_LABELS) {
            const v = entry[field];
            if (v !== undefined && v !== null && v !== "") labels.push([label, String(v)]);
          }
          try {
            const noteId = await writeNote(core, signals(c), {
              parentNoteId,
              title: name,
              content: String(entry.content ?? ""),
              template: "_template_statblock",
            }, labels);
            out.created.push({ noteId, name });
          } catch (e) {
            out.errors.push({ name, error: (e as Error).message });
          }
        }
        return json(200, {
          created: out.created.length,
          skipped: out.skipped.length,
          errors: out.errors.length,
          detail: out,
        });
      },
    },
    {
      method: "POST",
      path: "/import/azgaar/preview",
      auth: "owner",
      body: t.Object({ mapData: ANY }),
      handler: ({ body }) => {
        const { mapData } = body as { mapData: unknown };
        return isAzgaar(mapData) ? json(200, previewOf(mapData)) : json(400, INVALID_FORMAT);
      },
    },
    {
      method: "POST",
      path: "/import/azgaar",
      auth: "owner",
      body: t.Object({
        mapData: ANY,
        parentNoteId: optString,
        options: t.Optional(t.Object({
          importStates: t.Optional(t.Boolean()),
          importBurgs: t.Optional(t.Boolean()),
          importReligions: t.Optional(t.Boolean()),
          importCultures: t.Optional(t.Boolean()),
          importNotes: t.Optional(t.Boolean()),
          skipDuplicates: t.Optional(t.Boolean()),
        })),
      }),
      handler: async (c) => {
        const body = c.body as { mapData: unknown; parentNoteId?: string; options?: AzgaarOptions };
        if (!isAzgaar(body.mapData)) return json(400, INVALID_FORMAT);
        const core = deps.coreFor(c.auth!.user.id);
        try {
          return json(
            200,
            await importAzgaar(
              core,
              signals(c),
              body.mapData,
              body.parentNoteId ?? "root",
              body.options ?? {},
            ),
          );
        } catch {
          // e.g. a name that is not a string: the pipeline's `.trim()` throws
          return json(500, { error: "Import failed unexpectedly.", code: "IMPORT_ERROR" });
        }
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// Notifications (§2.10)
// ---------------------------------------------------------------------------------------------

function notificationRoutes(deps: ParserFeatureDeps, opts: ExtrasSimOptions): ParserRoute[] {
  const { subscriptions } = extrasTables(deps.store);
  const key = opts.vapidPublicKey || null;
  return [
    {
      method: "GET",
      path: "/notifications/vapid-public-key",
      auth: "owner",
      handler: () => json(200, { publicKey: key }),
    },
    {
      method: "POST",
      path: "/notifications/subscribe",
      auth: "owner",
      body: t.Object({
        endpoint: t.String({ minLength: 1 }),
        keys: t.Object({
          p256dh: t.String({ minLength: 1 }),
          auth: t.String({ minLength: 1 }),
        }),
      }),
      handler: ({ body, auth }) => {
        if (!key) {
          return json(503, {
            error: "PUSH_NOT_CONFIGURED",
            message: "Push notifications not configured.",
          });
        }
        const b = body as { endpoint: string; keys: { p256dh: string; auth: string } };
        const existing = subscriptions.get(b.endpoint);
        subscriptions.set(b.endpoint, {
          userId: auth!.user.id,
          endpoint: b.endpoint,
          p256dh: b.keys.p256dh,
          auth: b.keys.auth,
          createdAt: existing?.createdAt ?? deps.store.now(),
        });
        return json(200, { ok: true });
      },
    },
    {
      method: "DELETE",
      path: "/notifications/unsubscribe",
      auth: "owner",
      body: t.Object({ endpoint: t.String({ minLength: 1 }) }),
      handler: ({ body, auth }) => {
        const { endpoint } = body as { endpoint: string };
        if (subscriptions.get(endpoint)?.userId === auth!.user.id) subscriptions.delete(endpoint);
        return json(200, { ok: true });
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// Usage and metrics (§2.11)
// ---------------------------------------------------------------------------------------------

interface Totals {
  tokens: number;
  cost: number;
  count: number;
}

/** Adds `call` to the totals kept under `key` (insertion order = first appearance). */
function tally<K>(map: Map<K, Totals & { latency: number }>, key: K, call: LlmCall): void {
  const v = map.get(key) ?? { tokens: 0, cost: 0, count: 0, latency: 0 };
  v.tokens += call.tokens;
  v.cost += call.costUsd;
  v.count++;
  v.latency += call.latencyMs;
  map.set(key, v);
}

/** The summary of one user's calls in `[from, to]`, computed like the real route. */
function usageSummary(calls: LlmCall[], from: Date, to: Date) {
  const logs = calls
    .filter((c) => c.createdAt >= from && c.createdAt <= to)
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  const days = new Map<string, Totals>();
  for (let at = from.getTime(); at <= to.getTime(); at += DAY_MS) {
    days.set(new Date(at).toISOString().slice(0, 10), { tokens: 0, cost: 0, count: 0 });
  }
  const tasks = new Map<string, Totals & { latency: number }>();
  const models = new Map<string, Totals & { latency: number }>();
  const latencies = new Map<string, number[]>();
  for (const call of logs) {
    const day = days.get(call.createdAt.toISOString().slice(0, 10));
    if (day) {
      day.tokens += call.tokens;
      day.cost += call.costUsd;
      day.count++;
    }
    tally(tasks, call.task, call);
    tally(models, call.model, call);
    const k = `${call.task}::${call.model}`;
    latencies.set(k, [...(latencies.get(k) ?? []), call.latencyMs]);
  }
  const totalTokens = logs.reduce((n, c) => n + c.tokens, 0);
  const totalLatency = logs.reduce((n, c) => n + c.latencyMs, 0);
  return {
    summary: {
      totalTokens,
      totalRequests: logs.length,
      avgLatency: logs.length ? Math.round(totalLatency / logs.length) : 0,
      totalCostUsd: logs.reduce((n, c) => n + c.costUsd, 0),
    },
    dailyBurn: [...days].map(([date, v]) => ({ date, ...v })),
    taskCosts: [...tasks].map(([task, v]) => ({
      task,
      tokens: v.tokens,
      cost: v.cost,
      count: v.count,
      avgLatency: Math.round(v.latency / v.count),
    })),
    modelDistribution: [...models]
      .map(([model, v]) => ({ model, tokens: v.tokens, cost: v.cost, count: v.count }))
      .sort((a, b) => b.cost - a.cost),
    latencyStats: [...latencies].map(([k, values]) => {
      const [task, model] = k.split("::");
      values.sort((a, b) => a - b);
      const at = (p: number) => values[Math.min(Math.floor(values.length * p), values.length - 1)];
      return {
        task,
        model,
        count: values.length,
        avg: Math.round(values.reduce((n, v) => n + v, 0) / values.length),
        p50: at(0.5),
        p90: at(0.9),
        p95: at(0.95),
        p99: at(0.99),
      };
    }),
  };
}

function usageRoutes(deps: ParserFeatureDeps): ParserRoute[] {
  const { store } = deps;
  const { budgets } = extrasTables(store);
  const callsOf = (userId: string) => store.llmCalls.filter((c) => c.userId === userId);
  const budgetOf = (userId: string): BudgetRow =>
    budgets.get(userId) ?? { dailyBudgetUsd: null, monthlyBudgetUsd: null, alertEmail: null };
  return [
    {
      method: "GET",
      path: "/usage/summary",
      auth: "owner",
      handler: ({ url, auth }) => {
        const now = store.now();
        const q = (name: string) => url.searchParams.get(name) || undefined;
        const from = q("from") ? new Date(q("from")!) : new Date(now.getTime() - 30 * DAY_MS);
        const to = q("to") ? new Date(q("to")!) : now;
        if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime())) {
          return json(400, {
            error: "INVALID_DATE_RANGE",
            message: "Query params 'from' and 'to' must be valid dates.",
          });
        }
        return json(200, usageSummary(callsOf(auth!.user.id), from, to));
      },
    },
    {
      method: "GET",
      path: "/usage/budgets",
      auth: "owner",
      handler: ({ auth }) => json(200, budgetOf(auth!.user.id)),
    },
    {
      method: "PUT",
      path: "/usage/budgets",
      auth: "owner",
      body: t.Object({
        dailyBudgetUsd: t.Optional(t.Union([t.Number(), NULL])),
        monthlyBudgetUsd: t.Optional(t.Union([t.Number(), NULL])),
        alertEmail: t.Optional(t.Union([t.String(), NULL])),
      }),
      handler: ({ body, auth }) => {
        const b = body as Partial<BudgetRow>;
        budgets.set(auth!.user.id, {
          dailyBudgetUsd: b.dailyBudgetUsd ?? null,
          monthlyBudgetUsd: b.monthlyBudgetUsd ?? null,
          alertEmail: b.alertEmail ?? null,
        });
        return json(200, { ok: true });
      },
    },
    {
      method: "GET",
      path: "/usage/alert-status",
      auth: "owner",
      handler: ({ auth }) => {
        const now = store.now();
        const day = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
        const month = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
        const spend = (since: number) =>
          callsOf(auth!.user.id)
            .filter((c) => c.createdAt.getTime() >= since)
            .reduce((n, c) => n + c.costUsd, 0);
        const b = budgetOf(auth!.user.id);
        const dailySpendUsd = spend(day);
        const monthlySpendUsd = spend(month);
        return json(200, {
          configured: budgets.has(auth!.user.id),
          dailySpendUsd,
          monthlySpendUsd,
          dailyBudgetUsd: b.dailyBudgetUsd,
          monthlyBudgetUsd: b.monthlyBudgetUsd,
          dailyOverBudget: b.dailyBudgetUsd !== null && dailySpendUsd > b.dailyBudgetUsd,
          monthlyOverBudget: b.monthlyBudgetUsd !== null && monthlySpendUsd > b.monthlyBudgetUsd,
        });
      },
    },
  ];
}

/**
 * This feature's route rows. Also registers the wipe hook that deletes the wiped user's
 * `llm_call_log` rows.
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
 * const rows = extrasSimRoutes(deps, { vapidPublicKey: "BPublicKeyOfTheDouble" });
 * assert.ok(rows.some((r) => r.path === "/notifications/vapid-public-key"));
 * ```
 */
export function extrasSimRoutes(deps: ParserFeatureDeps, opts: ExtrasSimOptions): ParserRoute[] {
  const { store } = deps;
  store.wipeHooks.push((userId) => {
    const kept = store.llmCalls.filter((c) => c.userId !== userId);
    store.llmCalls.splice(0, store.llmCalls.length, ...kept);
  });
  return [...importRoutes(deps), ...notificationRoutes(deps, opts), ...usageRoutes(deps)];
}
