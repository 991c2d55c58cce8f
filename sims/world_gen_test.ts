import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../src/config/service_config.ts";
import { responseCheck } from "../src/pipeline/response_check.ts";
import { startServer } from "../src/server.ts";
import { buildShareView, type ShareNote, type ShareView } from "../src/share/tree_filter.ts";
import { startCoreSim } from "./core.ts";
import { type CoreStore, createCoreStore } from "./core_store.ts";
import { MAX_WORLD_NOTES, startDevStack, worldNotesOf } from "./dev_stack.ts";
import { GEN_FOLDER_ID, type GeneratedWorld, seedGeneratedWorld } from "./world_gen.ts";
import { markLore, seedWorld, W } from "./world.ts";

function seeded(notes: number, seed?: number): { store: CoreStore; world: GeneratedWorld } {
  const store = createCoreStore();
  seedWorld(store);
  return { store, world: seedGeneratedWorld(store, { notes, seed }) };
}

/** The share root's subtree as the service loads it (one subtree search), filtered for players. */
function publicView(store: CoreStore): ShareView {
  const below = store.search("note.noteId != ''", { ancestorNoteId: W.guide }).hits;
  const ids = new Set([W.guide, ...below.map((h) => h.noteId)]);
  const notes = [...ids].map((id) => store.notePojo(id) as unknown as ShareNote);
  return buildShareView({ rootId: W.guide, notes });
}

const generated = (w: GeneratedWorld) => [...w.publicIds, ...w.hiddenIds];
const own = (store: CoreStore, id: string, name: string) =>
  store.ownAttributes(id).filter((a) => a.name === name);
const html = (store: CoreStore, id: string) => store.getContent(id) as string;
const loreType = (store: CoreStore, id: string) => store.labelValue(id, "loreType");

/** Link relations of a note as `name=value`, sorted. */
const links = (store: CoreStore, id: string) =>
  store.ownAttributes(id)
    .filter((a) => a.name === "internalLink" || a.name === "imageLink")
    .map((a) => `${a.name}=${a.value}`)
    .sort();

function depthBelowFolder(store: CoreStore, id: string): number {
  let depth = 0;
  for (let at = id; at !== GEN_FOLDER_ID; depth++) at = store.branchesOf(at)[0].parentNoteId;
  return depth;
}

Deno.test("world gen: the same seed gives the same world, a different seed another", () => {
  const a = seeded(150, 42);
  const b = seeded(150, 42);
  assert.deepEqual(a.world, b.world);
  for (const id of generated(a.world)) {
    // ids, titles, dates, attributes (ids included) and contents
    assert.deepEqual(a.store.notePojo(id), b.store.notePojo(id), id);
    assert.deepEqual(a.store.getContent(id), b.store.getContent(id), id);
  }
  const c = seeded(150, 43);
  const titles = (s: CoreStore, w: GeneratedWorld) =>
    generated(w).map((id) => s.getNote(id)?.title);
  assert.notDeepEqual(titles(c.store, c.world), titles(a.store, a.world));
  assert.notDeepEqual(
    generated(c.world).map((id) => c.store.getContent(id)),
    generated(a.world).map((id) => a.store.getContent(id)),
  );
});

Deno.test("world gen: exactly `notes` generated notes are public, hidden ones never", () => {
  for (const notes of [1, 2, 24, 25, 26, 49, 51, 99, 300]) {
    const { store, world } = seeded(notes, notes);
    const view = publicView(store);
    const mine = new Set(generated(world));
    const visible = view.publicIds().filter((id) => mine.has(id));
    assert.equal(visible.length, notes, `notes=${notes}`);
    assert.deepEqual(new Set(visible), new Set(world.publicIds), `notes=${notes}`);
    assert.ok(world.publicIds.includes(world.folderId));
    assert.ok(world.hiddenIds.length >= 4, `notes=${notes}: every way of hiding is there`);
    for (const id of world.hiddenIds) assert.equal(view.isPublic(id), false, id);
    // the sample world's share is unchanged
    assert.ok(view.isPublic(W.guideWelcome) && !view.isPublic(W.guideDraft));
  }
});

