/**
 * Content collections: quests, statblocks and the timeline. Each is one complete Core search by
 * label (never truncated), returned as a bare array of Core note objects with their lore type,
 * in a fixed order.
 *
 * @module
 */
import { z } from "zod";
import { labelEquals } from "../core/search_query.ts";
import { json } from "../http/response.ts";
import { labelValue } from "../lore/note_view.ts";
import { defineRoute, type Route } from "../api/router.ts";
import { compareByTitle, naturalCompare } from "../lore/order.ts";
import type { CoreNote } from "../upstream/core.ts";
import { loreNoteSchema } from "./lore_responses.ts";

/** A collection entry: the Core note plus its effective `#loreType` (null when it has none). */
export type CollectionNote = CoreNote & { loreType: string | null };

/** What distinguishes one collection route from another. */
interface CollectionSpec {
  path: string;
  summary: string;
  /** Markdown: which notes belong and in what order. */
  description: string;
  /** The Core search; built only from constants and `search_query.ts` helpers. */
  search: string;
  /** Drops search hits that do not really belong (Core's label match is word-based). */
  keep?: (note: CollectionNote) => boolean;
  order: (a: CollectionNote, b: CollectionNote) => number;
}

/** One Core search, no limit, then the collection's own filter and order. */
function collectionRoute(spec: CollectionSpec): Route {
  return defineRoute({
    method: "GET",
    path: spec.path,
    summary: spec.summary,
    backend: "Core",
    access: "private",
    tag: "collections",
    description: spec.description,
    responses: {
      200: {
        description: "`(Note & { loreType })[]`: every matching note, never truncated (a bare " +
          "array, as the front end reads it)",
        schema: z.array(loreNoteSchema),
      },
    },
    handler: async (ctx) => {
      const notes = await (await ctx.core()).search(spec.search);
      return json(
        notes
          .map((n): CollectionNote => ({ ...n, loreType: labelValue(n, "loreType") ?? null }))
          .filter(spec.keep ?? (() => true))
          .sort(spec.order),
      );
    },
  });
}

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;

/** The note's `#inWorldDate`, trimmed; a blank value counts as no date. */
function inWorldDate(note: CoreNote): string | null {
  return labelValue(note, "inWorldDate")?.trim() || null;
}

/**
 * Timeline order: by `#inWorldDate` — numerically when both dates are plain numbers (so `-300`
 * precedes `25`), otherwise naturally as text — with undated notes last, then by title.
 */
export function compareTimeline(a: CoreNote, b: CoreNote): number {
  const da = inWorldDate(a);
  const db = inWorldDate(b);
  if (da === null || db === null) {
    if (da !== db) return da === null ? 1 : -1;
  } else {
    const byDate = NUMBER.test(da) && NUMBER.test(db)
      ? Math.sign(Number(da) - Number(db))
      : naturalCompare(da, db);
    if (byDate !== 0) return byDate;
  }
  return compareByTitle(a, b);
}

const TIMELINE_TYPES = new Set(["event", "timeline"]);

/** `GET /api/quests` — notes with `#quest` (own, inherited, or from the quest template). */
export const listQuests = collectionRoute({
  path: "/api/quests",
  summary: "Quests: every note labelled #quest (template users included), by title",
  description: "One complete Core search for `#quest` (own, inherited, or from the quest " +
    "template), by title.",
  search: "#quest",
  order: compareByTitle,
});

/** `GET /api/statblocks` — notes with `#statblock` (the statblock template carries it). */
export const listStatblocks = collectionRoute({
  path: "/api/statblocks",
  summary: "Statblocks: every note labelled #statblock (template users included), by title",
  description: "One complete Core search for `#statblock` (the statblock template carries it), " +
    "by title.",
  search: "#statblock",
  order: compareByTitle,
});

/** `GET /api/timeline` — events and timelines, in in-world date order. */
export const listTimeline = collectionRoute({
  path: "/api/timeline",
  summary: "Timeline: notes with #loreType=event or timeline, by #inWorldDate, undated last",
  description: "One complete Core search; only notes whose `loreType` is `event` or `timeline` " +
    "(case and surrounding spaces aside) are kept, since Core matches a label value word by " +
    "word (`world event` too). Ordered by `#inWorldDate`: " +
    "numerically when both dates are plain numbers (`-300` before `25`), else naturally as " +
    "text; undated notes last, then by title.",
  search: `${labelEquals("loreType", "event")} OR ${labelEquals("loreType", "timeline")}`,
  // Core matches `#loreType="event"` as a word of the value ("world event" too); keep exact types.
  keep: (n) => TIMELINE_TYPES.has(n.loreType?.trim().toLowerCase() ?? ""),
  order: compareTimeline,
});

/** The content collection routes. */
export const collectionRoutes: Route[] = [listQuests, listStatblocks, listTimeline];
