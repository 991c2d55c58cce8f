/**
 * One "Timeline" for players: when the world has dated events, the navigation links the timeline
 * page only (not also a "Timelines" type page), and that page names the world's own timeline
 * notes.
 */
import assert from "node:assert/strict";
import { withHarness } from "../helpers/harness.ts";
import { createLoreNote, W } from "../../sims/world.ts";

Deno.test("site: the navigation has one Timeline; the timeline page names the world's timeline notes", () =>
  withHarness(async (h) => {
    const store = h.core.store;
    const chronicle = createLoreNote(store, W.guide, "Chronicle of the Coast", "timeline");
    const event = createLoreNote(store, W.guide, "The Great Storm", "event");
    store.createAttribute({
      noteId: event,
      type: "label",
      name: "inWorldDate",
      value: "1190-01-01",
      isInheritable: false,
    });
    const home = await (await h.request("/")).text();
    const nav = /<nav class="site-nav"[\s\S]*?<\/nav>/.exec(home)?.[0] ?? "";
    assert.match(nav, /<a href="\/public\/timeline">Timeline<\/a>/);
    assert.doesNotMatch(nav, />Timelines</);
    const timeline = await (await h.request("/public/timeline")).text();
    assert.match(
      timeline,
      new RegExp(`<a href="/public/lore/${chronicle}">Chronicle of the Coast</a>`),
    );
    assert.match(timeline, /<time>1190-01-01<\/time>/);
  }));
