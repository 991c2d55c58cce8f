/**
 * The public timeline: every visible note with an in-world date, grouped by era when the world
 * has eras (its timeline notes), else by year, each entry with the date as the world writes it,
 * a one-line summary and the places it happened.
 *
 * @module
 */
import { naturalCompare } from "../lore/order.ts";
import { loreHref, loreTypeLabel } from "./format.ts";
import { html, type SafeHtml } from "./html.ts";
import type { PageParts } from "./layout.ts";
import { breadcrumbs, TIMELINE_PATH } from "./navigation.ts";
import type { NavLink, SiteFrame } from "./site_model.ts";

/** A timeline note (`#loreType=timeline`): a chronicle of the world, or an era of one. */
export interface TimelineNote extends NavLink {
  /** Its `#calendarSystem` ("Saltmarrow Reckoning"), or null. */
  calendar: string | null;
  /** Its one-line description ("" when it has none). */
  summary: string;
}

/** A note on the timeline. */
export interface TimelineEntry extends NavLink {
  /** The `#inWorldDate` as written (`1187-03-14`, `-300`): the timeline's order. */
  date: string;
  /** The date as the world writes it for players: `#shareDateLabel`, else {@linkcode date}. */
  dateLabel: string;
  loreType: string | null;
  /** One line about it ("" when it has none). */
  summary: string;
  /** Visible location notes it is related to. */
  places: readonly NavLink[];
  /** The nearest visible timeline note above it (the era it belongs to), or null. */
  era: TimelineNote | null;
}

/** A run of the timeline under one heading. */
export interface TimelineGroup {
  /** The era the group is; null for a group of another kind. */
  era: TimelineNote | null;
  /** The heading of a group that is no era (`1187`, `Other dates`); null with no heading. */
  title: string | null;
  entries: TimelineEntry[];
}

/**
 * The year an in-world date starts with (`1187` of `1187-03-14`, `-300` of `-300 AR`), or null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(leadingYear("1187-03-14"), 1187);
 * assert.equal(leadingYear("-300"), -300);
 * assert.equal(leadingYear("Year of the Flood"), null);
 * ```
 */
export function leadingYear(date: string): number | null {
  const m = /^\s*([+-]?\d+)/.exec(date);
  return m ? Number(m[1]) : null;
}

/**
 * Timeline order of in-world dates: by leading year as a number (so `-1000` precedes `-300`),
 * then as written with numbers compared as numbers; dates without a year last.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const dates = ["Year of the Flood", "1187-03-14", "-300", "-1000", "1187-02-01"];
 * assert.deepEqual(dates.sort(compareInWorldDates), [
 *   "-1000",
 *   "-300",
 *   "1187-02-01",
 *   "1187-03-14",
 *   "Year of the Flood",
 * ]);
 * ```
 */
export function compareInWorldDates(a: string, b: string): number {
  const ya = leadingYear(a);
  const yb = leadingYear(b);
  if (ya !== null && yb !== null && ya !== yb) return Math.sign(ya - yb);
  if ((ya === null) !== (yb === null)) return ya === null ? 1 : -1;
  return naturalCompare(a, b);
}

/** Entries by a key, in order of first appearance; the null key's group last. */
function runs(
  entries: readonly TimelineEntry[],
  keyOf: (e: TimelineEntry) => string | null,
): TimelineEntry[][] {
  const out = new Map<string | null, TimelineEntry[]>();
  for (const e of entries) {
    const key = keyOf(e);
    out.set(key, [...(out.get(key) ?? []), e]);
  }
  const rest = out.get(null);
  out.delete(null);
  return [...out.values(), ...(rest ? [rest] : [])];
}

/**
 * The timeline in date order, grouped: by era when its entries belong to two or more eras
 * (eras in the order of their first entry; entries in no era last, as "Other events"), else by
 * leading year (dates without one last, as "Other dates"), else one group without a heading.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const entry = (title: string, date: string, era: string | null) => ({
 *   id: title,
 *   title,
 *   date,
 *   dateLabel: date,
 *   loreType: "event",
 *   summary: "",
 *   places: [],
 *   era: era === null ? null : { id: era, title: era, calendar: null, summary: "" },
 * });
 * const byYear = groupTimeline([entry("Pact", "1190", "Chronicle"), entry("Flood", "1187", null)]);
 * assert.deepEqual(byYear.map((g) => g.title), ["1187", "1190"]);
 * const byEra = groupTimeline([
 *   entry("Pact", "1190", "Lantern Years"),
 *   entry("Flood", "1187", "Age of Bells"),
 *   entry("Wreck", "1188", null),
 * ]);
 * assert.deepEqual(byEra.map((g) => g.era?.title ?? g.title), [
 *   "Age of Bells",
 *   "Lantern Years",
 *   "Other events",
 * ]);
 * ```
 */
