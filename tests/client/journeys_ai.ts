/// <reference lib="dom" />
/**
 * The AI tool and import journeys of `deno task test:client`: a consistency check, a gap scan,
 * relationship suggestions for the run's entry with one applied (and found in Core), and the
 * preview of a fantasy-map-generator (Azgaar) export.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { check, CheckFailed } from "../conformance/kit.ts";
import { type ClientStep, figure, noteOf, open, shown } from "./client_kit.ts";
import * as P from "./pages.ts";

/** A small Azgaar export: slot 0 of each list is reserved, as in the real files. */
export const AZGAAR_MAP = {
  info: { mapName: "Isles of the Client Run" },
  pack: {
    states: [{ i: 0, name: "Neutrals" }, { i: 1, name: "Saltreach" }, { i: 2, name: "Emberhold" }],
    burgs: [{ i: 0 }, { i: 1, name: "Gullport", state: 1 }],
    religions: [{ i: 0, name: "No religion" }, { i: 1, name: "Tide Faith" }],
    cultures: [{ i: 0, name: "Wildlands" }, { i: 1, name: "Reefborn" }],
  },
  notes: [{ id: "burg1", name: "Gullport", legend: "A harbour of gulls." }],
} as const;

/** What the preview must count, by its label in the UI. */
const AZGAAR_COUNTS = { Nations: 2, Cities: 1, Religions: 1, Cultures: 1, "Map Notes": 1 };

/** The journeys, in the order they run. */
export const AI_JOURNEYS: readonly ClientStep[] = [
  {
    page: P.consistency.route,
    journey: "consistency check",
    check: "a summary with the issue counts",
    async run(s) {
      const p = s.page;
      await open(s, "/ai/consistency");
      await shown(P.consistency.ready(p), "Consistency Check");
      await P.consistency.run(p).click();
      await s.monitor.settle();
      await shown(P.consistency.summary(p), "the Summary");
      const text = await P.consistency.summary(p).innerText();
      const counts = ["High", "Medium", "Low"].map((l) => figure(text, l));
      check(
        counts.every((n) => n !== undefined),
        `the Summary shows no counts: ${text.replace(/\s+/g, " ")}`,
      );
      return `summary with ${counts.join("/")} high/medium/low issues`;
    },
  },
  {
    page: P.gaps.route,
    journey: "gap scan",
    check: "gaps by priority, or none found",
    async run(s) {
      const p = s.page;
      await open(s, "/ai/gaps");
      await shown(P.gaps.ready(p), "Lore Gap Detector");
      await P.gaps.scan(p).click();
      await s.monitor.settle();
      await shown(P.gaps.outcome(p), "the scan's outcome");
      return `shows "${(await P.gaps.outcome(p).innerText()).trim()}"`;
    },
  },
  {
    page: P.relationships.route,
    journey: "suggestions and Apply",
    check: "suggestions for the entry's text, one applied and stored in Core",
    async run(s) {
      const p = s.page;
      const note = noteOf(s, "created");
      await open(s, `/ai/relationships?noteId=${note.noteId}`);
      await shown(P.relationships.ready(p), "Relationship Suggestions");
      const text = P.relationships.text(p);
      try {
        await p.waitForFunction(
          (el) => (el as HTMLTextAreaElement).value.trim() !== "",
          await text.elementHandle(),
          { timeout: 20_000 },
        );
      } catch {
        throw new CheckFailed("the entry's text is not filled in from its content");
      }
      await P.relationships.find(p).click();
      await s.monitor.settle();
      await shown(P.relationships.count(p), "the suggested connections");
      const apply = P.relationships.apply(p).first();
      const link = apply.locator("xpath=../..").getByRole("link").first();
      const target = (await link.innerText()).trim();
      const targetId = (await link.getAttribute("href"))?.split("/").pop();
      await apply.click();
      await s.monitor.settle();
      await shown(P.relationships.applied(p), "Applied");
      const stored = s.core.store.ownAttributes(note.noteId)
        .some((a) => a.type === "relation" && a.value === targetId);
      check(stored, `Core's note has no relation to "${target}" (${targetId}) after Apply`);
      return `${(await P.relationships.count(p).innerText()).trim()}, applied "${target}"`;
    },
  },
  {
    page: P.importPage.route,
    journey: "import preview (Azgaar map)",
    check: "the map's name and what it holds, by kind",
    async run(s) {
      const p = s.page;
      await open(s, "/import");
      await shown(P.importPage.ready(p), "Import");
      await P.importPage.azgaarTab(p).click();
      const [chooser] = await Promise.all([
        p.waitForEvent("filechooser"),
        P.importPage.chooseFile(p).click(),
      ]);
      await chooser.setFiles({
        name: "isles.map.json",
        mimeType: "application/json",
        buffer: Buffer.from(JSON.stringify(AZGAAR_MAP)),
      });
      await s.monitor.settle();
      const name = AZGAAR_MAP.info.mapName;
      await shown(P.importPage.preview(p, name), `the preview of "${name}"`);
      const text = await P.importPage.preview(p, name).innerText();
      for (const [label, want] of Object.entries(AZGAAR_COUNTS)) {
        const got = figure(text, label);
        check(got === want, `the preview counts ${got ?? "no"} ${label}, not ${want}`);
      }
      await shown(P.importPage.importFrom(p, name), "the Import button");
      return `"${name}": ${Object.entries(AZGAAR_COUNTS).map(([l, n]) => `${n} ${l}`).join(", ")}`;
    },
  },
];
