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
      renderedAnswer(text, []).bytes,
      new TextEncoder().encode(text).length,
      text,
    );
  }
});

Deno.test("answerFor: the kept body goes out byte for byte, and a match is a bodiless 304", async () => {
  const a = renderedAnswer("<p>Hafen 🐉</p>", [["content-type", "text/html"]]);
  const full = answerFor(new Request("http://x/"), a);
  assert.equal(await full.text(), "<p>Hafen 🐉</p>");
  assert.equal(full.headers.get("etag"), a.etag);
  const again = answerFor(new Request("http://x/", { headers: { "if-none-match": a.etag } }), a);
  assert.equal(again.status, 304);
  assert.equal(again.headers.get("content-type"), null);
  assert.equal(await again.text(), "");
});

Deno.test("renderedAnswer: the ETag follows the bytes and content headers, not who may cache", () => {
  const page = (body: string, extra: [string, string][] = []) =>
    renderedAnswer(body, [["content-type", "text/html"], ...extra]);
  const a = page("<p>Harbor</p>", [["cache-control", "no-cache"]]);
  // the same bytes, however often rendered or for whom: the same ETag
  assert.equal(page("<p>Harbor</p>", [["cache-control", "no-cache"]]).etag, a.etag);
  assert.equal(
    page("<p>Harbor</p>", [["cache-control", "private, no-cache"], ["vary", "Authorization"]])
      .etag,
    a.etag,
  );
  assert.equal(
    renderedAnswer("<p>Harbor</p>", [["cache-control", "no-cache"], ["Content-Type", "text/html"]])
      .etag,
    a.etag,
    "header order and case do not matter",
  );
  // another byte, another content header: another ETag
  assert.notEqual(page("<p>Harbor.</p>").etag, a.etag);
  assert.notEqual(page("<p>Harbor</p>", [["x-robots-tag", "noindex"]]).etag, a.etag);
  assert.notEqual(
    renderedAnswer("<p>Harbor</p>", [["content-type", "text/plain"]]).etag,
    a.etag,
  );
  // a header's text never collides with the body's
  assert.notEqual(
    renderedAnswer("x: y\n\nb", []).etag,
    renderedAnswer("b", [["x", "y"]]).etag,
  );
});
