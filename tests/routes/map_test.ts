/** Map data and map-image upload over HTTP through the real app against the Core double. */
import assert from "node:assert/strict";
import { type Harness, upstreamCalls, withHarness } from "../helpers/harness.ts";
import { makePng, W } from "../../sims/world.ts";

interface MapBody {
  noteId: string;
  title: string;
  image: { noteId: string; url: string } | null;
  width: number | null;
  height: number | null;
  pins: { noteId: string; title: string; loreType: string | null; x: number; y: number }[];
  invalidPins: { noteId: string; title: string; value: string }[];
}

interface ErrorBody {
  error: string;
  message: string;
  details?: Record<string, unknown>;
}

interface MapUpload {
  noteId: string;
  imageNoteId: string;
  url: string;
  width: number | null;
  height: number | null;
}

const CHILD_SEARCH = (id: string) =>
  `GET /etapi/notes?search=note.noteId+%21%3D+%27%27&ancestorNoteId=${id}&ancestorDepth=eq1`;

const CHART_MAP: MapBody = {
  noteId: W.locChart,
  title: "Chart of the Shattered Coast",
  image: { noteId: W.imgChart, url: `/api/lore/${W.imgChart}/image` },
  width: null,
  height: null,
  pins: [
    { noteId: W.locHarbor, title: "Saltmarrow Harbor", loreType: "location", x: 12.5, y: 30.25 },
    {
      noteId: W.locLighthouse,
      title: "Greyfin Lighthouse",
      loreType: "location",
      x: 40.1,
      y: 8.75,
    },
  ],
  invalidPins: [
    { noteId: W.locReef, title: "The Knucklebone Reef", value: "somewhere past the gulls" },
  ],
};

function label(h: Harness, noteId: string, name: string, value: string, isInheritable = false) {
  h.core.store.createAttribute({ noteId, type: "label", name, value, isInheritable });
}

function child(h: Harness, parentNoteId: string, title: string): string {
  return h.core.store.createNote({ parentNoteId, title, type: "text", content: "" }).note.noteId;
}

function mapImageRelations(h: Harness, noteId: string): string[] {
  return h.core.store.ownAttributes(noteId)
    .filter((a) => a.type === "relation" && a.name === "mapImage").map((a) => a.value);
}

function ownLabels(h: Harness, noteId: string, name: string): string[] {
  return h.core.store.ownAttributes(noteId)
    .filter((a) => a.type === "label" && a.name === name).map((a) => a.value);
}

async function uploadMap(h: Harness, id: string, body: Uint8Array, type = "image/png") {
  return await h.requestJson<MapUpload & ErrorBody>(`/api/lore/${id}/map/upload`, {
    method: "POST",
    headers: { "content-type": type, "x-host-filename": "coast-2.png" },
    body: body as BodyInit,
  });
}

// ---------------------------------------------------------------------------------------------
// GET /api/lore/:id/map

Deno.test("GET map: image, pins in child order, the unparseable pin reported; two Core calls", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    const r = await h.requestJson<MapBody>(`/api/lore/${W.locChart}/map`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, CHART_MAP);
    assert.deepEqual(
      upstreamCalls(h).sort(),
      [
        `GET /etapi/notes/${W.locChart}`,
        CHILD_SEARCH(W.locChart),
      ].sort(),
    );
  }));

Deno.test("GET map: own #mapWidth/#mapHeight as positive integers, anything else null", () =>
  withHarness(async (h) => {
    label(h, W.locChart, "mapWidth", "2048");
    label(h, W.locChart, "mapHeight", " 1536 ");
    const ok = await h.requestJson<MapBody>(`/api/lore/${W.locChart}/map`);
    assert.deepEqual([ok.body.width, ok.body.height], [2048, 1536]);
    for (const bad of ["0", "-5", "1.5", "abc", "", "1e3", "99999999999"]) {
      const id = child(h, W.loreRoot, `Map ${bad}`);
      label(h, id, "mapWidth", bad);
      label(h, id, "mapHeight", bad);
      const r = await h.requestJson<MapBody>(`/api/lore/${id}/map`);
      assert.deepEqual([r.body.width, r.body.height], [null, null], bad);
      assert.equal(r.body.image, null);
      assert.deepEqual(r.body.pins, []);
    }
  }));

