/**
 * Seed data for the Core double: Core's system notes (`_hidden`, `_share`, the 21 lore
 * templates) and an original sample world, "The Shattered Coast", with stable ids.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createCoreStore } from "./core_store.ts";
 * const store = createCoreStore();
 * seedWorld(store);
 * assert.equal(store.getNote(W.charMira)?.title, "Mira Tallowend");
 * ```
 * @module
 */
import { deflateSync } from "node:zlib";
import type { CoreStore } from "./core_store.ts";
import { pngChunk, pngFile } from "../src/media/png_encode.ts";

/** The 21 lore types Core ships templates for (`_template_<type>`). */
export const LORE_TYPES = [
  "character",
  "location",
  "faction",
  "creature",
  "event",
  "timeline",
  "manuscript",
  "statblock",
  "item",
  "spell",
  "building",
  "language",
  "session",
  "quest",
  "scene",
  "organization",
  "race",
  "myth",
  "cosmology",
  "deity",
  "religion",
] as const;

/** One of {@link LORE_TYPES}. */
export type LoreType = typeof LORE_TYPES[number];

/**
 * Stable ids of the sample world (12 characters of `[A-Za-z0-9]`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createCoreStore } from "./core_store.ts";
 * const store = createCoreStore();
 * seedWorld(store);
 * // tests name the sample notes by role, never by a literal id
 * assert.equal(store.getNote(W.charMira)?.noteId, W.charMira);
 * ```
 */
export const W = {
  loreRoot: "wLoreRoot001",
  media: "wMediaFold01",
  imgChart: "wImgChart001",
  imgPortrait: "wImgPortrt01",
  charMira: "wCharMira001",
  charOskar: "wCharOskar01",
  charIselde: "wCharIsel001",
  charBrannoch: "wCharBrann01",
  locChart: "wLocMapChart",
  locHarbor: "wLocHarbor01",
  locLighthouse: "wLocLight001",
  locReef: "wLocReef0001",
  timeline: "wTimeline001",
  eventFlood: "wEvtFlood001",
  eventPact: "wEvtPact0001",
  questLamp: "wQuestLamp01",
  questLedger: "wQuestLedgr1",
  statSentinel: "wStatSentnl1",
  statEel: "wStatEel0001",
  faction: "wFactLantern",
  attSigil: "wAttSigil001",
  attLampSketch: "wAttLampSk01",
  revMiraOld: "wRevMira0001",
  revMiraNew: "wRevMira0002",
  guide: "wGuideRoot01",
  guideWelcome: "wGuideWelc01",
  guideDraft: "wGuideDraft1",
  guideGmOnly: "wGuideGmOnly",
  guideVault: "wGuideVault1",
  guideVaultLedger: "wGuideVltLdg",
  guideProtected: "wGuideProtct",
  guideWip: "wGuideWip001",
  guideWipChild: "wGuideWipCh1",
} as const;

/**
 * Template note id for a lore type.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(templateId("quest"), "_template_quest");
 * ```
 */
export function templateId(type: LoreType): string {
  return `_template_${type}`;
}

/**
 * Makes a note a lore note of `type` as the portal writes one: `#lore`, `#loreType` and a
 * `~template` relation to the type's template, so the template's labels are promoted.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createCoreStore } from "./core_store.ts";
 * const store = createCoreStore();
 * seedWorld(store);
 * const { note } = store.createNote({
 *   parentNoteId: W.guide,
 *   title: "Cove",
 *   type: "text",
 *   content: "",
 * });
 * markLore(store, note.noteId, "location");
 * const own = store.ownAttributes(note.noteId).map((a) => `${a.name}=${a.value}`);
 * assert.deepEqual(own, ["lore=", "loreType=location", "template=_template_location"]);
 * ```
 */
export function markLore(store: CoreStore, noteId: string, type: LoreType): void {
  label(store, noteId, "lore");
  label(store, noteId, "loreType", type);
  relation(store, noteId, "template", templateId(type));
}

