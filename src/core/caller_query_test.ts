import assert from "node:assert/strict";
import { callerQueryProblem } from "./caller_query.ts";

Deno.test("callerQueryProblem: %= operands are compiled as Core reads them", () => {
  assert.equal(
    callerQueryProblem("note.content %= '['"),
    'the regular expression after %= is invalid: "[" (Unterminated character class)',
  );
  // glued to the operator, in double quotes, after a label
  assert.match(callerQueryProblem('#race%="(a"') ?? "", /"\(a" \(Unterminated group\)/);
  // Core lowercases the whole query first: [Z-a] becomes the reversed range [z-a]
  assert.match(callerQueryProblem("#x %= '[Z-a]'") ?? "", /Range out of order/);
  // a backslash escapes the next character, so `\\[` reaches RegExp as `\[` (valid)
  assert.equal(callerQueryProblem("#x %= '\\\\['"), null);
  assert.equal(callerQueryProblem("#x %= '\\['"), callerQueryProblem("#x %= '['"));
  for (
    const fine of [
      "#lore",
      "#loreType %= '^(event|timeline)$'",
      "note.title %= 'ash.*'",
      "%= [ full text",
      "#lore (#loreType = event or #loreType = quest)",
      "#loreType = ')'",
      "'%=' '['",
      'dragon "reef" #lore',
    ]
  ) {
    assert.equal(callerQueryProblem(fine), null, fine);
  }
});

Deno.test("callerQueryProblem: parentheses Core would misread (it widens to every note)", () => {
  for (const q of ["#a %= (", "#loreType = (", "#lore (#loreType = event"]) {
    assert.equal(
      callerQueryProblem(q),
      "a parenthesis is not closed: Core would ignore the whole condition",
      q,
    );
  }
  for (const q of ["#lore %= '('", "note.title = '('", "#lore (#loreType %= ')')"]) {
    assert.match(callerQueryProblem(q) ?? "", /is read by Core as a parenthesis/, q);
  }
  // an escaped parenthesis is still one to Core
  assert.match(callerQueryProblem("#lore %= \\(") ?? "", /not closed/);
});

Deno.test("callerQueryProblem: an empty quoted full-text term", () => {
  for (const q of ['""', "' '", 'dragon "" #lore', '="" ']) {
    assert.equal(callerQueryProblem(q), "an empty quoted search term is not allowed", q);
  }
  assert.equal(callerQueryProblem('#lore note.title = ""'), null, "expression values may be empty");
});
