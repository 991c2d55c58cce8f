/**
 * The sample world dressed for people: real-size pictures (a portrait, a coast map with pins, a
 * landscape), a character's attributes, a quest in each status the front end shows, statblocks
 * with their stats, the chart, the chronicle (in two eras, its events dated as the world writes
 * them and placed) and a second character shared, and a description of the world. `deno task dev` and the screenshots show it; tests keep the
 * plain sample world, whose tiny images and exact contents they assert.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createCoreStore } from "./core_store.ts";
 * import { seedWorld, W } from "./world.ts";
 * const store = createCoreStore();
 * seedWorld(store);
 * seedShowcase(store);
 * assert.equal(store.labelValue(W.charMira, "age"), "34");
 * ```
 * @module
 */
import type { CoreStore } from "./core_store.ts";
import { makePng, markLore, W } from "./world.ts";

type Rgb = [number, number, number];

const mix = (a: Rgb, b: Rgb, t: number): Rgb =>
  a.map((v, i) => Math.round(v + (b[i] - v) * Math.min(1, Math.max(0, t)))) as Rgb;

/** Size of {@linkcode SHOWCASE_PORTRAIT_PNG}. */
export const PORTRAIT_SIZE = { width: 240, height: 320 } as const;
/** Size of {@linkcode SHOWCASE_MAP_PNG}; pins are in its pixels. */
export const MAP_SIZE = { width: 960, height: 640 } as const;
/** Size of {@linkcode SHOWCASE_LANDSCAPE_PNG}. */
export const LANDSCAPE_SIZE = { width: 1200, height: 600 } as const;

/** A pilot in a dark coat against a dusk sky. */
export const SHOWCASE_PORTRAIT_PNG: Uint8Array = makePng(
  PORTRAIT_SIZE.width,
  PORTRAIT_SIZE.height,
  (x, y) => {
    const head = Math.hypot((x - 120) / 52, (y - 130) / 64);
    const hair = Math.hypot((x - 120) / 62, (y - 112) / 70);
    const coat = Math.hypot((x - 120) / 110, (y - 330) / 120);
    if (head < 1) return mix([224, 178, 140], [186, 132, 98], (x - 70) / 110);
    if (hair < 1 && y < 150) return [74, 44, 30];
    if (coat < 1) return mix([40, 58, 84], [22, 30, 46], (y - 230) / 90);
    return mix([242, 178, 120], [70, 90, 140], y / 320);
  },
);

/** The coast: sea, a ragged shore, sand and hills, shoals off the points. */
export const SHOWCASE_MAP_PNG: Uint8Array = makePng(MAP_SIZE.width, MAP_SIZE.height, (x, y) => {
  const shore = 360 + 90 * Math.sin(x / 95) + 40 * Math.sin(x / 31 + 1.3) - 0.18 * x;
  const d = y - shore;
  if (d > 24) return mix([150, 170, 96], [96, 120, 70], (d - 24) / 260);
  if (d > 0) return [222, 204, 150];
  const shoal = Math.sin(x / 17) * Math.sin(y / 13) > 0.92;
  return shoal ? [120, 170, 180] : mix([46, 120, 170], [18, 52, 104], -d / 360);
});

/** Cliffs and a lighthouse over an evening sea. */
export const SHOWCASE_LANDSCAPE_PNG: Uint8Array = makePng(
  LANDSCAPE_SIZE.width,
  LANDSCAPE_SIZE.height,
  (x, y) => {
    const cliff = 330 - 120 * Math.exp(-(((x - 930) / 260) ** 2));
    if (x > 905 && x < 935 && y > cliff - 110 && y < cliff) {
      return y < cliff - 95 ? [255, 214, 90] : [236, 232, 222];
    }
    if (y > cliff && x > 620) return mix([96, 84, 70], [52, 46, 40], (y - cliff) / 260);
    if (y > 340) return mix([40, 92, 130], [16, 40, 70], (y - 340) / 260);
    return mix([250, 196, 140], [84, 110, 170], y / 340);
  },
);