/**
 * A new text note under `parentNoteId`, made a lore note of `type` by {@linkcode markLore}; its
 * content one paragraph (`<p><title> in the salt.</p>` unless given). Returns its id.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createCoreStore } from "./core_store.ts";
 * const store = createCoreStore();
 * seedWorld(store);
 * const id = createLoreNote(store, W.guide, "The First Lamp", "event");
 * assert.equal(store.getNote(id)?.title, "The First Lamp");
 * assert.equal(store.search("#loreType=event").hits.some((n) => n.noteId === id), true);
 * ```
 */
export function createLoreNote(
  store: CoreStore,
  parentNoteId: string,
  title: string,
  type: LoreType,
  content = `<p>${title} in the salt.</p>`,
): string {
  const { note } = store.createNote({ parentNoteId, title, type: "text", content });
  markLore(store, note.noteId, type);
  return note.noteId;
}

/** Credentials of the password-protected share branch (`#shareCredentials`). */
export const SHARE_CREDENTIALS = { user: "player", password: "lantern" } as const;
/** `#shareAlias` of the harbor note. */
export const HARBOR_ALIAS = "harbor-town";
/** Mira's `#secrets`: a GM-facing field of a published note, never shown to visitors. */
export const MIRA_SECRET = "Owes a blood debt she never speaks of";

// ---------------------------------------------------------------------------------------------
// PNG bytes
// ---------------------------------------------------------------------------------------------

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/**
 * CRC-32 (IEEE) as PNG chunks use it, written out here so that tests check the service's PNG
 * encoder against a second implementation.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(crc32(new TextEncoder().encode("IEND")), 0xae426082);
 * ```
 */
export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/**
 * A valid RGB PNG of the given size, coloured by `pixel(x, y)`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const png = makePng(16, 16, () => [200, 120, 40]);
 * assert.equal(new DataView(png.buffer).getUint32(16), 16); // IHDR width
 * ```
 */
export function makePng(
  width: number,
  height: number,
  pixel: (x: number, y: number) => [number, number, number],
): Uint8Array {
  const header = new Uint8Array(13);
  const hv = new DataView(header.buffer);
  hv.setUint32(0, width);
  hv.setUint32(4, height);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit, truecolour, deflate, no filter method, no interlace
  const raw = new Uint8Array(height * (1 + width * 3));
  for (let y = 0; y < height; y++) {
    const row = y * (1 + width * 3); // each scanline starts with filter type 0
    for (let x = 0; x < width; x++) raw.set(pixel(x, y), row + 1 + x * 3);
  }
  return pngFile([
    pngChunk("IHDR", header),
    pngChunk("IDAT", new Uint8Array(deflateSync(raw))),
    pngChunk("IEND", new Uint8Array()),
  ]);
}

/** Sea chart, 64×48: blue water with a sandy coast band. */
export const CHART_PNG = makePng(
  64,
  48,
  (x, y) => x + y / 2 > 52 ? [214, 190, 140] : [30, 70 + y, 140],
);
/** Portrait, 16×16. */
export const PORTRAIT_PNG = makePng(16, 16, (x, y) => [120 + x * 8, 60 + y * 4, 50]);
/** Guild sigil attachment, 8×8. */
export const SIGIL_PNG = makePng(8, 8, (x, y) => (x + y) % 2 ? [250, 200, 60] : [40, 30, 20]);
/** Lamp sketch pasted into the (unshared) lighthouse note, 12×12: a lit lamp on grey stone. */
export const LAMP_SKETCH_PNG = makePng(
  12,
  12,
  (x, y) => Math.hypot(x - 5.5, y - 4) < 3 ? [255, 214, 90] : [90 + y * 4, 90 + y * 4, 100],
);

// ---------------------------------------------------------------------------------------------
// System notes
// ---------------------------------------------------------------------------------------------

const INSTALLED_AT = Date.parse("2026-01-05T08:00:00.000Z");
const WORLD_START = Date.parse("2026-03-01T09:00:00.000Z");

/**
 * The lore templates as Core's hidden subtree defines them: title, icon and the labels between
 * `#template` and `#iconClass`, in order. `key:Alias` is a promoted single text `label:key`
 * (`key:Alias:number` a number one); `#name` is a plain label (`#name=value` with a value).
 * Commas separate entries, as no alias can hold one (it sits in a comma-separated definition).
 */
