/**
 * The page visits of `deno task test:client`: every page of the UI opened as a user opens it, each
 * checked for what the sample world puts there (the sample notes listed, both services shown as
 * connected, …) on top of the judge's checks (no failed call, crash, console error, broken text).
 *
 * @module
 */
import { W } from "../../sims/world.ts";
import { check } from "../conformance/kit.ts";
import {
  type ClientState,
  type ClientStep,
  figureAfter,
  noteOf,
  shown,
  visit,
} from "./client_kit.ts";
import * as P from "./pages.ts";

const title = (s: ClientState, id: string) => s.core.store.getNote(id)?.title ?? id;

/** One visit of every page but the brain dump detail (that needs a dump: journeys_studio.ts). */
export const VISITS: readonly ClientStep[] = [
  {
    page: P.dashboard.route,
    journey: "visit",
    check: "counts the lore, shows both services connected and the index size",
    async run(s) {
      await visit(s, P.dashboard, "/");
      const p = s.page;
      await shown(
        P.dashboard.recentEntry(p, title(s, W.charMira)).or(
          P.dashboard.stat(p, "Total Lore Entries"),
        ),
        "the lore count",
      );
      const total = figureAfter(
        await P.dashboard.stat(p, "Total Lore Entries").innerText(),
        "Total Lore Entries",
      );
      check(
        total && total > 0,
        `"Total Lore Entries" shows ${total ?? "no number"}, not the sample lore`,
      );
      const status = await P.dashboard.systemStatus(p).innerText();
      const connected = status.match(/Connected/g)?.length ?? 0;
      check(connected === 2, `System Status: ${status.replace(/\s+/g, " ")} (want both Connected)`);
      const indexed = figureAfter(
        await P.dashboard.stat(p, "RAG Indexed").innerText(),
        "RAG Indexed",
      );
      check(indexed !== undefined && indexed > 0, `"RAG Indexed" shows ${indexed ?? "no number"}`);
      return `${total} entries, both services connected, ${indexed} notes indexed`;
    },
  },
  {
    page: P.loreList.route,
    journey: "visit",
    check: "lists the sample lore",
    async run(s) {
      await visit(s, P.loreList, "/lore");
      await shown(
        P.loreList.entry(s.page, title(s, W.charMira)),
        `the card of "${title(s, W.charMira)}"`,
      );
      await shown(
        P.loreList.entry(s.page, title(s, W.locHarbor)),
        `the card of "${title(s, W.locHarbor)}"`,
      );
    },
  },
  {
    page: P.loreNew.route,
    journey: "visit",
    check: "the form and the editor",
    async run(s) {
      await visit(s, P.loreNew, "/lore/new");
      await shown(P.loreNew.editor(s.page), "the editor");
    },
  },
  {
    page: P.loreDetail.route,
    journey: "visit",
    check: "the sample character with portrait, article and sharing panel",
    async run(s) {
      const mira = noteOf(s, "mira");
      await visit(s, P.loreDetail, `/lore/${mira.noteId}`);
      const shownTitle = await P.loreDetail.title(s.page).textContent();
      check(shownTitle === mira.title, `the title reads "${shownTitle}", not "${mira.title}"`);
      await shown(P.loreDetail.portrait(s.page, mira.title), "the portrait");
      await shown(P.loreDetail.sharing(s.page), "the Sharing panel");
    },
  },
  {
    page: P.loreEdit.route,
    journey: "visit",
    check: "the title and content loaded into the editor",
    async run(s) {
      const mira = noteOf(s, "mira");
      await visit(s, P.loreEdit, `/lore/${mira.noteId}/edit`);
      const value = await P.loreEdit.title(s.page).inputValue();
      check(value === mira.title, `the title field holds "${value}", not "${mira.title}"`);
      await shown(
        P.loreEdit.editor(s.page).getByText("pilots ships"),
        "the note's content in the editor",
      );
    },
  },
  {
    page: P.search.route,
    journey: "visit",
    check: "the search form",
    run: (s) => visit(s, P.search, "/search"),
  },
  {
    page: P.brainDump.route,
    journey: "visit",
    check: "the form and the history",
    async run(s) {
      await visit(s, P.brainDump, "/brain-dump");
      await shown(s.page.getByRole("heading", { name: "Recent History" }), "Recent History");
    },
  },
  {
    page: P.session.route,
    journey: "visit",
    check: "capture, pins, scene notes and statblock lookup",
    run: (s) => visit(s, P.session, "/session"),
  },
  {
    page: P.quests.route,
    journey: "visit",
    check: "every sample quest in its status column",
    async run(s) {
      await visit(s, P.quests, "/quests");
      for (const id of [W.questLamp, W.questLedger]) {
        await shown(P.quests.quest(s.page, title(s, id)), `the quest "${title(s, id)}"`);
      }
    },
  },
  {
    page: P.timeline.route,
    journey: "visit",
    check: "the sample events",
    async run(s) {
      await visit(s, P.timeline, "/timeline");
      for (const id of [W.eventFlood, W.eventPact]) {
        await shown(P.timeline.event(s.page, title(s, id)), `the event "${title(s, id)}"`);
      }
    },
  },
  {
    page: P.statblocks.route,
    journey: "visit",
    check: "the sample statblocks",
    async run(s) {
      await visit(s, P.statblocks, "/statblocks");
      for (const id of [W.statSentinel, W.statEel]) {
        const name = s.core.store.labelValue(id, "crName") ?? title(s, id);
        await shown(P.statblocks.entry(s.page, name), `the statblock "${name}"`);
      }
    },
  },
  {
    page: P.consistency.route,
    journey: "visit",
    check: "the scan form",
    run: (s) => visit(s, P.consistency, "/ai/consistency"),
  },
  {
    page: P.relationships.route,
    journey: "visit",
    check: "the suggestion form",
    run: (s) => visit(s, P.relationships, "/ai/relationships"),
  },
  {
    page: P.gaps.route,
    journey: "visit",
    check: "the scan button",
    run: (s) => visit(s, P.gaps, "/ai/gaps"),
  },
  {
    page: P.importPage.route,
    journey: "visit",
    check: "both import tabs",
    async run(s) {
      await visit(s, P.importPage, "/import");
      await shown(P.importPage.azgaarTab(s.page), "the Azgaar Map tab");
    },
  },
  {
    page: P.shared.route,
    journey: "visit",
    check: "the lore with its share flags",
    async run(s) {
      await visit(s, P.shared, "/shared");
      await shown(P.shared.entry(s.page, title(s, W.charMira)), `"${title(s, W.charMira)}"`);
    },
  },
  {
    page: P.settings.route,
    journey: "visit",
    check: "both services connected",
    async run(s) {
      await visit(s, P.settings, "/settings");
      for (const name of ["AllKnower", "AllCodex"] as const) {
        await shown(
          P.settings.status(P.settings.service(s.page, name), "Connected"),
          `${name}: Connected`,
        );
      }
    },
  },
];
