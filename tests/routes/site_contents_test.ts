/**
 * A long note's page lists its parts before the text, each a link to its heading; a heading's
 * text that could name a hidden note is gone from the list as it is from the text.
 */
import assert from "node:assert/strict";
import { withHarness } from "../helpers/harness.ts";
import { W } from "../../sims/world.ts";

Deno.test("site: a note with three or more headings gets a table of contents linking each", () =>
  withHarness(async (h) => {
    const put = await h.request(`/api/lore/${W.locHarbor}/content`, {
      method: "PUT",
      headers: { "content-type": "text/plain" },
      body: "<h2>Founding</h2><p>Salt.</p><h2>The Docks</h2><p>Tar.</p>" +
        `<h3>Beneath <a class="reference-link" href="#root/${W.guideDraft}">the draft</a></h3>` +
        "<p>Rope.</p><h2>Founding</h2>",
    });
    assert.equal(put.status, 204);
    const page = await (await h.request(`/public/lore/${W.locHarbor}`)).text();
    const toc = /<nav class="toc"[\s\S]*?<\/nav>/.exec(page)?.[0] ?? "";
    const links = [...toc.matchAll(/<a href="#([^"]+)">([^<]*)<\/a>/g)].map((m) => [m[1], m[2]]);
    assert.deepEqual(links, [
      ["h-founding", "Founding"],
      ["h-the-docks", "The Docks"],
      ["h-beneath", "Beneath —"], // the mark a link to a hidden note left, as in the heading
      ["h-founding-2", "Founding"],
    ]);
    for (const [id] of links) assert.match(page, new RegExp(`<h[23] id="${id}">`));
    // the draft's title went with its link, from the text and from the list alike
    const draft = h.core.store.getNote(W.guideDraft)!.title;
    assert.ok(!page.includes(draft), "a hidden title is on the page");

    // a short note gets none
    const short = await (await h.request(`/public/lore/${W.charMira}`)).text();
    assert.doesNotMatch(short, /class="toc"/);
  }));
