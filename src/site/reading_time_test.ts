import assert from "node:assert/strict";
import { REDACTION_HTML } from "../sanitize/redaction.ts";
import { readingTime, wordCount } from "./reading_time.ts";

Deno.test("wordCount: the words a visitor reads, not markup, attributes or the redaction mark", () => {
  assert.equal(wordCount("<p>one</p><p>two</p>"), 2); // a tag is a word break
  assert.equal(wordCount('<p><img src="/x.png" alt="a long > alt text"> Tide</p>'), 1);
  assert.equal(wordCount(`<p>She trusts ${REDACTION_HTML} more.</p>`), 3);
  assert.equal(wordCount("<p>O’Neil&#39;s 1187 saltmarrow-harbor &amp; co</p>"), 5);
  assert.equal(wordCount("<p>Salt\u00a0road</p>"), 2);
});

Deno.test("readingTime: ~220 words a minute, rounded, from 150 words on", () => {
  const words = (n: number) => `<p>${"tide ".repeat(n)}</p>`;
  assert.equal(readingTime(""), null);
  assert.equal(readingTime(words(149)), null);
  assert.equal(readingTime(words(150)), "1 min read");
  assert.equal(readingTime(words(329)), "1 min read");
  assert.equal(readingTime(words(330)), "2 min read");
  assert.equal(readingTime(words(2200)), "10 min read");
});