function label(store: CoreStore, noteId: string, name: string, value = "") {
  store.createAttribute({ noteId, type: "label", name, value });
}

function relation(store: CoreStore, noteId: string, name: string, value: string) {
  store.createAttribute({ noteId, type: "relation", name, value });
}

/** Id of the landscape image note the showcase adds. */
export const LANDSCAPE_ID = "wImgLandsc01";

/** Id of the quest the showcase adds, so the quest board has one in each column. */
export const FAILED_QUEST_ID = "wQuestBell01";

/** Ids of the eras the showcase divides the chronicle into (timeline notes under it). */
export const ERA_IDS = { bells: "wEraBells001", lanterns: "wEraLantrn01" } as const;

/** Id of the event the showcase adds to the first era. */
export const BELL_TOWER_ID = "wEvtBellTw01";

/**
 * The chronicle in eras: each era a timeline note under it, its events moved in, each event
 * with its date as the harbour writes it (`#shareDateLabel`) and where it happened.
 */
function seedEras(store: CoreStore) {
  label(store, W.timeline, "calendarSystem", "Saltmarrow Reckoning");
  const eras: [string, string, string, string[]][] = [
    [ERA_IDS.bells, "The Age of Bells", "When every harbour rang its own bell.", [
      W.eventFlood,
    ]],
    [ERA_IDS.lanterns, "The Lantern Years", "The Guild's lamps keep the coast.", [W.eventPact]],
  ];
  for (const [noteId, title, about, events] of eras) {
    store.createNote({
      noteId,
      parentNoteId: W.timeline,
      title,
      type: "text",
      content: `<p>${about}</p>`,
    });
    markLore(store, noteId, "timeline");
    for (const event of events) {
      const moved = store.branchesOf(event).find((b) => b.parentNoteId === W.timeline)!;
      store.createBranch({ noteId: event, parentNoteId: noteId });
      store.deleteBranch(moved.branchId);
    }
  }
  store.createNote({
    noteId: BELL_TOWER_ID,
    parentNoteId: ERA_IDS.bells,
    title: "The Bell Tower Falls",
    type: "text",
    content: "<p>The old bell tower slid into the sea off the reef, bell and all.</p>",
  });
  markLore(store, BELL_TOWER_ID, "event");
  const dates: [string, string, string, string][] = [
    [BELL_TOWER_ID, "1186-11-02", "2nd of Gullmonth, 1186 SR", W.locReef],
    [W.eventFlood, "", "14th of Brinemonth, 1187 SR", W.locHarbor],
    [W.eventPact, "", "2nd of Lampmonth, 1190 SR", W.locHarbor],
  ];
  for (const [noteId, date, written, place] of dates) {
    if (date) label(store, noteId, "inWorldDate", date);
    label(store, noteId, "shareDateLabel", written);
    relation(store, noteId, "relLocatedIn", place);
  }
  relation(store, W.eventFlood, "relLocatedIn", W.locLighthouse);
}

/** A statblock's fields as the statblock template names them. */
const STATBLOCKS: [string, Record<string, string>][] = [
  [W.statEel, {
    creatureType: "beast",
    size: "Large",
    alignment: "unaligned",
    challengeRating: "1",
    ac: "13",
    hp: "22",
    speed: "swim 40 ft.",
    str: "14",
    dex: "15",
    con: "12",
    int: "2",
    wis: "10",
    cha: "4",
    actions: "Bite. +4 to hit, 2d6 + 2 piercing; the target is grappled.",
  }],
  [W.statSentinel, {
    creatureType: "construct",
    size: "Large",
    alignment: "lawful neutral",
    challengeRating: "5",
    ac: "17",
    hp: "95",
    speed: "20 ft., swim 30 ft.",
    str: "20",
    dex: "8",
    con: "18",
    int: "5",
    wis: "12",
    cha: "3",
    immunities: "poison, psychic",
    actions: "Slam. +8 to hit, 2d10 + 5 bludgeoning.",
  }],
];