const LORE_TEMPLATES: Record<LoreType, [title: string, icon: string, labels: string]> = {
  character: [
    "Character",
    "bx bx-user",
    `fullName:Full Name, aliases:Aliases, age:Age:number, race:Race, gender:Gender,
     affiliation:Affiliation, role:Role, status:Status, secrets:Secrets, goals:Goals`,
  ],
  location: [
    "Location",
    "bx bx-map-pin",
    `locationType:Type, region:Region, population:Population:number, ruler:Ruler,
     secrets:Secrets, geolocation:Map Coords`,
  ],
  faction: [
    "Faction",
    "bx bx-shield",
    `factionType:Type, foundingDate:Founded, leader:Leader, goals:Goals, secrets:Secrets,
     status:Status`,
  ],
  creature: [
    "Creature",
    "bx bx-bug",
    `creatureType:Type, habitat:Habitat, diet:Diet, dangerLevel:Danger Level:number,
     abilities:Abilities`,
  ],
  event: [
    "Event",
    "bx bx-calendar-event",
    "inWorldDate:In-World Date, outcome:Outcome, consequences:Consequences, secrets:Secrets",
  ],
  timeline: [
    "Timeline",
    "bx bx-time-five",
    "calendarSystem:Calendar System, #sorted, #sortBy=inWorldDate",
  ],
  manuscript: [
    "Manuscript",
    "bx bx-book-open",
    "genre:Genre, manuscriptStatus:Status, wordCount:Word Count:number",
  ],
  statblock: [
    "Statblock",
    "bx bx-list-check",
    `#statblock, crName:Name, challengeRating:CR, crLevel:CR (numeric):number,
     creatureType:Type, size:Size, alignment:Alignment, ac:AC:number, hp:HP:number,
     speed:Speed, str:STR:number, dex:DEX:number, con:CON:number, int:INT:number,
     wis:WIS:number, cha:CHA:number, immunities:Immunities, resistances:Resistances,
     vulnerabilities:Vulnerabilities, abilities:Special Abilities, actions:Actions,
     legendaryActions:Legendary Actions`,
  ],
  item: [
    "Item / Artifact",
    "bx bx-diamond",
    `itemType:Item Type, rarity:Rarity, creator:Creator, magicProperties:Magic Properties,
     history:History`,
  ],
  spell: [
    "Spell / Magic",
    "bx bx-meteor",
    `school:School, level:Level, castingTime:Casting Time, range:Range, components:Components,
     duration:Duration`,
  ],
  building: [
    "Building / Structure",
    "bx bx-building-house",
    "buildingType:Type, owner:Owner, purpose:Purpose, condition:Condition, secrets:Secrets",
  ],
  language: [
    "Language / Script",
    "bx bx-font-family",
    `languageFamily:Language Family, speakers:Speakers, script:Script,
     samplePhrase:Sample Phrase`,
  ],
  session: [
    "Session",
    "bx bx-game",
    `sessionDate:Session Date, players:Players, sessionStatus:Status, recap:Recap,
     hooks:Active Hooks, gmNotes:GM Notes`,
  ],
  quest: [
    "Quest",
    "bx bx-target-lock",
    `questStatus:Status, questGiver:Quest Giver, reward:Reward, location:Location,
     hooks:Hooks, consequences:Consequences, #quest`,
  ],
  scene: [
    "Scene",
    "bx bx-clapperboard",
    "location:Location, participants:Participants, outcome:Outcome, gmNotes:GM Notes",
  ],
  organization: [
    "Organization",
    "bx bx-buildings",
    `orgType:Type, leader:Leader, headquarters:Headquarters, membership:Membership,
     purpose:Purpose, status:Status, #organization`,
  ],
  race: [
    "Race / Species",
    "bx bx-dna",
    `homeland:Homeland, lifespan:Lifespan, traits:Traits, culture:Culture,
     relations:Relations, #race`,
  ],
  myth: [
    "Myth / Legend",
    "bx bx-book-bookmark",
    `mythType:Type, origin:Origin, truthStatus:Truth Status, relatedEntities:Related Entities,
     #myth`,
  ],
  cosmology: [
    "Cosmology",
    "bx bx-planet",
    `planes:Planes, cosmicForces:Cosmic Forces, afterlife:Afterlife,
     creationMyth:Creation Myth, #cosmology`,
  ],
  deity: [
    "Deity",
    "bx bx-crown",
    `domain:Domain, alignment:Alignment, symbol:Symbol, worshippers:Worshippers,
     divineStatus:Status, #deity`,
  ],
  religion: [
    "Religion",
    "bx bx-church",
    `deity:Primary Deity, tenets:Tenets, practices:Practices, holyText:Holy Text,
     faithStatus:Status, #religion`,
  ],
};

