/**
 * Public ETags say only what a visitor can read: every kind of public answer (note API and page,
 * home, lore type page, search API and page, sitemap, feed, robots.txt, timeline, map page,
 * images; anonymous and with the share's password) keeps its ETag, and answers a revalidation
 * with 304, through any edit of what the public does not see — a draft's content, title and
 * attributes, hidden notes added, cloned, linked and removed — whether Core is edited directly or
 * through this service. An edit to what an answer shows gives it a new ETag and the new bytes.
 */
import assert from "node:assert/strict";
import { type Harness, type HarnessOptions, withHarness } from "../helpers/harness.ts";
import { prng, propertySeed } from "../helpers/prng.ts";
import {
  CHART_PNG,
  createLoreNote,
  HARBOR_ALIAS,
  PORTRAIT_PNG,
  SHARE_CREDENTIALS,
  W,
} from "../../sims/world.ts";

/** Every public request loads the share as Core holds it now: no waiting for a cache to age. */
const FRESH: HarnessOptions = { env: { PUBLIC_CACHE_MS: "0" } };
/** Kept answers and snapshots: only a write through the service makes the share load again. */
const CACHED: HarnessOptions = { env: { PUBLIC_CACHE_MS: "600000" } };

const GOOD = "Basic " + btoa(`${SHARE_CREDENTIALS.user}:${SHARE_CREDENTIALS.password}`);

const lore = (id: string) => `/api/public/lore/${encodeURIComponent(id)}`;
const page = (id: string) => `/public/lore/${encodeURIComponent(id)}`;
const search = (q: string) => `/api/public/search?q=${encodeURIComponent(q)}`;
const image = (id: string) => `/api/public/images/${id}/file.png`;

/** The notes the tests add to the sample share: a timeline and a map, each with a hidden part. */
interface Scene {
  /** A public event on the timeline. */
  event: string;
  /** The public event's `#inWorldDate` attribute. */
  eventDate: string;
  /** A draft event dated on the timeline. */
  draftEvent: string;
  /** A public note drawing the coast chart as its map. */
  map: string;
  /** A public pin on the map. */
  pin: string;
  /** A GM-only pin on the same map. */
  hiddenPin: string;
  /** The hidden pin's `#geolocation` attribute. */
  hiddenPinGeo: string;
  /** A label the draft carries (removed by one of the edits). */
  draftLabel: string;
}

function label(h: Harness, noteId: string, name: string, value = "", isInheritable = false) {
  return h.core.store.createAttribute({ noteId, type: "label", name, value, isInheritable })
    .attributeId;
}

function setUp(h: Harness): Scene {
  const store = h.core.store;
  const event = createLoreNote(store, W.guide, "The First Lamp", "event");
  const eventDate = label(h, event, "inWorldDate", "1187-03-14");
  const draftEvent = createLoreNote(store, W.guide, "The Sunken Vote", "event");
  label(h, draftEvent, "inWorldDate", "1188-01-01");
  label(h, draftEvent, "draft");
  const map = createLoreNote(store, W.guide, "Pilot's Chart", "location");
  store.createAttribute({
    noteId: map,
    type: "relation",
    name: "mapImage",
    value: W.imgChart,
  });
  const pin = createLoreNote(store, map, "Gull Cove", "location");
  label(h, pin, "geolocation", "12, 30");
  const hiddenPin = createLoreNote(store, map, "Wreck of the Heron", "location");
  const hiddenPinGeo = label(h, hiddenPin, "geolocation", "40, 8");
  label(h, hiddenPin, "gmOnly");
  const draftLabel = label(h, W.guideDraft, "race", "Gull");
  return { event, eventDate, draftEvent, map, pin, hiddenPin, hiddenPinGeo, draftLabel };
}

/** One public answer: what a visitor asks for, and as whom. */
interface Asked {
  path: string;
  authorization?: string;
}

