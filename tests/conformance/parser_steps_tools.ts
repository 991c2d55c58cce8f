/**
 * Parser conformance steps: the copilot (a turn as JSON and as a stream, then applying what it
 * proposed), imports (a system pack and a map export into the scratch note), push
 * notifications (subscribed and removed again), usage and budgets (changed and put back), the
 * configured models, and the wipe's refusal.
 *
 * @module
 */
import { z } from "zod";
import { check, factOf, ownAttrs, readLore, same } from "./kit.ts";
import { loreNotes, streamEvents, unknownIdLike } from "./parser_steps_kit.ts";
import type { ParserStep, ParserSuiteState } from "./parser_suite.ts";

const MISSING_ID = "zzParserConformance2";

const proposalSchema = z.object({
  targets: z.array(z.looseObject({
    kind: z.enum(["update", "create"]),
    targetId: z.string(),
    title: z.string().optional(),
    contentHtml: z.string().optional(),
    labelUpserts: z.array(z.object({ name: z.string(), value: z.string() })).default([]),
  })),
});
const turnSchema = z.object({
  sessionId: z.string().min(1),
  assistantMessage: z.string(),
  citations: z.array(z.object({
    noteId: z.string(),
    title: z.string(),
    source: z.enum(["current", "linked", "rag"]),
  })),
  proposal: proposalSchema.nullable(),
});
const outcomeSchema = z.object({
  created: z.array(z.object({ noteId: z.string(), name: z.string() })),
  skipped: z.array(z.object({ name: z.string(), reason: z.string() })),
  errors: z.array(z.object({ name: z.string(), error: z.string() })),
});
const budgetsSchema = z.object({
  dailyBudgetUsd: z.number().nullable(),
  monthlyBudgetUsd: z.number().nullable(),
  alertEmail: z.string().nullable(),
});
const okSchema = z.object({ ok: z.literal(true) });

/** The message both the double and the real Parser's stub model answer with a proposal. */
const PROPOSE = "set mood to STUB_PROPOSAL";

/** A push endpoint of a public-looking service that can never be reached (`.invalid`). */
const endpoint = (s: ParserSuiteState) => `https://push.conformance.invalid/${s.tag}`;

/** Base64url of `n` bytes; a P-256 key starts with 4 (uncompressed point). */
function key(n: number, first?: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(n));
  if (first !== undefined) bytes[0] = first;
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** Text of HTML, whitespace collapsed (to compare what was written with what was proposed). */
const plain = (html: string) => html.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").trim();

/** A small map export: one state, one burg (slot 0 of each array is reserved in the format). */
function mapExport(s: ParserSuiteState) {
  return {
    info: { mapName: `Map ${s.tag}` },
    pack: {
      states: [{ i: 0, name: "Neutrals" }, {
        i: 1,
        name: `Velmark ${s.tag}`,
        fullName: `Kingdom of Velmark ${s.tag}`,
        form: "Monarchy",
        capital: 1,
      }],
      burgs: [{ i: 0 }, { i: 1, name: `Harrowgate ${s.tag}`, state: 1, population: 3.2 }],
      religions: [],
      cultures: [],
    },
  };
}

