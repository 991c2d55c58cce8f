import assert from "node:assert/strict";
import { z } from "zod";
import { loadHtmlEngine } from "../sanitize/html_engine.ts";
import {
  readRelayed,
  relayedTitle,
  titleForCore,
  titleFromCore,
  titlesFromCore,
} from "./titles.ts";

Deno.test("titleForCore: only & < > are escaped, as Core's create sanitizer stores text", () => {
  assert.equal(titleForCore(`a & b < c > d "e" 'f'`), `a &amp; b &lt; c &gt; d "e" 'f'`);
  assert.equal(titleForCore("&amp;"), "&amp;amp;", "text that looks escaped is text");
  const plain = "Harbor of Ash";
  assert.equal(titleForCore(plain), plain);
});

Deno.test("titleFromCore: as typed again; entities decoded; tags reduced to their text", async () => {
  for (const typed of ["Salt & Smoke <Tide>", "Tom &amp; Jerry", "a<b>c", "<>&;", "x &#39; y"]) {
    assert.equal(titleFromCore(titleForCore(typed)), typed);
  }
  assert.equal(titleFromCore("It&#39;s &quot;fine&quot;"), `It's "fine"`);
  await loadHtmlEngine();
  assert.equal(titleFromCore("<i>Ash</i>en &amp; <b>Ember</b>"), "Ashen & Ember");
  assert.equal(titleFromCore("<img src=x onerror=alert(1)>Harbor"), "Harbor");
  assert.equal(titleFromCore("<script>steal()</script>Quay"), "Quay");
  assert.equal(titleFromCore("a < b"), "a < b", "a lone < is text");
});

Deno.test("titlesFromCore: in place, once; whether anything changed", async () => {
  const entities = [
    { title: "Harbor" },
    { title: "[protected]" },
    { title: "Tom &amp;amp; Jerry" },
    { title: "<b>Reef</b>" },
  ];
  assert.equal(await titlesFromCore(entities), true);
  assert.deepEqual(entities.map((e) => e.title), [
    "Harbor",
    "[protected]",
    "Tom &amp; Jerry",
    "Reef",
  ]);
  assert.equal(await titlesFromCore([{ title: "Harbor" }, { title: "Salt & Smoke" }]), false);
});

Deno.test("relayedTitle: only the declared fields are decoded, each once, in their order", async () => {
  const answer = z.object({
    results: z.array(z.object({ noteTitle: relayedTitle, content: z.string(), score: z.number() })),
  });
  const raw = {
    results: [
      { noteTitle: "Salt &amp; Smoke &lt;Tide&gt;", content: "Salt &amp; Smoke", score: 1 },
      { noteTitle: "<i>Ash</i>en [summarized]", content: "<i>x</i>", score: 0.5 },
      { noteTitle: "Tom &amp;amp; Jerry", content: "", score: 0 },
    ],
  };
  const read = await readRelayed(answer, raw);
  assert.ok(read.success);
  assert.deepEqual(read.data.results.map((r) => r.noteTitle), [
    "Salt & Smoke <Tide>",
    "Ashen [summarized]",
    "Tom &amp; Jerry",
  ]);
  assert.deepEqual(read.data.results.map((r) => r.content), ["Salt &amp; Smoke", "<i>x</i>", ""]);
  assert.deepEqual(Object.keys(read.data.results[0]), ["noteTitle", "content", "score"]);
  assert.equal(raw.results[0].noteTitle, "Salt &amp; Smoke &lt;Tide&gt;", "the input is kept");
  assert.equal((await readRelayed(answer, { results: [{ noteTitle: 1 }] })).success, false);
  // inside a union too (the brain-dump answer is one)
  const either = z.union([z.object({ a: z.literal(1) }), z.object({ title: relayedTitle })]);
  const union = await readRelayed(either, { title: "<b>Reef</b>" });
  assert.deepEqual(union.success && union.data, { title: "Reef" });
});
