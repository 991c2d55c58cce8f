import assert from "node:assert/strict";
import { labelEquals, quoteSearchValue, titleContains } from "./search_query.ts";

Deno.test("quoteSearchValue: quotes and backslashes cannot end the literal", () => {
  assert.equal(quoteSearchValue('a"b'), '"a\\"b"');
  assert.equal(quoteSearchValue("a\\"), '"a\\\\"');
  assert.equal(quoteSearchValue('x" or #draft or "'), '"x\\" or #draft or \\""');
  assert.equal(quoteSearchValue("line\nbreak\u0000"), '"line break "');
});

Deno.test("labelEquals/titleContains build one expression around one literal", () => {
  assert.equal(labelEquals("loreType", "half-elf"), '#loreType="half-elf"');
  assert.equal(titleContains(") or (#gmOnly"), 'note.title *=* ") or (#gmOnly"');
  assert.throws(() => labelEquals("a b", "x"), TypeError);
});
