/**
 * A generated world for scale tests: thousands of lore notes under the share root, shaped like a
 * real campaign (regions → places → characters → items, chronicles of events, factions, quests,
 * creatures, myths…), with internal links, GM-only parts, secrets, relations, map pins, dates
 * and images, plus hidden notes (`#draft`, `#gmOnly`, an inheritable `#draft` subtree) that a
 * player must never see. Deterministic for a seed: ids, titles, contents, attribute ids and
 * dates are all derived from it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createCoreStore } from "./core_store.ts";
 * import { seedWorld } from "./world.ts";
 * const store = createCoreStore();
 * seedWorld(store);
 * const world = seedGeneratedWorld(store, { notes: 40, seed: 7 });
 * assert.equal(world.publicIds.length, 40); // the folder counts as one of them
 * assert.equal(store.getNote(world.folderId)?.title, "Generated Lands");
 * ```
 * @module
 */
import type { CoreStore } from "./core_store.ts";
import { prng } from "./prng.ts";
import { type LoreType, makePng, templateId, W } from "./world.ts";

/** What {@linkcode seedGeneratedWorld} added. */
export interface GeneratedWorld {
  /** The folder note under the share root that holds the generated world. */
  folderId: string;
  /** The notes a player can see: exactly `notes` of them, the folder and images included. */
  publicIds: string[];
  /** Notes a player must never see (`#draft`, `#gmOnly`, or under an inheritable `#draft`). */
  hiddenIds: string[];
  /** Every generated image note (all of them public). */
  imageIds: string[];
}

/** Options of {@linkcode seedGeneratedWorld}. */
export interface GeneratedWorldOptions {
  /** How many notes a player can see, the folder included: a positive integer. */
  notes: number;
  /** PRNG seed; the same seed gives the same world. Default 1. */
  seed?: number;
}

/**
 * Id of the `index`-th generated note: `gen` and the index in base 36, zero-padded to 12
 * characters (the sample world's ids start with `w`, so they never collide).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(genId(0), "gen000000000");
 * assert.equal(genId(71), "gen00000001z");
 * ```
 */
export function genId(index: number): string {
  return `gen${index.toString(36).padStart(9, "0")}`;
}

/** Id of the folder note holding the generated world. */
export const GEN_FOLDER_ID: string = genId(0);

// ---------------------------------------------------------------------------------------------
// Randomness and words
// ---------------------------------------------------------------------------------------------

interface Rng {
  (): number;
  int(min: number, max: number): number;
  pick<T>(list: readonly T[]): T;
  chance(p: number): boolean;
}

function makeRng(seed: number): Rng {
  const next = prng(seed) as Rng;
  next.int = (min, max) => min + Math.floor(next() * (max - min + 1));
  next.pick = (list) => list[Math.floor(next() * list.length)];
  next.chance = (p) => next() < p;
  return next;
}

const cap = (s: string) => s[0].toUpperCase() + s.slice(1);