Deno.test("GET map: only direct children's own #geolocation counts; inherited or deeper do not", () =>
  withHarness(async (h) => {
    // a grandchild with a pin of its own is not on this map
    label(h, child(h, W.locHarbor, "Tar Warehouse"), "geolocation", "1, 1");
    // an inheritable #geolocation on the map reaches every child, but is nobody's own pin
    label(h, W.locChart, "geolocation", "0, 0", true);
    const unpinned = child(h, W.locChart, "Unpinned Cove");
    const r = await h.requestJson<MapBody>(`/api/lore/${W.locChart}/map`);
    assert.deepEqual(r.body.pins, CHART_MAP.pins);
    assert.deepEqual(r.body.invalidPins, CHART_MAP.invalidPins);
    assert.ok(!JSON.stringify(r.body).includes(unpinned));
  }));

Deno.test("GET map: many pinned children still cost one search, not one call per child", () =>
  withHarness(async (h) => {
    const map = child(h, W.loreRoot, "Archipelago");
    const expected = [];
    for (let i = 0; i < 40; i++) {
      const id = child(h, map, `Isle ${i}`);
      label(h, id, "geolocation", `${i}.5, -${i}`);
      expected.push({ noteId: id, title: `Isle ${i}`, loreType: null, x: i + 0.5, y: -i || 0 });
    }
    h.core.clearRequests();
    const r = await h.requestJson<MapBody>(`/api/lore/${map}/map`);
    assert.deepEqual(r.body.pins, expected);
    assert.equal(upstreamCalls(h).length, 2);
  }));

Deno.test("GET map: missing note 404; bad ids 400 with nothing sent upstream", () =>
  withHarness(async (h) => {
    const missing = await h.requestJson<ErrorBody>("/api/lore/noSuchNote01/map");
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error, "NOT_FOUND");
    h.core.clearRequests();
    for (const id of ["a%2Fb", "..%2F..%2Fapp-info", "a'b", "a%22%20or%20%22", "x".repeat(129)]) {
      const r = await h.requestJson<ErrorBody>(`/api/lore/${id}/map`);
      assert.equal(r.status, 400, id);
      assert.equal(r.body.error, "INVALID_REQUEST");
    }
    assert.deepEqual(upstreamCalls(h), []);
  }));

// ---------------------------------------------------------------------------------------------
// POST /api/lore/:id/map/upload

Deno.test("map upload: new image under the map, size from the PNG header, old ~mapImage replaced", () =>
  withHarness(async (h) => {
    const png = makePng(300, 200, (x, y) => [x % 256, y % 256, 90]);
    h.core.clearRequests();
    const r = await uploadMap(h, W.locChart, png);
    assert.equal(r.status, 201);
    const imageNoteId = r.body.imageNoteId;
    assert.deepEqual(r.body, {
      noteId: W.locChart,
      imageNoteId,
      url: `/api/lore/${imageNoteId}/image`,
      width: 300,
      height: 200,
    });
    const image = h.core.store.notePojo(imageNoteId);
    assert.deepEqual(image.parentNoteIds, [W.locChart]);
    assert.equal(image.type, "image");
    assert.equal(image.title, "coast-2.png");
    assert.deepEqual(h.core.store.getContent(imageNoteId), png);
    assert.deepEqual(mapImageRelations(h, W.locChart), [imageNoteId]);
    assert.deepEqual(ownLabels(h, W.locChart, "mapWidth"), ["300"]);
    assert.deepEqual(ownLabels(h, W.locChart, "mapHeight"), ["200"]);
    assert.ok(h.core.store.getNote(W.imgChart), "the old image note is kept");

    const calls = upstreamCalls(h);
    assert.deepEqual(calls.slice(0, 3), [
      `GET /etapi/notes/${W.locChart}`,
      "POST /etapi/create-note",
      `PUT /etapi/notes/${imageNoteId}/content`,
    ]);
    assert.deepEqual(calls.slice(3, 6), Array(3).fill("POST /etapi/attributes"));
    assert.match(calls[6], /^DELETE \/etapi\/attributes\/\w+$/);
    assert.equal(calls.length, 7);

    const map = await h.requestJson<MapBody>(`/api/lore/${W.locChart}/map`);
    assert.deepEqual(map.body, {
      ...CHART_MAP,
      image: { noteId: imageNoteId, url: `/api/lore/${imageNoteId}/image` },
      width: 300,
      height: 200,
    });
  }));