Deno.test("world gen: ids are 12 alphanumerics, stable, never the sample world's", () => {
  const { world } = seeded(120);
  const ids = generated(world);
  assert.equal(new Set(ids).size, ids.length);
  const sample = new Set<string>(Object.values(W));
  for (const id of ids) {
    assert.match(id, /^[A-Za-z0-9]{12}$/);
    assert.ok(!sample.has(id), id);
  }
  assert.equal(world.folderId, GEN_FOLDER_ID);
});

Deno.test("world gen: hidden notes: #draft, #gmOnly (own or inheritable), an inheritable #draft subtree", () => {
  const { store, world } = seeded(300);
  assert.equal(world.hiddenIds.length, 30, "about 10% on top");
  const flagged = (name: string, inheritable: boolean) =>
    world.hiddenIds.filter((id) =>
      own(store, id, name).some((a) => a.isInheritable === inheritable)
    );
  assert.ok(flagged("draft", false).length >= 5);
  assert.ok(flagged("gmOnly", false).length >= 3);
  assert.ok(flagged("gmOnly", true).length >= 1);
  const [draftRoot] = flagged("draft", true);
  const below = world.hiddenIds.filter((id) =>
    id !== draftRoot && store.branchesOf(id)[0].parentNoteId !== GEN_FOLDER_ID &&
    !own(store, id, "draft").length && !own(store, id, "gmOnly").length
  );
  assert.ok(below.length >= 3, "notes hidden only by the inherited #draft");
  for (const id of below) assert.equal(store.hasLabel(id, "draft"), true, id);
  // hidden notes are lore too, and the public links to some of them
  assert.ok(world.hiddenIds.every((id) => store.hasLabel(id, "lore")));
  const hidden = new Set(world.hiddenIds);
  const linkingToHidden = world.publicIds.filter((id) =>
    own(store, id, "internalLink").some((a) => hidden.has(a.value))
  );
  assert.ok(linkingToHidden.length >= 10, `${linkingToHidden.length} public notes link to hidden`);
});

Deno.test("world gen: a real world's shape: depth, lore types like markLore, content size", () => {
  const { store, world } = seeded(300);
  const lore = generated(world).filter((id) => !world.imageIds.includes(id));
  const depths = lore.map((id) => depthBelowFolder(store, id));
  assert.ok(Math.max(...depths) >= 3 && Math.max(...depths) <= 4, `depth ${Math.max(...depths)}`);
  const types = new Set(lore.map((id) => loreType(store, id)));
  assert.ok(types.size >= 10, [...types].join(", "));

  // markLore's attributes, positions included, so the templates promote their fields
  const probe = store.createNote({ parentNoteId: "root", title: "p", type: "text", content: "x" });
  markLore(store, probe.note.noteId, "character");
  const marks = (id: string) =>
    store.ownAttributes(id)
      .filter((a) => ["lore", "loreType", "template"].includes(a.name))
      .sort((a, b) => a.position - b.position)
      .map((a) => `${a.type}:${a.name}=${a.value}@${a.position}`);
  const character = lore.find((id) => loreType(store, id) === "character")!;
  assert.deepEqual(marks(character), marks(probe.note.noteId));
  assert.ok(store.attributesOf(character).some((a) => a.name === "label:secrets"));
  for (const id of lore) {
    assert.equal(own(store, id, "template").length, 1, id);
    const bytes = new TextEncoder().encode(html(store, id)).length;
    assert.ok(bytes >= 300 && bytes <= 2000, `${id}: ${bytes} bytes`);
    assert.match(html(store, id), /^<p>/);
  }
  // fixed dates, a minute apart
  assert.equal(store.getNote(GEN_FOLDER_ID)?.utcDateCreated, "2026-03-02 09:00:00.000Z");
  assert.equal(store.getNote(lore[1])?.utcDateCreated, "2026-03-02 09:01:00.000Z");
});

