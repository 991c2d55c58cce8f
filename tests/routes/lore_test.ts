/** Lore CRUD over HTTP through the real app against the Core double. */
import assert from "node:assert/strict";
import { assertNoSecrets, type Harness, upstreamCalls, withHarness } from "../helpers/harness.ts";

interface Note {
  noteId: string;
  title: string;
  type: string;
  mime: string;
  parentNoteIds: string[];
  attributes: { noteId: string; type: string; name: string; value: string }[];
}

const own = (n: Note) =>
  n.attributes.filter((a) => a.noteId === n.noteId).map((a) => `${a.type}:${a.name}=${a.value}`);

/** A create answer: the note, or our error shape. */
interface Created {
  note: Note;
  branch: { branchId: string };
  error?: string;
  message?: string;
  details?: { rolledBack?: string[]; fields?: unknown[]; [k: string]: unknown };
}

async function createNote(h: Harness, body: Record<string, unknown>) {
  return await h.requestJson<Created>("/api/lore", {
    method: "POST",
    json: body,
  });
}

Deno.test("POST /api/lore: note, #lore, #loreType, template and labels in one request", () =>
  withHarness(async (h) => {
    const r = await createNote(h, {
      title: "Captain Maren Vell",
      loreType: "character",
      attributes: { age: "41", homePort: "Saltmarsh Quay" },
    });
    assert.equal(r.status, 201);
    const { note, branch } = r.body;
    assert.equal(note.title, "Captain Maren Vell");
    assert.equal(note.type, "text");
    assert.equal(note.mime, "text/html");
    assert.deepEqual(note.parentNoteIds, ["root"]);
    assert.equal(branch.branchId, `root_${note.noteId}`);
    assert.deepEqual(own(note), [
      "label:lore=",
      "label:loreType=character",
      "relation:template=_template_character",
      "label:age=41",
      "label:homePort=Saltmarsh Quay",
    ]);
    // the template's promoted definitions are now inherited, as in real Core
    assert.ok(note.attributes.some((a) => a.noteId === "_template_character"));
  }));

Deno.test("POST /api/lore: explicit parent and template; unknown lore types get no template", () =>
  withHarness(async (h) => {
    const parent = await createNote(h, { title: "Harbor District" });
    const r = await createNote(h, {
      title: "Tide Ledger",
      loreType: "ledger",
      parentNoteId: parent.body.note.noteId,
    });
    assert.equal(r.status, 201);
    assert.deepEqual(r.body.note.parentNoteIds, [parent.body.note.noteId]);
    assert.deepEqual(own(r.body.note), ["label:lore=", "label:loreType=ledger"]);
    const t = await createNote(h, {
      title: "Bounty",
      templateId: "_template_quest",
      loreType: "quest",
    });
    assert.ok(own(t.body.note).includes("relation:template=_template_quest"));
  }));

Deno.test("POST /api/lore: a missing parent or template is a 400 and leaves nothing behind", () =>
  withHarness(async (h) => {
    const before = h.core.store.noteIds().length;
    const p = await createNote(h, { title: "Orphan", parentNoteId: "noSuchParent1" });
    assert.equal(p.status, 400);
    assert.equal(p.body.error, "INVALID_REQUEST");
    assert.match(String(p.body.message), /parentNoteId/);
    const t = await createNote(h, { title: "Ghost", templateId: "noSuchTemplat" });
    assert.equal(t.status, 400);
    assert.match(String(t.body.message), /templateId/);
    assert.deepEqual(t.body.details?.rolledBack, ["create the note"]);
    assert.equal(h.core.store.noteIds().length, before, "the half-made note was deleted");
  }));

