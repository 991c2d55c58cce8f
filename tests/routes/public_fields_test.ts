/**
 * The public attribute policy through the real app: a published note shows the fields its
 * template calls player-facing, never its GM-facing ones, nor those the GM lists in
 * `#sharePrivateFields`, nor a promoted label of the GM's own unless listed in
 * `#sharePublicFields` — in the API answer, on the page's infobox, the timeline and the map.
 */
import assert from "node:assert/strict";
import { type Harness, withHarness } from "../helpers/harness.ts";
import { createCoreStore } from "../../sims/core_store.ts";
import { createLoreNote, MIRA_SECRET, seedSystemNotes, templateId, W } from "../../sims/world.ts";
import { LORE_TYPES, type LoreType } from "../../src/lore/vocabulary.ts";
import { publicFields } from "../../src/share/public_fields.ts";
import type { CoreNote } from "../../src/upstream/core.ts";

function label(h: Harness, noteId: string, name: string, value = "") {
  h.core.store.createAttribute({ noteId, type: "label", name, value });
}

/** A published lore note of `type` (its template linked) with these labels. */
function loreNote(h: Harness, type: LoreType, title: string, labels: Record<string, string>) {
  const noteId = createLoreNote(h.core.store, W.guide, title, type, `<p>${title} in brief.</p>`);
  for (const [name, value] of Object.entries(labels)) label(h, noteId, name, value);
  return noteId;
}

async function answers(h: Harness, id: string) {
  const api = await h.request(`/api/public/lore/${id}`);
  assert.equal(api.status, 200);
  const text = await api.text();
  const page = await h.request(`/public/lore/${id}`);
  assert.equal(page.status, 200);
  const html = await page.text();
  const infobox = /<aside class="infobox"[\s\S]*?<\/aside>/.exec(html)?.[0] ?? "";
  return { text, body: JSON.parse(text), html, infobox };
}

Deno.test("fields: a character with filled Secrets shows Race and Goals, never the Secrets", () =>
  withHarness(async (h) => {
    label(h, W.charMira, "race", "Human");
    label(h, W.charMira, "goals", "Find her brother");
    const mira = await answers(h, W.charMira);
    assert.deepEqual(mira.body.attributes, [
      { name: "Race", value: "Human" },
      { name: "Goals", value: "Find her brother" },
    ]);
    assert.match(mira.infobox, /<dt>Race<\/dt>\s*<dd>Human<\/dd>/);
    assert.match(mira.infobox, /<dt>Goals<\/dt>\s*<dd>Find her brother<\/dd>/);
    for (const shown of [mira.text, mira.html]) {
      assert.ok(!shown.includes(MIRA_SECRET), "the Secrets are public");
      assert.ok(!shown.includes("Secrets"), "the Secrets' label is public");
    }
  }));

Deno.test("fields: GM-facing fields of every template stay private; player-facing ones show", () =>
  withHarness(async (h) => {
    const notes = [
      loreNote(h, "session", "Session Four", {
        recap: "The crew reached the reef",
        hooks: "HOOK the bell rings twice",
        gmNotes: "GMNOTE Brannoch is listening",
        players: "Ana, Ben, Caro", // real people, not lore: not shown unless declared
      }),
      loreNote(h, "quest", "Raise the Bell", {
        reward: "Forty crowns",
        hooks: "HOOK a drowned voice",
        consequences: "CONSEQ the reef floods", // a quest's: a spoiler until played
      }),
      loreNote(h, "event", "The Salt Riot", {
        inWorldDate: "1191-04-02",
        consequences: "The guild lost its charter", // an event's: history
        secrets: "SECRET the guild paid the rioters",
      }),
      loreNote(h, "myth", "The Ninth Bell", {
        origin: "Sailors' songs",
        truthStatus: "TRUTH it is Brannoch's heart",
      }),
      loreNote(h, "scene", "Ambush at the Pier", {
        participants: "Mira, the wreckers",
        outcome: "OUTCOME Mira is captured", // a planned scene's: a spoiler
        gmNotes: "GMNOTE use the fog",
      }),
      loreNote(h, "location", "The Salt Stair", {
        region: "Lower harbour",
        secrets: "SECRET a smugglers' tunnel",
      }),
    ];
    const shown = await Promise.all(notes.map((id) => answers(h, id)));
    assert.deepEqual(shown.map((s) => s.body.attributes), [
      [{ name: "Recap", value: "The crew reached the reef" }],
      [{ name: "Reward", value: "Forty crowns" }],
      [
        { name: "In-World Date", value: "1191-04-02" },
        { name: "Consequences", value: "The guild lost its charter" },
      ],
      [{ name: "Origin", value: "Sailors' songs" }],
      [{ name: "Participants", value: "Mira, the wreckers" }],
      [{ name: "Region", value: "Lower harbour" }],
    ]);
    const everything = shown.map((s) => s.text + s.html).join("\n");
    for (const gm of ["HOOK", "GMNOTE", "CONSEQ", "SECRET", "TRUTH", "OUTCOME", "Ana, Ben"]) {
      assert.ok(!everything.includes(gm), `${gm} is public`);
    }
    // the dated event is still on the timeline
    const timeline = await (await h.request("/public/timeline")).text();
    assert.ok(timeline.includes("The Salt Riot"));
  }));