const FIRST_A = [
  "al",
  "bra",
  "cor",
  "da",
  "el",
  "fen",
  "gar",
  "hal",
  "is",
  "jor",
  "ka",
  "lin",
  "mar",
  "nel",
  "or",
  "per",
  "quin",
  "ros",
  "sel",
  "tam",
  "ul",
  "ver",
  "wen",
  "yor",
  "zan",
  "ber",
  "cel",
  "dor",
  "ev",
  "fal",
];
const FIRST_B = ["a", "ric", "wyn", "dor", "ra", "mir", "eth", "os", "ia", "en", "ar", "is", "ys"];
const STEM = [
  "ash",
  "black",
  "brin",
  "cold",
  "dun",
  "ember",
  "fair",
  "gold",
  "grey",
  "hawk",
  "iron",
  "kel",
  "long",
  "mar",
  "north",
  "oak",
  "raven",
  "salt",
  "stone",
  "thorn",
  "vale",
  "wolf",
  "storm",
  "frost",
  "bright",
];
const SURNAME_END = [
  "wood",
  "brook",
  "more",
  "hart",
  "ley",
  "wick",
  "mane",
  "well",
  "helm",
  "fell",
];
const PLACE_END = [
  "holt",
  "mere",
  "stead",
  "haven",
  "bury",
  "gate",
  "crag",
  "moor",
  "reach",
  "port",
];
const PLACE_KIND = ["Keep", "Market", "Abbey", "Crossing", "Docks", "Village", "Tower", "Hold"];
const REGION_ADJ = [
  "Ashen",
  "Sunken",
  "Verdant",
  "Broken",
  "Silver",
  "Howling",
  "Amber",
  "Frozen",
  "Hollow",
  "Gilded",
  "Misty",
  "Burning",
  "Quiet",
  "Pale",
  "Thorned",
  "Windswept",
];
const REGION_LAND = [
  "Marches",
  "Reach",
  "Vale",
  "Wilds",
  "Coast",
  "Highlands",
  "Fens",
  "Expanse",
  "Dales",
  "Shallows",
  "Steppe",
  "Barrens",
];
const EVENT_NOUN = [
  "Burning",
  "Siege",
  "Flood",
  "Founding",
  "Fall",
  "Plague",
  "Treaty",
  "Uprising",
  "Eclipse",
  "Coronation",
  "Schism",
  "Great Storm",
  "Long Winter",
];
const MATERIAL = [
  "Silver",
  "Bone",
  "Obsidian",
  "Oaken",
  "Gilded",
  "Iron",
  "Glass",
  "Amber",
  "Jade",
];
const OBJECT = ["Lantern", "Crown", "Blade", "Chalice", "Compass", "Ring", "Horn", "Mask", "Key"];
const BEAST_ADJ = ["Marsh", "Ember", "Cave", "Frost", "Tide", "Dusk", "Moss", "Grave", "Storm"];
const BEAST = ["Wyrm", "Hound", "Stalker", "Drake", "Wisp", "Crawler", "Serpent", "Golem", "Heron"];
const QUEST_VERB = ["Recover", "Escort", "Find", "Guard", "Deliver", "Map", "Cleanse", "Rescue"];
const FACTION_ADJ = ["Crimson", "Silent", "Gilded", "Salt", "Iron", "Wandering", "Twin", "Last"];
const FACTION_GROUP = ["Brotherhood", "Compact", "Wardens", "Circle", "Company", "Choir", "Order"];
const BUILDING = ["Hall", "Mill", "Tavern", "Forge", "Library", "Chapel", "Granary", "Watchtower"];
const SPELL_ADJ = ["Ember", "Whispering", "Binding", "Tidal", "Hollow", "Radiant", "Creeping"];
const SPELL_NOUN = ["Ward", "Step", "Chorus", "Lance", "Veil", "Mending", "Sigil", "Beacon"];
const DOMAIN = ["Deep Tides", "Harvest", "Long Roads", "Hearth", "Storms", "First Light", "Forge"];
const MYTH_NOUN = ["Legend", "Ballad", "Tale", "Riddle", "Lament", "Prophecy"];
/** Words only hidden notes' titles use, so no public text can ever spell a hidden title. */
const HIDDEN_MARK = ["Veiled", "Unspoken", "Forsworn", "Sealed", "Masked", "Nameless", "Unwritten"];

const firstName = (r: Rng) => cap(r.pick(FIRST_A) + r.pick(FIRST_B));
const surname = (r: Rng) => cap(r.pick(STEM) + r.pick(SURNAME_END));
const placeName = (r: Rng) => cap(r.pick(STEM) + r.pick(PLACE_END));

const ROMAN = ["II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X"];

/** A title not used yet: a few fresh draws, then the last draw with a number. */
function uniqueTitle(taken: Set<string>, draw: () => string): string {
  let title = draw();
  for (let i = 0; i < 8 && taken.has(title); i++) title = draw();
  const base = title;
  for (let n = 0; taken.has(title); n++) {
    title = `${base} ${n < ROMAN.length ? ROMAN[n] : n + 2}`;
  }
  taken.add(title);
  return title;
}

// ---------------------------------------------------------------------------------------------
// The plan: every note, its place in the tree, its attributes and its content
// ---------------------------------------------------------------------------------------------

type Kind =
  | "folder"
  | "region"
  | "chronicle"
  | "place"
  | "building"
  | "character"
  | "item"
  | "event"
  | "creature"
  | "quest"
  | "faction"
  | "myth"
  | "spell"
  | "deity"
  | "image";

const LORE_OF: Record<Exclude<Kind, "image">, LoreType> = {
  folder: "location",
  region: "location",
  chronicle: "timeline",
  place: "location",
  building: "building",
  character: "character",
  item: "item",
  event: "event",
  creature: "creature",
  quest: "quest",
  faction: "faction",
  myth: "myth",
  spell: "spell",
  deity: "deity",
};

interface Spec {
  id: string;
  parent: string;
  kind: Kind;
  title: string;
  hidden: boolean;
  /** The region the note belongs to (undefined for the folder and notes outside regions). */
  region?: Region;
  labels: { name: string; value: string; inheritable?: boolean }[];
  relations: { name: string; target: string }[];
  content: string | Uint8Array;
  /** Filled for image users: the image to show in the content. */
  image?: Spec;
}

interface Region {
  spec: Spec;
  chronicle?: Spec;
  places: Spec[];
  characters: Spec[];
  members: Spec[];
  map?: { width: number; height: number; image: Spec };
}