/** Every kind of public answer, anonymous and (where it differs) with the share's password. */
function everyAnswer(scene: Scene): Asked[] {
  return [
    { path: lore(W.charMira) },
    { path: lore(HARBOR_ALIAS) },
    { path: page(W.charMira) },
    { path: page(W.guideWelcome) },
    { path: "/" },
    { path: "/public/types/character" },
    { path: search("harbor") },
    { path: search("#lore") },
    { path: "/?q=harbor" },
    { path: "/sitemap.xml" },
    { path: "/public/feed.atom" },
    { path: "/robots.txt" },
    { path: "/public/timeline" },
    { path: `/public/maps/${scene.map}` },
    { path: image(W.imgChart) },
    { path: image(W.attSigil) },
    { path: lore(W.guideVault), authorization: GOOD },
    { path: page(W.guideVault), authorization: GOOD },
    { path: "/", authorization: GOOD },
    { path: search("ledger"), authorization: GOOD },
  ];
}

const named = (a: Asked) => `${a.path}${a.authorization ? " (with the password)" : ""}`;

interface Seen {
  status: number;
  etag: string | null;
  /** Every header but those that differ per request (date, request id). */
  headers: [string, string][];
  bytes: Uint8Array;
}

const PER_REQUEST = new Set(["date", "x-request-id"]);

async function ask(h: Harness, a: Asked, ifNoneMatch?: string): Promise<Seen> {
  const headers = new Headers();
  if (a.authorization) headers.set("authorization", a.authorization);
  if (ifNoneMatch) headers.set("if-none-match", ifNoneMatch);
  const res = await h.request(a.path, { headers });
  return {
    status: res.status,
    etag: res.headers.get("etag"),
    headers: [...res.headers].filter(([name]) => !PER_REQUEST.has(name)),
    bytes: new Uint8Array(await res.arrayBuffer()),
  };
}

/** Every answer as a visitor sees it now: 200 with an ETag each. */
async function seeAll(h: Harness, answers: Asked[]): Promise<Map<Asked, Seen>> {
  const seen = new Map<Asked, Seen>();
  for (const a of answers) {
    const got = await ask(h, a);
    assert.equal(got.status, 200, named(a));
    assert.match(got.etag ?? "", /^W\/"[\w-]{22}"$/, named(a));
    seen.set(a, got);
  }
  return seen;
}

/** A revalidation of every answer is a 304 with the ETag it had. */
async function assertAllUnchanged(h: Harness, before: Map<Asked, Seen>, edit: string) {
  for (const [a, was] of before) {
    const again = await ask(h, a, was.etag!);
    assert.equal(again.status, 304, `${named(a)} after ${edit}`);
    assert.equal(again.etag, was.etag, `${named(a)} after ${edit}`);
    assert.equal(again.bytes.length, 0);
  }
}

/** A revalidation of the answer is a 200 with new bytes and a new ETag. */
async function assertChanged(h: Harness, a: Asked, was: Seen, edit: string) {
  const now = await ask(h, a, was.etag!);
  assert.equal(now.status, 200, `${named(a)} after ${edit}`);
  assert.notEqual(now.etag, was.etag, `${named(a)} after ${edit}`);
  assert.notDeepEqual(now.bytes, was.bytes, `${named(a)} after ${edit}`);
}

/** The share's subtree searches Core has answered: each is a fresh snapshot. */
function snapshotLoads(h: Harness): number {
  return h.core.requests.filter((r) =>
    r.path === "/etapi/notes" &&
    new URLSearchParams(r.search).get("search") === "note.noteId != ''"
  ).length;
}