Deno.test("world gen: links written as Core writes them, with the relations Core's scan makes", () => {
  const { store, world } = seeded(300);
  const mine = new Set(generated(world));
  const texts = generated(world).filter((id) => store.getNote(id)?.type === "text");
  let reference = 0;
  let typed = 0;
  let gmOnly = 0;
  for (const id of texts) {
    const content = html(store, id);
    reference += content.match(/<a class="reference-link" href="#root\/[A-Za-z0-9/]+">/g)?.length ??
      0;
    typed += content.match(/<a href="#root\/[A-Za-z0-9]{12}">/g)?.length ?? 0;
    if (content.includes('<span class="gm-only">')) gmOnly++;
    for (const a of own(store, id, "internalLink")) assert.ok(mine.has(a.value), a.value);
  }
  assert.ok(reference > texts.length && typed > texts.length / 3, `${reference}, ${typed}`);
  assert.ok(gmOnly > texts.length * 0.1 && gmOnly < texts.length * 0.4, `${gmOnly} GM-only`);
  const linked = texts.filter((id) => own(store, id, "internalLink").length > 0);
  assert.ok(linked.length >= texts.length * 0.95);
  // Core's link scan over every note changes nothing: the relations already match the HTML
  const before = texts.map((id) => links(store, id));
  for (const id of texts) store.setNoteContent(id, html(store, id), { scanLinks: true });
  assert.deepEqual(texts.map((id) => links(store, id)), before);
});

Deno.test("world gen: relations, secrets, dates, map pins and images in proportion", () => {
  const { store, world } = seeded(300);
  const all = generated(world);
  const ofType = (type: string) => all.filter((id) => loreType(store, id) === type);
  const characters = ofType("character");
  const withSecrets = characters.filter((id) => own(store, id, "secrets").length > 0);
  assert.ok(withSecrets.length >= characters.length * 0.2, "#secrets on some characters");
  assert.ok(withSecrets.length <= characters.length * 0.6);
  const rel = (name: string) => characters.filter((id) => own(store, id, name).length > 0);
  assert.ok(rel("relInhabits").length >= characters.length * 0.7);
  assert.ok(rel("relAlly").length >= characters.length * 0.2);
  assert.ok(rel("relEnemy").length >= characters.length * 0.15);
  const hidden = new Set(world.hiddenIds);
  assert.ok(
    characters.some((id) => own(store, id, "relEnemy").some((a) => hidden.has(a.value))),
    "some relation points at a hidden note",
  );

  const events = ofType("event");
  assert.ok(events.length >= 20);
  for (const id of events) {
    assert.match(store.labelValue(id, "inWorldDate")!, /^\d{4}-\d{2}-\d{2}$/);
  }
  const places = all.filter((id) =>
    own(store, id, "locationType").some((a) => a.value !== "region")
  );
  assert.ok(places.length >= 30);
  for (const id of places) {
    assert.match(own(store, id, "geolocation")[0]?.value ?? "", /^\d+(\.\d+)?, \d+(\.\d+)?$/, id);
  }

  assert.equal(world.imageIds.length, 6, "one image per 50 notes");
  const sizes = new Set<string>();
  for (const id of world.imageIds) {
    const png = store.getContent(id) as Uint8Array;
    assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47]); // "PNG"
    const view = new DataView(png.buffer, png.byteOffset);
    sizes.add(`${view.getUint32(16)}x${view.getUint32(20)}`);
    assert.ok(world.publicIds.includes(id));
    const users = store.targetRelationsOf(id).filter((a) =>
      a.name === "portraitImage" || a.name === "mapImage"
    );
    assert.equal(users.length, 1, `${id} is one note's portrait or map`);
  }
  assert.ok(sizes.size >= 3, [...sizes].join(", "));
  const maps = all.filter((id) => own(store, id, "mapImage").length > 0);
  const portraits = all.filter((id) => own(store, id, "portraitImage").length > 0);
  assert.ok(maps.length >= 1 && portraits.length >= 1);
  for (const map of maps) {
    const width = Number(store.labelValue(map, "mapWidth"));
    const height = Number(store.labelValue(map, "mapHeight"));
    const pins = store.childBranchesOf(map).map((b) => own(store, b.noteId, "geolocation")[0])
      .filter((a) => a !== undefined);
    assert.ok(pins.length >= 1, "a map has pins");
    for (const pin of pins) {
      const [x, y] = pin.value.split(",").map(Number);
      assert.ok(
        x >= 0 && x <= width && y >= 0 && y <= height,
        `${pin.value} on ${width}x${height}`,
      );
    }
  }
  const embedded = all.filter((id) => own(store, id, "imageLink").length > 0);
  assert.ok(embedded.length >= 3, "some contents show an image");
  for (const id of embedded) {
    for (const a of own(store, id, "imageLink")) {
      assert.ok(html(store, id).includes(`<img src="api/images/${a.value}/`), id);
    }
  }
});