/** Leaf kinds of public notes with their weights. */
const LEAVES: [Kind, number][] = [
  ["character", 34],
  ["item", 11],
  ["event", 15],
  ["creature", 8],
  ["quest", 8],
  ["faction", 5],
  ["building", 7],
  ["myth", 4],
  ["spell", 4],
  ["deity", 2],
];
const LEAF_TOTAL = LEAVES.reduce((n, [, w]) => n + w, 0);

function pickLeaf(r: Rng): Kind {
  let x = r() * LEAF_TOTAL;
  for (const [kind, weight] of LEAVES) {
    if ((x -= weight) < 0) return kind;
  }
  return "character";
}

function titleFor(kind: Kind, r: Rng, region: Region | undefined, hidden: boolean): string {
  const place = () => region?.places.length ? r.pick(region.places).title : placeName(r);
  const mark = () => r.pick(HIDDEN_MARK);
  switch (kind) {
    case "region":
      return hidden
        ? `The ${mark()} ${r.pick(REGION_LAND)}`
        : `The ${r.pick(REGION_ADJ)} ${r.pick(REGION_LAND)}`;
    case "chronicle":
      return `Chronicle of ${region!.spec.title.replace(/^The /, "the ")}`;
    case "place":
      return r.chance(0.5) ? placeName(r) : `${placeName(r)} ${r.pick(PLACE_KIND)}`;
    case "building":
      return `The ${surname(r)} ${r.pick(BUILDING)}`;
    case "character":
      return hidden
        ? `${firstName(r)} ${surname(r)} the ${mark()}`
        : `${firstName(r)} ${surname(r)}`;
    case "item":
      return hidden
        ? `The ${mark()} ${r.pick(OBJECT)}`
        : `${r.pick(MATERIAL)} ${r.pick(OBJECT)} of ${firstName(r)}`;
    case "event":
      return hidden
        ? `The ${mark()} ${r.pick(EVENT_NOUN)}`
        : `The ${r.pick(EVENT_NOUN)} of ${place()}`;
    case "creature":
      return `${r.pick(BEAST_ADJ)} ${r.pick(BEAST)}`;
    case "quest":
      return hidden
        ? `${r.pick(QUEST_VERB)} the ${mark()} ${r.pick(OBJECT)}`
        : `${r.pick(QUEST_VERB)} the ${r.pick(MATERIAL)} ${r.pick(OBJECT)}`;
    case "faction":
      return hidden
        ? `The ${mark()} ${r.pick(FACTION_GROUP)}`
        : `The ${r.pick(FACTION_ADJ)} ${r.pick(FACTION_GROUP)}`;
    case "myth":
      return `The ${r.pick(MYTH_NOUN)} of ${firstName(r)}`;
    case "spell":
      return `${r.pick(SPELL_ADJ)} ${r.pick(SPELL_NOUN)}`;
    case "deity":
      return `${firstName(r)} of the ${r.pick(DOMAIN)}`;
    default:
      return placeName(r);
  }
}

/** Type-specific promoted fields (the templates' labels) with plausible values. */
function fieldsFor(kind: Kind, r: Rng): [string, string][] {
  switch (kind) {
    case "region":
      return [["locationType", "region"], ["population", String(r.int(2, 90) * 1000)]];
    case "place":
      return [
        ["locationType", r.pick(["town", "village", "ruin", "port", "fortress"])],
        ["population", String(r.int(1, 400) * 10)],
      ];
    case "chronicle":
      return [["calendarSystem", "Reckoning of the Crowns"]];
    case "building":
      return [["buildingType", r.pick(["inn", "temple", "mill", "keep"])], [
        "condition",
        r.pick(["sound", "crumbling", "rebuilt"]),
      ]];
    case "character":
      return [
        ["race", r.pick(["Human", "Elf", "Dwarf", "Halfling", "Tideborn"])],
        ["role", r.pick(["Smith", "Captain", "Priest", "Merchant", "Scout", "Scholar", "Guard"])],
        ["status", r.pick(["Alive", "Alive", "Alive", "Missing", "Dead"])],
      ];
    case "item":
      return [["rarity", r.pick(["common", "uncommon", "rare", "legendary"])], [
        "itemType",
        r.pick(["relic", "weapon", "tool", "charm"]),
      ]];
    case "creature":
      return [["dangerLevel", String(r.int(1, 10))], [
        "habitat",
        r.pick(["marsh", "caves", "coast", "forest"]),
      ]];
    case "quest":
      return [["questStatus", r.pick(["active", "active", "complete", "failed"])]];
    case "faction":
      return [["factionType", r.pick(["guild", "cult", "order", "house"])], ["status", "active"]];
    case "myth":
      return [["truthStatus", r.pick(["true", "false", "unknown"])]];
    case "spell":
      return [["school", r.pick(["abjuration", "evocation", "illusion"])], [
        "level",
        String(r.int(1, 9)),
      ]];
    case "deity":
      return [["domain", r.pick(DOMAIN)], ["divineStatus", r.pick(["active", "sleeping"])]];
    default:
      return [];
  }
}