function system(
  store: CoreStore,
  noteId: string,
  parentNoteId: string,
  title: string,
  type: string,
  notePosition?: number,
) {
  store.createNote(
    { noteId, parentNoteId, title, type, content: "", notePosition },
    { ignoreForbiddenParents: true, rawTitle: true },
  );
}

function label(store: CoreStore, noteId: string, name: string, value = "", isInheritable = false) {
  store.createAttribute({ noteId, type: "label", name, value, isInheritable });
}

/**
 * A label of a built-in note, with the fixed id Core's hidden-subtree check gives it
 * (services/hidden_subtree.ts): `<noteId>_<type letter><name>`, e.g.
 * `_template_character_llabel:race` — the only attribute ids with a `:`.
 */
function builtInLabel(store: CoreStore, noteId: string, name: string, value = "") {
  store.createAttribute({ attributeId: `${noteId}_l${name}`, noteId, type: "label", name, value });
}

function relation(store: CoreStore, noteId: string, name: string, target: string) {
  store.createAttribute({ noteId, type: "relation", name, value: target });
}

/**
 * The `#iconClass` Core's hidden-subtree check adds last for an item's `icon`: `bx <icon>`, so
 * icons already written as "bx bx-user" read "bx bx bx-user".
 */
function builtInIcon(store: CoreStore, noteId: string, icon: string) {
  builtInLabel(store, noteId, "iconClass", `bx ${icon}`);
}

/** Labels of a {@link LORE_TEMPLATES} entry as `[name, value]`. */
function templateLabels(labels: string): [name: string, value: string][] {
  return labels.split(",").map((entry) => {
    const [key, alias, kind = "text"] = entry.trim().split(":");
    if (!key.startsWith("#")) return [`label:${key}`, `promoted,alias=${alias},single,${kind}`];
    const [name, value = ""] = key.slice(1).split("=");
    return [name, value];
  });
}

/**
 * Adds what every Core has besides `root`: `_hidden`, `_share` ("Shared Notes") and
 * `_hidden/_templates/_templates_lore` with the 21 lore templates, with Core's titles, types,
 * attribute ids, values and positions and the branch positions among `_hidden`'s children
 * (the other built-in notes are not modelled). Idempotent per store.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createCoreStore } from "./core_store.ts";
 * const store = createCoreStore();
 * seedSystemNotes(store);
 * assert.equal(store.hasLabel("_template_quest", "quest"), true);
 * ```
 */
