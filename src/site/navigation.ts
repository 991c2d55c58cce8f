/**
 * Navigation markup of the public site: the world's tree (collapsible with `<details>`, no
 * script), the links to lore types, maps and timeline, breadcrumbs, child lists and
 * previous/next links. On a phone the navigation shows when the header's Contents link targets
 * it (`#site-nav`, see the stylesheet).
 *
 * @module
 */
import { loreHref, loreTypePlural } from "./format.ts";
import { html, type SafeHtml } from "./html.ts";
import type { NavLink, NavNode, NotePlace, SiteFrame } from "./site_model.ts";

/**
 * The page listing every note of one lore type.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(typeHref("character"), "/public/types/character");
 * ```
 */
export function typeHref(loreType: string): string {
  return `/public/types/${encodeURIComponent(loreType)}`;
}

/**
 * The public map page of a note with a map image.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(mapHref("coast-chart"), "/public/maps/coast-chart");
 * ```
 */
export function mapHref(idOrAlias: string): string {
  return `/public/maps/${encodeURIComponent(idOrAlias)}`;
}

/** The public timeline page. */
export const TIMELINE_PATH = "/public/timeline";

/**
 * Most notes a tree may hold and still be drawn whole on every page. Above it (a world of
 * hundreds of notes), a page draws the branch of its note and the first level of every other
 * branch: a page stays a few kilobytes instead of hundreds, and every note is still reachable
 * (a branch's page lists its children; the home page lists every lore note by type).
 */
export const NAV_WHOLE_TREE_MAX = 400;

/**
 * Markup of closed subtrees, each note's path and each tree's size, by the frame's node objects:
 * a frame is made once per snapshot and never changed, so every page of it shares them and only
 * the branch of the current note is rendered per page.
 */
const closedItems = new WeakMap<NavNode, SafeHtml>();
const pathsOf = new WeakMap<NavNode, Map<string, ReadonlySet<string>>>();

/** The noteIds from the tree's root down to each note (the branches its page opens). */
function paths(tree: NavNode): Map<string, ReadonlySet<string>> {
  let out = pathsOf.get(tree);
  if (!out) {
    const found = new Map<string, ReadonlySet<string>>();
    const walk = (node: NavNode, above: ReadonlySet<string>) => {
      const here = new Set(above).add(node.noteId);
      if (!found.has(node.noteId)) found.set(node.noteId, here);
      for (const c of node.children) walk(c, here);
    };
    walk(tree, new Set());
    pathsOf.set(tree, out = found);
  }
  return out;
}

/** Where a page is in the tree, and whether closed branches are drawn with their notes. */
interface Drawing {
  /** The notes from the root down to the page's note: their branches are open. */
  open: ReadonlySet<string>;
  current: string | undefined;
  /** Closed branches as their title only (a large world), else with every note below. */
  pruned: boolean;
}

function treeItem(node: NavNode, d: Drawing): SafeHtml {
  if (!d.open.has(node.noteId)) {
    let closed = closedItems.get(node);
    if (!closed) closedItems.set(node, closed = itemMarkup(node, d));
    return closed;
  }
  return itemMarkup(node, d);
}

function itemMarkup(node: NavNode, d: Drawing): SafeHtml {
  const here = node.noteId === d.current;
  const label = html`
    <a href="${loreHref(node.id)}" ${here && html`
      aria-current="page"
    `}>${node.title}</a>
  `;
  const open = d.open.has(node.noteId);
  if (node.children.length === 0 || (d.pruned && !open)) return html`<li>${label}</li>`;
  // The link beside the disclosure, not inside its <summary>: one control to visit the note, one
  // to open its branch (a link in a summary is two controls in one, and two Tab stops).
  return html`
    <li class="branch">
      ${label}<details${open && " open"}>
        <summary><span class="visually-hidden">Notes in ${node.title}</span></summary>
        <ul>${node.children.map((c) => treeItem(c, d))}</ul>
      </details>
    </li>
  `;
}

/** The navigation's id: the header's Contents link leads to it. */
export const NAV_ID = "site-nav";

/** How many notes the tree holds. */
function sizeOf(tree: NavNode): number {
  return paths(tree).size;
}

