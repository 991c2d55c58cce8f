import assert from "node:assert/strict";
import { compileAutolink } from "./autolink.ts";

const t = (noteId: string, title: string) => ({ noteId, title });

Deno.test("autolink: case-insensitive whole words, term exactly as written", () => {
  const m = compileAutolink([t("a", "Ashford"), t("k", "Keep")]);
  assert.deepEqual(m.match("Over in ASHFORD, the keep. Ashfordshire keeper ashford"), [
    { term: "ASHFORD", noteId: "a", title: "Ashford" },
    { term: "keep", noteId: "k", title: "Keep" },
  ]);
  assert.deepEqual(m.match("Ashfordian xkeep keepx 1keep"), []);
});

Deno.test("autolink: the longest overlapping match wins, then the earliest", () => {
  const m = compileAutolink([
    t("r", "Red Dragon"),
    t("d", "Dragon Keep"),
    t("rk", "Red Dragon Keep"),
    t("red", "Red"),
  ]);
  assert.deepEqual(m.match("the Red Dragon Keep fell"), [
    { term: "Red Dragon Keep", noteId: "rk", title: "Red Dragon Keep" },
  ]);
  const n = compileAutolink([t("r", "Red Dragon"), t("d", "Dragon Keep"), t("red", "Red")]);
  // "Dragon Keep" (11) beats "Red Dragon" (10); the shorter "Red" still fits before it
  assert.deepEqual(n.match("Red Dragon Keep"), [
    { term: "Red", noteId: "red", title: "Red" },
    { term: "Dragon Keep", noteId: "d", title: "Dragon Keep" },
  ]);
  const same = compileAutolink([t("x", "Ash Vale"), t("y", "Vale Ash")]);
  assert.deepEqual(same.match("Ash Vale Ash"), [
    { term: "Ash Vale", noteId: "x", title: "Ash Vale" },
  ]);
});

Deno.test("autolink: each note once (first occurrence), in order of appearance", () => {
  const m = compileAutolink([t("a", "Ashford"), t("b", "Brinehold")]);
  assert.deepEqual(m.match("Brinehold, Ashford, Brinehold, ashford").map((x) => x.term), [
    "Brinehold",
    "Ashford",
  ]);
});

Deno.test("autolink: short titles ignored, whitespace runs match a title's space", () => {
  const m = compileAutolink([t("s", "Ox"), t("o", "  Old   Mill ")]);
  assert.deepEqual(m.match("Ox and the Old\n\t Mill"), [
    { term: "Old\n\t Mill", noteId: "o", title: "  Old   Mill " },
  ]);
  assert.equal(m.size, 1);
});

Deno.test("autolink: Unicode letters are word characters, offsets stay exact", () => {
  const m = compileAutolink([t("e", "Éowyn"), t("k", "Köln"), t("d", "Drachenfels 🐉")]);
  assert.deepEqual(m.match("🐉 ÉOWYN met éowyn in kÖLN; Kölner stayed. drachenfels 🐉!"), [
    { term: "ÉOWYN", noteId: "e", title: "Éowyn" },
    { term: "kÖLN", noteId: "k", title: "Köln" },
    { term: "drachenfels 🐉", noteId: "d", title: "Drachenfels 🐉" },
  ]);
  assert.deepEqual(m.match("Éowynä xÉowyn"), []);
  assert.deepEqual(compileAutolink([t("c", "日本語")]).match("日本語です"), []);
});

Deno.test("autolink: titles with punctuation match at their edges", () => {
  const m = compileAutolink([t("d", "Dr. Vell"), t("q", "(Unnamed)")]);
  assert.deepEqual(m.match("Ask Dr. Vell about (unnamed)."), [
    { term: "Dr. Vell", noteId: "d", title: "Dr. Vell" },
    { term: "(unnamed)", noteId: "q", title: "(Unnamed)" },
  ]);
});

Deno.test("autolink: duplicate titles resolve to the smallest noteId", () => {
  const m = compileAutolink([t("zz", "Ashford"), t("aa", "ASHFORD")]);
  assert.deepEqual(m.match("ashford"), [{ term: "ashford", noteId: "aa", title: "ASHFORD" }]);
});

Deno.test("autolink: thousands of titles over 200 KB of text find each title once", () => {
  const titles = Array.from({ length: 5000 }, (_, i) => t(`n${i}`, `Place ${i} Vale`));
  const m = compileAutolink(titles);
  const text = "Travellers crossed Place 42 Vale and place 4999 vale again. ".repeat(3400);
  assert.ok(text.length >= 200_000);
  assert.deepEqual(m.match(text).map((f) => f.noteId), ["n42", "n4999"]);
});
