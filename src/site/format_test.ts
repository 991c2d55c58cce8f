import assert from "node:assert/strict";
import {
  displayTitle,
  externalHref,
  formatDate,
  humanizeName,
  imageHref,
  loreHref,
  loreTypeLabel,
} from "./format.ts";

Deno.test("humanizeName: camelCase, snake and kebab names become words; rel prefix dropped", () => {
  assert.equal(humanizeName("inWorldDate"), "In world date");
  assert.equal(humanizeName("questStatus"), "Quest status");
  assert.equal(humanizeName("relAlly"), "Ally");
  assert.equal(humanizeName("relic"), "Relic");
  assert.equal(humanizeName("home_port-name"), "Home port name");
  assert.equal(humanizeName("__"), "__");
});

Deno.test("loreTypeLabel: capitalised type, Other when missing", () => {
  assert.equal(loreTypeLabel("character"), "Character");
  assert.equal(loreTypeLabel(null), "Other");
  assert.equal(loreTypeLabel("  "), "Other");
});

Deno.test("formatDate: ISO timestamps become a UTC date; garbage is null", () => {
  assert.deepEqual(formatDate("2026-03-01T23:59:00Z"), {
    iso: "2026-03-01T23:59:00.000Z",
    text: "1 March 2026",
  });
  assert.equal(formatDate("yesterday"), null);
  assert.equal(formatDate(null), null);
});

Deno.test("externalHref: only absolute http(s) URLs", () => {
  assert.equal(externalHref(" https://music.example.org/a b"), "https://music.example.org/a%20b");
  assert.equal(externalHref("http://x.example/"), "http://x.example/");
  for (const bad of ["javascript:alert(1)", "JaVaScRiPt:alert(1)", "data:text/html,x", "/x", "x"]) {
    assert.equal(externalHref(bad), null, bad);
  }
  assert.equal(externalHref(null), null);
});

Deno.test("loreHref / imageHref: path segments are encoded", () => {
  assert.equal(loreHref("harbor-town"), "/public/lore/harbor-town");
  assert.equal(loreHref("a/../b?c"), "/public/lore/a%2F..%2Fb%3Fc");
  // the content's own URL for the image: its title made URL-safe
  assert.equal(imageHref("wImg1", "a b.png"), "/api/public/images/wImg1/a-b.png");
  assert.equal(imageHref("a/b", "é"), "/api/public/images/a%2Fb/image");
});

Deno.test("displayTitle: trimmed; blank titles read Untitled", () => {
  assert.equal(displayTitle(" Mira "), "Mira");
  assert.equal(displayTitle(" \n"), "Untitled");
});
