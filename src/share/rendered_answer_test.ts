import assert from "node:assert/strict";
import { answerFor, renderedAnswer } from "./rendered_answer.ts";

Deno.test("renderedAnswer: counts the body's UTF-8 bytes as the encoder does", () => {
  const samples = ["", "plain", "Ærøskøbing", "海港", "🐉 dragon", "a\ud800b", "\udc00", "x\ud83d"];
  const alphabet = ["a", "é", "—", "海", "🐉", "\ud800", "\udfff"];
  for (let i = 0; i < 300; i++) {
    let s = "";
    for (let j = 0; j < 12; j++) s += alphabet[(i * 7 + j * 13 + (i >> 2) * j) % alphabet.length];
    samples.push(s);
  }
  for (const text of samples) {
    assert.equal(
      renderedAnswer(text, 'W/"v"', []).bytes,
      new TextEncoder().encode(text).length,
      text,
    );
  }
});

Deno.test("answerFor: the kept body goes out byte for byte, and a match is a bodiless 304", async () => {
  const a = renderedAnswer("<p>Hafen 🐉</p>", 'W/"v2"', [["content-type", "text/html"]]);
  const full = answerFor(new Request("http://x/"), a);
  assert.equal(await full.text(), "<p>Hafen 🐉</p>");
  assert.equal(full.headers.get("etag"), 'W/"v2"');
  const again = answerFor(new Request("http://x/", { headers: { "if-none-match": 'W/"v2"' } }), a);
  assert.equal(again.status, 304);
  assert.equal(again.headers.get("content-type"), null);
  assert.equal(await again.text(), "");
});
