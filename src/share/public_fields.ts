/**
 * The public attribute policy: which of a published note's fields visitors may see. Core's lore
 * templates promote GM-facing labels next to player-facing ones (a character's Secrets beside
 * its Race), so a promoted label is public only when it is known to be player-facing:
 *
 * - **never public**: `secrets`, `gmNotes`, `hooks` and `truthStatus` from any template, the
 *   GM-facing labels of a known template (a quest's `consequences`, a scene's `outcome`), the
 *   share controls (`share*`, `draft`, `gmOnly`), and any field the GM lists in
 *   `#sharePrivateFields` on the share root or on the note;
 * - **public**: a label every template promoting it on this note lists as player-facing
 *   ({@linkcode playerFields}), or one the GM lists in `#sharePublicFields` (for a template of
 *   their own);
 * - anything else (a custom promoted label nobody declared) is not shown: fail closed.
 *
 * Lists are comma-separated label names or promoted aliases, in any letter case
 * (`#sharePrivateFields="goals, Status"`). Relations and the fields read by name
 * (`themeSong`, `portraitImage`, `mapImage`) stay public unless listed private.
 *
 * @module
 */
import { ownAttributes } from "../lore/note_view.ts";
import type { LoreType } from "../lore/vocabulary.ts";
import type { CoreNote } from "../upstream/core.ts";

/** Labels never shown, even when a template promotes them: they steer sharing. */
const SHARE_CONTROL = /^(?:share|draft$|gmOnly$)/;

/** GM-facing in every template that has them, and in any template a GM makes. */
const GM_FIELDS: ReadonlySet<string> = new Set(["secrets", "gmnotes", "hooks", "truthstatus"]);

/** Where the GM lists more private fields (share root or note). */
export const PRIVATE_FIELDS_LABEL = "sharePrivateFields";

/** Where the GM lists promoted labels of their own templates as public (share root or note). */
export const PUBLIC_FIELDS_LABEL = "sharePublicFields";

/**
 * Every promoted label of Core's lore templates (`_template_<type>`), judged: `player` is what
 * the players may know of the thing; `gm` plans play or spoils it. Not listed at all: a
 * session's `players` (the real people at the table, not lore: public only when declared).
 */
const LORE_TEMPLATE_FIELDS: Record<LoreType, { player: string; gm?: string }> = {
  character: {
    player: "fullName aliases age race gender affiliation role status goals",
    gm: "secrets",
  },
  location: { player: "locationType region population ruler geolocation", gm: "secrets" },
  faction: { player: "factionType foundingDate leader goals status", gm: "secrets" },
  creature: { player: "creatureType habitat diet dangerLevel abilities" },
  // an event is history: its outcome and consequences are what the world remembers
  event: { player: "inWorldDate outcome consequences", gm: "secrets" },
  timeline: { player: "calendarSystem" },
  manuscript: { player: "genre manuscriptStatus wordCount" },
  // a published statblock is published for its numbers
  statblock: {
    player: "crName challengeRating crLevel creatureType size alignment ac hp speed str dex " +
      "con int wis cha immunities resistances vulnerabilities abilities actions legendaryActions",
  },
  item: { player: "itemType rarity creator magicProperties history" },
  spell: { player: "school level castingTime range components duration" },
  building: { player: "buildingType owner purpose condition", gm: "secrets" },
  language: { player: "languageFamily speakers script samplePhrase" },
  session: { player: "sessionDate sessionStatus recap", gm: "hooks gmNotes" },
  // what a quest leads to is a spoiler until it is played
  quest: { player: "questStatus questGiver reward location", gm: "hooks consequences" },
  // a scene is planned play: its outcome is a spoiler
  scene: { player: "location participants", gm: "outcome gmNotes" },
  organization: { player: "orgType leader headquarters membership purpose status" },
  race: { player: "homeland lifespan traits culture relations" },
  // whether a myth is true is the spoiler
  myth: { player: "mythType origin relatedEntities", gm: "truthStatus" },
  cosmology: { player: "planes cosmicForces afterlife creationMyth" },
  deity: { player: "domain alignment symbol worshippers divineStatus" },
  religion: { player: "deity tenets practices holyText faithStatus" },
};

/** Core's built-in templates whose promoted labels describe the note plainly. */
const BUILT_IN_TEMPLATE_FIELDS: Record<string, string> = {
  _template_calendar: "startDate endDate startTime endTime",
  _template_geo_map: "geolocation",
  _template_board: "status",
};

const words = (list: string | undefined) => new Set(list?.split(" ").filter(Boolean) ?? []);

const TEMPLATES: ReadonlyMap<string, { player: ReadonlySet<string>; gm: ReadonlySet<string> }> =
  new Map([
    ...Object.entries(LORE_TEMPLATE_FIELDS).map(([type, f]) =>
      [`_template_${type}`, { player: words(f.player), gm: words(f.gm) }] as const
    ),
    ...Object.entries(BUILT_IN_TEMPLATE_FIELDS).map(([id, player]) =>
      [id, { player: words(player), gm: new Set<string>() }] as const
    ),
  ]);

/**
 * The promoted labels a Core template lists as player-facing, by template noteId; empty for a
 * template this policy does not know.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(playerFields("_template_character").has("race"), true);
 * assert.equal(playerFields("_template_character").has("secrets"), false);
 * assert.equal(playerFields("_template_quest").has("consequences"), false);
 * assert.equal(playerFields("myOwnTemplate").size, 0);
 * ```
 */
export function playerFields(templateId: string): ReadonlySet<string> {
  return TEMPLATES.get(templateId)?.player ?? new Set();
}

