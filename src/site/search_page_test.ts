import assert from "node:assert/strict";
import { excerpt } from "./search_page.ts";

Deno.test("excerpt: the whole word a hit falls in is marked", () => {
  assert.deepEqual(excerpt("The lanterns of the guild.", "anter"), {
    before: "The ",
    match: "lanterns",
    after: " of the guild.",
  });
});

Deno.test("excerpt: a long text is cut between words on both sides, never inside one", () => {
  const words = Array.from({ length: 80 }, (_, i) => `word${i}`);
  const text = `${words.slice(0, 40).join(" ")} harbor ${words.slice(40).join(" ")}`;
  const e = excerpt(text, "harbor")!;
  assert.equal(e.match, "harbor");
  assert.match(e.before, /^…word\d+ /); // starts on a whole word
  assert.match(e.after, / word\d+…$/); // ends on a whole word
  for (const part of [e.before, e.after]) {
    for (const w of part.replace(/…/g, "").trim().split(" ")) assert.match(w, /^word\d+$/);
  }
});