Deno.test("fields: #sharePrivateFields on the share root or the note hides more fields and relations", () =>
  withHarness(async (h) => {
    label(h, W.guide, "sharePrivateFields", "goals, Map Coords, relInhabits, themeSong");
    label(h, W.charMira, "race", "Human");
    label(h, W.charMira, "goals", "Find her brother");
    const fort = loreNote(h, "location", "Fort Brine", { region: "North cliffs", ruler: "Nobody" });
    label(h, fort, "sharePrivateFields", "RULER"); // the note's own list, any letter case
    const mira = await answers(h, W.charMira);
    assert.deepEqual(mira.body.attributes, [{ name: "Race", value: "Human" }]);
    assert.deepEqual(
      mira.body.resolvedRelations.map((r: { name: string }) => r.name),
      ["portraitImage"], // relInhabits listed private
    );
    assert.equal(mira.body.themeSongUrl, null);
    assert.ok(!mira.html.includes("Find her brother") && !mira.html.includes("tides-of-brass"));
    // listed by its alias ("Map Coords"): the harbor's coordinates are private
    const harbor = await answers(h, W.locHarbor);
    assert.deepEqual(harbor.body.attributes, []);
    assert.ok(!harbor.html.includes("12.5, 30.25"));
    const fortShown = await answers(h, fort);
    assert.deepEqual(fortShown.body.attributes, [{ name: "Region", value: "North cliffs" }]);
    // the marker labels themselves are never shown
    for (const s of [mira, harbor, fortShown]) {
      assert.ok(!/sharePrivateFields|Nobody/.test(s.text + s.html));
    }
  }));

Deno.test("fields: a promoted label of the GM's own shows only when #sharePublicFields names it", () =>
  withHarness(async (h) => {
    const custom = (noteId: string) => {
      label(h, noteId, "label:mood", "promoted,alias=Mood,single,text");
      label(h, noteId, "mood", "Restless");
      label(h, noteId, "label:plot", "promoted,alias=Plot,single,text");
      label(h, noteId, "plot", "PLOT she will betray the guild");
    };
    custom(W.charMira);
    custom(W.faction);
    label(h, W.guide, "sharePublicFields", "mood, secrets"); // a GM field cannot be published
    const mira = await answers(h, W.charMira);
    assert.deepEqual(mira.body.attributes, [{ name: "Mood", value: "Restless" }]);
    assert.match(mira.infobox, /<dt>Mood<\/dt>\s*<dd>Restless<\/dd>/);
    for (const s of [mira, await answers(h, W.faction)]) {
      assert.ok(!s.text.includes("PLOT") && !s.html.includes("PLOT"), "an undeclared label shows");
      assert.ok(!s.text.includes(MIRA_SECRET) && !s.html.includes(MIRA_SECRET));
    }
  }));

Deno.test("fields: every promoted label of Core's lore templates is judged, as the docs say", () => {
  const store = createCoreStore();
  seedSystemNotes(store); // the templates as Core defines them
  // what the policy hides of a note filling every field of every lore template
  const hidden = LORE_TYPES.flatMap((type) => {
    const definitions = store.ownAttributes(templateId(type)).filter((a) =>
      a.type === "label" && a.name.startsWith("label:") && a.value.includes("promoted")
    );
    const names = definitions.map((d) => d.name.slice("label:".length));
    const filled = {
      noteId: "n1",
      attributes: [
        ...definitions,
        ...names.map((name) => ({ ...definitions[0], noteId: "n1", name, value: "x" })),
      ],
    } as unknown as CoreNote;
    const shown = new Set(publicFields(filled, undefined).map((f) => f.name));
    return names.filter((n) => !shown.has(n)).map((n) => `${type}.${n}`);
  });
  assert.deepEqual(hidden.sort(), [
    "building.secrets",
    "character.secrets",
    "event.secrets",
    "faction.secrets",
    "location.secrets",
    "myth.truthStatus",
    "quest.consequences",
    "quest.hooks",
    "scene.gmNotes",
    "scene.outcome",
    "session.gmNotes",
    "session.hooks",
    "session.players", // real people, not lore: only when #sharePublicFields names it
  ]);
});
