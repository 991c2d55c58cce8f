/** A note page's reading time, over HTTP against the Core double: only words a visitor reads count. */
import assert from "node:assert/strict";
import { type Harness, withHarness } from "../helpers/harness.ts";
import { W } from "../../sims/world.ts";

const words = (n: number) => Array.from({ length: n }, (_, i) => `tide${i}`).join(" ");

function publish(h: Harness, title: string, content: string): string {
  return h.core.store.createNote({ parentNoteId: W.guide, title, type: "text", content }).note
    .noteId;
}

/** The page's meta line under the title. */
async function metaLine(h: Harness, id: string): Promise<string> {
  const res = await h.request(`/public/lore/${id}`);
  assert.equal(res.status, 200);
  const line = /<p class="meta">([\s\S]*?)<\/p>/.exec(await res.text())?.[1];
  assert.ok(line !== undefined, "no meta line");
  return line;
}

Deno.test("note page: the meta line says how long the visible text takes to read", () =>
  withHarness(async (h) => {
    const long = publish(h, "Tide Tables", `<p>${words(500)}</p><h2>More</h2><p>${words(380)}</p>`);
    // words a visitor cannot read do not count: a GM-only part, and a link to a hidden note
    // that went with its text
    const short = publish(
      h,
      "Short Notice",
      `<p>${words(140)} <a class="reference-link" href="#root/${W.guideDraft}">${
        words(40)
      }</a></p>` +
        `<div class="gm-only"><p>${words(300)}</p></div>`,
    );
    assert.match(await metaLine(h, long), /^Last modified <time [^>]+>[^<]+<\/time> · 4 min read$/);
    assert.doesNotMatch(await metaLine(h, short), /min read/);
  }));