Deno.test("map upload: existing #mapWidth/#mapHeight are kept", () =>
  withHarness(async (h) => {
    label(h, W.locChart, "mapWidth", "1000");
    label(h, W.locChart, "mapHeight", "800");
    const r = await uploadMap(h, W.locChart, makePng(30, 20, () => [0, 0, 0]));
    assert.equal(r.status, 201);
    assert.deepEqual([r.body.width, r.body.height], [30, 20]);
    assert.deepEqual(ownLabels(h, W.locChart, "mapWidth"), ["1000"]);
    assert.deepEqual(ownLabels(h, W.locChart, "mapHeight"), ["800"]);
    const map = await h.requestJson<MapBody>(`/api/lore/${W.locChart}/map`);
    assert.deepEqual([map.body.width, map.body.height], [1000, 800]);
  }));

Deno.test("map upload: a map note that does not exist is 404 and nothing is created", () =>
  withHarness(async (h) => {
    const before = h.core.store.noteIds().length;
    h.core.clearRequests();
    const r = await uploadMap(h, "noSuchMap001", makePng(4, 4, () => [0, 0, 0]));
    assert.equal(r.status, 404);
    assert.equal(r.body.error, "NOT_FOUND");
    assert.deepEqual(upstreamCalls(h), ["GET /etapi/notes/noSuchMap001"]);
    assert.equal(h.core.store.noteIds().length, before);
  }));

Deno.test("map upload: non-images are 415 with nothing sent upstream; bad ids 400", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    const svg = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"/>');
    const disguised = await uploadMap(h, W.locChart, svg);
    assert.equal(disguised.status, 415);
    assert.equal(disguised.body.error, "UNSUPPORTED_MEDIA_TYPE");
    const declared = await uploadMap(h, W.locChart, makePng(4, 4, () => [0, 0, 0]), "text/plain");
    assert.equal(declared.status, 415);
    // a PNG signature without its header: the map's size could not be known
    const bare = await uploadMap(h, W.locChart, makePng(4, 4, () => [0, 0, 0]).subarray(0, 8));
    assert.equal(bare.status, 415);
    for (const id of ["a%2Fb", "..%2Fetc", "a'b"]) {
      const r = await uploadMap(h, id, makePng(4, 4, () => [0, 0, 0]));
      assert.equal(r.status, 400, id);
    }
    assert.deepEqual(upstreamCalls(h), []);
    assert.deepEqual(mapImageRelations(h, W.locChart), [W.imgChart]);
  }));

Deno.test("map upload: a failure at the last step rolls everything back; the old map stays", () =>
  withHarness(async (h) => {
    const before = await h.requestJson<MapBody>(`/api/lore/${W.locChart}/map`);
    const notesBefore = h.core.store.noteIds().length;
    h.core.fault({ method: "DELETE", path: /^\/etapi\/attributes\/\w+$/, status: 500, times: 1 });
    const r = await uploadMap(h, W.locChart, makePng(64, 64, () => [1, 1, 1]));
    assert.equal(r.status, 502);
    assert.equal(r.body.error, "UPSTREAM_ERROR");
    assert.match(r.body.message, /remove the previous map image; nothing was changed/);
    assert.deepEqual(r.body.details?.rolledBack, [
      "add the #mapHeight label",
      "add the #mapWidth label",
      "create the image note",
    ]);
    const after = await h.requestJson<MapBody>(`/api/lore/${W.locChart}/map`);
    assert.deepEqual(after.body, before.body);
    assert.deepEqual(mapImageRelations(h, W.locChart), [W.imgChart]);
    assert.deepEqual(ownLabels(h, W.locChart, "mapWidth"), []);
    assert.equal(h.core.store.noteIds().length, notesBefore);
  }));

Deno.test("map upload: over MAX_UPLOAD_BYTES mid-stream is 413 and the image note is removed", () =>
  withHarness(async (h) => {
    const notesBefore = h.core.store.noteIds().length;
    const big = new Uint8Array(8 * 1024);
    big.set(makePng(10, 10, () => [0, 0, 0]));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent >= 4) return c.close();
        sent++;
        c.enqueue(big.slice());
      },
    });
    const res = await h.request(`/api/lore/${W.locChart}/map/upload`, {
      method: "POST",
      headers: { "content-type": "image/png" },
      body,
    });
    const r = await res.json() as ErrorBody;
    assert.equal(res.status, 413);
    assert.equal(r.error, "PAYLOAD_TOO_LARGE");
    assert.equal(h.core.store.noteIds().length, notesBefore);
    assert.deepEqual(mapImageRelations(h, W.locChart), [W.imgChart]);
  }, { env: { MAX_UPLOAD_BYTES: "16384" } }));