Deno.test("world gen: rejects a bad count and a second world", () => {
  const store = createCoreStore();
  seedWorld(store);
  for (const notes of [0, -1, 1.5, Number.NaN]) {
    assert.throws(() => seedGeneratedWorld(store, { notes }), RangeError);
  }
  seedGeneratedWorld(store, { notes: 5 });
  assert.throws(() => seedGeneratedWorld(store, { notes: 5 }), /already seeded/);
});

Deno.test("SIM_WORLD_NOTES: a whole number from 1 to the cap; junk starts nothing", async () => {
  assert.equal(worldNotesOf({ SIM_WORLD_NOTES: " 3000 " }), 3000);
  assert.equal(worldNotesOf({ SIM_WORLD_NOTES: "" }), undefined);
  assert.equal(worldNotesOf({ SIM_WORLD_NOTES: String(MAX_WORLD_NOTES) }), MAX_WORLD_NOTES);
  for (const junk of ["0", "-5", "3k", "1e3", "2.5", "0x10", String(MAX_WORLD_NOTES + 1)]) {
    assert.throws(
      () => worldNotesOf({ SIM_WORLD_NOTES: junk }),
      (e) => e instanceof ConfigError && e.problems[0].startsWith("SIM_WORLD_NOTES: expected"),
      junk,
    );
  }
  // rejected before any double starts: the test's resource check finds nothing left open
  await assert.rejects(startDevStack({ SIM_WORLD_NOTES: "lots", PORT: "0" }), ConfigError);
});

Deno.test("world gen over HTTP: public pages show, hidden notes 404 and leak nowhere", async () => {
  const core = await startCoreSim();
  const world = seedGeneratedWorld(core.store, { notes: 200, seed: 11 });
  const problems: string[] = [];
  const dataDir = await Deno.makeTempDir({ prefix: "lpp-test-" });
  const server = await startServer({
    config: loadConfig({
      HOST: "127.0.0.1",
      PORT: "0",
      CORE_URL: core.url,
      CORE_TOKEN: core.token,
      SESSION_SECRET: "world-gen-test-session-secret-0123456789abcdef",
      DATA_DIR: dataDir,
      LOG_LEVEL: "silent",
    }),
    checkResponse: responseCheck((p) => problems.push(p)),
  });
  const get = async (path: string) => {
    const res = await fetch(server.url + path);
    return { status: res.status, text: await res.text() };
  };
  const store = core.store;
  const title = (id: string) => store.getNote(id)!.title;
  try {
    const lore = world.publicIds.filter((id) => !world.imageIds.includes(id));
    const character = lore.find((id) => loreType(store, id) === "character")!;
    const page = await get(`/public/lore/${character}`);
    assert.equal(page.status, 200);
    assert.ok(page.text.includes(title(character)), "the page shows its title");

    // everything a player can list: exactly the public lore, nothing hidden
    const all = await get(`/api/public/search?q=${encodeURIComponent("#lore")}`);
    const listed = (JSON.parse(all.text).results as { id: string }[]).map((r) => r.id);
    const mine = new Set(generated(world));
    assert.deepEqual(new Set(listed.filter((id) => mine.has(id))), new Set(lore));

    const hidden = new Set(world.hiddenIds);
    const linkers = world.publicIds.filter((id) =>
      own(store, id, "internalLink").some((a) => hidden.has(a.value))
    ).slice(0, 12);
    const pages = [
      await get("/"),
      all,
      ...await Promise.all(linkers.map((id) => get(`/public/lore/${id}`))),
      ...await Promise.all(linkers.map((id) => get(`/api/public/lore/${id}`))),
    ];
    assert.ok(pages.every((p) => p.status === 200));
    for (const id of world.hiddenIds) {
      assert.equal((await get(`/public/lore/${id}`)).status, 404, id);
      assert.equal((await get(`/api/public/lore/${id}`)).status, 404, id);
      const found = await get(`/api/public/search?q=${encodeURIComponent(title(id))}`);
      assert.equal(found.status, 200);
      assert.ok(!found.text.includes(title(id)), `search leaks ${title(id)}`);
      for (const p of pages) assert.ok(!p.text.includes(title(id)), `a page leaks ${title(id)}`);
    }
    assert.deepEqual(problems, []);
  } finally {
    await server.stop();
    await core.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
