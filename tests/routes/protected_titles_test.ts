/**
 * Protected notes over HTTP: ETAPI never opens a protected session, so Core sends a protected
 * note's title as ciphertext; no route may show it (the Core double sends it like Core).
 */
import assert from "node:assert/strict";
import { type Harness, withHarness } from "../helpers/harness.ts";
import { W } from "../../sims/world.ts";

/** Base64 ciphertext, as Core stores (and ETAPI sends) a protected note's title. */
const CIPHER = "T2xkIFNlYWxlZCBUaWRlIHJlY2tvbmluZ3M=";

interface Listed {
  noteId: string;
  title: string;
  isProtected: boolean;
}

/** A protected lore event under the timeline, and Mira's relation to it (store setup). */
function protectedEvent(h: Harness): string {
  const s = h.core.store;
  const { note } = s.createNote(
    { parentNoteId: W.timeline, title: CIPHER, type: "text", content: "", isProtected: true },
    { rawTitle: true },
  );
  s.createAttribute({ noteId: note.noteId, type: "label", name: "lore", value: "" });
  s.createAttribute({ noteId: note.noteId, type: "label", name: "loreType", value: "event" });
  s.createAttribute({ noteId: note.noteId, type: "label", name: "inWorldDate", value: "1180" });
  s.createAttribute({
    noteId: W.charMira,
    type: "relation",
    name: "relWitnessed",
    value: note.noteId,
  });
  s.createAttribute({
    noteId: note.noteId,
    type: "relation",
    name: "relInvolves",
    value: W.charOskar,
  });
  return note.noteId;
}

async function getText(h: Harness, path: string): Promise<{ status: number; text: string }> {
  const res = await h.request(path);
  return { status: res.status, text: await res.text() };
}

Deno.test("protected notes: '[protected]' instead of the ciphertext in every list and note", () =>
  withHarness(async (h) => {
    const id = protectedEvent(h);
    const direct = await h.etapi<{ title: string }>(`/notes/${id}`);
    assert.equal(direct.title, CIPHER, "the double sends what Core sends");

    const pages = [
      "/api/lore",
      `/api/lore?q=${encodeURIComponent("#loreType=event")}`,
      "/api/timeline",
      `/api/search?q=${encodeURIComponent("#lore")}`,
      "/api/share/tree",
      `/api/lore/${id}`,
      `/api/lore/${W.charMira}`,
      `/api/lore/${W.guideProtected}`,
      `/api/lore/${W.charOskar}/backlinks`,
    ];
    for (const path of pages) {
      const { status, text } = await getText(h, path);
      assert.equal(status, 200, path);
      assert.ok(!text.includes(CIPHER), `${path} shows the ciphertext`);
      assert.ok(!text.includes(h.core.store.getNote(W.guideProtected)!.title), path);
    }

    const timeline = await h.requestJson<Listed[]>("/api/timeline");
    const entry = timeline.body.find((n) => n.noteId === id)!;
    assert.deepEqual([entry.title, entry.isProtected], ["[protected]", true]);
    const search = await h.requestJson<{ results: Listed[] }>("/api/search?q=%23lore");
    assert.equal(search.body.results.find((n) => n.noteId === id)?.title, "[protected]");
    // ordered by title, protected notes last (a placeholder is not a title to sort by)
    const tree = await h.requestJson<Listed[]>("/api/share/tree");
    assert.deepEqual(
      tree.body.slice(-2).map((n) => [n.noteId, n.title, n.isProtected]),
      [[id, "[protected]", true], [W.guideProtected, "[protected]", true]].sort(),
    );
    // the others are open to every visitor, but for the branch behind the share password
    assert.deepEqual(
      tree.body.slice(0, -2).filter((n) => n.isProtected).map((n) => n.noteId).sort(),
      [W.guideVault, W.guideVaultLedger].sort(),
    );
    const back = await h.requestJson<Listed[]>(`/api/lore/${W.charOskar}/backlinks`);
    assert.deepEqual(back.body.at(-1), {
      noteId: id,
      title: "[protected]",
      loreType: "event",
      relations: ["relInvolves"],
      viaContentLink: false,
    });
    const mira = await h.requestJson<
      { resolvedRelations: { name: string; targetTitle: string }[] }
    >(
      `/api/lore/${W.charMira}`,
    );
    assert.deepEqual(
      mira.body.resolvedRelations.filter((r) => r.name === "relWitnessed").map((r) =>
        r.targetTitle
      ),
      ["[protected]"],
    );
    const one = await h.requestJson<Listed>(`/api/lore/${id}`);
    assert.deepEqual([one.body.title, one.body.isProtected], ["[protected]", true]);
  }));

Deno.test("protected notes: revisions say '[protected]' too", () =>
  withHarness(async (h) => {
    h.core.store.insertRevision({
      noteId: W.guideProtected,
      type: "text",
      mime: "text/html",
      isProtected: true,
      title: CIPHER,
      content: "c2VhbGVk",
      dateLastEdited: "2026-03-01 09:00:00.000+0000",
      dateCreated: "2026-03-02 09:00:00.000+0000",
      utcDateLastEdited: "2026-03-01 09:00:00.000Z",
      utcDateCreated: "2026-03-02 09:00:00.000Z",
      utcDateModified: "2026-03-02 09:00:00.000Z",
    });
    const { status, text } = await getText(h, `/api/lore/${W.guideProtected}/revisions`);
    assert.equal(status, 200);
    assert.ok(!text.includes(CIPHER));
    const { revisions } = JSON.parse(text) as { revisions: Listed[] };
    assert.deepEqual(revisions.map((r) => [r.title, r.isProtected]), [["[protected]", true]]);
  }));

Deno.test("protected notes: title matching never finds them, by ciphertext or placeholder", () =>
  withHarness(async (h) => {
    const id = protectedEvent(h);
    // Core matches its ciphertext title; the pickers still leave the note out
    const fragment = CIPHER.slice(0, 8);
    for (const q of [fragment, "protected", "[protected]"]) {
      for (const path of ["/api/lore/mention-search", "/api/lore/note-search"]) {
        const r = await h.requestJson<Listed[]>(`${path}?q=${encodeURIComponent(q)}`);
        assert.equal(r.status, 200, `${path} ${q}`);
        assert.ok(!r.body.some((n) => n.noteId === id), `${path} ${q}`);
      }
    }
    const links = await h.requestJson<{ matches: { noteId: string }[] }>("/api/lore/autolink", {
      method: "POST",
      json: {
        text: `The ${CIPHER} entry is [protected] and so is protected, unlike Mira Tallowend.`,
      },
    });
    assert.deepEqual(links.body.matches.map((m) => m.noteId), [W.charMira]);
  }));