/** Prose for each kind; `{t}` is the note's title, `{r}` its region's. */
const PROSE: Record<string, string[]> = {
  folder: [
    "These lands were charted by travellers, traders and the occasional lost pilgrim.",
    "Each region keeps its own reckoning, its own feuds and its own songs.",
  ],
  region: [
    "{t} stretches from the cold hills to a coast of grey shingle and sudden fogs.",
    "Caravans cross {t} in spring, when the roads dry and the ferries run again.",
    "The people of {t} measure wealth in salt, timber and favours owed.",
    "Old watch-fires still crown the ridges, though few remember who lit them.",
  ],
  chronicle: [
    "Dates follow the reckoning kept by the scribes of {r}.",
    "The entries below were copied from three older ledgers, not all of them honest.",
  ],
  place: [
    "{t} sits where two roads meet, in the heart of {r}.",
    "Its market smells of tar, bread and river fish.",
    "The walls of {t} were raised twice and broken once.",
    "Travellers are welcome, though the gate closes at dusk.",
    "Fishing boats crowd the harbour of {t} every morning.",
  ],
  building: [
    "{t} has stood longer than anyone in the street can remember.",
    "Its beams are black with smoke and its floors creak with every step.",
    "Regulars keep a running tally of debts on the wall by the door.",
  ],
  character: [
    "{t} was born in {r} and has rarely left it.",
    "Known for a quick temper and a quicker laugh.",
    "Locals say {t} keeps a ledger of every favour ever owed.",
    "{t} walks with a limp earned in a winter nobody likes to discuss.",
    "Few know that {t} once sailed with a smuggler crew.",
  ],
  item: [
    "{t} is cold to the touch, even in summer.",
    "It changed hands at least four times before anyone wrote down its name.",
    "Scholars disagree on who forged {t}, and why.",
  ],
  event: [
    "{t} is still marked each year with bells and bonfires.",
    "Accounts of {t} differ on almost everything except the weather.",
    "Afterwards the roads of {r} were closed for a season.",
  ],
  creature: [
    "The {t} hunts at dusk and avoids open water.",
    "Herders in {r} hang iron charms on their gates against it.",
    "Its tracks are wide, shallow and oddly evenly spaced.",
  ],
  quest: [
    "The task sounds simple: {t}.",
    "The reward is modest, the risk less so.",
    "Several parties have tried; few came back with a clear story.",
  ],
  faction: [
    "{t} meets in cellars, counting houses and once a year in the open square.",
    "Its members greet each other with a hand over the heart.",
    "{t} claims to protect the roads of {r}, for a fee.",
  ],
  myth: [
    "Grandmothers in {r} tell {t} to children who wander too far.",
    "Every teller adds a verse, and none agree on the ending.",
  ],
  spell: [
    "{t} is taught in whispered lessons, never written in full.",
    "Casting it leaves the air smelling of rain.",
  ],
  deity: [
    "{t} is honoured with bread left on windowsills.",
    "Shrines to {t} stand at crossroads all over {r}.",
  ],
  image: [],
};

/** Words of a typed link: text a writer chose, never the target's title. */
const LINK_WORDS = [
  "the old road",
  "these parts",
  "an older account",
  "the records",
  "what the locals say",
  "a related matter",
  "the same story",
  "further reading",
];
const GM_PROSE = [
  "the truth is stranger than the songs",
  "this is a cover for something older",
  "the players should learn this only in the third act",
  "half of this is a lie told on purpose",
];

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** Core's image-note URL file name for a title. */
const imageFile = (title: string) => encodeURIComponent(title);

/**
 * Plans the whole world without touching the store: structure first, then images, attributes
 * and contents (they refer to notes planned later).
 */
