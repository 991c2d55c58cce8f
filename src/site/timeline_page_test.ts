import assert from "node:assert/strict";
import {
  groupTimeline,
  type TimelineEntry,
  type TimelineNote,
  timelinePage,
} from "./timeline_page.ts";

const EVIL = `<img src=x onerror="alert(1)">`;

const era = (title: string, calendar: string | null = null): TimelineNote => ({
  id: title.toLowerCase().replaceAll(" ", "-"),
  title,
  calendar,
  summary: `${title} in brief.`,
});

const entry = (title: string, date: string, more: Partial<TimelineEntry> = {}): TimelineEntry => ({
  id: title.toLowerCase().replaceAll(" ", "-"),
  title,
  date,
  dateLabel: date,
  loreType: "event",
  summary: "",
  places: [],
  era: null,
  ...more,
});

const headings = (entries: TimelineEntry[]) =>
  groupTimeline(entries).map((g) => [g.era?.title ?? g.title, g.entries.map((e) => e.title)]);

Deno.test("groupTimeline: two eras or more group by era, in date order, the rest last", () => {
  const bells = era("The Age of Bells");
  const lanterns = era("The Lantern Years");
  assert.deepEqual(
    headings([
      entry("Pact", "1190-09-02", { era: lanterns }),
      entry("Wreck", "1185", {}),
      entry("Flood", "1187-03-14", { era: bells }),
      entry("Tower", "1186-11-02", { era: bells }),
    ]),
    [
      ["The Age of Bells", ["Tower", "Flood"]],
      ["The Lantern Years", ["Pact"]],
      ["Other events", ["Wreck"]],
    ],
  );
});

Deno.test("groupTimeline: one era or none groups by year, numbers as numbers, yearless last", () => {
  const chronicle = era("Chronicle of the Coast");
  assert.deepEqual(
    headings([
      entry("Flood", "1187-03-14", { era: chronicle }),
      entry("Long Night", "Year of the Long Night"),
      entry("Tower", "1187-01-02", { era: chronicle }),
      entry("Founding", "-1000"),
      entry("Landing", "-300"),
    ]),
    [
      ["-1000", ["Founding"]],
      ["-300", ["Landing"]],
      ["1187", ["Tower", "Flood"]],
      ["Other dates", ["Long Night"]],
    ],
  );
  // no year anywhere: one list without a heading
  assert.deepEqual(headings([entry("B", "Spring"), entry("A", "Autumn")]), [[null, ["A", "B"]]]);
  assert.deepEqual(groupTimeline([]), []);
});

Deno.test("timelinePage: labels, summaries, places and eras as text; eras linked once", () => {
  const bells = era(`Bells ${EVIL}`, `Reckoning ${EVIL}`);
  const chronicle = era("Chronicle", "Saltmarrow Reckoning");
  const page = timelinePage(
    [
      entry("Flood", "1187", {
        dateLabel: `14th ${EVIL}`,
        summary: `Rose ${EVIL}`,
        places: [{ id: "harbor", title: `Harbor ${EVIL}` }, { id: "light", title: "Light" }],
        era: bells,
      }),
      entry("Pact", "1190", { era: era("Lanterns"), loreType: "faction" }),
    ],
    undefined,
    false,
    [chronicle, bells],
  );
  const out = page.main.html;
  assert.ok(!out.includes(EVIL) && !out.includes("<img"), "every value is text");
  assert.match(out, /<time>14th &lt;img/);
  assert.match(out, /<p class="timeline-summary">Rose &lt;img/);
  assert.match(
    out,
    /Where: <a href="\/public\/lore\/harbor">Harbor &lt;img[^<]*<\/a>, <a href="\/public\/lore\/light">Light<\/a>/,
  );
  assert.match(out, /<h2 id="timeline-1"><a href="\/public\/lore\/bells-[^"]*">Bells &lt;img/);
  assert.match(out, /<p class="meta">Reckoning &lt;img[^<]* · Bells &lt;img[^<]* in brief\.<\/p>/);
  // the chronicle is named with its calendar; the era only by its heading
  assert.match(
    out,
    /The world's own timelines: <a href="\/public\/lore\/chronicle">Chronicle<\/a> \(Saltmarrow Reckoning\)<\/p>/,
  );
  assert.equal(out.match(/href="\/public\/lore\/bells-/g)?.length, 1);
  // events are the timeline's own kind; other kinds say what they are
  assert.match(out, /Pact<\/a>\s*<span class="meta">\(Faction\)<\/span>/);
  assert.ok(!out.includes("(Event)"));
  assert.ok(!out.includes("breadcrumbs"), "no world, no trail");
});

Deno.test("timelinePage: nothing dated yet says so", () => {
  const out = timelinePage([]).main.html;
  assert.match(out, /No dated events have been published yet/);
  assert.ok(!out.includes("<ol"));
});
