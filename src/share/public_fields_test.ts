import assert from "node:assert/strict";
import { coreNote } from "../../tests/helpers/core_notes.ts";
import type { CoreAttribute, CoreNote } from "../upstream/core.ts";
import { isPrivateField, playerFields, publicFields } from "./public_fields.ts";

const attr = (noteId: string, name: string, value = "", type: "label" | "relation" = "label") =>
  ({
    attributeId: `${noteId}_${name}`,
    noteId,
    type,
    name,
    value,
    isInheritable: false,
  }) satisfies CoreAttribute;

/** A promoted definition as a template (or any note) holds it. */
const promoted = (owner: string, name: string, alias: string) =>
  attr(owner, `label:${name}`, `promoted,alias=${alias},single,text`);

const note = (noteId: string, attributes: CoreAttribute[]) => coreNote(noteId, { attributes });

/** A note of Core's `type` template with these own labels (and their definitions). */
function templated(type: string, values: Record<string, string>, extra: CoreAttribute[] = []) {
  const template = `_template_${type}`;
  return note("n1", [
    ...Object.keys(values).map((name) => promoted(template, name, name.toUpperCase())),
    ...Object.entries(values).map(([name, value]) => attr("n1", name, value)),
    ...extra,
  ]);
}

const names = (n: CoreNote, root?: CoreNote) => publicFields(n, root).map((f) => f.name);
const root = (...labels: [string, string][]) =>
  note("root1", labels.map(([name, value]) => attr("root1", name, value)));

Deno.test("publicFields: GM-facing labels of Core's templates never show, player-facing ones do", () => {
  assert.deepEqual(names(templated("character", { race: "Elf", secrets: "A spy" })), ["race"]);
  assert.deepEqual(
    names(templated("session", { recap: "r", hooks: "h", gmNotes: "g", players: "Ana" })),
    ["recap"],
  );
  assert.deepEqual(names(templated("quest", { reward: "r", consequences: "c" })), ["reward"]);
  assert.deepEqual(names(templated("event", { outcome: "o", consequences: "c" })), [
    "outcome",
    "consequences",
  ]);
  assert.deepEqual(names(templated("scene", { participants: "p", outcome: "o" })), [
    "participants",
  ]);
  assert.deepEqual(names(templated("myth", { origin: "o", truthStatus: "t" })), ["origin"]);
});

Deno.test("publicFields: values, aliases and order as the template promotes them", () => {
  const mira = templated("character", { race: "Elf", goals: "Find her brother" });
  assert.deepEqual(publicFields(mira, undefined), [
    { name: "race", alias: "RACE", value: "Elf" },
    { name: "goals", alias: "GOALS", value: "Find her brother" },
  ]);
  // empty values, inherited values and labels no template promotes are not fields
  const sparse = note("n1", [
    promoted("_template_character", "race", "Race"),
    promoted("_template_character", "age", "Age"),
    attr("n1", "race", "  "),
    attr("world", "age", "40"),
    attr("n1", "secretMotive", "revenge"),
  ]);
  assert.deepEqual(publicFields(sparse, undefined), []);
});

Deno.test("publicFields: fail closed for labels no known template calls player-facing", () => {
  const own = note("n1", [promoted("n1", "mood", "Mood"), attr("n1", "mood", "Restless")]);
  assert.deepEqual(names(own), []);
  const custom = note("n1", [promoted("myTemplate", "race", "Race"), attr("n1", "race", "Elf")]);
  assert.deepEqual(names(custom), [], "a known name from an unknown template");
  // promoted by two templates: public only if both call it player-facing
  const both = note("n1", [
    promoted("_template_event", "consequences", "Consequences"),
    promoted("_template_quest", "consequences", "Consequences"),
    attr("n1", "consequences", "The reef floods"),
  ]);
  assert.deepEqual(names(both), []);
  // share controls and GM fields from any template
  const controls = note("n1", [
    promoted("myTemplate", "shareAlias", "Alias"),
    promoted("myTemplate", "secrets", "Secrets"),
    promoted("myTemplate", "Secrets", "More secrets"),
    attr("n1", "shareAlias", "mira"),
    attr("n1", "secrets", "x"),
    attr("n1", "Secrets", "y"),
  ]);
  assert.deepEqual(
    names(controls, root(["sharePublicFields", "shareAlias, secrets, Secrets"])),
    [],
  );
});