/**
 * Dresses a store seeded with the sample world (idempotent): real-size images, attributes, map
 * pins in the map's pixels, and more of the world shared.
 */
export function seedShowcase(store: CoreStore): void {
  if (store.getNote(LANDSCAPE_ID)) return;
  store.setNoteContent(W.imgPortrait, SHOWCASE_PORTRAIT_PNG);
  store.setNoteContent(W.imgChart, SHOWCASE_MAP_PNG);
  store.createNote({
    noteId: LANDSCAPE_ID,
    parentNoteId: W.media,
    title: "greyfin-at-dusk.png",
    type: "image",
    mime: "image/png",
    content: SHOWCASE_LANDSCAPE_PNG,
  }, { rawTitle: true });
  for (const id of [W.locChart, W.timeline, W.charIselde, LANDSCAPE_ID]) {
    store.createBranch({ noteId: id, parentNoteId: W.guide });
  }
  label(
    store,
    W.guide,
    "shareDescription",
    "Salt towns, drowned bells and lantern-lit reefs: the players' guide to the Shattered Coast.",
  );
  for (const [name, value] of [["fullName", "Mira Alys Tallowend"], ["age", "34"]]) {
    label(store, W.charMira, name, value);
  }
  for (const [name, value] of [["race", "Human"], ["role", "Reef pilot"], ["status", "Alive"]]) {
    label(store, W.charMira, name, value);
  }
  label(store, W.charIselde, "role", "Lighthouse keeper");
  label(store, W.locHarbor, "population", "1200");
  seedEras(store);
  // pins in the map's pixels (the plain world's values fit its small chart)
  for (const a of store.ownAttributes(W.locHarbor)) {
    if (a.name === "geolocation") store.deleteAttribute(a.attributeId);
  }
  for (const a of store.ownAttributes(W.locLighthouse)) {
    if (a.name === "geolocation") store.deleteAttribute(a.attributeId);
  }
  label(store, W.locHarbor, "geolocation", "300, 430");
  label(store, W.locLighthouse, "geolocation", "760, 205");
  relation(store, W.charIselde, "relInhabits", W.locLighthouse);
  // the quest board: active, complete and failed (the statuses the front end sorts by)
  store.createNote({
    noteId: FAILED_QUEST_ID,
    parentNoteId: W.loreRoot,
    title: "Raise the Drowned Bell",
    type: "text",
    content: "<p>The salvage crew never came back up; the bell stays below the reef.</p>",
  });
  markLore(store, FAILED_QUEST_ID, "quest");
  label(store, FAILED_QUEST_ID, "questStatus", "failed");
  label(store, FAILED_QUEST_ID, "location", "The Knucklebone Reef");
  label(store, W.questLamp, "location", "Greyfin Lighthouse");
  label(store, W.questLamp, "questGiver", "Iselde Crane");
  label(store, W.questLedger, "location", "Saltmarrow Harbor");
  label(store, W.questLedger, "reward", "40 silver lanterns");
  for (const [noteId, fields] of STATBLOCKS) {
    for (const [name, value] of Object.entries(fields)) label(store, noteId, name, value);
  }
  // a long note in parts: its page gets a table of contents
  store.setNoteContent(
    W.charIselde,
    `${store.getContent(W.charIselde)}
<h2>Early years</h2><p>Iselde grew up on the salt flats, counting ships for the harbour office.</p>
<h2>The lighthouse</h2><p>She took the lamp when the old keeper's eyes failed.</p>
<h3>Her routine</h3><p>Oil at dusk, wick at midnight, the log at dawn.</p>
<h2>What the tides tell her</h2><p>She reads omens in the foam and the gulls' quarrels.</p>`,
    { scanLinks: true },
  );
  store.setNoteContent(
    W.guideWelcome,
    `${store.getContent(W.guideWelcome)}
<p><img src="api/images/${LANDSCAPE_ID}/greyfin-at-dusk.png" alt="Greyfin Lighthouse at dusk"></p>`,
    { scanLinks: true },
  );
}