Deno.test("POST /api/lore: a label step failing midway rolls the note back; an undo failing is reported", () =>
  withHarness(async (h) => {
    const before = h.core.store.noteIds().length;
    h.core.fault({ method: "POST", path: "/etapi/attributes", status: 500, times: 1 });
    const r = await createNote(h, { title: "Half", loreType: "character" });
    assert.equal(r.status, 502);
    assert.equal(r.body.error, "UPSTREAM_ERROR");
    assert.match(String(r.body.message), /add the #lore label; nothing was changed/);
    assert.equal(h.core.store.noteIds().length, before);

    h.core.fault({ method: "POST", path: "/etapi/attributes", status: 500, times: 1 });
    h.core.fault({ method: "DELETE", path: /^\/etapi\/notes\//, status: 500, times: 1 });
    const p = await createNote(h, { title: "Stuck", loreType: "character" });
    assert.equal(p.status, 502);
    assert.equal(p.body.error, "PARTIAL_FAILURE");
    assert.deepEqual(p.body.details, {
      failedStep: "add the #lore label",
      cause: "UPSTREAM_ERROR",
      completed: ["create the note"],
      rolledBack: [],
      leftBehind: ["create the note"],
    });
  }));

Deno.test("POST /api/lore: invalid bodies are 400 with fields and never reach Core", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    const cases: unknown[] = [
      {},
      { title: "" },
      { title: "x", type: "html" },
      { title: "x", parentNoteId: "../notes/x" },
      { title: "x", templateId: "a/b" },
      { title: "x", attributes: { "bad-name": "v" } },
      { title: "x", attributes: { " ": "v" } },
      { title: "x", attributes: { loreType: "sneaky" } },
      { title: "x", isProtected: true },
      { title: "x", mime: "text/html\r\nX-Injected: 1" },
    ];
    for (const body of cases) {
      const r = await createNote(h, body as Record<string, unknown>);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error, "INVALID_REQUEST");
      assert.ok(Array.isArray(r.body.details?.fields));
    }
    assert.deepEqual(upstreamCalls(h), []);
  }));

Deno.test("GET /api/lore: default #lore lists every lore note; q passes Core syntax; complete", () =>
  withHarness(async (h) => {
    for (let i = 0; i < 230; i++) {
      await h.etapi("/create-note", {
        method: "POST",
        json: { parentNoteId: "root", title: `Reef ${i}`, type: "text", content: "" },
      }).then((r) =>
        h.etapi("/attributes", {
          method: "POST",
          json: {
            noteId: (r as { note: Note }).note.noteId,
            type: "label",
            name: "reefMarker",
            value: "",
          },
        })
      );
    }
    const r = await h.requestJson<Note[]>(`/api/lore?q=${encodeURIComponent("#reefMarker")}`);
    assert.equal(r.status, 200);
    // a bare array (the front end's list), complete: no silent truncation at 200
    assert.equal(r.body.length, 230);
    assert.equal(r.headers.get("content-type"), "application/json; charset=utf-8");
    const all = await h.requestJson<Note[]>("/api/lore");
    assert.ok(all.body.length > 5);
    assert.ok(all.body.every((n) => n.attributes.some((a) => a.name === "lore")));
    h.core.clearRequests();
    await (await h.request("/api/lore")).body?.cancel();
    assert.deepEqual(upstreamCalls(h), ["GET /etapi/notes?search=%23lore"]);
  }));

