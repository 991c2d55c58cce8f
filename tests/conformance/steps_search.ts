/**
 * Conformance steps: search and discovery (lists, pickers, autolink), collections, the Core half
 * of the mixed Core/Parser routes, the copilot's apply, and configuration (portal, connect, wipe
 * refusals).
 *
 * @module
 */
import { z } from "zod";
import {
  check,
  createLore,
  noteOf,
  noteSchema,
  ownAttrs,
  readLore,
  same,
  type Step,
  type SuiteState,
} from "./kit.ts";

const MISSING_ID = "zzConformanceMissing3";

/** The pickers' answers: bare arrays, as the front end reads them. */
const pickSchema = z.array(z.looseObject({
  noteId: z.string(),
  title: z.string(),
  loreType: z.string().nullable(),
}));

const etapiSearchSchema = z.object({
  mode: z.literal("etapi"),
  results: z.array(noteSchema.extend({ loreType: z.string().nullable() })),
  count: z.number().int(),
});

const collectionSchema = z.array(noteSchema.extend({ loreType: z.string().nullable() }));

const relationshipsSchema = z.object({
  noteId: z.string(),
  existing: z.array(z.looseObject({
    name: z.string(),
    type: z.string().nullable(),
    targetNoteId: z.string(),
    targetTitle: z.string(),
    loreType: z.string().nullable(),
  })),
  suggestions: z.array(z.unknown()),
  suggestionsError: z.looseObject({ error: z.string() }).nullable(),
});

const applySchema = z.object({
  updatedNoteIds: z.array(z.string()),
  createdNoteIds: z.array(z.string()),
  created: z.array(z.object({ targetId: z.string(), noteId: z.string() })),
  skipped: z.array(z.object({ targetId: z.string(), reason: z.string() })),
  failed: z.array(z.looseObject({ targetId: z.string(), error: z.string() })),
});

const portalSchema = z.object({ loreRootNoteId: z.string(), source: z.enum(["file", "env"]) });

/** The ids of the suite's own notes, so results from the rest of Core can be told apart. */
function ours(s: SuiteState): Set<string> {
  return new Set([...s.notes.values()].map((n) => n.noteId));
}

async function collection(s: SuiteState, path: string) {
  const body = await s.api.json("GET", path, 200, collectionSchema);
  const mine = ours(s);
  return body.filter((n) => mine.has(n.noteId));
}

/** A collection of notes marked through their template lists exactly the suite's one note. */
function markedCollection(path: string, note: string, loreType: string): Step {
  return {
    method: "GET",
    path,
    check: `the ${loreType} note (marked through its template) is listed with its lore type`,
    run: async (s) => {
      const mine = await collection(s, path);
      same(
        mine.map((n) => [n.noteId, n.loreType]),
        [[noteOf(s, note).noteId, loreType]],
        `suite's ${loreType} notes`,
      );
    },
  };
}

