/**
 * The front end's contract for a single lore note: the entry page, its editor, the new-entry page
 * and the components they use. Each call is sent as the UI sends it (method, path, query,
 * headers, body), and the fields the UI reads are checked on our answer, over HTTP against the
 * doubles and the sample world. The UI file and function making each call is named beside it.
 */
import assert from "node:assert/strict";
import { type Harness, withHarness } from "../helpers/harness.ts";
import { makePng, W } from "../../sims/world.ts";

interface Attribute {
  attributeId: string;
  noteId: string;
  name: string;
  type: string;
  value: string;
}

/** `GET /api/lore/:id` as the entry page, the editor and the hover preview read it. */
interface LoreNote {
  noteId: string;
  title: string;
  type: string;
  dateCreated: string;
  dateModified: string;
  attributes: Attribute[];
  portraitImageNoteId: string | null;
  themeSongUrl: string | null;
  resolvedRelations: {
    name: string;
    targetNoteId: string;
    targetTitle: string;
    loreType: string | null;
  }[];
}

/** What a plain `fetch(url)` sends. */
const PAGE_GET = { headers: { accept: "*/*" } };

/** The JSON writes of the editor and the sharing panel: `Content-Type: application/json`. */
function jsonWrite(method: string, body: unknown): RequestInit {
  return { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
}

async function readNote(h: Harness, id: string): Promise<LoreNote> {
  const r = await h.requestJson<LoreNote>(`/api/lore/${id}`, PAGE_GET);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

/** The `src` of every `<img>` in an HTML text. */
function imageSources(html: string): string[] {
  return [...html.matchAll(/<img\b[^>]*?\ssrc="([^"]*)"/gi)].map((m) => m[1]);
}

/**
 * The entry page shows content only through the portal's DOMPurify set-up, which keeps an image
 * source only when it is http(s) or starts with `api/images/` (with or without a leading `/`);
 * shown under `/lore/<id>`, a relative one would load from `/lore/api/images/…`. So an image the
 * user can see is a rooted `/api/images/<id>/<file>` (or an absolute URL).
 */
function assertPortalShowsImages(html: string, what: string): string[] {
  const sources = imageSources(html);
  for (const src of sources) {
    assert.match(src, /^\/api\/images\/[A-Za-z0-9_]+\/[^/?#]+$/, `${what}: image source ${src}`);
  }
  return sources;
}

/** The image behind an `/api/images/…` source, as the browser loads it (the redirect followed). */
async function loadImage(h: Harness, src: string): Promise<Uint8Array> {
  const r = await h.request(src, PAGE_GET);
  assert.equal(r.status, 200, src);
  assert.match(r.headers.get("content-type") ?? "", /^image\//, src);
  return await r.bytes();
}

Deno.test("entry page: GET /api/lore/:id gives the fields the page renders, portrait apart", () =>
  withHarness(async (h) => {
    // app/(portal)/lore/[id]/page.tsx LoreDetailPage, query ["note", id]: fetch(`/api/lore/${id}`)
    const mira = await readNote(h, W.charMira);
    assert.equal(mira.noteId, W.charMira);
    assert.equal(mira.title, "Mira Tallowend");
    assert.equal(mira.type, "text");
    // "Created …" / "Modified …" through new Date(…).toLocaleDateString()
    for (const date of [mira.dateCreated, mira.dateModified]) {
      assert.ok(!Number.isNaN(new Date(date).getTime()), `a date the page can show: ${date}`);
    }
    // badge (loreType), GM-only banner (gmOnly), draft badge (draft) and the detail rail: labels
    const loreType = mira.attributes.find((a) => a.name === "loreType");
    assert.equal(loreType?.value, "character");
    for (const a of mira.attributes) {
      assert.deepEqual(
        [typeof a.attributeId, typeof a.name, typeof a.value],
        ["string", "string", "string"],
      );
      assert.ok(a.type === "label" || a.type === "relation");
    }
    // PortraitCard: an <Image src={`/api/lore/${portraitImageNoteId}/image`}>
    assert.equal(mira.portraitImageNoteId, W.imgPortrait);
    const portrait = await h.request(`/api/lore/${mira.portraitImageNoteId}/image`, PAGE_GET);
    assert.equal(portrait.headers.get("content-type"), "image/png");
    await portrait.body?.cancel();
    // the relation rail and "Related Entries": the portrait is shown as the portrait only
    assert.deepEqual(
      mira.resolvedRelations.map((r) => [r.name, r.targetTitle, r.loreType]),
      [["relAlly", "Oskar Venn", "character"], ["relInhabits", "Saltmarrow Harbor", "location"]],
    );
    assert.ok(mira.resolvedRelations.every((r) => r.targetNoteId !== W.imgPortrait));
    // ThemeSongCard: parseThemeSongUrl(note.themeSongUrl) (null hides the card)
    assert.equal(mira.themeSongUrl, "https://music.example.org/tides-of-brass");
  }));

Deno.test("entry page, GM view: GET /api/lore/:id/content shows its images from /api/images", () =>
  withHarness(async (h) => {
    // app/(portal)/lore/[id]/page.tsx LoreDetailPage, query ["note-content", id, "gm"]:
    // fetch(`/api/lore/${id}/content`).then((r) => r.text()), shown via sanitizeLoreHtml
    const r = await h.request(`/api/lore/${W.charMira}/content`, PAGE_GET);
    assert.equal(r.status, 200);
    const html = await r.text();
    assert.match(html, /Her mother still lives beneath the reef/); // the GM sees GM-only parts
    const [src] = assertPortalShowsImages(html, "GM content");
    assert.equal(src, `/api/images/${W.imgPortrait}/mira-portrait.png`);
    assert.deepEqual(await loadImage(h, src), h.core.store.getContent(W.imgPortrait));
  }));

Deno.test("entry page, player view: GET /api/lore/:id/preview?mode=player keeps visible images", () =>
  withHarness(async (h) => {
    // app/(portal)/lore/[id]/page.tsx LoreDetailPage with PreviewToggle on "player":
    // fetch(`/api/lore/${id}/preview?mode=player`).then((r) => r.text())
    const r = await h.request(`/api/lore/${W.charMira}/preview?mode=player`, PAGE_GET);
    assert.equal(r.status, 200);
    const html = await r.text();
    assert.doesNotMatch(html, /Her mother still lives|owes the/);
    const [src] = assertPortalShowsImages(html, "player preview");
    assert.deepEqual(await loadImage(h, src), h.core.store.getContent(W.imgPortrait));
    // the GM preview the same way
    const gm = await (await h.request(`/api/lore/${W.charMira}/preview?mode=gm`, PAGE_GET)).text();
    assert.deepEqual(assertPortalShowsImages(gm, "GM preview"), [src]);
    // an image note previews as its own image
    const chart = await (await h.request(`/api/lore/${W.imgChart}/preview?mode=player`)).text();
    assert.deepEqual(assertPortalShowsImages(chart, "image note"), [
      `/api/images/${W.imgChart}/coast-chart.png`,
    ]);
  }));

Deno.test("editor: PUT /api/lore/:id/content as text/html is saved and reaches Core", () =>
  withHarness(async (h) => {
    // app/(portal)/lore/[id]/edit/page.tsx EditLorePage, LoreEditor onSave: fetch PUT with
    // headers { "Content-Type": "text/html" } and the editor's HTML; `!res.ok` shows an error
    const loaded = await (await h.request(`/api/lore/${W.charOskar}/content`, PAGE_GET)).text();
    const html = `${loaded}<p>He keeps a second ledger.</p>` +
      `<img src="/api/images/${W.imgChart}/coast-chart.png" alt="chart">`;
    const r = await h.request(`/api/lore/${W.charOskar}/content`, {
      method: "PUT",
      headers: { "content-type": "text/html" },
      body: html,
    });
    assert.equal(r.status, 204, await r.text());
    // Core holds it (the image in its own relative form) ...
    const stored = h.core.store.getContent(W.charOskar) as string;
    assert.ok(stored.includes("<p>He keeps a second ledger.</p>"));
    assert.ok(stored.includes(`src="api/images/${W.imgChart}/coast-chart.png"`));
    // ... and the editor reloads exactly what it saved (query ["note-content", id])
    const again = await (await h.request(`/api/lore/${W.charOskar}/content`, PAGE_GET)).text();
    assert.equal(again, html);
  }));

Deno.test("editor: the metadata save — PATCH title, template labels, portrait and theme song", () =>
  withHarness(async (h) => {
    const id = W.charIselde;
    // EditLorePage save: PATCH /api/lore/:id { title } as JSON, `!response.ok` throws
    const patched = await h.request(`/api/lore/${id}`, jsonWrite("PATCH", { title: "Iselde" }));
    assert.equal(patched.status, 200);
    await patched.body?.cancel();
    // template fields: a label named with spaces as `_` ("Danger Level" → Danger_Level), an
    // existing one replaced by DELETE ?attrId= then POST
    const post = (body: unknown) =>
      h.request(`/api/lore/${id}/attributes`, jsonWrite("POST", body));
    const role = await post({ type: "label", name: "Role", value: "keeper" });
    assert.equal(role.status, 201);
    const roleAttr = (await role.json()) as Attribute;
    const del = await h.request(`/api/lore/${id}/attributes?attrId=${roleAttr.attributeId}`, {
      method: "DELETE",
    });
    assert.equal(del.status, 204);
    assert.equal((await post({ type: "label", name: "Role", value: "seer" })).status, 201);
    // portrait: POST { type: "relation", name: "portraitImage", value: <image note id> }
    assert.equal(
      (await post({ type: "relation", name: "portraitImage", value: W.imgChart })).status,
      201,
    );
    // theme song: the label `themeSongUrl` (lib/theme-song.ts THEME_SONG_LABEL_NAME)
    const song = "https://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC";
    assert.equal((await post({ type: "label", name: "themeSongUrl", value: song })).status, 201);

    // what the entry page and the editor then read back
    const note = await readNote(h, id);
    assert.equal(note.title, "Iselde");
    const own = note.attributes.filter((a) => a.noteId === id);
    assert.deepEqual(own.filter((a) => a.name === "Role").map((a) => a.value), ["seer"]);
    // the editor finds the portrait by relation name (lib/lore-presentation.ts)
    assert.ok(own.some((a) => a.type === "relation" && a.name === "portraitImage"));
    assert.equal(note.portraitImageNoteId, W.imgChart);
    assert.ok(note.resolvedRelations.every((r) => r.name !== "portraitImage"));
    assert.equal(note.themeSongUrl, song);
  }));

Deno.test("editor and sharing panel: draft, GM-only, alias and credentials labels toggle", () =>
  withHarness(async (h) => {
    const id = W.charOskar;
    const labelsOf = async () =>
      (await readNote(h, id)).attributes.filter((a) => a.noteId === id && a.type === "label");
    // EditLorePage toggleDraft and components/portal/ShareSettings.tsx toggle(): POST
    // { type: "label", name, value: "" } to add, DELETE ?attrId= to remove; `!ok` is an error
    for (const name of ["draft", "gmOnly"]) {
      const r = await h.request(
        `/api/lore/${id}/attributes`,
        jsonWrite("POST", { type: "label", name, value: "" }),
      );
      assert.equal(r.status, 201, name);
      await r.body?.cancel();
      const attr = (await labelsOf()).find((a) => a.name === name);
      assert.equal(attr?.value, "", `${name} shown as set`);
      const off = await h.request(`/api/lore/${id}/attributes?attrId=${attr!.attributeId}`, {
        method: "DELETE",
      });
      assert.equal(off.status, 204, name);
      assert.ok(!(await labelsOf()).some((a) => a.name === name), `${name} shown as unset`);
    }
    // ShareSettings saveAlias / saveCredentials: labels shareAlias and shareCredentials ("u:p")
    for (const [name, value] of [["shareAlias", "oskar-venn"], ["shareCredentials", "gm:tide"]]) {
      const r = await h.request(
        `/api/lore/${id}/attributes`,
        jsonWrite("POST", { type: "label", name, value }),
      );
      assert.equal(r.status, 201, name);
      await r.body?.cancel();
      assert.equal((await labelsOf()).find((a) => a.name === name)?.value, value);
    }
    // the GM-only toggle shows on the entry page and empties the player view
    await h.request(
      `/api/lore/${id}/attributes`,
      jsonWrite("POST", { type: "label", name: "gmOnly", value: "" }),
    )
      .then((r) => r.body?.cancel());
    const player = await h.request(`/api/lore/${id}/preview?mode=player`, PAGE_GET);
    assert.equal(await player.text(), "");
  }));

Deno.test("portrait picker: note-search?type=image finds image notes by title", () =>
  withHarness(async (h) => {
    // app/(portal)/lore/[id]/edit/page.tsx EditLorePage, portrait search (2+ characters):
    // fetch(`/api/lore/note-search?q=${encodeURIComponent(query)}&type=image`), read as
    // NoteSearchResult[]; each result shows `title` and `type`, a click takes `noteId`
    const r = await h.requestJson<{ noteId: string; title: string; type: string }[]>(
      `/api/lore/note-search?q=${encodeURIComponent("mira")}&type=image`,
      PAGE_GET,
    );
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.map((x) => [x.noteId, x.title, x.type]),
      [[W.imgPortrait, "mira-portrait.png", "image"]],
    );
    // the same parameter still names a lore type for other pickers
    const chars = await h.requestJson<{ noteId: string }[]>(
      `/api/lore/note-search?q=${encodeURIComponent("mira")}&type=character`,
      PAGE_GET,
    );
    assert.deepEqual(chars.body.map((x) => x.noteId), [W.charMira]);
  }));

Deno.test("uploads: x-vercel-filename names the note, and the url shows in the entry page", () =>
  withHarness(async (h) => {
    const png = makePng(4, 3, (x) => [x * 60, 20, 20]);
    // EditLorePage uploadPortraitImage and LoreEditor uploadImageFile: POST the File as the body
    // with "content-type": file.type and "x-vercel-filename": file.name; read { noteId, url }
    const r = await h.requestJson<{ noteId: string; url: string }>("/api/lore/upload-image", {
      method: "POST",
      headers: { "content-type": "image/png", "x-vercel-filename": "iselde portrait.png" },
      body: png as BodyInit,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(h.core.store.getNote(r.body.noteId)?.title, "iselde portrait.png");
    // the editor inserts `url` as an image; the entry page must keep and load it
    assertPortalShowsImages(`<img src="${r.body.url}">`, "uploaded image url");
    assert.deepEqual(await loadImage(h, r.body.url), png);
    // the portrait rail loads the note id's image route
    assert.deepEqual(await loadImage(h, `/api/lore/${r.body.noteId}/image`), png);
  }));

Deno.test("new entry: POST /api/lore from a template, field names with spaces", () =>
  withHarness(async (h) => {
    // app/(portal)/lore/new/page.tsx NewLoreContent: the parent comes from GET /api/config/portal
    const portal = await h.requestJson<{ loreRootNoteId: string }>("/api/config/portal", PAGE_GET);
    assert.equal(typeof portal.body.loreRootNoteId, "string");
    // createNote: JSON { title, loreType, templateId, parentNoteId, content, attributes } with
    // the template's field labels as keys; `!res.ok` shows the body's text; reads note.noteId
    const r = await h.requestJson<{ note: LoreNote }>(
      "/api/lore",
      jsonWrite("POST", {
        title: "Reef Wyrm",
        loreType: "creature",
        templateId: "_template_creature",
        parentNoteId: portal.body.loreRootNoteId,
        content: "<p>Coils under the Knucklebone Reef.</p>",
        attributes: { Type: "dragon", "Danger Level": "deadly", Habitat: "reef" },
      }),
    );
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const id = r.body.note.noteId;
    // router.push(`/lore/${id}`): the entry page then reads the note
    const note = await readNote(h, id);
    const own = (name: string) =>
      note.attributes.find((a) => a.noteId === id && a.name === name)?.value;
    assert.equal(own("loreType"), "creature");
    assert.equal(own("Danger_Level"), "deadly"); // what the editor's form reads back
    assert.equal(own("Type"), "dragon");
    assert.ok(note.attributes.some((a) => a.type === "relation" && a.name === "template"));
    const content = await (await h.request(`/api/lore/${id}/content`, PAGE_GET)).text();
    assert.equal(content, "<p>Coils under the Knucklebone Reef.</p>");
    // "General Lore": loreType "lore", no template, no content, no fields
    const plain = await h.requestJson<{ note: LoreNote }>(
      "/api/lore",
      jsonWrite("POST", {
        title: "Tide Tables",
        loreType: "lore",
        parentNoteId: W.loreRoot,
        attributes: {},
      }),
    );
    assert.equal(plain.status, 201, JSON.stringify(plain.body));
  }));

Deno.test("editor: DELETE /api/lore/:id, then the entry is gone", () =>
  withHarness(async (h) => {
    // EditLorePage deleteNote: fetch DELETE, `!response.ok` throws, then router.push("/lore")
    const del = await h.request(`/api/lore/${W.questLedger}`, { method: "DELETE" });
    assert.equal(del.status, 204);
    assert.equal(
      await h.request(`/api/lore/${W.questLedger}`, PAGE_GET).then(async (r) => {
        await r.body?.cancel();
        return r.status;
      }),
      404,
    );
  }));

Deno.test("note hover preview and autolinker: the fields and the empty-editor case", () =>
  withHarness(async (h) => {
    // components/portal/NotePreview.tsx NotePreviewContent: GET /api/lore/:id, reads title and
    // the labels (loreType badge, three promoted values)
    const harbor = await readNote(h, W.locHarbor);
    assert.equal(harbor.title, "Saltmarrow Harbor");
    assert.equal(harbor.attributes.find((a) => a.name === "loreType")?.value, "location");
    // components/editor/AutolinkerDialog.tsx: POST { text } (the editor's plain text), reads
    // data.matches[].{ term, noteId, title }; an empty editor sends ""
    const found = await h.requestJson<
      { matches: { term: string; noteId: string; title: string }[] }
    >(
      "/api/lore/autolink",
      jsonWrite("POST", { text: "Mira Tallowend sailed from Saltmarrow Harbor." }),
    );
    assert.equal(found.status, 200);
    assert.deepEqual(found.body.matches.map((m) => [m.term, m.noteId]), [
      ["Mira Tallowend", W.charMira],
      ["Saltmarrow Harbor", W.locHarbor],
    ]);
    const empty = await h.requestJson("/api/lore/autolink", jsonWrite("POST", { text: "" }));
    assert.deepEqual([empty.status, empty.body], [200, { matches: [] }]);
  }));
