/**
 * The studio journeys of `deno task test:client`: a brain dump in auto mode and one reviewed then
 * committed, both seen in the history and one opened in full (the `/brain-dump/[id]` page); a
 * semantic search that finds a sample note and a brain-dumped one; and the session workspace's
 * pin and statblock lookup.
 *
 * @module
 */
import { W } from "../../sims/world.ts";
import { Blocked, check } from "../conformance/kit.ts";
import {
  type ClientState,
  type ClientStep,
  eventually,
  figure,
  open,
  shown,
  snapshot,
} from "./client_kit.ts";
import * as P from "./pages.ts";

/** What the auto brain dump says: a new captain, a new place and a known one. */
const AUTO_TEXT = "Captain Ilsa Venn sails from Saltmarrow Harbor to the Ember Isles at dawn.";
/** A name the auto dump creates, searched for afterwards. */
const AUTO_ENTITY = "Ilsa Venn";
/** What the reviewed brain dump says. */
const REVIEW_TEXT = "The Tidewright Guild hired Oskar Brine to chart the reef.";

/** The brain dump ids the history links to, newest first. */
async function historyIds(s: ClientState): Promise<string[]> {
  const hrefs = await P.brainDump.history(s.page).evaluateAll((links) =>
    links.map((a) => a.getAttribute("href") ?? "")
  );
  return hrefs.map((h) => h.split("/").pop() ?? "");
}

/** Waits for a history entry that was not there before; returns its id. */
async function newHistoryEntry(s: ClientState, before: readonly string[]): Promise<string> {
  let fresh: string | undefined;
  await eventually(async () => {
    fresh = (await historyIds(s)).find((id) => !before.includes(id));
    return fresh !== undefined;
  }, "a new entry in Recent History");
  return fresh!;
}

/** The "<n> Created" figure of the result panel. */
async function createdCount(s: ClientState): Promise<number> {
  await shown(P.brainDump.complete(s.page), "Processing Complete");
  const created = figure(await P.brainDump.result(s.page).innerText(), "Created");
  check(
    created !== undefined && created > 0,
    `the result shows ${created ?? "no"} created entries`,
  );
  return created;
}

/** The journeys, in the order they run. */
export const STUDIO_JOURNEYS: readonly ClientStep[] = [
  {
    page: P.brainDump.route,
    journey: "brain dump auto",
    check: "entries created, listed and added to the history",
    async run(s) {
      const p = s.page;
      await open(s, "/brain-dump");
      await shown(P.brainDump.ready(p), "Brain Dump");
      const before = await historyIds(s);
      await P.brainDump.mode(p, "Auto-Create").click();
      await P.brainDump.text(p).fill(AUTO_TEXT);
      await P.brainDump.process(p).click();
      const created = await createdCount(s);
      await shown(P.brainDump.entity(p, AUTO_ENTITY), `the entry card of "${AUTO_ENTITY}"`);
      s.facts.set("dump", await newHistoryEntry(s, before));
      return `${created} created, in the history`;
    },
  },
  {
    page: P.brainDump.route,
    journey: "brain dump review → commit",
    check: "proposals reviewed, committed, created and added to the history",
    async run(s) {
      const p = s.page;
      await open(s, "/brain-dump");
      await shown(P.brainDump.ready(p), "Brain Dump");
      const before = await historyIds(s);
      await P.brainDump.mode(p, "Review First").click();
      await P.brainDump.text(p).fill(REVIEW_TEXT);
      await P.brainDump.analyse(p).click();
      await shown(P.brainDump.review(p), "Review Proposed Entities");
      await P.brainDump.commit(p).click();
      const created = await createdCount(s);
      await newHistoryEntry(s, before);
      return `${created} created after review, in the history`;
    },
  },
  {
    page: P.brainDumpDetail.route,
    journey: "visit (from the history)",
    check: "the auto dump's text, summary and entries",
    async run(s) {
      const p = s.page;
      const id = s.facts.get("dump");
      if (!id) throw new Blocked("needs the auto brain dump, which an earlier step did not make");
      await open(s, "/brain-dump");
      await P.brainDump.history(p).and(p.locator(`[href="/brain-dump/${id}"]`)).click();
      await shown(P.brainDumpDetail.ready(p), "Brain Dump Detail");
      await s.monitor.settle();
      await shown(P.brainDumpDetail.rawText(p, AUTO_TEXT), "the dump's raw text");
      await shown(P.brainDumpDetail.affected(p), "Entries Affected");
      await shown(
        P.brainDumpDetail.entry(p, AUTO_ENTITY),
        `"${AUTO_ENTITY}" among the entries`,
      );
      await snapshot(s, P.brainDumpDetail);
    },
  },
  {
    page: P.search.route,
    journey: "semantic search",
    check: "a sample note and a brain-dumped entry found by meaning",
    async run(s) {
      const p = s.page;
      const lighthouse = s.core.store.getNote(W.locLighthouse)?.title ?? "Greyfin Lighthouse";
      const found: string[] = [];
      for (
        const [query, want] of [["the lighthouse that went dark", lighthouse], [
          AUTO_ENTITY,
          AUTO_ENTITY,
        ]]
      ) {
        await open(s, "/search");
        await shown(P.search.ready(p), "Chronicle Search");
        await P.search.semantic(p).click();
        await P.search.query(p).fill(query);
        await P.search.submit(p).click();
        await s.monitor.settle();
        await shown(P.search.count(p).or(P.search.noResults(p)), `an answer to "${query}"`);
        check(!(await P.search.noResults(p).isVisible()), `no results for "${query}"`);
        await shown(P.search.result(p, want), `"${want}" among the results for "${query}"`);
        found.push(`"${query}" → ${(await P.search.count(p).innerText()).trim()}`);
      }
      return found.join(", ");
    },
  },
  {
    page: P.session.route,
    journey: "pin a note, look up a statblock",
    check: "a note pinned and a statblock opened from the lookup",
    async run(s) {
      const p = s.page;
      const mira = s.core.store.getNote(W.charMira)?.title ?? "Mira Tallowend";
      const eel = s.core.store.getNote(W.statEel)?.title ?? "Harbor Eel";
      await open(s, "/session");
      await shown(P.session.ready(p), "Session Workspace");
      await P.session.pinSearch(p).fill(mira.split(" ")[0]);
      await shown(P.session.choice(p, mira), `"${mira}" in the pin search`);
      await P.session.choice(p, mira).click();
      await shown(P.session.pinned(p, mira), `"${mira}" pinned`);
      await P.session.statblockSearch(p).fill(eel.split(" ").pop()!);
      await shown(P.session.choice(p, eel), `"${eel}" in the statblock lookup`);
      await P.session.choice(p, eel).click();
      await shown(p.getByRole("main").getByText(eel).nth(0), `the statblock of "${eel}"`);
    },
  },
];
