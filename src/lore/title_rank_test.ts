import assert from "node:assert/strict";
import { foldTitle, rankByTitle, TitleMatch, titleMatch } from "./title_rank.ts";

Deno.test("titleMatch: exact, prefix, word start, substring, none", () => {
  assert.equal(titleMatch("Ash", "ash"), TitleMatch.exact);
  assert.equal(titleMatch("Ashford", "ASH"), TitleMatch.prefix);
  assert.equal(titleMatch("Mara's Ashes", "ash"), TitleMatch.wordStart);
  assert.equal(titleMatch("Crash Site", "ash"), TitleMatch.substring);
  assert.equal(titleMatch("Dashwood and the Ashen Gate", "ash"), TitleMatch.wordStart);
  assert.equal(titleMatch("Keep", "ash"), TitleMatch.none);
  assert.equal(titleMatch("Keep", "  "), TitleMatch.none);
});

Deno.test("titleMatch ignores case and diacritics like Core", () => {
  assert.equal(foldTitle("Éowyn ÅSA"), "eowyn asa");
  assert.equal(titleMatch("Éowyn", "eow"), TitleMatch.prefix);
  assert.equal(titleMatch("Über Straße", "uber straße"), TitleMatch.exact);
});

Deno.test("rankByTitle: match kind, then shorter, then alphabetical, then input order; no match, out", () => {
  const items = [
    { id: 1, title: "Crash Site" },
    { id: 2, title: "The Ashen Gate" },
    { id: 3, title: "Ashford" },
    { id: 4, title: "Ash" },
    { id: 5, title: "Ashby" },
    { id: 6, title: "Ashbx" },
    { id: 7, title: "Ashby" },
    { id: 8, title: "Unrelated" },
  ];
  assert.deepEqual(rankByTitle(items, "ash").map((i) => i.id), [4, 6, 5, 7, 3, 2, 1]);
  assert.deepEqual(rankByTitle(items, "ash", 3).map((i) => i.id), [4, 6, 5]);
  assert.deepEqual(rankByTitle([], "ash"), []);
});

Deno.test("rankByTitle ranks typed titles: what Core's stored form alone matched is left out", () => {
  const items = [{ title: "Salt & Smoke" }, { title: "Lamp & Lantern" }, { title: "Ampersand" }];
  assert.deepEqual(rankByTitle(items, "amp").map((i) => i.title), ["Ampersand", "Lamp & Lantern"]);
  assert.deepEqual(rankByTitle(items, "t & s").map((i) => i.title), ["Salt & Smoke"]);
});