export function seedSystemNotes(store: CoreStore): void {
  if (store.getNote("_hidden")) return;
  store.withTime(new Date(INSTALLED_AT), () => {
    store.patchNote("root", { dateCreated: store.localNow(), utcDateCreated: store.utcNow() });
    // _hidden always sorts last under root
    system(store, "_hidden", "root", "Hidden Notes", "doc", 999_999_999);
    builtInLabel(store, "_hidden", "docName", "hidden");
    builtInIcon(store, "_hidden", "bx bx-hide");
    system(store, "_share", "_hidden", "Shared Notes", "doc", 40);
    builtInLabel(store, "_share", "docName", "share");
    system(store, "_templates", "_hidden", "Built-in templates", "book", 130);
    system(store, "_templates_lore", "_templates", "Lore Templates", "book", 100);
    for (const type of LORE_TYPES) {
      const [title, icon, labels] = LORE_TEMPLATES[type];
      const id = templateId(type);
      system(store, id, "_templates_lore", title, type === "timeline" ? "book" : "text");
      builtInLabel(store, id, "template");
      for (const [name, value] of templateLabels(labels)) builtInLabel(store, id, name, value);
      builtInIcon(store, id, icon);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// The Shattered Coast
// ---------------------------------------------------------------------------------------------

const link = (path: string[], title: string) =>
  `<a class="reference-link" href="#root/${path.join("/")}">${title}</a>`;

const P = {
  mira: [W.loreRoot, W.charMira],
  oskar: [W.loreRoot, W.charOskar],
  iselde: [W.loreRoot, W.charIselde],
  brannoch: [W.loreRoot, W.charBrannoch],
  chart: [W.loreRoot, W.locChart],
  harbor: [W.loreRoot, W.locChart, W.locHarbor],
  lighthouse: [W.loreRoot, W.locChart, W.locLighthouse],
  flood: [W.loreRoot, W.timeline, W.eventFlood],
  faction: [W.loreRoot, W.faction],
  guide: [W.loreRoot, W.guide],
};

const CONTENT: Record<string, string> = {
  [W.loreRoot]: "<p>A ragged coastline of salt towns, drowned bells and lantern-lit reefs.</p>",
  [W.charMira]: `<p>Mira Tallowend pilots ships through the reefs off ${
    link(P.harbor, "Saltmarrow Harbor")
  } for a copper a fathom.</p>
<p><img src="api/images/${W.imgPortrait}/mira-portrait.png" alt="Mira"></p>
<p>She trusts ${link(P.oskar, "Oskar Venn")} more than she should.</p>
<div class="gm-only"><p>Mira owes the ${
    link(P.faction, "Lantern Guild")
  } a debt she cannot pay.</p></div>
<section class="backstory"><p>Raised by lighthouse keepers.</p><div class="note gm-only secret"><p>Her mother still lives beneath the reef.</p></div></section>`,
  [W.charOskar]: `<p>A smuggler with a ledger of favours. Sworn enemy of ${
    link(P.brannoch, "Brannoch the Drowned")
  }.</p>`,
  [W.charIselde]: `<p>Keeper of ${
    link(P.lighthouse, "Greyfin Lighthouse")
  }, reader of tides and omens.</p>`,
  [W.charBrannoch]: `<p>A drowned captain who rings the sunken bell. He rose in ${
    link(P.flood, "The Brine Flood")
  }.</p><p class="gm-only">He can only be bound with lantern oil.</p>`,
  [W.locChart]:
    `<p>The pilots' chart of the coast.</p><p><img src="api/images/${W.imgChart}/coast-chart.png"></p>`,
  [W.locHarbor]: `<p>Saltmarrow Harbor: tar, gulls and the Guild's lamps. Home port of ${
    link(P.mira, "Mira Tallowend")
  }.</p>`,
  // pasted into Core's editor: an image attachment named by its title when pasted
  [W.locLighthouse]: `<p>Greyfin Lighthouse, dark since the flood.</p>
<p><img src="api/attachments/${W.attLampSketch}/image/inline%20image" width="12"></p>`,
  [W.locReef]: `<p>The Knucklebone Reef, where the charts disagree.</p>`,
  [W.timeline]: `<p>Dates follow the Saltmarrow harbour reckoning.</p>`,
  [W.eventFlood]: `<p>The sea rose for three nights and took the lower town.</p>`,
  [W.eventPact]: `<p>The lamp-keepers swore the Lantern Pact in ${
    link(P.harbor, "Saltmarrow Harbor")
  }.</p>`,
  [W.questLamp]: `<p>Carry fresh oil to ${
    link(P.lighthouse, "Greyfin Lighthouse")
  } and relight it.</p>`,
  [W.questLedger]: `<p>Recover ${link(P.oskar, "Oskar Venn")}'s stolen ledger.</p>`,
  [W.statSentinel]: `<p>Armor Class 15, Hit Points 52. Slam: 2d8 bludgeoning.</p>`,
  [W.statEel]: `<p>Armor Class 12, Hit Points 19. Bite: 1d10 piercing.</p>`,
  [W.faction]: `<p>The Lantern Guild keeps the coast's lamps burning.</p>
<p><img src="api/attachments/${W.attSigil}/image/lantern-sigil.png"></p>`,
  [W.guide]: `<p>Welcome to the Shattered Coast. Start with ${
    link([...P.guide, W.guideWelcome], "Welcome, Travellers")
  }.</p>`,
  [W.guideWelcome]: `<p>Most ships put in at ${link(P.harbor, "Saltmarrow Harbor")}.</p>
<p>Beware ${link(P.brannoch, "Brannoch the Drowned")}.</p>
<p>See the <a href="#root/${P.guide.join("/")}/${W.imgChart}">coast chart</a>.</p>
<p class="gm-only">The harbourmaster is in Brannoch's pay.</p>`,
  [W.guideDraft]: `<p>Rumour has it the bell rings at low tide.</p>`,
  [W.guideGmOnly]: `<p>The drowned bell is Brannoch's heart.</p>`,
  [W.guideVault]: `<p>The Guild's vault beneath the harbour.</p>`,
  [W.guideVaultLedger]: `<p>Entries for oil, rope and silence.</p>`,
  [W.guideProtected]: "yK1c9mPqZ2bV8sLw4tRx0nHe3uJf6aDg",
  [W.guideWip]: `<p>Sketches for the next sessions.</p>`,
  [W.guideWipChild]: `<p>Half-drawn soundings of the outer reef.</p>`,
};

interface Spec {
  id: string;
  parent: string;
  title: string;
  type?: string;
  mime?: string;
  lore?: LoreType;
  content?: string | Uint8Array;
  isProtected?: boolean;
}

const NOTES: Spec[] = [
  { id: W.loreRoot, parent: "root", title: "The Shattered Coast" },
  { id: W.charMira, parent: W.loreRoot, title: "Mira Tallowend", lore: "character" },
  { id: W.charOskar, parent: W.loreRoot, title: "Oskar Venn", lore: "character" },
  { id: W.charIselde, parent: W.loreRoot, title: "Iselde Crane", lore: "character" },
  { id: W.charBrannoch, parent: W.loreRoot, title: "Brannoch the Drowned", lore: "character" },
  { id: W.locChart, parent: W.loreRoot, title: "Chart of the Shattered Coast", lore: "location" },
  { id: W.locHarbor, parent: W.locChart, title: "Saltmarrow Harbor", lore: "location" },
  { id: W.locLighthouse, parent: W.locChart, title: "Greyfin Lighthouse", lore: "location" },
  { id: W.locReef, parent: W.locChart, title: "The Knucklebone Reef", lore: "location" },
  { id: W.timeline, parent: W.loreRoot, title: "Chronicle of the Coast", lore: "timeline" },
  { id: W.eventFlood, parent: W.timeline, title: "The Brine Flood", lore: "event" },
  { id: W.eventPact, parent: W.timeline, title: "The Lantern Pact", lore: "event" },
  { id: W.questLamp, parent: W.loreRoot, title: "Relight the Greyfin Lamp", lore: "quest" },
  { id: W.questLedger, parent: W.loreRoot, title: "The Smuggler's Ledger", lore: "quest" },
  { id: W.statSentinel, parent: W.loreRoot, title: "Drowned Sentinel", lore: "statblock" },
  { id: W.statEel, parent: W.loreRoot, title: "Harbor Eel", lore: "statblock" },
  { id: W.faction, parent: W.loreRoot, title: "The Lantern Guild", lore: "faction" },
  { id: W.media, parent: W.loreRoot, title: "Media", type: "book" },
  {
    id: W.imgChart,
    parent: W.media,
    title: "coast-chart.png",
    type: "image",
    mime: "image/png",
    content: CHART_PNG,
  },
  {
    id: W.imgPortrait,
    parent: W.media,
    title: "mira-portrait.png",
    type: "image",
    mime: "image/png",
    content: PORTRAIT_PNG,
  },
  { id: W.guide, parent: W.loreRoot, title: "Player's Guide" },
  { id: W.guideWelcome, parent: W.guide, title: "Welcome, Travellers" },
  { id: W.guideDraft, parent: W.guide, title: "Rumours on the Docks" },
  { id: W.guideGmOnly, parent: W.guide, title: "The Drowned Bell" },
  { id: W.guideVault, parent: W.guide, title: "The Lantern Vault" },
  { id: W.guideVaultLedger, parent: W.guideVault, title: "Ledger of the Vault" },
  {
    id: W.guideProtected,
    parent: W.guide,
    // protected notes show their ciphertext title through ETAPI
    title: "Q2lwaGVyOnNlYWxlZC1ieS10aGUtZ3VpbGQ=",
    isProtected: true,
  },
  { id: W.guideWip, parent: W.guide, title: "Work in Progress" },
  { id: W.guideWipChild, parent: W.guideWip, title: "Unfinished Sea Charts" },
];

/** Extra placements: [noteId, parentNoteId]. `_share` ones are Core's weak "shared" branches. */
const CLONES: [string, string][] = [
  [W.guide, "_share"],
  [W.locHarbor, W.guide],
  [W.charMira, W.guide],
  [W.faction, W.guide],
  [W.imgChart, W.guide],
  [W.imgPortrait, W.guide], // Mira's portrait, so her public page shows it
  [W.guideGmOnly, W.guideWelcome], // a hidden note cloned under a published one stays hidden
];

/**
 * Seeds system notes and "The Shattered Coast" (see {@link WORLD_SUMMARY}) into `store`, with
 * fixed dates (March 2026). Content links are scanned, so `~internalLink`/`~imageLink`
 * relations match the HTML.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createCoreStore } from "./core_store.ts";
 * const store = createCoreStore();
 * seedWorld(store);
 * assert.equal(store.search("#loreType=character").hits.length, 4);
 * ```
 */
export function seedWorld(store: CoreStore): void {
  seedSystemNotes(store);
  if (store.getNote(W.loreRoot)) return;
  let minute = 0;
  const at = <T>(fn: () => T): T => store.withTime(new Date(WORLD_START + minute++ * 60_000), fn);

  for (const spec of NOTES) {
    at(() => {
      const type = spec.type ?? (spec.lore === "timeline" ? "book" : "text");
      store.createNote({
        noteId: spec.id,
        parentNoteId: spec.parent,
        title: spec.title,
        type,
        mime: spec.mime,
        content: spec.content ?? CONTENT[spec.id] ?? "",
        isProtected: spec.isProtected,
      }, { rawTitle: true });
      if (spec.lore) markLore(store, spec.id, spec.lore);
    });
  }
  at(() => {
    for (const [noteId, parentNoteId] of CLONES) store.createBranch({ noteId, parentNoteId });

    relation(store, W.locChart, "mapImage", W.imgChart);
    label(store, W.locHarbor, "geolocation", "12.5, 30.25");
    label(store, W.locLighthouse, "geolocation", "40.1, 8.75");
    label(store, W.locReef, "geolocation", "somewhere past the gulls");
    label(store, W.charMira, "themeSong", "https://music.example.org/tides-of-brass");
    // a filled GM-facing field of a published note: never public (src/share/public_fields.ts)
    label(store, W.charMira, "secrets", MIRA_SECRET);
    relation(store, W.charMira, "portraitImage", W.imgPortrait);
    relation(store, W.charMira, "relAlly", W.charOskar);
    relation(store, W.charMira, "relInhabits", W.locHarbor); // public → public: shown publicly
    relation(store, W.charIselde, "relAlly", W.charMira);
    relation(store, W.charOskar, "relEnemy", W.charBrannoch);
    relation(store, W.charBrannoch, "relEnemy", W.charMira);
    label(store, W.eventFlood, "inWorldDate", "1187-03-14");
    label(store, W.eventPact, "inWorldDate", "1190-09-02");
    label(store, W.questLamp, "questStatus", "active"); // the statuses the front end sorts by
    label(store, W.questLedger, "questStatus", "complete");
    label(store, W.statSentinel, "crLevel", "5");
    label(store, W.statEel, "crLevel", "1");

    label(store, W.guide, "shareRoot");
    label(store, W.locHarbor, "shareAlias", HARBOR_ALIAS);
    label(store, W.guideDraft, "draft");
    label(store, W.guideGmOnly, "gmOnly");
    label(
      store,
      W.guideVault,
      "shareCredentials",
      `${SHARE_CREDENTIALS.user}:${SHARE_CREDENTIALS.password}`,
      true,
    );
    label(store, W.guideWip, "draft", "", true);

    store.createAttachment({
      attachmentId: W.attSigil,
      ownerId: W.faction,
      role: "image",
      mime: "image/png",
      title: "lantern-sigil.png",
      content: SIGIL_PNG,
    });
    store.createAttachment({
      attachmentId: W.attLampSketch,
      ownerId: W.locLighthouse,
      role: "image",
      mime: "image/png",
      title: "inline image.png",
      content: LAMP_SKETCH_PNG,
    });
  });
  // links are scanned after every target exists, like a later PUT would do
  at(() => {
    for (const spec of NOTES) {
      const note = store.getNote(spec.id)!;
      if (note.type === "text" && !note.isProtected) {
        store.setNoteContent(spec.id, store.getContent(spec.id)!, { scanLinks: true });
      }
    }
  });
  store.insertRevision({
    revisionId: W.revMiraOld,
    noteId: W.charMira,
    type: "text",
    mime: "text/html",
    isProtected: false,
    title: "Mira",
    content: "<p>A harbour pilot.</p>",
    dateLastEdited: "2026-02-10 18:00:00.000+0000",
    dateCreated: "2026-02-12 09:30:00.000+0000",
    utcDateLastEdited: "2026-02-10 18:00:00.000Z",
    utcDateCreated: "2026-02-12 09:30:00.000Z",
    utcDateModified: "2026-02-12 09:30:00.000Z",
  });
  store.insertRevision({
    revisionId: W.revMiraNew,
    noteId: W.charMira,
    type: "text",
    mime: "text/html",
    isProtected: false,
    title: "Mira Tallowend",
    content: "<p>Mira Tallowend pilots ships through the reefs.</p>",
    dateLastEdited: "2026-02-20 11:15:00.000+0000",
    dateCreated: "2026-02-21 08:00:00.000+0000",
    utcDateLastEdited: "2026-02-20 11:15:00.000Z",
    utcDateCreated: "2026-02-21 08:00:00.000Z",
    utcDateModified: "2026-02-21 08:00:00.000Z",
  });
}

/**
 * Human-readable outline of the sample world (titles and ids), for `deno task dev`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.match(WORLD_SUMMARY, /Shattered Coast/); // printed by `deno task dev`
 * ```
 */
export const WORLD_SUMMARY: string = [
  "The Shattered Coast — sample Core world",
  ...NOTES.map((s) => {
    const depth = depthOf(s.id);
    const kind = s.lore ?? s.type ?? "text";
    const title = s.isProtected ? "(protected note)" : s.title;
    return `${"  ".repeat(depth)}${title} [${kind}] ${s.id}`;
  }),
  `Shared: "Player's Guide" (${W.guide}, #shareRoot) under _share; clones of ${W.locHarbor} ` +
  `(#shareAlias=${HARBOR_ALIAS}), ${W.charMira}, ${W.faction}, ${W.imgChart}, ${W.imgPortrait}.`,
  `Hidden from players: ${W.guideDraft} (#draft), ${W.guideGmOnly} (#gmOnly), ${W.guideWip} ` +
  `(inheritable #draft), ${W.guideProtected} (protected); ${W.guideVault} needs ` +
  `${SHARE_CREDENTIALS.user}:${SHARE_CREDENTIALS.password}; Mira's #secrets (GM-facing).`,
  `Image attachments: ${W.attSigil} in ${W.faction} (shared), ${W.attLampSketch} pasted into ` +
  `${W.locLighthouse} (private).`,
].join("\n");

function depthOf(id: string): number {
  let depth = 0;
  let current = NOTES.find((s) => s.id === id);
  while (current && current.parent !== "root") {
    depth++;
    const parent = current.parent;
    current = NOTES.find((s) => s.id === parent);
  }
  return depth;
}