/** Edits of what no visitor may see, made in Core directly (as Core's own UI would). */
function hiddenEdits(scene: Scene): [string, (h: Harness) => void][] {
  const store = (h: Harness) => h.core.store;
  return [
    [
      "a draft's content",
      (h) =>
        store(h).putNoteContent(
          W.guideDraft,
          "<p>The bell rings for Mira at Saltmarrow Harbor.</p>",
        ),
    ],
    [
      "a draft's title",
      (h) => store(h).patchNote(W.guideDraft, { title: "Harbor Rumours of Mira" }),
    ],
    ["a label added to a GM-only note", (h) => {
      label(h, W.guideGmOnly, "lore");
      label(h, W.guideGmOnly, "loreType", "character");
    }],
    ["a label removed from a draft", (h) => store(h).deleteAttribute(scene.draftLabel)],
    ["a relation from a hidden note to a public one", (h) =>
      store(h).createAttribute({
        noteId: W.guideWip,
        type: "relation",
        name: "relatedTo",
        value: W.charMira,
      })],
    ["a hidden note's link to a public note", (h) =>
      store(h).putNoteContent(
        W.guideGmOnly,
        `<p>Ask <a class="reference-link" href="#root/${W.guide}/${W.charMira}">Mira</a>.</p>`,
      )],
    ["a draft child added under a public note", (h) => {
      const { note } = store(h).createNote({
        parentNoteId: W.charMira,
        title: "Harbor debts of Mira",
        type: "text",
        content: "<p>What Mira owes the harbor.</p>",
      });
      label(h, note.noteId, "lore");
      label(h, note.noteId, "loreType", "character");
      label(h, note.noteId, "draft");
    }],
    ["a note added under a hidden parent", (h) => {
      store(h).createNote({
        parentNoteId: W.guideWip,
        title: "Harbor soundings",
        type: "text",
        content: "<p>Soundings of the harbor.</p>",
      });
    }],
    ["a hidden note cloned under a public one", (h) => {
      store(h).createBranch({ noteId: W.guideDraft, parentNoteId: W.guideWelcome });
    }],
    [
      "another date on the draft event",
      (h) => label(h, scene.draftEvent, "inWorldDate", "1186-01-01"),
    ],
    ["the hidden pin moved", (h) => {
      store(h).deleteAttribute(scene.hiddenPinGeo);
      label(h, scene.hiddenPin, "geolocation", "20, 20");
    }],
    [
      "the content of a note hidden by its parent's inheritable draft",
      (h) => store(h).putNoteContent(W.guideWipChild, "<p>The ledger is in the vault.</p>"),
    ],
    ["a draft removed", (h) => store(h).deleteNote(W.guideDraft)],
  ];
}

Deno.test("public ETags: edits of hidden notes never change one; If-None-Match stays 304", () =>
  withHarness(async (h) => {
    const scene = setUp(h);
    const before = await seeAll(h, everyAnswer(scene));
    for (const [edit, apply] of hiddenEdits(scene)) {
      const loads = snapshotLoads(h);
      apply(h);
      await assertAllUnchanged(h, before, edit);
      assert.ok(snapshotLoads(h) > loads, `the share was read again after ${edit}`);
    }
    // Asked afresh after all of them: the same bytes and every header the same (no
    // Last-Modified or anything else that moves with the share as a whole).
    for (const [a, was] of before) {
      const now = await ask(h, a);
      assert.equal(now.status, 200, named(a));
      assert.deepEqual(now.headers, was.headers, named(a));
      assert.deepEqual(now.bytes, was.bytes, named(a));
      assert.ok(!now.headers.some(([name]) => name === "last-modified"), named(a));
    }
  }, FRESH));

