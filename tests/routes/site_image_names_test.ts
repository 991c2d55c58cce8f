/**
 * Image notes as players meet them: named for players rather than by their file names, shown by
 * the notes that use them (the map, the portrait) and not offered again as search hits or as
 * "Related" notes.
 */
import assert from "node:assert/strict";
import { withHarness } from "../helpers/harness.ts";
import { createLoreNote, W } from "../../sims/world.ts";

Deno.test("site: an image note's page is named for players; images are no search hits nor related notes", () =>
  withHarness(async (h) => {
    const text = async (path: string) => {
      const res = await h.request(path);
      assert.equal(res.status, 200, path);
      return await res.text();
    };
    // a note drawing the chart as its map shows the map, not a "Map image: coast-chart.png"
    const map = createLoreNote(h.core.store, W.guide, "Pilot's Chart", "location");
    h.core.store.createAttribute({
      noteId: map,
      type: "relation",
      name: "mapImage",
      value: W.imgChart,
      isInheritable: false,
    });
    // the chart's own page
    const chart = await text(`/public/lore/${W.imgChart}`);
    assert.match(chart, /<title>Coast chart · /);
    assert.match(chart, /<h1[^>]*>Coast chart<\/h1>/);
    assert.doesNotMatch(chart, /<h1[^>]*>coast-chart\.png/);
    const mapNote = await text(`/public/lore/${map}`);
    assert.match(mapNote, /href="\/public\/maps\//);
    assert.doesNotMatch(mapNote, /coast-chart\.png<\/a>/);
    assert.doesNotMatch(mapNote, /Map image/);
    // a word of an image's file name finds no image, on the site and in the API
    for (const q of ["portrait", "chart"]) {
      const res = await h.requestJson<{ results: { id: string }[] }>(`/api/public/search?q=${q}`);
      const ids = res.body.results.map((r) => r.id);
      assert.ok(!ids.includes(W.imgPortrait) && !ids.includes(W.imgChart), `${q}: ${ids}`);
      assert.doesNotMatch(await text(`/?q=${q}`), /\.png<\/a>/);
    }
  }));