export function groupTimeline(entries: readonly TimelineEntry[]): TimelineGroup[] {
  const sorted = [...entries].sort((a, b) =>
    compareInWorldDates(a.date, b.date) || naturalCompare(a.title, b.title)
  );
  const eras = new Set(sorted.flatMap((e) => e.era ? [e.era.id] : []));
  if (eras.size > 1) {
    return runs(sorted, (e) => e.era?.id ?? null).map((group) => {
      const era = group[0].era;
      return { era, title: era ? null : "Other events", entries: group };
    });
  }
  if (sorted.some((e) => leadingYear(e.date) !== null)) {
    return runs(sorted, (e) => leadingYear(e.date)?.toString() ?? null).map((group) => ({
      era: null,
      title: leadingYear(group[0].date)?.toString() ?? "Other dates",
      entries: group,
    }));
  }
  return sorted.length > 0 ? [{ era: null, title: null, entries: sorted }] : [];
}

/** Links separated by commas. */
function linkList(links: readonly NavLink[]): SafeHtml {
  return html`${
    links.map((l, i) => html`${i > 0 && ", "}<a href="${loreHref(l.id)}">${l.title}</a>`)
  }`;
}

function entryItem(e: TimelineEntry): SafeHtml {
  // every entry of a timeline is an event unless it says otherwise
  const kind = e.loreType && e.loreType !== "event" && loreTypeLabel(e.loreType);
  return html`<li><time>${e.dateLabel}</time> <a href="${loreHref(e.id)}">${e.title}</a>${
    kind && html`
      <span class="meta">(${kind})</span>
    `
  }${e.summary && html`<p class="timeline-summary">${e.summary}</p>`}${
    e.places.length > 0 && html`<p class="meta">Where: ${linkList(e.places)}</p>`
  }</li>`;
}

function groupSection(group: TimelineGroup, i: number): SafeHtml {
  const list = html`<ol class="timeline">${group.entries.map(entryItem)}</ol>`;
  const { era, title } = group;
  if (!era && title === null) return list;
  const id = `timeline-${i + 1}`;
  const about = era && [era.calendar, era.summary].filter(Boolean).join(" · ");
  return html`<section class="timeline-group" aria-labelledby="${id}">
<h2 id="${id}">${era ? html`<a href="${loreHref(era.id)}">${era.title}</a>` : title}</h2>
${about && html`<p class="meta">${about}</p>`}
${list}
</section>`;
}

/**
 * The timeline page: breadcrumbs, the world's own timeline notes with their calendars, and the
 * entries grouped by {@linkcode groupTimeline}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const page = timelinePage([{
 *   id: "flood",
 *   title: "The Brine Flood",
 *   date: "1187-03-14",
 *   dateLabel: "14 Brinemonth 1187",
 *   loreType: "event",
 *   summary: "The sea rose for three nights.",
 *   places: [{ id: "harbor", title: "Saltmarrow Harbor" }],
 *   era: null,
 * }]);
 * assert.match(page.main.html, /<h2 id="timeline-1">1187<\/h2>/);
 * assert.match(page.main.html, /<time>14 Brinemonth 1187<\/time>/);
 * assert.match(page.main.html, /Where: <a href="\/public\/lore\/harbor">Saltmarrow Harbor<\/a>/);
 * ```
 */
export function timelinePage(
  entries: readonly TimelineEntry[],
  site?: SiteFrame,
  noIndex = false,
  timelines: readonly TimelineNote[] = [],
): PageParts {
  const groups = groupTimeline(entries);
  // eras are linked by their headings; the rest are the world's chronicles and calendars
  const headings = new Set(groups.flatMap((g) => g.era ? [g.era.id] : []));
  const chronicles = timelines.filter((t) => !headings.has(t.id));
  const main = html`${site && breadcrumbs([site.tree], "Timeline")}
<h1>Timeline</h1>
${
    chronicles.length > 0 &&
    html`<p class="meta">The world's own timelines: ${
      chronicles.map((c, i) =>
        html`${i > 0 && ", "}<a href="${loreHref(c.id)}">${c.title}</a>${
          c.calendar && ` (${c.calendar})`
        }`
      )
    }</p>`
  }
${
    groups.length > 0
      ? groups.map(groupSection)
      : html`<p>No dated events have been published yet.</p>`
  }`;
  return {
    title: "Timeline",
    main,
    noIndex,
    site,
    meta: { path: TIMELINE_PATH, description: `Timeline of ${site?.title ?? "the world"}` },
  };
}