Deno.test("public ETags: an edit of what an answer shows gives it a new ETag", () =>
  withHarness(async (h) => {
    const scene = setUp(h);
    const store = h.core.store;
    const answers = everyAnswer(scene);
    const find = (path: string, authorization?: string) =>
      answers.find((a) => a.path === path && a.authorization === authorization)!;
    const edits: [string, () => void, Asked[]][] = [
      [
        "Mira's content",
        () => store.putNoteContent(W.charMira, "<p>Mira Tallowend now pilots for the Guild.</p>"),
        [
          find(lore(W.charMira)),
          find(page(W.charMira)),
          find("/public/types/character"),
          find(search("harbor")), // she no longer links the harbor
          find("/?q=harbor"),
          find("/public/feed.atom"),
        ],
      ],
      ["Mira's title", () => store.patchNote(W.charMira, { title: "Mira the Pilot" }), [
        find(lore(W.charMira)),
        find("/"),
        find("/", GOOD),
        find(search("#lore")),
        find("/sitemap.xml"), // her page's last change
      ]],
      [
        "the welcome note's content",
        () => store.putNoteContent(W.guideWelcome, "<p>Most ships put in at dawn.</p>"),
        [
          find(page(W.guideWelcome)),
        ],
      ],
      ["the public event's date", () => {
        store.deleteAttribute(scene.eventDate);
        label(h, scene.event, "inWorldDate", "1189-01-01");
      }, [
        find("/public/timeline"),
      ]],
      ["the public pin's title", () => store.patchNote(scene.pin, { title: "Gull Point" }), [
        find(`/public/maps/${scene.map}`),
      ]],
      ["the chart's bytes", () => store.putNoteContent(W.imgChart, PORTRAIT_PNG), [
        find(image(W.imgChart)),
        find(`/public/maps/${scene.map}`), // drawn at its new size
      ]],
      ["the sigil's bytes", () => store.putAttachmentContent(W.attSigil, CHART_PNG), [
        find(image(W.attSigil)),
      ]],
      [
        "the vault's content",
        () => store.putNoteContent(W.guideVault, "<p>The vault is empty now.</p>"),
        [
          find(lore(W.guideVault), GOOD),
          find(page(W.guideVault), GOOD),
        ],
      ],
      [
        "the ledger's title",
        () => store.patchNote(W.guideVaultLedger, { title: "Ledger of the Vault, Second Book" }),
        [
          find(search("ledger"), GOOD),
        ],
      ],
      // last: the sitemap and the feed are gone once the share opts out of indexing
      ["the root's robots opt-out", () => label(h, W.guide, "shareDisallowRobotIndexing"), [
        find("/robots.txt"),
        find("/"),
      ]],
    ];
    for (const [edit, apply, shown] of edits) {
      const before = await seeAll(h, shown);
      apply();
      for (const a of shown) await assertChanged(h, a, before.get(a)!, edit);
    }
  }, FRESH));

Deno.test("public ETags: kept answers re-rendered after a write through the service keep theirs", () =>
  withHarness(async (h) => {
    const scene = setUp(h);
    const before = await seeAll(h, everyAnswer(scene));
    // The same again from memory: the kept answers' ETags.
    await assertAllUnchanged(h, before, "nothing");
    const writes: [string, string, RequestInit & { json?: unknown }][] = [
      ["a draft's content", `/api/lore/${W.guideDraft}/content`, {
        method: "PUT",
        headers: { "content-type": "text/plain" },
        body: "<p>Mira sails at dawn from Saltmarrow Harbor.</p>",
      }],
      ["a draft's title", `/api/lore/${W.guideDraft}`, {
        method: "PATCH",
        json: { title: "Harbor Rumours" },
      }],
      ["a GM-only note's label", `/api/lore/${W.guideGmOnly}/attributes`, {
        method: "POST",
        json: { type: "label", name: "loreType", value: "character" },
      }],
      ["a note created under a draft", "/api/lore", {
        method: "POST",
        json: { title: "Harbor soundings", parentNoteId: W.guideWip, loreType: "location" },
      }],
      ["a draft deleted", `/api/lore/${W.guideDraft}`, { method: "DELETE" }],
    ];
    for (const [edit, path, init] of writes) {
      const loads = snapshotLoads(h);
      const res = await h.request(path, init);
      await res.body?.cancel();
      assert.ok(res.ok, `${edit}: ${res.status}`);
      // the write read the share again before answering: visitors read nothing more
      assert.equal(snapshotLoads(h), loads + 1, `one new snapshot with ${edit}`);
      await assertAllUnchanged(h, before, edit);
      assert.equal(snapshotLoads(h), loads + 1, `no other snapshot after ${edit}`);
    }
    // A public write through the service: the kept answer goes, the new one has a new ETag.
    const put = await h.request(`/api/lore/${W.charMira}/content`, {
      method: "PUT",
      headers: { "content-type": "text/plain" },
      body: "<p>Mira has left the coast.</p>",
    });
    assert.equal(put.status, 204);
    for (const path of [lore(W.charMira), page(W.charMira)]) {
      const a = [...before.keys()].find((k) => k.path === path && !k.authorization)!;
      await assertChanged(h, a, before.get(a)!, "Mira's content");
    }
  }, CACHED));

