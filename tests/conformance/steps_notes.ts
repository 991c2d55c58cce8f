/**
 * Conformance steps: readiness, lore notes (create, list, read, rename, delete), attributes and
 * the tree (move, reorder, breadcrumbs, backlinks). Notes made here are used by later steps.
 *
 * @module
 */
import { z } from "zod";
import {
  attributeSchema,
  check,
  configStatusSchema,
  createLore,
  loreListSchema,
  noSecrets,
  noteOf,
  noteSchema,
  ownAttrs,
  readLore,
  same,
  type Step,
} from "./kit.ts";

const MISSING_ID = "zzConformanceMissing0";

const readySchema = z.object({
  status: z.literal("ready"),
  core: z.looseObject({ ok: z.literal(true), version: z.string().min(1) }),
});

const moveSchema = z.object({
  noteId: z.string(),
  parentNoteId: z.string(),
  branchId: z.string(),
  notePosition: z.number(),
  index: z.number().int(),
  removedBranchId: z.string().nullable(),
});

const backlinksSchema = z.array(z.object({
  noteId: z.string(),
  title: z.string(),
  loreType: z.string().nullable(),
  relations: z.array(z.string()),
  viaContentLink: z.boolean(),
}));

const crumbsSchema = z.array(z.object({ noteId: z.string(), title: z.string() }));

