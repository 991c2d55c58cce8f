/**
 * Relations read from both ends: a note's page shows what it relates to and, under the same
 * "Related", which visible notes relate to it — never a hidden one, and never a relation the GM
 * keeps private.
 */
import assert from "node:assert/strict";
import { withHarness } from "../helpers/harness.ts";
import { W } from "../../sims/world.ts";

/** The "Related" section of a page, as its text. */
function related(page: string): string {
  const section = /<section aria-labelledby="relations-title">[\s\S]*?<\/section>/.exec(page)?.[0];
  return (section ?? "").replace(/<[^>]+>/g, "").replace(/\s+/g, " ").trim();
}

Deno.test("site: a note's page shows the relations other visible notes hold to it", () =>
  withHarness(async (h) => {
    const page = async (id: string) => await (await h.request(`/public/lore/${id}`)).text();
    // Mira inhabits the harbor: the harbor's page says so from its end, linking her
    const harbor = await page(W.locHarbor);
    assert.equal(related(harbor), "Related Inhabits, from: Mira Tallowend");
    assert.match(
      harbor,
      new RegExp(`, from: <a href="/public/lore/${W.charMira}">Mira Tallowend</a>`),
    );
    // Brannoch (hidden) holds Mira as his enemy: nothing of it shows on her page
    const mira = await page(W.charMira);
    assert.doesNotMatch(related(mira), /Enemy|Brannoch/);
  }));

Deno.test("site: a relation the GM keeps private shows from neither end", () =>
  withHarness(async (h) => {
    h.core.store.createAttribute({
      noteId: W.guide,
      type: "label",
      name: "sharePrivateFields",
      value: "relInhabits",
      isInheritable: false,
    });
    const harbor = await (await h.request(`/public/lore/${W.locHarbor}`)).text();
    assert.equal(related(harbor), "");
    const mira = await (await h.request(`/public/lore/${W.charMira}`)).text();
    assert.doesNotMatch(related(mira), /Inhabits/);
  }));