/**
 * The site's navigation: home, the tree of public notes (the branch of the current note open;
 * above {@linkcode NAV_WHOLE_TREE_MAX} notes, other branches without the notes below them), lore
 * types, and the map and timeline pages when there are any.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const tree = {
 *   noteId: "root1",
 *   id: "root1",
 *   title: "The Coast",
 *   children: [{ noteId: "n1", id: "harbor", title: "Harbor", children: [] }],
 * };
 * const site = {
 *   title: "The Coast",
 *   description: "",
 *   tree,
 *   loreTypes: ["location"],
 *   maps: [],
 *   hasTimeline: false,
 *   card: { path: "/public/card/k.png", alt: "The Coast", width: 1200, height: 630 },
 *   origin: "https://lore.example.org",
 * };
 * const nav = siteNavigation(site, "n1").html;
 * assert.match(nav, /<a href="\/public\/lore\/harbor"\s+aria-current="page"\s*>Harbor<\/a>/);
 * assert.match(nav, /href="\/public\/types\/location">Locations</);
 * ```
 */
export function siteNavigation(site: SiteFrame, current: string | undefined): SafeHtml {
  const open = (current !== undefined && paths(site.tree).get(current)) || new Set<string>();
  const d: Drawing = { open, current, pruned: sizeOf(site.tree) > NAV_WHOLE_TREE_MAX };
  const extras = [
    // one "Timeline" for players: the timeline page names the world's timeline notes
    ...site.loreTypes.filter((t) => !(t === "timeline" && site.hasTimeline))
      .map((t) => html`<li><a href="${typeHref(t)}">${loreTypePlural(t)}</a></li>`),
    site.maps.map((m) => html`<li><a href="${mapHref(m.id)}">Map: ${m.title}</a></li>`),
    site.hasTimeline && html`<li><a href="${TIMELINE_PATH}">Timeline</a></li>`,
  ];
  return html`<nav class="site-nav" id="${NAV_ID}" aria-label="World">
<a class="nav-close" href="#main">Close contents</a>
<h2 class="nav-title">Contents</h2>
<ul class="tree"><li><a href="/"${
    current === site.tree.noteId && html`
      aria-current="page"
    `
  }>${site.tree.title}</a></li>${site.tree.children.map((c) => treeItem(c, d))}</ul>
${
    (site.loreTypes.length > 0 || site.maps.length > 0 || site.hasTimeline) &&
    html`
      <h2 class="nav-title">Browse</h2>
      <ul class="tree">${extras}</ul>
    `
  }
</nav>`;
}

/**
 * Breadcrumbs from the share root to the page (the root links home).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const crumbs = breadcrumbs([{ id: "root1", title: "The Coast" }], "Harbor").html;
 * assert.match(crumbs, /<a href="\/">The Coast<\/a>/);
 * assert.match(crumbs, /<li aria-current="page">Harbor<\/li>/);
 * ```
 */
export function breadcrumbs(trail: readonly NavLink[], title: string): SafeHtml {
  return html`
    <nav class="breadcrumbs" aria-label="Breadcrumbs">
      <ol>${trail.map((c, i) =>
        html`<li><a href="${i === 0 ? "/" : loreHref(c.id)}">${c.title}</a></li>`
      )}<li aria-current="page">${title}</li></ol>
    </nav>
  `;
}

/** A titled list of links to public pages, or nothing when there is none. */
export function linkSection(id: string, heading: string, links: readonly NavLink[]): SafeHtml {
  if (links.length === 0) return html``;
  return html`
    <section aria-labelledby="${id}">
      <h2 id="${id}">${heading}</h2>
      <ul class="links">${links.map((l) =>
        html`<li><a href="${loreHref(l.id)}">${l.title}</a></li>`
      )}</ul>
    </section>
  `;
}

/**
 * A note's surroundings below its content: its children, what mentions it, and the
 * previous/next notes among its siblings.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const place = {
 *   breadcrumbs: [],
 *   children: [],
 *   previous: null,
 *   next: { id: "reef", title: "The Reef" },
 *   backlinks: [{ id: "mira", title: "Mira" }],
 *   relatedFrom: [],
 * };
 * const out = surroundings(place).html;
 * assert.match(out, /Mentioned in/);
 * assert.match(out, /<a href="\/public\/lore\/reef" rel="next">/);
 * ```
 */
export function surroundings(place: NotePlace): SafeHtml {
  return html`${linkSection("children-title", "In this section", place.children)}
${linkSection("backlinks-title", "Mentioned in", place.backlinks)}
${
    (place.previous || place.next) &&
    html`<nav class="pager" aria-label="Neighbouring notes">${
      place.previous &&
      html`<a href="${
        loreHref(place.previous.id)
      }" rel="prev"><span class="meta">Previous</span> ${place.previous.title}</a>`
    }${
      place.next &&
      html`<a href="${
        loreHref(place.next.id)
      }" rel="next"><span class="meta">Next</span> ${place.next.title}</a>`
    }</nav>`
  }`;
}