/** The steps of this module, in run order. */
export const noteSteps: Step[] = [
  {
    method: "GET",
    path: "/readyz",
    check: "ready, Core's version reported",
    run: async (s) => {
      await s.api.json("GET", "/readyz", 200, readySchema);
    },
  },
  {
    method: "GET",
    path: "/api/config/status",
    check: "Core configured and reachable, no Parser, no URL or token shown",
    run: async (s) => {
      const a = await s.api.call("GET", "/api/config/status");
      const body = configStatusSchema.parse(JSON.parse(a.text));
      check(body.allcodex.configured && body.allcodex.ok, "Core is not reported reachable");
      check(body.allcodex.version, "Core's version is missing");
      check(!body.allknower.configured, "a Parser is reported although none is configured");
      check(/^https?:\/\/[^/]+$/.test(body.allcodex.url), "Core's url is not the service's origin");
      noSecrets(s, a.text, "the status answer");
    },
  },
  {
    method: "POST",
    path: "/api/lore",
    check: "lore note with #lore, #loreType, ~template, labels and content",
    run: async (s) => {
      const note = await createLore(s, "A", {
        title: `Aldmere ${s.tag}`,
        loreType: "character",
        attributes: { race: "elf" },
        content: "<p>Aldmere keeps the lighthouse.</p>",
      });
      const own = ownAttrs(note);
      for (
        const want of [
          "label:lore=",
          "label:loreType=character",
          "relation:template=_template_character",
          "label:race=elf",
        ]
      ) check(own.includes(want), `new note lacks ${want} (has ${own.join(", ")})`);
      same(note.type, "text", "type of the new note");
      const content = await s.api.call("GET", `/api/lore/${note.noteId}/content`);
      same(content.text, "<p>Aldmere keeps the lighthouse.</p>", "content given at creation");
    },
  },
  {
    method: "POST",
    path: "/api/lore",
    check: "more notes: location, quest, statblock, events, map with pins, share tree, drafts",
    run: async (s) => {
      const t = s.tag;
      await createLore(s, "B", { title: `Brindle ${t}`, loreType: "location" });
      await createLore(s, "C", { title: `Cinder Quest ${t}`, loreType: "quest" });
      await createLore(s, "D", { title: `Drake ${t}`, loreType: "statblock" });
      await createLore(s, "E1", {
        title: `Eclipse ${t}`,
        loreType: "event",
        attributes: { inWorldDate: "1200" },
      });
      await createLore(s, "E2", {
        title: `Founding ${t}`,
        loreType: "event",
        attributes: { inWorldDate: "-300" },
      });
      const map = await createLore(s, "map", { title: `Map ${t}`, loreType: "location" });
      const mapRef = { noteId: map.noteId, title: map.title };
      await createLore(
        s,
        "pin",
        { title: `Pin North ${t}`, attributes: { geolocation: "10, 20" } },
        mapRef,
      );
      await createLore(s, "badPin", {
        title: `Pin Lost ${t}`,
        attributes: { geolocation: "nowhere" },
      }, mapRef);
      const guide = await createLore(s, "guide", {
        title: `Guide ${t}`,
        content: "<p>Welcome, players.</p>",
      });
      const g = { noteId: guide.noteId, title: guide.title };
      await createLore(s, "pub", {
        title: `Harbor ${t}`,
        loreType: "location",
        attributes: { shareAlias: `harbor-${t}` },
        content:
          '<p>Harbor welcomes sailors.</p><p class="gm-only">Smugglers meet at midnight.</p>',
      }, g);
      await createLore(s, "draft", { title: `Draft ${t}`, attributes: { draft: "" } }, g);
      await createLore(s, "secret", { title: `Secret ${t}`, attributes: { gmOnly: "" } }, g);
      await createLore(s, "doomed", { title: `Doomed ${t}` });
    },
  },
  {
    method: "POST",
    path: "/api/lore",
    check: "no parentNoteId: the note goes under the lore root",
    run: async (s) => {
      await createLore(s, "orphan", { title: `Orphan ${s.tag}` }, null);
    },
  },
  {
    method: "POST",
    path: "/api/lore",
    check: "empty title 400; unknown parent 400 naming the field (nothing created)",
    run: async (s) => {
      const bad = await s.api.error("POST", "/api/lore", 400, "INVALID_REQUEST", {
        json: { title: "" },
      });
      check(JSON.stringify(bad.details).includes("body.title"), "the 400 does not name body.title");
      const missing = await s.api.error("POST", "/api/lore", 400, "INVALID_REQUEST", {
        json: { title: `Nowhere ${s.tag}`, parentNoteId: MISSING_ID },
      });
      check(JSON.stringify(missing).includes("parentNoteId"), "the 400 does not name parentNoteId");
    },
  },
  {
    method: "GET",
    path: "/api/lore",
    check: "every created lore note listed (q=#lore, ancestorNoteId), a bare array",
    run: async (s) => {
      const body = await s.api.json(
        "GET",
        `/api/lore?q=${encodeURIComponent("#lore")}&ancestorNoteId=${s.scratch.noteId}`,
        200,
        loreListSchema,
      );
      const listed = new Set(body.map((n) => n.noteId));
      for (const [role, n] of s.notes) check(listed.has(n.noteId), `note "${role}" is not listed`);
      check(!listed.has(s.scratch.noteId), "the scratch note (no #lore) is listed");
      await s.api.error("GET", "/api/lore?q=", 400, "INVALID_REQUEST");
    },
  },
  {
    method: "GET",
    path: "/api/lore/:id",
    check: "loreType, no portrait or theme song yet; unknown id 404, bad id 400",
    run: async (s) => {
      const a = noteOf(s, "A");
      const note = await readLore(s, a.noteId);
      same(note.title, a.title, "title");
      same(note.loreType, "character", "loreType");
      same(note.portraitImageNoteId, null, "portraitImageNoteId");
      same(note.themeSongUrl, null, "themeSongUrl");
      same(note.resolvedRelations, [], "resolvedRelations (template is not one)");
      await s.api.error("GET", `/api/lore/${MISSING_ID}`, 404, "NOT_FOUND");
      const bad = await s.api.error("GET", "/api/lore/bad%20id", 400, "INVALID_REQUEST");
      check(JSON.stringify(bad.details).includes("path.id"), "the 400 does not name path.id");
    },
  },
  {
    method: "PATCH",
    path: "/api/lore/:id",
    check: "new title reads back; empty body 400; root refused 400",
    run: async (s) => {
      const a = noteOf(s, "A");
      const title = `Aldmere Vale ${s.tag}`;
      const patched = await s.api.json("PATCH", `/api/lore/${a.noteId}`, 200, noteSchema, {
        json: { title },
      });
      same(patched.title, title, "title in the PATCH answer");
      s.notes.set("A", { noteId: a.noteId, title });
      same((await readLore(s, a.noteId)).title, title, "title read back");
      await s.api.error("PATCH", `/api/lore/${a.noteId}`, 400, "INVALID_REQUEST", { json: {} });
      await s.api.error("PATCH", "/api/lore/root", 400, "INVALID_REQUEST", {
        json: { title: "x" },
      });
      await s.api.error("PATCH", `/api/lore/${MISSING_ID}`, 404, "NOT_FOUND", {
        json: { title: "x" },
      });
    },
  },
  {
    method: "POST",
    path: "/api/lore",
    check: "a title with & < > is stored as Core's create stores text, read and found as typed",
    run: async (s) => {
      const title = `Salt & Smoke <Tide> ${s.tag}`;
      const stored = `Salt &amp; Smoke &lt;Tide&gt; ${s.tag}`;
      const note = await createLore(s, "typed", { title }); // the answer's title: as typed
      const inCore = () =>
        s.core.json("GET", `/etapi/notes/${note.noteId}`, z.looseObject({ title: z.string() }));
      same((await inCore()).title, stored, "the title as Core holds it");
      same((await readLore(s, note.noteId)).title, title, "title read back");
      const renamed = await s.api.json("PATCH", `/api/lore/${note.noteId}`, 200, noteSchema, {
        json: { title },
      });
      same(renamed.title, title, "title in the PATCH answer");
      same((await inCore()).title, stored, "a rename stores what create stored");
      const hits = await s.api.json(
        "GET",
        `/api/lore/mention-search?q=${encodeURIComponent(`& Smoke <Tide> ${s.tag}`)}`,
        200,
        z.array(z.looseObject({ noteId: z.string(), title: z.string() })),
      );
      same(hits.map((r) => [r.noteId, r.title]), [[note.noteId, title]], "mentions");
      same((await s.api.call("DELETE", `/api/lore/${note.noteId}`)).status, 204, "delete");
      s.notes.delete("typed");
    },
  },
  {
    method: "POST",
    path: "/api/lore/:id/attributes",
    check: "label (#sigil dropped) and relation created and read back",
    run: async (s) => {
      const a = noteOf(s, "A");
      const b = noteOf(s, "B");
      const label = await s.api.json(
        "POST",
        `/api/lore/${a.noteId}/attributes`,
        201,
        attributeSchema,
        {
          json: { type: "label", name: "#mood", value: "stormy" },
        },
      );
      same([label.noteId, label.name, label.value], [a.noteId, "mood", "stormy"], "created label");
      s.facts.set("moodAttr", label.attributeId);
      const rel = await s.api.json(
        "POST",
        `/api/lore/${a.noteId}/attributes`,
        201,
        attributeSchema,
        {
          json: { type: "relation", name: "~relAlly", value: b.noteId },
        },
      );
      same([rel.type, rel.name, rel.value], ["relation", "relAlly", b.noteId], "created relation");
      await s.api.json("POST", `/api/lore/${a.noteId}/attributes`, 201, attributeSchema, {
        json: { type: "label", name: "themeSong", value: "https://example.com/theme.mp3" },
      });
      const note = await readLore(s, a.noteId);
      check(ownAttrs(note).includes("label:mood=stormy"), "the label does not read back");
      same(note.themeSongUrl, "https://example.com/theme.mp3", "themeSongUrl");
      same(
        note.resolvedRelations.map((r) => [r.name, r.targetNoteId, r.targetTitle, r.loreType]),
        [["relAlly", b.noteId, b.title, "location"]],
        "resolvedRelations",
      );
    },
  },
  {
    method: "POST",
    path: "/api/lore/:id/attributes",
    check: "bad name 400, missing relation target 400 (value), unknown note 404",
    run: async (s) => {
      const a = noteOf(s, "A");
      const path = `/api/lore/${a.noteId}/attributes`;
      await s.api.error("POST", path, 400, "INVALID_REQUEST", {
        json: { type: "label", name: "lore-type", value: "x" },
      });
      const target = await s.api.error("POST", path, 400, "INVALID_REQUEST", {
        json: { type: "relation", name: "relAlly", value: MISSING_ID },
      });
      check(
        JSON.stringify(target.details).includes("body.value"),
        "the 400 does not name body.value",
      );
      await s.api.error("POST", `/api/lore/${MISSING_ID}/attributes`, 404, "NOT_FOUND", {
        json: { type: "label", name: "mood", value: "x" },
      });
      const own = ownAttrs(await readLore(s, a.noteId));
      check(!own.some((x) => x.includes("lore_type")), "a refused label was stored anyway");
    },
  },
  {
    method: "DELETE",
    path: "/api/lore/:id/attributes",
    check: "label deleted (204, gone), again 204, another note's attribute 404",
    run: async (s) => {
      const a = noteOf(s, "A");
      const b = noteOf(s, "B");
      const attrId = s.facts.get("moodAttr");
      check(attrId, "no attribute id from the create step");
      const del = await s.api.call("DELETE", `/api/lore/${a.noteId}/attributes?attrId=${attrId}`);
      same([del.status, del.text], [204, ""], "delete answer");
      check(
        !ownAttrs(await readLore(s, a.noteId)).includes("label:mood=stormy"),
        "label still there",
      );
      const again = await s.api.call("DELETE", `/api/lore/${a.noteId}/attributes?attrId=${attrId}`);
      same(again.status, 204, "second delete");
      const bLore = (await readLore(s, b.noteId)).attributes.find((x) =>
        x.noteId === b.noteId && x.name === "lore"
      );
      check(bLore, "B has no own #lore label");
      await s.api.error(
        "DELETE",
        `/api/lore/${a.noteId}/attributes?attrId=${bLore.attributeId}`,
        404,
        "NOT_FOUND",
      );
      check(ownAttrs(await readLore(s, b.noteId)).includes("label:lore="), "B lost its #lore");
    },
  },
  {
    method: "POST",
    path: "/api/lore/move",
    check: "move to another parent (old branch removed), reorder, cycle and root refused",
    run: async (s) => {
      const a = noteOf(s, "A");
      const d = noteOf(s, "D");
      const b = noteOf(s, "B");
      const moved = await s.api.json("POST", "/api/lore/move", 200, moveSchema, {
        json: { noteId: d.noteId, newParentId: a.noteId, index: 0 },
      });
      same(
        [moved.parentNoteId, moved.removedBranchId],
        [a.noteId, `${s.scratch.noteId}_${d.noteId}`],
        "move answer",
      );
      same((await readLore(s, d.noteId)).parentNoteIds, [a.noteId], "parents after the move");
      const reorder = await s.api.json("POST", "/api/lore/move", 200, moveSchema, {
        json: { noteId: b.noteId, newParentId: s.scratch.noteId, index: 0 },
      });
      same([reorder.parentNoteId, reorder.removedBranchId], [s.scratch.noteId, null], "reorder");
      const scratch = await readLore(s, s.scratch.noteId);
      same(scratch.childNoteIds[0], b.noteId, "first child after the reorder");
      await s.api.error("POST", "/api/lore/move", 400, "INVALID_REQUEST", {
        json: { noteId: a.noteId, newParentId: d.noteId, index: 0 },
      });
      await s.api.error("POST", "/api/lore/move", 400, "INVALID_REQUEST", {
        json: { noteId: "root", newParentId: a.noteId, index: 0 },
      });
      await s.api.error("POST", "/api/lore/move", 404, "NOT_FOUND", {
        json: { noteId: d.noteId, newParentId: "zzConformanceMissing1", index: 0 },
      });
    },
  },
  {
    method: "GET",
    path: "/api/lore/:id/breadcrumbs",
    check: "the ancestors below root, scratch then parent, with titles; unknown 404",
    run: async (s) => {
      const a = noteOf(s, "A");
      const d = noteOf(s, "D");
      const breadcrumbs = await s.api.json(
        "GET",
        `/api/lore/${d.noteId}/breadcrumbs`,
        200,
        crumbsSchema,
      );
      same(
        breadcrumbs,
        [{ noteId: s.scratch.noteId, title: s.scratch.title }, {
          noteId: a.noteId,
          title: a.title,
        }],
        "breadcrumbs",
      );
      await s.api.error("GET", `/api/lore/${MISSING_ID}/breadcrumbs`, 404, "NOT_FOUND");
    },
  },
  {
    method: "GET",
    path: "/api/lore/:id/backlinks",
    check: "relation and content link both found, by title; unknown 404",
    run: async (s) => {
      const a = noteOf(s, "A");
      const b = noteOf(s, "B");
      const c = noteOf(s, "C");
      // a reference link in C's content: Core turns it into an ~internalLink relation to B
      const link =
        `<p>See <a class="reference-link" href="#root/${s.scratch.noteId}/${b.noteId}">` +
        `${b.title}</a>.</p>`;
      const put = await s.api.call("PUT", `/api/lore/${c.noteId}/content`, { text: link });
      same(put.status, 204, "content PUT with a link");
      const backlinks = await s.api.json(
        "GET",
        `/api/lore/${b.noteId}/backlinks`,
        200,
        backlinksSchema,
      );
      same(
        backlinks.map((l) => [l.noteId, l.relations, l.viaContentLink]),
        [[a.noteId, ["relAlly"], false], [c.noteId, [], true]],
        "backlinks of B",
      );
      same(backlinks.map((l) => l.loreType), ["character", "quest"], "lore types");
      await s.api.error("GET", `/api/lore/${MISSING_ID}/backlinks`, 404, "NOT_FOUND");
    },
  },
  {
    method: "DELETE",
    path: "/api/lore/:id",
    check: "204, then 404 on read, 204 again; root refused 400",
    run: async (s) => {
      const doomed = noteOf(s, "doomed");
      const del = await s.api.call("DELETE", `/api/lore/${doomed.noteId}`);
      same([del.status, del.text], [204, ""], "delete answer");
      s.notes.delete("doomed");
      await s.api.error("GET", `/api/lore/${doomed.noteId}`, 404, "NOT_FOUND");
      same((await s.api.call("DELETE", `/api/lore/${doomed.noteId}`)).status, 204, "second delete");
      await s.api.error("DELETE", "/api/lore/root", 400, "INVALID_REQUEST");
      await s.api.error("DELETE", "/api/lore/_share", 400, "INVALID_REQUEST");
    },
  },
];