/** A promoted label as visitors see it. */
export interface PublicField {
  /** The label's own name (`inWorldDate`). */
  name: string;
  /** The name the template shows (`In-World Date`), or `name`. */
  alias: string;
  value: string;
}

/** What the GM declared, lower-cased: fields listed private, and fields listed public. */
interface Declared {
  private: ReadonlySet<string>;
  public: ReadonlySet<string>;
}

function listed(notes: readonly (CoreNote | undefined)[], label: string): Set<string> {
  const out = new Set<string>();
  for (const note of notes) {
    for (const a of note?.attributes ?? []) {
      if (a.type !== "label" || a.name !== label) continue;
      for (const item of a.value.split(",")) {
        const key = item.trim().toLowerCase();
        if (key !== "") out.add(key);
      }
    }
  }
  return out;
}

function declared(note: CoreNote, shareRoot: CoreNote | undefined): Declared {
  const notes = [shareRoot, note];
  return {
    private: listed(notes, PRIVATE_FIELDS_LABEL),
    public: listed(notes, PUBLIC_FIELDS_LABEL),
  };
}

function neverPublic(name: string, alias: string, decl: Declared): boolean {
  const key = name.toLowerCase();
  return SHARE_CONTROL.test(name) || GM_FIELDS.has(key) || decl.private.has(key) ||
    decl.private.has(alias.toLowerCase());
}

/** A promoted label: its alias and the notes (templates) whose definitions promote it. */
interface Promotion {
  alias: string;
  owners: string[];
}

/** `#label:<name>="promoted,alias=…"` definitions of the note (own, inherited, template). */
function promotions(note: CoreNote): Map<string, Promotion> {
  const out = new Map<string, Promotion>();
  for (const def of note.attributes) {
    if (def.type !== "label" || !def.name.startsWith("label:")) continue;
    const name = def.name.slice("label:".length);
    const options = def.value.split(",").map((o) => o.trim());
    if (!options.includes("promoted")) continue;
    const known = out.get(name);
    if (known) {
      known.owners.push(def.noteId);
      continue;
    }
    const alias = options.find((o) => o.startsWith("alias="))?.slice("alias=".length).trim();
    out.set(name, { alias: alias || name, owners: [def.noteId] });
  }
  return out;
}

function isPublicPromotion(name: string, p: Promotion, decl: Declared): boolean {
  if (neverPublic(name, p.alias, decl)) return false;
  if (p.owners.some((id) => TEMPLATES.get(id)?.gm.has(name))) return false;
  if (p.owners.every((id) => playerFields(id).has(name))) return true;
  return decl.public.has(name.toLowerCase()) || decl.public.has(p.alias.toLowerCase());
}

/**
 * The note's own non-empty labels that its templates promote and the policy lets visitors see,
 * in the templates' order, with the promoted alias.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { CoreAttribute, CoreNote } from "../upstream/core.ts";
 * const attr = (noteId: string, name: string, value: string): CoreAttribute => ({
 *   attributeId: `${noteId}_${name}`,
 *   noteId,
 *   type: "label",
 *   name,
 *   value,
 *   isInheritable: false,
 * });
 * const promoted = (name: string, alias: string) =>
 *   attr("_template_character", `label:${name}`, `promoted,alias=${alias},single,text`);
 * const mira = {
 *   noteId: "mira",
 *   attributes: [
 *     promoted("race", "Race"),
 *     promoted("secrets", "Secrets"),
 *     promoted("goals", "Goals"),
 *     attr("mira", "race", "Elf"),
 *     attr("mira", "secrets", "Spy for the Drowned Cult"),
 *     attr("mira", "goals", "Find her brother"),
 *   ],
 * } as CoreNote;
 * assert.deepEqual(publicFields(mira, undefined).map((f) => [f.alias, f.value]), [
 *   ["Race", "Elf"],
 *   ["Goals", "Find her brother"],
 * ]);
 * const root = { noteId: "world", attributes: [attr("world", "sharePrivateFields", "goals")] };
 * assert.deepEqual(publicFields(mira, root as CoreNote).map((f) => f.name), ["race"]);
 * ```
 */
export function publicFields(note: CoreNote, shareRoot: CoreNote | undefined): PublicField[] {
  const decl = declared(note, shareRoot);
  const own = ownAttributes(note).filter((a) => a.type === "label" && a.value.trim() !== "");
  const out: PublicField[] = [];
  for (const [name, promotion] of promotions(note)) {
    if (!isPublicPromotion(name, promotion, decl)) continue;
    for (const label of own) {
      if (label.name === name) out.push({ name, alias: promotion.alias, value: label.value });
    }
  }
  return out;
}

/**
 * Whether a field the public side reads by name (a relation, `themeSong`, `portraitImage`,
 * `mapImage`) is kept from visitors: a GM-facing or share-control name, or one the GM lists in
 * `#sharePrivateFields` on the share root or on the note.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { CoreNote } from "../upstream/core.ts";
 * const root = {
 *   noteId: "world",
 *   attributes: [{
 *     attributeId: "a1",
 *     noteId: "world",
 *     type: "label",
 *     name: "sharePrivateFields",
 *     value: "relEnemy, themeSong",
 *     isInheritable: false,
 *   }],
 * } as CoreNote;
 * const mira = { noteId: "mira", attributes: [] } as unknown as CoreNote;
 * assert.equal(isPrivateField(mira, root, "relEnemy"), true);
 * assert.equal(isPrivateField(mira, root, "relAlly"), false);
 * assert.equal(isPrivateField(mira, undefined, "secrets"), true);
 * ```
 */
export function isPrivateField(
  note: CoreNote,
  shareRoot: CoreNote | undefined,
  name: string,
): boolean {
  return neverPublic(name, name, declared(note, shareRoot));
}