Deno.test("publicFields: #sharePublicFields publishes the GM's own labels, not GM-facing ones", () => {
  const own = note("n1", [
    promoted("n1", "mood", "Mood"),
    promoted("n1", "plot", "Plot"),
    attr("n1", "mood", "Restless"),
    attr("n1", "plot", "She betrays the guild"),
  ]);
  assert.deepEqual(names(own, root(["sharePublicFields", " MOOD "])), ["mood"]);
  assert.deepEqual(names(own, root(["sharePublicFields", "Plot"])), ["plot"], "by alias");
  const onNote = note("n1", [...own.attributes, attr("n1", "sharePublicFields", "mood")]);
  assert.deepEqual(names(onNote), ["mood"], "on the note itself");
  const session = templated("session", { players: "Ana", hooks: "h" });
  assert.deepEqual(names(session, root(["sharePublicFields", "players,hooks"])), ["players"]);
});

Deno.test("publicFields: #sharePrivateFields on the root or the note hides more, by name or alias", () => {
  const mira = templated("character", { race: "Elf", goals: "g", status: "alive" });
  assert.deepEqual(names(mira, root(["sharePrivateFields", "goals"])), ["race", "status"]);
  assert.deepEqual(names(mira, root(["sharePrivateFields", "Goals , STATUS"])), ["race"]);
  // by the alias the template shows, in any letter case
  const aliased = note("n1", [
    promoted("_template_character", "race", "Heritage"),
    attr("n1", "race", "Elf"),
  ]);
  assert.deepEqual(names(aliased), ["race"]);
  assert.deepEqual(names(aliased, root(["sharePrivateFields", "heritage"])), []);
  const onNote = templated("character", { race: "Elf", goals: "g" }, [
    attr("n1", "sharePrivateFields", "race"),
  ]);
  assert.deepEqual(names(onNote), ["goals"]);
  // private wins over public
  const own = note("n1", [promoted("n1", "mood", "Mood"), attr("n1", "mood", "Restless")]);
  const both = root(["sharePublicFields", "mood"], ["sharePrivateFields", "mood"]);
  assert.deepEqual(names(own, both), []);
});

Deno.test("isPrivateField: GM-facing, share-control and listed names", () => {
  const n = note("n1", [attr("n1", "sharePrivateFields", "relAlly")]);
  const r = root(["sharePrivateFields", "ThemeSong, portraitImage"]);
  assert.equal(isPrivateField(n, r, "relAlly"), true, "the note's own list");
  assert.equal(isPrivateField(n, r, "themeSong"), true, "the root's, any letter case");
  assert.equal(isPrivateField(n, r, "portraitImage"), true);
  assert.equal(isPrivateField(n, r, "relEnemy"), false);
  assert.equal(isPrivateField(n, undefined, "gmNotes"), true);
  assert.equal(isPrivateField(n, undefined, "shareCss"), true);
  assert.equal(isPrivateField(n, undefined, "mapImage"), false);
});

Deno.test("playerFields: Core's lore and built-in templates; nothing for others", () => {
  assert.ok(playerFields("_template_event").has("inWorldDate"));
  assert.ok(playerFields("_template_location").has("geolocation"));
  assert.ok(playerFields("_template_geo_map").has("geolocation"));
  assert.ok(playerFields("_template_calendar").has("startDate"));
  assert.ok(!playerFields("_template_session").has("players"));
  assert.equal(playerFields("_template_text_snippet").size, 0);
});
