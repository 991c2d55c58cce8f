/**
 * The relationship diagram of a character's or faction's public page, on the showcase world:
 * the note in the middle, its visible related notes around it as links, each line labelled with
 * the relation and arrowed for its direction; a note that becomes hidden leaves it, node and
 * line, and a relation the GM keeps private is never drawn.
 */
import assert from "node:assert/strict";
import { type Harness, withHarness } from "../helpers/harness.ts";
import { seedShowcase } from "../../sims/showcase.ts";
import { W } from "../../sims/world.ts";

/** A public page's body. */
async function page(h: Harness, id: string): Promise<string> {
  const res = await h.request(`/public/lore/${id}`);
  assert.equal(res.status, 200, id);
  return await res.text();
}

/** What a player sees of the diagram: its name, its nodes (link, label, title) and its lines. */
function diagram(body: string) {
  // the diagram comes right before the Related list, its text alternative
  const svg = /<svg class="diagram"[\s\S]*?(?=<ul class="links" id="related-list">)/.exec(body)
    ?.[0];
  if (!svg) return null;
  const nodes = [...svg.matchAll(/<a href="([^"]*)"><title>([^<]*)<\/title>/g)]
    .map(([, href, title]) => `${href} ${title}`);
  const lines = [...svg.matchAll(/<line [^>]*>/g)].map(([line]) =>
    (/marker-start/.test(line) ? "←" : "") + (/marker-end/.test(line) ? "→" : "")
  );
  const name = /aria-labelledby="([^"]+)"/.exec(svg)?.[1];
  const label = new RegExp(`<title id="${name}">([^<]*)</title>`).exec(svg)?.[1];
  return { svg, role: /role="([^"]+)"/.exec(svg)?.[1], label, nodes, lines };
}

Deno.test("site: a character's page draws its visible relations both ways as a diagram", () =>
  withHarness(async (h) => {
    seedShowcase(h.core.store);
    const mira = diagram(await page(h, W.charMira));
    assert.ok(mira, "Mira's page has a diagram");
    assert.equal(mira.role, "group");
    assert.equal(
      mira.label,
      "Relationship diagram of Mira Tallowend: 2 related notes, all listed below",
    );
    // she inhabits the harbor (her relation), Iselde holds her as an ally (Iselde's)
    assert.deepEqual(mira.nodes, [
      `/public/lore/${W.locHarbor} Saltmarrow Harbor (Inhabits)`,
      `/public/lore/${W.charIselde} Iselde Crane (Ally)`,
    ]);
    assert.deepEqual(mira.lines, ["→", "←"]);
    assert.match(mira.svg, /<text class="kind" [^>]*>Inhabits<\/text>/);
    assert.match(mira.svg, /<g class="centre">[\s\S]*?>Mira<\/text>\s*<text [^>]*>Tallowend</);
    // Brannoch (outside the share) holds her as an enemy; Oskar (outside too) is her ally
    assert.doesNotMatch(mira.svg, /Brannoch|Oskar|Enemy|wCharBrann01|wCharOskar01/);

    const iselde = diagram(await page(h, W.charIselde));
    assert.deepEqual(iselde?.nodes, [
      `/public/lore/${W.charMira} Mira Tallowend (Ally)`,
      `/public/lore/${W.locLighthouse} Greyfin Lighthouse (Inhabits)`,
    ]);
    assert.deepEqual(iselde?.lines, ["→", "→"]);
    // a place lists who relates to it, but draws no diagram
    const harbor = await page(h, W.locHarbor);
    assert.match(harbor, /Inhabits, from:/);
    assert.equal(diagram(harbor), null);
  }));

Deno.test("site: a note that becomes hidden leaves the diagram, its node and its line", () =>
  withHarness(async (h) => {
    seedShowcase(h.core.store);
    assert.equal(diagram(await page(h, W.charMira))?.nodes.length, 2);
    h.core.store.createAttribute({
      noteId: W.charIselde,
      type: "label",
      name: "draft",
      value: "",
      isInheritable: false,
    });
    const body = await page(h, W.charMira);
    const mira = diagram(body);
    assert.deepEqual(mira?.nodes, [`/public/lore/${W.locHarbor} Saltmarrow Harbor (Inhabits)`]);
    assert.deepEqual(mira?.lines, ["→"]);
    assert.match(mira!.label!, /: 1 related note,/);
    assert.ok(!body.includes("Iselde") && !body.includes(W.charIselde), "nothing of Iselde");
  }, { env: { PUBLIC_CACHE_MS: "0" } }));

Deno.test("site: a faction's page draws who relates to it; a relation kept private is not drawn", () =>
  withHarness(async (h) => {
    seedShowcase(h.core.store);
    assert.equal(diagram(await page(h, W.faction)), null, "no relation yet");
    h.core.store.createAttribute({
      noteId: W.charMira,
      type: "relation",
      name: "relMemberOf",
      value: W.faction,
    });
    const guild = diagram(await page(h, W.faction));
    assert.deepEqual(guild?.nodes, [`/public/lore/${W.charMira} Mira Tallowend (Member of)`]);
    assert.deepEqual(guild?.lines, ["←"]);
    assert.match(
      diagram(await page(h, W.charMira))!.nodes.join("\n"),
      /The Lantern Guild \(Member of\)/,
    );
    h.core.store.createAttribute({
      noteId: W.guide,
      type: "label",
      name: "sharePrivateFields",
      value: "relMemberOf",
      isInheritable: false,
    });
    assert.equal(diagram(await page(h, W.faction)), null);
    assert.doesNotMatch(diagram(await page(h, W.charMira))!.svg, /Member of|Lantern/);
  }, { env: { PUBLIC_CACHE_MS: "0" } }));
