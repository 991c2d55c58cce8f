import assert from "node:assert/strict";
import { labelEquals, quoteSearchValue, titleSearch } from "./search_query.ts";

Deno.test("quoteSearchValue: quotes and backslashes cannot end the literal", () => {
  assert.equal(quoteSearchValue('a"b'), '"a\\"b"');
  assert.equal(quoteSearchValue("a\\"), '"a\\\\"');
  assert.equal(quoteSearchValue('x" or #draft or "'), '"x\\" or #draft or \\""');
  assert.equal(quoteSearchValue("line\nbreak\u0000"), '"line break "');
});

Deno.test("labelEquals/titleSearch build one expression around one literal", () => {
  assert.equal(labelEquals("loreType", "half-elf"), '#loreType="half-elf"');
  assert.equal(titleSearch(") or (#gmOnly"), 'note.title *=* ") or (#gmOnly"');
  assert.throws(() => labelEquals("a b", "x"), TypeError);
});

Deno.test("titleSearch: text with & < > is looked for as stored and as typed", () => {
  assert.equal(
    titleSearch('a < b & "c"', ['#loreType="npc"']),
    '#loreType="npc" (note.title *=* "a &lt; b &amp; \\"c\\"" or note.title *=* "a < b & \\"c\\"")',
  );
  assert.equal(titleSearch("x > y"), 'note.title *=* "x &gt; y" or note.title *=* "x > y"');
  assert.equal(titleSearch("it's", ["#lore"]), `#lore note.title *=* "it's"`, "quotes stay typed");
});