function plan(notes: number, seed: number, guidePath: string[]): Spec[] {
  const r = makeRng(seed);
  const specs: Spec[] = [];
  const byId = new Map<string, Spec>();
  const taken = new Set<string>();
  const add = (kind: Kind, parent: string, title: string, hidden: boolean, region?: Region) => {
    const spec: Spec = {
      id: genId(specs.length),
      parent,
      kind,
      title,
      hidden,
      region,
      labels: [],
      relations: [],
      content: "",
    };
    specs.push(spec);
    byId.set(spec.id, spec);
    // link neighbours: public lore notes only
    if (region && spec !== region.spec && !hidden && kind !== "image") region.members.push(spec);
    return spec;
  };
  const titled = (kind: Kind, region: Region | undefined, hidden: boolean) =>
    uniqueTitle(taken, () => titleFor(kind, r, region, hidden));

  // --- structure: ~1 image per 50 notes; the rest lore notes below the folder
  const images = notes >= 25 ? Math.round(notes / 50) : 0;
  const lore = notes - 1 - images;
  taken.add("Generated Lands");
  const folder = add("folder", W.guide, "Generated Lands", false);
  const regions: Region[] = [];
  const regionCount = lore > 0 ? Math.max(1, Math.round(lore / 75)) : 0;
  for (let i = 0; i < regionCount; i++) {
    const region = { places: [], characters: [], members: [] } as unknown as Region;
    region.spec = add("region", folder.id, titled("region", undefined, false), false, region);
    regions.push(region);
  }
  let left = lore - regionCount;
  if (left >= 3 * regionCount) {
    for (const region of regions) {
      region.chronicle = add(
        "chronicle",
        region.spec.id,
        titled("chronicle", region, false),
        false,
        region,
      );
    }
    left -= regionCount;
  }
  const placeCount = Math.min(left, Math.max(regionCount, Math.round(lore * 0.14)));
  for (let i = 0; i < placeCount; i++) {
    const region = i < regionCount ? regions[i] : r.pick(regions);
    region.places.push(add("place", region.spec.id, titled("place", region, false), false, region));
  }
  left -= placeCount;
  for (let i = 0; i < left; i++) {
    const region = r.pick(regions);
    let kind = pickLeaf(r);
    if (kind === "event" && !region.chronicle) kind = "character";
    if ((kind === "building" || kind === "character") && region.places.length === 0) kind = "myth";
    const parent = leafParent(kind, region, r);
    const spec = add(kind, parent, titled(kind, region, false), false, region);
    if (kind === "character") region.characters.push(spec);
  }

  // --- hidden notes: ~10% on top; one subtree under an inheritable #draft, the rest flagged
  const hiddenCount = Math.max(4, Math.round(notes / 10));
  const subtreeSize = Math.max(2, Math.round(hiddenCount * 0.3));
  const draftRoot = add("region", folder.id, titled("region", undefined, true), true);
  draftRoot.labels.push({ name: "draft", value: "", inheritable: true });
  const draftRegion: Region = { spec: draftRoot, places: [], characters: [], members: [] };
  for (let i = 1; i < subtreeSize; i++) {
    // hidden by inheritance alone, yet titled with a hidden word too: no public text can spell it
    const kind: Kind = i % 2 === 1 ? "place" : "character";
    const parent = kind === "character" && draftRegion.places.length
      ? r.pick(draftRegion.places).id
      : draftRoot.id;
    const spec = add(
      kind,
      parent,
      titled(kind === "place" ? "region" : kind, undefined, true),
      true,
    );
    spec.region = draftRegion;
    if (kind === "place") draftRegion.places.push(spec);
    else draftRegion.characters.push(spec);
  }
  const flaggedKinds: Kind[] = ["character", "event", "item", "quest", "faction"];
  for (let i = 0; i < hiddenCount - subtreeSize; i++) {
    const region = regions.length ? r.pick(regions) : undefined;
    let kind = flaggedKinds[i % flaggedKinds.length];
    if (kind === "event" && !region?.chronicle) kind = "item";
    const parent = region ? leafParent(kind, region, r) : folder.id;
    const spec = add(kind, parent, titled(kind, region, true), true, region);
    spec.labels.push(
      i % 2 === 0
        ? { name: "draft", value: "" }
        : { name: "gmOnly", value: "", inheritable: i % 4 === 3 },
    );
  }

  // --- images: maps of regions (pins: their places' #geolocation), portraits of characters
  const publicChars = regions.flatMap((g) => g.characters);
  const mapped = regions.slice(0, Math.min(regions.length, Math.ceil(images / 3)));
  const users: { user: Spec; role: "map" | "portrait" }[] = mapped.map((g) => ({
    user: g.spec,
    role: "map",
  }));
  const portraits = shuffled(publicChars, r).slice(0, images - users.length);
  users.push(...portraits.map((user) => ({ user, role: "portrait" as const })));
  // a small world may lack characters: more maps, then any lore note, fill the count
  const spare = shuffled(specs.filter((s) => !s.hidden && s.kind !== "folder"), r)
    .filter((s) => !users.some((u) => u.user === s));
  while (users.length < images) users.push({ user: spare.shift()!, role: "portrait" });
  for (const { user, role } of users) {
    const slug = user.title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
    const title = `${slug}-${role}.png`;
    taken.add(title);
    const image = add("image", user.id, title, false, user.region);
    if (role === "map") {
      const width = r.int(6, 16) * 8;
      const height = r.int(4, 12) * 8;
      user.region!.map = { width, height, image };
      image.content = mapPng(width, height, r);
      user.relations.push({ name: "mapImage", target: image.id });
      user.labels.push({ name: "mapWidth", value: String(width) }, {
        name: "mapHeight",
        value: String(height),
      });
    } else {
      image.content = portraitPng(r.int(3, 8) * 4, r.int(4, 10) * 4, r);
      user.relations.push({ name: "portraitImage", target: image.id });
    }
    if (r.chance(0.7)) user.image = image;
  }

  // --- attributes
  const hidden = specs.filter((s) => s.hidden && s.kind !== "image");
  const hiddenChars = hidden.filter((s) => s.kind === "character");
  for (const s of specs) {
    if (s.kind === "image") continue;
    for (const [name, value] of fieldsFor(s.kind, r)) s.labels.push({ name, value });
    if (s.kind === "event") {
      const date = `${r.int(1100, 1299)}-${pad(r.int(1, 12))}-${pad(r.int(1, 28))}`;
      s.labels.push({ name: "inWorldDate", value: date });
    }
    if (s.kind === "place") {
      const map = byId.get(s.parent)?.kind === "region" ? s.region?.map : undefined;
      const value = map
        ? `${r.int(2, map.width - 2)}, ${r.int(2, map.height - 2)}`
        : `${(r() * 90).toFixed(2)}, ${(r() * 180).toFixed(2)}`;
      s.labels.push({ name: "geolocation", value });
    }
    if (s.kind === "character") {
      if (r.chance(0.35)) {
        s.labels.push({ name: "secrets", value: `${r.pick(GM_PROSE)} (${s.title})` });
      }
      const region = s.region;
      if (!region) continue;
      const home = byId.get(s.parent)?.kind === "place"
        ? byId.get(s.parent)!
        : region.places.length
        ? r.pick(region.places)
        : undefined;
      if (home) s.relations.push({ name: "relInhabits", target: home.id });
      const others = region.characters.filter((c) => c !== s);
      if (others.length && r.chance(0.4)) {
        s.relations.push({ name: "relAlly", target: r.pick(others).id });
      }
      if (hiddenChars.length && !s.hidden && r.chance(0.08)) {
        s.relations.push({ name: "relEnemy", target: r.pick(hiddenChars).id });
      } else if (others.length && r.chance(0.3)) {
        s.relations.push({ name: "relEnemy", target: r.pick(others).id });
      }
    }
  }

  // --- contents
  const pathOf = (spec: Spec): string[] => {
    const path: string[] = [];
    for (let s: Spec | undefined = spec; s; s = byId.get(s.parent)) path.unshift(s.id);
    return [...guidePath, ...path];
  };
  const publicLore = specs.filter((s) => !s.hidden && s.kind !== "image");
  const refLink = (t: Spec) =>
    `<a class="reference-link" href="#root/${pathOf(t).join("/")}">${esc(t.title)}</a>`;
  const typedLink = (t: Spec) => `<a href="#root/${t.id}">${r.pick(LINK_WORDS)}</a>`;
  const link = (t: Spec) => (r.chance(0.6) ? refLink(t) : typedLink(t));
  for (const s of specs) {
    if (s.kind === "image") continue;
    const regionName = s.region ? s.region.spec.title.replace(/^The /, "the ") : "these lands";
    const fill = (line: string) =>
      line.replaceAll("{t}", esc(s.title)).replaceAll("{r}", esc(regionName));
    // each sentence once per note while the pool lasts
    let pool = shuffled(PROSE[s.kind], r);
    const sentences = (n: number) => {
      if (pool.length < n) pool = [...pool, ...shuffled(PROSE[s.kind], r)];
      return pool.splice(0, n).map(fill).join(" ");
    };
    const targets = linkTargets(s, r, byId, publicLore, regions, folder);
    const paragraphs: string[] = [];
    const see = targets.length ? ` See ${targets.map(link).join(", ")}.` : "";
    paragraphs.push(`${sentences(r.int(2, 3))}${see}`);
    for (let i = r.int(0, 2); i > 0; i--) paragraphs.push(sentences(r.int(2, 4)));
    if (s.image) {
      const { id, title } = s.image;
      paragraphs.push(`<img src="api/images/${id}/${imageFile(title)}" alt="${esc(title)}">`);
    } else if (s.kind === "place" && s.region?.map && r.chance(0.25)) {
      const { id, title } = s.region.map.image;
      paragraphs.push(`Marked on the map: <img src="api/images/${id}/${imageFile(title)}">`);
    }
    if (!s.hidden && hidden.length && r.chance(0.08)) {
      // a published note naming a hidden one: the public filter must drop or unlink it
      const secret = r.pick(hidden);
      paragraphs.push(`Some say more: ${r.chance(0.5) ? refLink(secret) : typedLink(secret)}.`);
    }
    if (r.chance(0.2)) {
      const about = hidden.length && r.chance(0.5) ? ` (${refLink(r.pick(hidden))})` : "";
      const at = r.int(0, paragraphs.length - 1);
      paragraphs[at] += ` <span class="gm-only">GM: ${r.pick(GM_PROSE)}${about}.</span>`;
    }
    let html = paragraphs.map((p) => `<p>${p}</p>`).join("\n");
    while (html.length < 300) html += `\n<p>${sentences(2)}</p>`;
    while (html.length > 2000 && paragraphs.length > 1) {
      paragraphs.splice(1, 1);
      html = paragraphs.map((p) => `<p>${p}</p>`).join("\n");
    }
    s.content = html;
  }
  return specs;
}