/** The steps of this module, in run order. */
export const searchSteps: Step[] = [
  {
    method: "GET",
    path: "/api/lore/mention-search",
    check: "exact title first, from Core alone; at most 8; q of 1 character 400",
    run: async (s) => {
      const a = noteOf(s, "A");
      const exact = await s.api.json(
        "GET",
        `/api/lore/mention-search?q=${encodeURIComponent(a.title)}`,
        200,
        pickSchema,
      );
      same(exact[0], {
        noteId: a.noteId,
        title: a.title,
        loreType: "character",
        source: "core",
      }, "first result");
      const many = await s.api.json("GET", `/api/lore/mention-search?q=${s.tag}`, 200, pickSchema);
      same(many.length, 8, "results for a term in 14 lore titles");
      check(
        many.every((r) => r.title.includes(s.tag)),
        "a result does not contain the term",
      );
      await s.api.error("GET", "/api/lore/mention-search?q=A", 400, "INVALID_REQUEST");
    },
  },
  {
    method: "GET",
    path: "/api/lore/note-search",
    check: "by title and lore type; at most 12; bad type 400",
    run: async (s) => {
      const a = noteOf(s, "A");
      const typed = await s.api.json(
        "GET",
        `/api/lore/note-search?q=${s.tag}&type=character`,
        200,
        pickSchema,
      );
      same(
        typed,
        [{ noteId: a.noteId, title: a.title, type: "text", loreType: "character" }],
        "characters",
      );
      const all = await s.api.json("GET", `/api/lore/note-search?q=${s.tag}`, 200, pickSchema);
      same(all.length, 12, "results for a term in more than 12 titles");
      await s.api.error(
        "GET",
        `/api/lore/note-search?q=${s.tag}&type=bad%20type`,
        400,
        "INVALID_REQUEST",
      );
    },
  },
  {
    method: "POST",
    path: "/api/lore/autolink",
    check: "lore titles found in text, in order of appearance",
    run: async (s) => {
      const a = noteOf(s, "A");
      const b = noteOf(s, "B");
      const text = `At dawn ${a.title} rode to ${b.title.toLowerCase()}, then back to ${a.title}.`;
      const body = await s.api.json(
        "POST",
        "/api/lore/autolink",
        200,
        z.object({ matches: z.array(z.looseObject({ noteId: z.string(), title: z.string() })) }),
        { json: { text } },
      );
      const mine = ours(s);
      same(
        body.matches.filter((m) => mine.has(m.noteId)).map((m) => [m.noteId, m.title]),
        [[a.noteId, a.title], [b.noteId, b.title]],
        "matches of the suite's notes",
      );
      // an empty editor's text (the portal sends it) finds nothing; a missing text is refused
      const empty = await s.api.json("POST", "/api/lore/autolink", 200, z.unknown(), {
        json: { text: "" },
      });
      same(empty, { matches: [] }, "matches in an empty text");
      await s.api.error("POST", "/api/lore/autolink", 400, "INVALID_REQUEST", { json: {} });
    },
  },
  {
    method: "GET",
    path: "/api/search",
    check: "Core search: every match's note, `limit` and X-Total-Count; a stray word after " +
      "#statblock is left out by Core; rag without Parser 503",
    run: async (s) => {
      const body = await s.api.json("GET", `/api/search?q=${s.tag}`, 200, etapiSearchSchema);
      same(body.count, body.results.length, "count");
      const found = new Map(body.results.map((r) => [r.noteId, r]));
      for (const role of ["A", "B", "C", "pub", "draft"]) {
        check(found.has(noteOf(s, role).noteId), `note "${role}" not found`);
      }
      same(found.get(noteOf(s, "A").noteId)?.loreType, "character", "loreType of A");
      const limited = await s.api.call("GET", `/api/search?q=${s.tag}&limit=2`);
      same(limited.status, 200, "status with limit=2");
      same(
        (JSON.parse(limited.text) as { results: { noteId: string }[] }).results.map((r) =>
          r.noteId
        ),
        body.results.slice(0, 2).map((r) => r.noteId),
        "the first 2 results",
      );
      same(limited.headers.get("x-total-count"), String(body.count), "X-Total-Count");
      // the session page's statblock lookup: Core drops `<tag>` after `#statblock`, a 200
      const lookup = await s.api.json(
        "GET",
        `/api/search?q=${encodeURIComponent(`#statblock ${s.tag}`)}`,
        200,
        etapiSearchSchema,
      );
      check(
        lookup.results.some((r) => r.noteId === noteOf(s, "D").noteId),
        "the suite's statblock is not among the statblocks",
      );
      const rag = await s.api.error(
        "GET",
        `/api/search?q=${s.tag}&mode=rag`,
        503,
        "NOT_CONFIGURED",
      );
      same((rag.details as { service?: string })?.service, "parser", "service named by the 503");
    },
  },
  markedCollection("/api/quests", "C", "quest"),
  markedCollection("/api/statblocks", "D", "statblock"),
  {
    method: "GET",
    path: "/api/timeline",
    check: "events only, ordered by in-world date (-300 before 1200)",
    run: async (s) => {
      const mine = await collection(s, "/api/timeline");
      same(
        mine.map((n) => n.noteId),
        [noteOf(s, "E2").noteId, noteOf(s, "E1").noteId],
        "suite's events",
      );
    },
  },
  {
    method: "POST",
    path: "/api/lore/:id/relationships",
    check: "Core's relations with target titles; Parser absent is reported, not an error",
    run: async (s) => {
      const a = noteOf(s, "A");
      const b = noteOf(s, "B");
      const body = await s.api.json(
        "POST",
        `/api/lore/${a.noteId}/relationships`,
        200,
        relationshipsSchema,
      );
      const ally = body.existing.find((r) => r.name === "relAlly");
      same(ally && [ally.type, ally.targetNoteId, ally.targetTitle, ally.loreType], [
        "ally",
        b.noteId,
        b.title,
        "location",
      ], "relAlly");
      check(!body.existing.some((r) => r.name === "template"), "the template relation is listed");
      same(
        [body.suggestions, body.suggestionsError?.error],
        [[], "NOT_CONFIGURED"],
        "suggestions",
      );
      await s.api.error("POST", `/api/lore/${MISSING_ID}/relationships`, 404, "NOT_FOUND");
    },
  },
  {
    method: "POST",
    path: "/api/lore/:id/copilot/apply",
    check: "update (label, sanitized content) and create under the lore root, related back",
    run: async (s) => {
      const a = noteOf(s, "A");
      const title = `Copilot Ally ${s.tag}`;
      const report = await s.api.json(
        "POST",
        `/api/lore/${a.noteId}/copilot/apply`,
        200,
        applySchema,
        {
          json: {
            proposal: {
              targets: [
                {
                  kind: "update",
                  targetId: a.noteId,
                  labelUpserts: [{ name: "mood", value: "calm" }],
                  contentHtml: "<p>Rewritten by the copilot.</p><script>alert(1)</script>",
                },
                {
                  kind: "create",
                  targetId: "new-ally",
                  title,
                  loreType: "character",
                  contentHtml: "<p>A new friend.</p>",
                  relationAdds: [{
                    relationshipType: "ally",
                    targetId: a.noteId,
                    targetKind: "existing",
                  }],
                },
              ],
            },
          },
        },
      );
      same([report.skipped, report.failed], [[], []], "skipped and failed targets");
      check(report.updatedNoteIds.includes(a.noteId), "A is not reported updated");
      same(report.created.map((c) => c.targetId), ["new-ally"], "created targets");
      const created = report.created[0].noteId;
      s.notes.set("copilot", { noteId: created, title });
      const note = await readLore(s, a.noteId);
      check(ownAttrs(note).includes("label:mood=calm"), "the label upsert is missing");
      const content = await s.api.call("GET", `/api/lore/${a.noteId}/content`);
      check(content.text.includes("Rewritten by the copilot."), "the new content is missing");
      check(!content.text.includes("<script"), "the copilot's script was stored");
      const fresh = await readLore(s, created);
      same([fresh.title, fresh.loreType, fresh.parentNoteIds], [title, "character", [
        s.scratch.noteId,
      ]], "created note");
      check(
        ownAttrs(fresh).includes(`relation:relAlly=${a.noteId}`),
        "the created note is not related to A",
      );
    },
  },
  {
    method: "POST",
    path: "/api/lore/:id/copilot/apply",
    check: "#gmOnly is never set by the copilot (skipped, nothing written); unknown 404",
    run: async (s) => {
      const a = noteOf(s, "A");
      const report = await s.api.json(
        "POST",
        `/api/lore/${a.noteId}/copilot/apply`,
        200,
        applySchema,
        {
          json: {
            proposal: {
              targets: [{
                kind: "update",
                targetId: a.noteId,
                labelUpserts: [{ name: "gmOnly", value: "" }],
              }],
            },
          },
        },
      );
      same(report.skipped.map((x) => x.targetId), [a.noteId], "skipped targets");
      check(
        !ownAttrs(await readLore(s, a.noteId)).includes("label:gmOnly="),
        "#gmOnly was written",
      );
      await s.api.error("POST", `/api/lore/${MISSING_ID}/copilot/apply`, 404, "NOT_FOUND", {
        json: { proposal: { targets: [{ kind: "update", targetId: MISSING_ID }] } },
      });
    },
  },
  {
    method: "PUT",
    path: "/api/config/portal",
    check: "new lore root is used for new notes, missing note 404 (kept), put back",
    run: async (s) => {
      const before = await s.api.json("GET", "/api/config/portal", 200, portalSchema);
      same(before.loreRootNoteId, s.scratch.noteId, "lore root of the run");
      const root = await createLore(s, "portalRoot", { title: `Portal Root ${s.tag}` });
      try {
        const set = await s.api.json("PUT", "/api/config/portal", 200, portalSchema, {
          json: { loreRootNoteId: root.noteId },
        });
        same(set, { loreRootNoteId: root.noteId, source: "file" }, "PUT answer");
        await createLore(s, "portalChild", { title: `Portal Child ${s.tag}` }, null, root.noteId);
        await s.api.error("PUT", "/api/config/portal", 404, "NOT_FOUND", {
          json: { loreRootNoteId: MISSING_ID },
        });
        await s.api.error("PUT", "/api/config/portal", 400, "INVALID_REQUEST", { json: {} });
        const kept = await s.api.json("GET", "/api/config/portal", 200, portalSchema);
        same(kept.loreRootNoteId, root.noteId, "lore root after refused PUTs");
      } finally {
        await s.api.call("PUT", "/api/config/portal", {
          json: { loreRootNoteId: before.loreRootNoteId },
        });
      }
      const after = await s.api.json("GET", "/api/config/portal", 200, portalSchema);
      same(after.loreRootNoteId, before.loreRootNoteId, "lore root put back");
    },
  },
  {
    method: "POST",
    path: "/api/integrations/codex/connect",
    check: "without a Parser: 503 naming it, no Core token minted; bad body 400",
    run: async (s) => {
      const e = await s.api.error(
        "POST",
        "/api/integrations/codex/connect",
        503,
        "NOT_CONFIGURED",
        {
          json: { token: "not-a-real-token" },
        },
      );
      same((e.details as { service?: string })?.service, "parser", "service named by the 503");
      await s.api.error("POST", "/api/integrations/codex/connect", 400, "INVALID_REQUEST", {
        json: { password: "a", token: "b" },
      });
    },
  },
  {
    method: "POST",
    path: "/api/config/wipe",
    check: "refused: disabled (403) and a wrong confirmation (400); nothing deleted",
    run: async (s) => {
      await s.api.error("POST", "/api/config/wipe", 403, "FORBIDDEN", {
        json: { confirm: "DELETE ALL LORE" },
      });
      await s.api.error("POST", "/api/config/wipe", 400, "INVALID_REQUEST", {
        json: { confirm: "yes" },
      });
      await readLore(s, noteOf(s, "A").noteId);
    },
  },
];