Deno.test("GET /api/lore/:id: relations resolved in one search, portrait and theme song", () =>
  withHarness(async (h) => {
    const a = (await createNote(h, { title: "Ilsa Thorne", loreType: "character" })).body.note;
    const b = (await createNote(h, { title: "Rook Harrow", loreType: "character" })).body.note;
    const c = (await createNote(h, { title: "The Gull's Rest", loreType: "location" })).body.note;
    const img = await h.etapi<{ note: Note }>("/create-note", {
      method: "POST",
      json: {
        parentNoteId: a.noteId,
        title: "ilsa.png",
        type: "image",
        mime: "image/png",
        content: "",
      },
    });
    const rel = (name: string, value: string) =>
      h.etapi("/attributes", {
        method: "POST",
        json: { noteId: a.noteId, type: "relation", name, value },
      });
    await rel("relAlly", b.noteId);
    await rel("relEnemy", b.noteId);
    await rel("relLocatedIn", c.noteId);
    await rel("portraitImage", img.note.noteId);
    await h.etapi("/attributes", {
      method: "POST",
      json: {
        noteId: a.noteId,
        type: "label",
        name: "themeSong",
        value: "https://music.example/ilsa",
      },
    });
    h.core.clearRequests();
    const r = await h.requestJson<Record<string, unknown>>(`/api/lore/${a.noteId}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.title, "Ilsa Thorne");
    assert.equal(r.body.loreType, "character");
    assert.deepEqual(
      (r.body.resolvedRelations as { name: string; targetTitle: string; loreType: string | null }[])
        .map((x) => `${x.name}>${x.targetTitle}:${x.loreType}`),
      [
        "relAlly>Rook Harrow:character",
        "relEnemy>Rook Harrow:character",
        "relLocatedIn>The Gull's Rest:location",
      ],
    );
    // the portrait is shown as the portrait, not among the relations
    assert.equal(r.body.portraitImageNoteId, img.note.noteId);
    assert.equal(r.body.themeSongUrl, "https://music.example/ilsa");
    // one call for the note, one search for every target (no template, no duplicates)
    assert.equal(upstreamCalls(h).length, 2);
  }));

Deno.test("GET /api/lore/:id: the portal's portrait names and #themeSongUrl label count too", () =>
  withHarness(async (h) => {
    const a = (await createNote(h, {
      title: "Vess",
      attributes: {
        themeSong: "https://music.example/old",
        themeSongUrl: "https://music.example/new",
      },
    })).body.note;
    const image = async (title: string) =>
      (await h.etapi<{ note: Note }>("/create-note", {
        method: "POST",
        json: { parentNoteId: a.noteId, title, type: "image", mime: "image/png", content: "" },
      })).note.noteId;
    const [banner, cover] = [await image("banner.png"), await image("cover.png")];
    for (const [name, value] of [["heroImage", banner], ["coverImage", cover]]) {
      await h.etapi("/attributes", {
        method: "POST",
        json: { noteId: a.noteId, type: "relation", name, value },
      });
    }
    const r = await h.requestJson<Record<string, unknown>>(`/api/lore/${a.noteId}`);
    // coverImage ranks above heroImage; neither is listed as a relation
    assert.equal(r.body.portraitImageNoteId, cover);
    assert.deepEqual(r.body.resolvedRelations, []);
    assert.equal(r.body.themeSongUrl, "https://music.example/new");
  }));

Deno.test("POST /api/lore: a template form's field names become label names (spaces → _)", () =>
  withHarness(async (h) => {
    const r = await createNote(h, {
      title: "Reef Eel",
      loreType: "creature",
      attributes: { "Danger Level": "high", " Magic  Properties ": "sparks", Habitat: "reef" },
    });
    assert.equal(r.status, 201);
    const labels = r.body.note.attributes
      .filter((x) => x.noteId === r.body.note.noteId && x.type === "label")
      .map((x) => `${x.name}=${x.value}`);
    for (const want of ["Danger_Level=high", "Magic_Properties=sparks", "Habitat=reef"]) {
      assert.ok(labels.includes(want), `${want} in ${labels}`);
    }
  }));

Deno.test("GET /api/lore/:id: unsafe theme song URLs are dropped; a missing note is 404", () =>
  withHarness(async (h) => {
    const a =
      (await createNote(h, { title: "Bard", attributes: { themeSong: "javascript:alert(1)" } }))
        .body.note;
    const r = await h.requestJson<Record<string, unknown>>(`/api/lore/${a.noteId}`);
    assert.equal(r.body.themeSongUrl, null);
    const missing = await h.requestJson<Record<string, unknown>>("/api/lore/doesNotExist1");
    assert.equal(missing.status, 404);
    assert.deepEqual(
      { error: missing.body.error, message: missing.body.message },
      { error: "NOT_FOUND", message: "Note not found" },
    );
    assertNoSecrets(h, JSON.stringify(missing.body));
  }));

Deno.test("GET /api/lore/:id: ids that could steer the upstream path are refused before any call", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    for (const id of ["..", "a%2Fb", "a.b", "%2e%2e", "x'y", "a%20b", "x".repeat(129)]) {
      const res = await h.request(`/api/lore/${id}`);
      const body = await res.json();
      assert.ok(res.status === 400 || res.status === 404, `${id}: ${res.status}`);
      if (res.status === 400) assert.equal(body.error, "INVALID_REQUEST");
    }
    assert.deepEqual(upstreamCalls(h), []);
  }));

Deno.test("PATCH /api/lore/:id: title/type/mime only; system notes refused", () =>
  withHarness(async (h) => {
    const a = (await createNote(h, { title: "Old Name" })).body.note;
    const r = await h.requestJson<Note>(`/api/lore/${a.noteId}`, {
      method: "PATCH",
      json: { title: "New Name" },
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.title, "New Name");
    assert.equal(h.core.store.getNote(a.noteId)?.title, "New Name");
    h.core.clearRequests();
    for (const body of [{}, { isProtected: true }, { type: "nonsense" }, { title: "" }]) {
      const bad = await h.requestJson(`/api/lore/${a.noteId}`, { method: "PATCH", json: body });
      assert.equal(bad.status, 400, JSON.stringify(body));
    }
    const sys = await h.requestJson("/api/lore/_share", { method: "PATCH", json: { title: "x" } });
    assert.equal(sys.status, 400);
    assert.deepEqual(upstreamCalls(h), []);
    const gone = await h.requestJson("/api/lore/doesNotExist1", {
      method: "PATCH",
      json: { title: "x" },
    });
    assert.equal(gone.status, 404);
  }));

Deno.test("DELETE /api/lore/:id: 204, idempotent, system notes refused", () =>
  withHarness(async (h) => {
    const a = (await createNote(h, { title: "Doomed" })).body.note;
    const r = await h.request(`/api/lore/${a.noteId}`, { method: "DELETE" });
    assert.equal(r.status, 204);
    assert.equal(await r.text(), "");
    assert.equal(h.core.store.getNote(a.noteId), undefined);
    const again = await h.request(`/api/lore/${a.noteId}`, { method: "DELETE" });
    assert.equal(again.status, 204);
    await again.body?.cancel();
    for (const id of ["root", "_share", "_hidden"]) {
      const sys = await h.requestJson(`/api/lore/${id}`, { method: "DELETE" });
      assert.equal(sys.status, 400);
    }
    assert.ok(h.core.store.getNote("_share"));
  }));

Deno.test("POST /api/lore: the note keeps the requested type and mime once its template is linked", () =>
  withHarness(async (h) => {
    // Core turns an empty code note into its template's type when ~template is added
    // (services/handlers.ts): code + _template_spell would answer 201 with a text note
    const r = await createNote(h, {
      title: "Fireball",
      type: "code",
      mime: "application/javascript",
      loreType: "spell",
    });
    assert.equal(r.status, 201);
    assert.deepEqual([r.body.note.type, r.body.note.mime], ["code", "application/javascript"]);
    assert.ok(own(r.body.note).includes("relation:template=_template_spell"));
    const stored = h.core.store.getNote(r.body.note.noteId)!;
    assert.deepEqual([stored.type, stored.mime], ["code", "application/javascript"]);

    // the timeline template is a book: an empty text timeline stays the text note asked for
    const t = await createNote(h, { title: "Age of Tides", loreType: "timeline" });
    assert.deepEqual([t.body.note.type, t.body.note.mime], ["text", "text/html"]);
    // with content Core changes nothing, so nothing is patched
    h.core.clearRequests();
    const c = await createNote(h, { title: "Tides", loreType: "timeline", content: "<p>x</p>" });
    assert.deepEqual([c.body.note.type, c.body.note.mime], ["text", "text/html"]);
    assert.ok(!upstreamCalls(h).some((call) => call.startsWith("PATCH")));
  }));

Deno.test("POST /api/lore: putting the type back is part of the all-or-nothing create", () =>
  withHarness(async (h) => {
    const before = h.core.store.noteIds().length;
    h.core.fault({ method: "PATCH", path: /^\/etapi\/notes\//, status: 500, times: 1 });
    const r = await createNote(h, { title: "Fireball", type: "code", loreType: "spell" });
    assert.equal(r.status, 502);
    assert.equal(r.body.error, "UPSTREAM_ERROR");
    assert.match(String(r.body.message), /keep the note's type and mime; nothing was changed/);
    assert.deepEqual(r.body.details?.rolledBack, ["create the note"]);
    assert.equal(h.core.store.noteIds().length, before);
  }));

Deno.test("POST /api/lore: a parent's ~child:template does not change the new note's type", () =>
  withHarness(async (h) => {
    // Core copies `child:` attributes to a new child at creation, template handling included
    const s = h.core.store;
    const spells =
      s.createNote({ parentNoteId: "root", title: "Spells", type: "book", content: "" })
        .note.noteId;
    s.createAttribute({
      noteId: spells,
      type: "relation",
      name: "child:template",
      value: "_template_spell",
    });
    const r = await createNote(h, { title: "Cantrip", type: "code", parentNoteId: spells });
    assert.equal(r.status, 201);
    assert.deepEqual([r.body.note.type, r.body.note.mime], ["code", "text/plain"]);
    assert.ok(own(r.body.note).includes("relation:template=_template_spell"));
  }));