function leafParent(kind: Kind, region: Region, r: Rng): string {
  const place = region.places.length ? r.pick(region.places).id : region.spec.id;
  switch (kind) {
    case "character":
      return r.chance(0.75) ? place : region.spec.id;
    case "building":
      return place;
    case "creature":
      return r.chance(0.5) ? place : region.spec.id;
    case "item":
    case "spell":
      return region.characters.length && r.chance(0.5) ? r.pick(region.characters).id : place;
    case "event":
      return region.chronicle?.id ?? region.spec.id;
    default:
      return region.spec.id;
  }
}

/** 1–4 other generated notes: the parent, neighbours in the region, and the wider world. */
function linkTargets(
  s: Spec,
  r: Rng,
  byId: Map<string, Spec>,
  publicLore: Spec[],
  regions: Region[],
  folder: Spec,
): Spec[] {
  const out: Spec[] = [];
  const addTarget = (t: Spec | undefined) => {
    if (t && t !== s && t.kind !== "image" && !out.includes(t)) out.push(t);
  };
  if (s === folder) {
    for (const g of regions.slice(0, 3)) addTarget(g.spec);
  } else {
    const parent = byId.get(s.parent);
    if (parent && parent !== folder && r.chance(0.6)) addTarget(parent);
    const members = s.region?.members ?? [];
    for (let n = r.int(1, 3); n > 0 && members.length; n--) addTarget(r.pick(members));
    if (r.chance(0.4)) addTarget(r.pick(publicLore));
  }
  if (out.length === 0) addTarget(s === folder ? undefined : folder);
  if (out.length === 0) addTarget(publicLore.find((t) => t !== s));
  return out;
}