/** The steps of this module, in run order. */
export const toolSteps: ParserStep[] = [
  {
    method: "POST",
    path: "/api/lore/:id/copilot/chat",
    check:
      "an answer with a session and a proposal within scope; the session continues; bad 400/404",
    run: async (s) => {
      const { a, b } = await loreNotes(s);
      const turn = await s.api.json("POST", `/api/lore/${a.noteId}/copilot/chat`, 200, turnSchema, {
        json: { transcript: [{ role: "user", content: PROPOSE }] },
      });
      check(turn.proposal?.targets.length, "no proposal for a request to change the note");
      for (const t of turn.proposal.targets) {
        check(
          t.kind === "create" || t.targetId === a.noteId || t.targetId === b.noteId,
          `a proposal for ${t.targetId}, outside the note and its links`,
        );
      }
      s.facts.set("copilotProposal", JSON.stringify(turn.proposal));
      const next = await s.api.json("POST", `/api/lore/${a.noteId}/copilot/chat`, 200, turnSchema, {
        json: {
          sessionId: turn.sessionId,
          transcript: [
            { role: "user", content: PROPOSE },
            { role: "assistant", content: turn.assistantMessage || "ok" },
            { role: "user", content: "Thank you." },
          ],
        },
      });
      same(next.sessionId, turn.sessionId, "sessionId of the second turn");
      await s.api.error("POST", `/api/lore/${a.noteId}/copilot/chat`, 404, "NOT_FOUND", {
        json: {
          sessionId: unknownIdLike(turn.sessionId),
          transcript: [{ role: "user", content: "Hello." }],
        },
      });
      await s.api.error("POST", `/api/lore/${a.noteId}/copilot/chat`, 400, "INVALID_REQUEST", {
        json: { transcript: [{ role: "assistant", content: "Hello." }] },
      });
    },
  },
  {
    method: "POST",
    path: "/api/lore/:id/copilot/stream",
    check: "the conversation as `messages` (the front end's word): our context status first, " +
      "then the Parser's events, one result, done last",
    run: async (s) => {
      const { a } = await loreNotes(s);
      const events = await streamEvents(s, `/api/lore/${a.noteId}/copilot/stream`, {
        messages: [{ role: "user", content: "Summarise this note." }],
      });
      same((events[0].data as { stage?: string }).stage, "context", "first event's stage");
      const unknown = events.map((e) => e.event)
        .filter((n) => !["status", "reasoning", "token", "result", "done"].includes(n));
      same(unknown, [], "unexpected event names");
      const results = events.filter((e) => e.event === "result");
      same(results.length, 1, "result events");
      turnSchema.parse(results[0].data);
    },
  },
  {
    method: "POST",
    path: "/api/lore/:id/copilot/apply",
    check: "the Parser's proposal applied, every target approved by id: each updated, its " +
      "labels and content in Core; the report also as `applied`",
    run: async (s) => {
      const { a } = await loreNotes(s);
      const proposal = proposalSchema.parse(JSON.parse(factOf(s, "copilotProposal")));
      const r = await s.api.json(
        "POST",
        `/api/lore/${a.noteId}/copilot/apply`,
        200,
        z.looseObject({
          updatedNoteIds: z.array(z.string()),
          createdNoteIds: z.array(z.string()),
          skipped: z.array(z.unknown()),
          failed: z.array(z.unknown()),
          applied: z.object({
            updatedNoteIds: z.array(z.string()),
            createdNoteIds: z.array(z.string()),
            skipped: z.array(z.string()),
            failed: z.array(z.string()),
          }),
        }),
        { json: { proposal, approvedTargetIds: proposal.targets.map((t) => t.targetId) } },
      );
      same([r.skipped, r.failed], [[], []], "skipped and failed targets");
      same(
        [r.applied.updatedNoteIds, r.applied.createdNoteIds, r.applied.skipped, r.applied.failed],
        [r.updatedNoteIds, r.createdNoteIds, [], []],
        "the report as `applied`",
      );
      for (const t of proposal.targets.filter((t) => t.kind === "update")) {
        check(r.updatedNoteIds.includes(t.targetId), `${t.targetId} not reported updated`);
        const own = ownAttrs(await readLore(s, t.targetId));
        for (const l of t.labelUpserts) {
          check(own.includes(`label:${l.name}=${l.value}`), `label ${l.name} not written`);
        }
        if (t.contentHtml) {
          const content = await s.api.call("GET", `/api/lore/${t.targetId}/content`);
          check(plain(content.text).includes(plain(t.contentHtml)), "proposed content not written");
        }
      }
    },
  },
  {
    method: "POST",
    path: "/api/import/system-pack",
    check:
      "a statblock note in the scratch note; imported again: skipped as duplicate; bad parent 400",
    run: async (s) => {
      const schema = z.object({
        created: z.number(),
        skipped: z.number(),
        errors: z.number(),
        detail: outcomeSchema,
      });
      const notes = [{
        name: `Gloomwyrm ${s.tag}`,
        cr: "5",
        ac: 17,
        hp: 90,
        type: "dragon",
        content: "<p>Breathes fog.</p><script>alert(1)</script>",
      }];
      const r = await s.api.json("POST", "/api/import/system-pack", 200, schema, {
        json: { notes },
      });
      same([r.created, r.skipped, r.errors], [1, 0, 0], "created, skipped, errors");
      const note = await readLore(s, r.detail.created[0].noteId);
      same(note.parentNoteIds, [s.scratch.noteId], "parent of the statblock (the lore root)");
      check(ownAttrs(note).includes("label:statblock="), "no #statblock");
      const content = await s.api.call("GET", `/api/lore/${note.noteId}/content`);
      check(!/<script/i.test(content.text), "a script reached Core through the import");
      const again = await s.api.json("POST", "/api/import/system-pack", 200, schema, {
        json: { notes },
      });
      same([again.created, again.skipped], [0, 1], "imported again: created, skipped");
      await s.api.error("POST", "/api/import/system-pack", 400, "INVALID_REQUEST", {
        json: { notes, parentNoteId: MISSING_ID },
      });
    },
  },
  {
    method: "POST",
    path: "/api/import/mapgen",
    check: "preview counts (asked as `/api/import/azgaar`, the front end's path); import: the " +
      "state and the burg as notes in the scratch note; not a map 400",
    run: async (s) => {
      const mapData = mapExport(s);
      const preview = await s.api.json(
        "POST",
        "/api/import/azgaar?action=preview",
        200,
        z.object({
          mapName: z.string(),
          stateCnt: z.number(),
          burgCnt: z.number(),
          religionCnt: z.number(),
          cultureCnt: z.number(),
          noteCnt: z.number(),
        }),
        { json: { mapData } },
      );
      same(
        [preview.mapName, preview.stateCnt, preview.burgCnt, preview.religionCnt],
        [`Map ${s.tag}`, 1, 1, 0],
        "preview",
      );
      const r = await s.api.json(
        "POST",
        "/api/import/mapgen",
        200,
        z.object({
          mapName: z.string(),
          states: outcomeSchema,
          burgs: outcomeSchema,
          totals: z.object({ created: z.number(), skipped: z.number(), errors: z.number() }),
        }).loose(),
        { json: { mapData, options: { importReligions: false, importCultures: false } } },
      );
      same(r.totals.errors, 0, "errors");
      const made = [...r.states.created, ...r.burgs.created];
      same(made.length, 2, "state and burg notes created");
      for (const n of made) {
        const note = await readLore(s, n.noteId);
        check(note.parentNoteIds.includes(s.scratch.noteId), `${n.name} is not in the lore root`);
        check(note.title.includes(s.tag), `note ${n.noteId} is titled ${note.title}`);
      }
      await s.api.error("POST", "/api/import/mapgen", 400, "INVALID_REQUEST", {
        json: { mapData: { pack: {} } },
      });
    },
  },
  {
    method: "GET",
    path: "/api/notifications/vapid-public-key",
    check: "the Parser's VAPID key, or null when push is not set up",
    run: async (s) => {
      const r = await s.api.json(
        "GET",
        "/api/notifications/vapid-public-key",
        200,
        z.object({ publicKey: z.string().nullable() }),
      );
      s.facts.set("vapid", r.publicKey ?? "");
      return r.publicKey ? "a key is configured" : "no key: push is not set up on the Parser";
    },
  },
  {
    method: "POST",
    path: "/api/notifications/subscribe",
    check: "a subscription stored (503 push-not-configured without a key); a private endpoint 400",
    run: async (s) => {
      const body = { endpoint: endpoint(s), keys: { p256dh: key(65, 4), auth: key(16) } };
      if (factOf(s, "vapid")) {
        await s.api.json("POST", "/api/notifications/subscribe", 200, okSchema, { json: body });
      } else {
        await s.api.error("POST", "/api/notifications/subscribe", 503, "NOT_CONFIGURED", {
          json: body,
        });
      }
      await s.api.error("POST", "/api/notifications/subscribe", 400, "INVALID_REQUEST", {
        json: { ...body, endpoint: "https://127.0.0.1/push" },
      });
    },
  },
  {
    method: "DELETE",
    path: "/api/notifications/unsubscribe",
    check: "the subscription removed; removing it again is fine too",
    run: async (s) => {
      for (let i = 0; i < 2; i++) {
        await s.api.json("DELETE", "/api/notifications/unsubscribe", 200, okSchema, {
          json: { endpoint: endpoint(s) },
        });
      }
    },
  },
  {
    method: "GET",
    path: "/api/usage/summary",
    check: "today's usage includes the run's model calls; one row per day; bad range 400",
    run: async (s) => {
      const day = new Date().toISOString().slice(0, 10);
      const schema = z.object({
        summary: z.object({ totalTokens: z.number(), totalRequests: z.number() }).loose(),
        dailyBurn: z.array(z.object({ date: z.string(), count: z.number() }).loose()),
        taskCosts: z.array(z.object({ task: z.string(), count: z.number() }).loose()),
        modelDistribution: z.array(z.unknown()),
        latencyStats: z.array(z.unknown()),
      });
      const today = await s.api.json(
        "GET",
        `/api/usage/summary?from=${day}&to=${day}`,
        200,
        schema,
      );
      same(today.dailyBurn.map((d) => d.date), [day], "days of a one-day range");
      check(today.summary.totalRequests > 0, "no model calls today, although the run made some");
      check(today.taskCosts.some((t) => t.task === "brain-dump"), "no brain-dump usage today");
      const month = await s.api.json("GET", "/api/usage/summary", 200, schema);
      check([30, 31].includes(month.dailyBurn.length), `${month.dailyBurn.length} default days`);
      await s.api.error("GET", `/api/usage/summary?from=${day}`, 400, "INVALID_REQUEST");
    },
  },
  {
    method: "GET",
    path: "/api/usage/budgets",
    check: "the owner's budgets and alert e-mail",
    run: async (s) => {
      const r = await s.api.json("GET", "/api/usage/budgets", 200, budgetsSchema);
      same(r, s.before.budgets, "budgets as the Parser holds them");
    },
  },
  {
    method: "PUT",
    path: "/api/usage/budgets",
    check: "a partial update keeps the other fields; null clears; put back exactly",
    run: async (s) => {
      const before = s.before.budgets;
      try {
        const set = await s.api.json("PUT", "/api/usage/budgets", 200, budgetsSchema, {
          json: { dailyBudgetUsd: 12.34 },
        });
        same(set, { ...before, dailyBudgetUsd: 12.34 }, "after setting the daily budget");
        const read = await s.api.json("GET", "/api/usage/budgets", 200, budgetsSchema);
        same(read, set, "read back");
        const alert = await s.api.json(
          "GET",
          "/api/usage/alert-status",
          200,
          z.object({ configured: z.boolean(), dailyBudgetUsd: z.number().nullable() }).loose(),
        );
        same([alert.configured, alert.dailyBudgetUsd], [true, 12.34], "alert status with a budget");
        const cleared = await s.api.json("PUT", "/api/usage/budgets", 200, budgetsSchema, {
          json: { dailyBudgetUsd: null },
        });
        same(cleared, { ...before, dailyBudgetUsd: null }, "after clearing the daily budget");
        await s.api.error("PUT", "/api/usage/budgets", 400, "INVALID_REQUEST", {
          json: { dailyBudgetUsd: -1 },
        });
      } finally {
        await s.api.call("PUT", "/api/usage/budgets", { json: before });
      }
      same(await s.api.json("GET", "/api/usage/budgets", 200, budgetsSchema), before, "put back");
    },
  },
  {
    method: "GET",
    path: "/api/usage/alert-status",
    check: "spend against the budgets: over only when a budget is set and exceeded",
    run: async (s) => {
      const r = await s.api.json(
        "GET",
        "/api/usage/alert-status",
        200,
        z.object({
          configured: z.boolean(),
          dailySpendUsd: z.number().min(0),
          monthlySpendUsd: z.number().min(0),
          dailyBudgetUsd: z.number().nullable(),
          monthlyBudgetUsd: z.number().nullable(),
          dailyOverBudget: z.boolean(),
          monthlyOverBudget: z.boolean(),
        }),
      );
      const { dailyBudgetUsd, monthlyBudgetUsd } = s.before.budgets;
      same([r.dailyBudgetUsd, r.monthlyBudgetUsd], [dailyBudgetUsd, monthlyBudgetUsd], "budgets");
      check(r.monthlySpendUsd >= r.dailySpendUsd, "this month's spend is below today's");
      if (dailyBudgetUsd === null) same(r.dailyOverBudget, false, "over a daily budget of none");
      if (monthlyBudgetUsd === null) {
        same(r.monthlyOverBudget, false, "over a monthly budget of none");
      }
    },
  },
  {
    method: "GET",
    path: "/api/config/models",
    check: "the Parser's model chain per task, brain dump included",
    run: async (s) => {
      const r = await s.api.json(
        "GET",
        "/api/config/models",
        200,
        z.record(z.string(), z.object({ models: z.array(z.string()), autoMode: z.boolean() })),
      );
      check(r["brain-dump"]?.models.length, "no brain-dump models");
    },
  },
  {
    method: "POST",
    path: "/api/config/wipe",
    check: "refused while ENABLE_WIPE is off (403); the run's lore is still there",
    run: async (s) => {
      await s.api.error("POST", "/api/config/wipe", 403, "FORBIDDEN", {
        json: { confirm: "DELETE ALL LORE" },
      });
      const { a } = await loreNotes(s);
      await readLore(s, a.noteId);
    },
  },
];