/** Words that public titles and text use, so a hidden edit could collide with what is shown. */
const WORDS = ["Harbor", "Mira", "Saltmarrow", "lantern", "Guild", "ledger", "reef", "tide"];

Deno.test("public ETags: property — random hidden edits never change a public ETag", () =>
  withHarness(async (h) => {
    const scene = setUp(h);
    const seed = propertySeed(20260522);
    const rng = prng(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rng() * items.length)];
    const phrase = () => Array.from({ length: 2 + Math.floor(rng() * 3) }, () => pick(WORDS));
    const store = h.core.store;
    // notes hidden by a flag of their own, and notes hidden only by an ancestor's
    const flagged = [W.guideDraft, W.guideGmOnly, W.guideWip, scene.draftEvent, scene.hiddenPin];
    const hidden = [...flagged, W.guideWipChild];
    const publicParents = [W.guide, W.guideWelcome, W.charMira, W.locHarbor, scene.map];
    const publicTargets = [W.charMira, W.locHarbor, W.faction, W.imgChart, scene.event];
    const edits: ((note: string) => string)[] = [
      (note) => {
        store.putNoteContent(
          note,
          `<p>${phrase().join(" ")} <a href="#root/${pick(publicTargets)}">${pick(WORDS)}</a></p>`,
        );
        return "content";
      },
      (note) => {
        store.patchNote(note, { title: phrase().join(" ") });
        return "title";
      },
      (note) => {
        const [name, value] = pick([
          ["loreType", "character"],
          ["inWorldDate", "1187-01-01"],
          ["geolocation", "3, 4"],
          ["race", pick(WORDS)],
          ["shareDescription", phrase().join(" ")],
        ]);
        label(h, note, name, value);
        return `label #${name}`;
      },
      (note) => {
        store.createAttribute({
          noteId: note,
          type: "relation",
          name: pick(["relatedTo", "portraitImage", "mapImage"]),
          value: pick(publicTargets),
        });
        return "relation";
      },
      (note) => {
        const { note: child } = store.createNote({
          parentNoteId: note,
          title: phrase().join(" "),
          type: "text",
          content: `<p>${phrase().join(" ")}</p>`,
        });
        label(h, child.noteId, "lore");
        hidden.push(child.noteId);
        return "child";
      },
      (note) => {
        if (!flagged.includes(note)) return "nothing";
        store.createBranch({ noteId: note, parentNoteId: pick(publicParents) });
        return "clone under a public note";
      },
      () => {
        const { note } = store.createNote({
          parentNoteId: pick(publicParents),
          title: phrase().join(" "),
          type: "text",
          content: `<p>${phrase().join(" ")}</p>`,
        });
        label(h, note.noteId, "lore");
        label(h, note.noteId, pick(["draft", "gmOnly"]));
        hidden.push(note.noteId);
        flagged.push(note.noteId);
        return "new hidden note";
      },
    ];
    const before = await seeAll(h, everyAnswer(scene));
    for (let step = 0; step < 24; step++) {
      const note = pick(hidden);
      const did = pick(edits)(note);
      await assertAllUnchanged(h, before, `step ${step} (${did} of ${note}; seed ${seed})`);
    }
  }, FRESH));