function shuffled<T>(list: readonly T[], r: Rng): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

const pad = (n: number) => String(n).padStart(2, "0");

function mapPng(width: number, height: number, r: Rng): Uint8Array {
  const a = 3 + r() * 6;
  const b = r() * 6;
  return makePng(width, height, (x, y) => {
    const shore = height * (0.5 + 0.25 * Math.sin(x / a + b));
    return y > shore ? [150, 170 - (y % 16), 96] : [40, 100 + (x % 32), 160];
  });
}

function portraitPng(width: number, height: number, r: Rng): Uint8Array {
  const hue = r.int(60, 200);
  return makePng(width, height, (x, y) => {
    const head = Math.hypot((x - width / 2) / (width / 3), (y - height / 3) / (height / 4));
    return head < 1 ? [224, 178, 140] : [hue, 90 + Math.floor((y / height) * 100), 120];
  });
}

// ---------------------------------------------------------------------------------------------
// Writing the plan into the store
// ---------------------------------------------------------------------------------------------

const GEN_START = Date.parse("2026-03-02T09:00:00.000Z");

/** The link relations Core's scan derives from HTML (`notes.ts` saveLinks), in its order. */
function scannedLinks(html: string): { name: string; target: string }[] {
  const found: { name: string; target: string }[] = [];
  for (const m of html.matchAll(/src="[^"]*api\/images\/([a-zA-Z0-9_]+)\//g)) {
    found.push({ name: "imageLink", target: m[1] });
  }
  for (const m of html.matchAll(/href="[^"]*#root[a-zA-Z0-9_/]*\/([a-zA-Z0-9_]+)\/?"/g)) {
    found.push({ name: "internalLink", target: m[1] });
  }
  // one relation per name and target, however often the HTML names it
  const seen = new Set<string>();
  return found.filter((l) => {
    const key = `${l.name}:${l.target}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Adds a generated world under the share root (`W.guide`) of a store seeded by `seedWorld`: a
 * lore folder "Generated Lands" holding exactly `opts.notes` notes a player can see (the folder
 * included) and about 10% more hidden ones. Dates are fixed (from 2 March 2026, a minute per
 * note); link relations (`~internalLink`, `~imageLink`) match the HTML as Core's link scan
 * makes them. Throws when the store already holds a generated world or `notes` is not a
 * positive integer.
 *
 * As fast as the store's API allows: the store rebuilds its whole index on the first read after
 * any write, and only `createNote` and a new `~template` relation read (once each per note, so
 * seeding still grows with the square of the count). Every other attribute gets an explicit id
 * and position, which reads nothing, and the link relations come from the HTML by Core's own
 * patterns rather than one full link scan per note (the tests check a real scan changes nothing).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createCoreStore } from "./core_store.ts";
 * import { seedWorld } from "./world.ts";
 * const store = createCoreStore();
 * seedWorld(store);
 * const world = seedGeneratedWorld(store, { notes: 60, seed: 3 });
 * assert.equal(world.imageIds.length, 1); // about one per 50 notes
 * assert.ok(world.hiddenIds.every((id) => !world.publicIds.includes(id)));
 * ```
 */
export function seedGeneratedWorld(store: CoreStore, opts: GeneratedWorldOptions): GeneratedWorld {
  const { notes, seed = 1 } = opts;
  if (!Number.isSafeInteger(notes) || notes < 1) {
    throw new RangeError(`generated world: notes must be a positive integer, got ${notes}`);
  }
  if (!store.getNote(W.guide)) throw new Error("generated world: seed the sample world first");
  if (store.getNote(GEN_FOLDER_ID)) throw new Error("generated world: already seeded");

  const guidePath = pathFromRoot(store, W.guide);
  const specs = plan(notes, seed, guidePath);
  const at = (i: number) => new Date(GEN_START + i * 60_000);

  // the next free child position per parent, so createNote need not compute one
  const positions = new Map<string, number>([[
    W.guide,
    Math.max(0, ...store.childBranchesOf(W.guide).map((b) => b.notePosition)),
  ]]);
  // each lore type's highest template position: Core numbers a note's next attribute after
  // every effective one, its template's included
  const templateTop = new Map<LoreType, number>();
  for (const s of specs) {
    if (s.kind === "image") continue;
    const type = LORE_OF[s.kind];
    if (!templateTop.has(type)) {
      const own = store.attributesOf(templateId(type)).map((a) => a.position);
      templateTop.set(type, Math.max(30, ...own));
    }
  }

  specs.forEach((s, i) =>
    store.withTime(at(i), () => {
      const position = (positions.get(s.parent) ?? 0) + 10;
      positions.set(s.parent, position);
      const image = s.kind === "image";
      store.createNote({
        noteId: s.id,
        parentNoteId: s.parent,
        title: s.title,
        type: image ? "image" : s.kind === "chronicle" ? "book" : "text",
        mime: image ? "image/png" : undefined,
        content: s.content,
        notePosition: position,
      }, { rawTitle: true });
    })
  );

  let attributeCount = 0;
  const attribute = (
    noteId: string,
    type: string,
    name: string,
    value: string,
    position: number,
    isInheritable = false,
  ) =>
    store.createAttribute({
      attributeId: `gat${(attributeCount++).toString(36).padStart(9, "0")}`,
      noteId,
      type,
      name,
      value,
      position,
      isInheritable,
    });

  // markLore's attributes with the positions it gives them (#lore 10, #loreType 20, ~template
  // 30). A new ~template makes the store rebuild its index (its cost grows with every attribute
  // already there), so all of those come first, while the store holds no other new attribute.
  specs.forEach((s, i) => {
    if (s.kind === "image") return;
    const type = LORE_OF[s.kind as Exclude<Kind, "image">];
    store.withTime(at(i), () => attribute(s.id, "relation", "template", templateId(type), 30));
  });

  specs.forEach((s, i) => {
    if (s.kind === "image") return;
    store.withTime(at(i), () => {
      const type = LORE_OF[s.kind as Exclude<Kind, "image">];
      attribute(s.id, "label", "lore", "", 10);
      attribute(s.id, "label", "loreType", type, 20);
      let position = templateTop.get(type)!;
      for (const l of s.labels) {
        attribute(s.id, "label", l.name, l.value, position += 10, l.inheritable);
      }
      for (const rel of s.relations) {
        attribute(s.id, "relation", rel.name, rel.target, position += 10);
      }
      for (const l of scannedLinks(s.content as string)) {
        attribute(s.id, "relation", l.name, l.target, position += 10);
      }
    });
  });

  const hiddenIds = hiddenOf(specs);
  const hiddenSet = new Set(hiddenIds);
  return {
    folderId: GEN_FOLDER_ID,
    publicIds: specs.filter((s) => !hiddenSet.has(s.id)).map((s) => s.id),
    hiddenIds,
    imageIds: specs.filter((s) => s.kind === "image").map((s) => s.id),
  };
}

/** Hidden notes: those flagged, and everything below one. */
function hiddenOf(specs: Spec[]): string[] {
  const hidden = new Set<string>();
  for (const s of specs) {
    if (s.hidden || hidden.has(s.parent)) hidden.add(s.id);
  }
  return specs.filter((s) => hidden.has(s.id)).map((s) => s.id);
}

/** The note's path below `root` along first parents, as Core writes it in `#root/…` links. */
function pathFromRoot(store: CoreStore, noteId: string): string[] {
  const path: string[] = [];
  for (
    let id: string | undefined = noteId;
    id && id !== "root";
    id = store.branchesOf(id)[0]?.parentNoteId
  ) {
    path.unshift(id);
  }
  return path;
}
