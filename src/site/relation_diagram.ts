/**
 * The relationship diagram of a character's or faction's public page: the note in the middle,
 * the notes it relates to and that relate to it around it, each a link, the kind of relation
 * written on each and an arrow for its direction. Drawn on the server as inline SVG from the
 * relations the page's "Related" list shows (already only those the visitor may see), so it
 * shows nothing the list does not; the list stays the text alternative and holds every relation
 * when the diagram has to leave some out.
 *
 * @module
 */
import type { PublicRelation } from "../share/public_types.ts";
import { displayTitle, loreHref } from "./format.ts";
import { html, type SafeHtml } from "./html.ts";
import { type NotePlace, shorten } from "./site_model.ts";

/** Lore types whose page draws the diagram (Kanka's and World Anvil's family and faction trees). */
const DIAGRAM_TYPES: ReadonlySet<string> = new Set(["character", "faction"]);

/** Most nodes around the centre; past it the last one says how many more the list holds. */
export const MAX_NODES = 12;

/** The id of the "Related" list the diagram's "and N more" leads to. */
export const RELATED_LIST_ID = "related-list";

/**
 * The diagram's width in its own units. The SVG is as wide as the column up to 30rem: about 0.9
 * CSS px a unit on a 390 px phone, so a node (112 × 62) stays a target well above 24 px.
 */
const VIEW_WIDTH = 400;
const NODE_WIDTH = 112;
const NODE_HEIGHT = 62;
/** Space kept between two nodes, and between a node and a line that does not lead to it. */
const GAP = 8;
const MARGIN = 4;
/** Shortest line between two nodes: room for an arrow at each end. */
const MIN_EDGE = 20;
/** Characters of a line of a title (two at most), and of the kinds of relation, in a node. */
const LINE_MAX = 12;
const KINDS_MAX = 15;
const ARC_X = VIEW_WIDTH / 2 - NODE_WIDTH / 2 - MARGIN;

/** A coordinate to a tenth of a unit, as the markup writes it. */
const tenth = (v: number) => Math.round(v * 10) / 10;

/** A node's centre, relative to the diagram's centre. */
export interface Point {
  x: number;
  y: number;
}

/** Relations grouped by kind as the "Related" list shows them: `["Ally", [...]]`. */
export type ByKind<T> = readonly (readonly [kind: string, items: readonly T[]])[];

/** A relation another visible note holds to this one (from the note's place). */
export type RelatedFrom = NotePlace["relatedFrom"][number];

/** One note around the centre, with every kind of relation between the two. */
export interface RelatedNode {
  noteId: string;
  href: string;
  title: string;
  kinds: string[];
  /** The centre relates to it (an arrow towards it). */
  to: boolean;
  /** It relates to the centre (an arrow towards the centre). */
  from: boolean;
}

/**
 * The notes around a note, one per note whatever the number of relations between the two, in
 * the list's order: what the note relates to, then who relates to it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const nodes = relatedNodes(
 *   "mira",
 *   [["Ally", [{ name: "relAlly", targetNoteId: "iselde", targetTitle: "Iselde", loreType: null }]]],
 *   [["Ally", [{ name: "relAlly", fromNoteId: "iselde", from: { id: "iselde", title: "Iselde" } }]]],
 * );
 * assert.deepEqual(nodes.map((n) => [n.title, n.kinds, n.to, n.from]), [
 *   ["Iselde", ["Ally"], true, true],
 * ]);
 * ```
 */
export function relatedNodes(
  noteId: string,
  outgoing: ByKind<PublicRelation>,
  incoming: ByKind<RelatedFrom>,
): RelatedNode[] {
  const nodes = new Map<string, RelatedNode>();
  const add = (id: string, href: string, title: string, kind: string, to: boolean) => {
    if (id === noteId) return;
    let node = nodes.get(id);
    if (!node) nodes.set(id, node = { noteId: id, href, title, kinds: [], to: false, from: false });
    if (!node.kinds.includes(kind)) node.kinds.push(kind);
    if (to) node.to = true;
    else node.from = true;
  };
  for (const [kind, relations] of outgoing) {
    for (const r of relations) {
      add(r.targetNoteId, loreHref(r.targetNoteId), displayTitle(r.targetTitle), kind, true);
    }
  }
  for (const [kind, sources] of incoming) {
    for (const r of sources) add(r.fromNoteId, loreHref(r.from.id), r.from.title, kind, false);
  }
  return [...nodes.values()];
}

/** Whether two nodes centred at `a` and `b` come closer than {@linkcode GAP}. */
function overlap(a: Point, b: Point): boolean {
  return Math.abs(a.x - b.x) < NODE_WIDTH + GAP && Math.abs(a.y - b.y) < NODE_HEIGHT + GAP;
}

/** Whether the segment from `a` to `b` passes through the node at `c` (and its gap). */
function crosses(a: Point, b: Point, c: Point): boolean {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  let t0 = 0;
  let t1 = 1;
  // Liang–Barsky: clip the segment to the node's box; what is left crosses it
  const clip = (p: number, q: number) => {
    if (p === 0) return q >= 0;
    const r = q / p;
    if (p < 0) t0 = Math.max(t0, r);
    else t1 = Math.min(t1, r);
    return t0 <= t1;
  };
  const hw = NODE_WIDTH / 2 + GAP / 2;
  const hh = NODE_HEIGHT / 2 + GAP / 2;
  return clip(-dx, a.x - (c.x - hw)) && clip(dx, c.x + hw - a.x) &&
    clip(-dy, a.y - (c.y - hh)) && clip(dy, c.y + hh - a.y);
}

/**
 * `count` nodes on two arcs of an ellipse around the centre, right then left (clockwise from
 * the top right), `row` apart vertically; null when the ellipse is too short for them.
 */
function arcs(count: number, row: number, ry: number): Point[] | null {
  const right = Math.ceil(count / 2);
  const out: Point[] = [];
  for (const [n, side] of [[right, 1], [count - right, -1]]) {
    const ys = Array.from({ length: n }, (_, k) => (k - (n - 1) / 2) * row * side);
    for (const y of ys) {
      if (Math.abs(y) >= ry) return null;
      out.push({ x: side * ARC_X * Math.sqrt(1 - (y / ry) ** 2), y });
    }
  }
  return out;
}

/**
 * No two nodes (the centre's included) touch, no line runs through a node it does not join, and
 * every line is long enough to show its arrows.
 */
function tidy(nodes: Point[]): boolean {
  const all = [{ x: 0, y: 0 }, ...nodes];
  const long = (p: Point) => {
    const a = edgeEnd(all[0], p);
    const b = edgeEnd(p, all[0]);
    return Math.hypot(b.x - a.x, b.y - a.y) >= MIN_EDGE;
  };
  return all.every((a, i) => all.slice(i + 1).every((b) => !overlap(a, b))) &&
    nodes.every((p) => long(p) && nodes.every((q) => p === q || !crosses(all[0], p, q)));
}

const layouts = new Map<number, Point[]>();

/**
 * Where `count` nodes (1 to {@linkcode MAX_NODES}) sit around the centre: on an ellipse around
 * it, as close together as they fit without touching and without a line crossing another node;
 * the same for the same count, always.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * // two nodes: one each side of the centre
 * assert.deepEqual(ringLayout(2), [{ x: 140, y: 0 }, { x: -140, y: 0 }]);
 * ```
 */
export function ringLayout(count: number): Point[] {
  const known = layouts.get(count);
  if (known) return known;
  let found: Point[] = [];
  search: for (let row = NODE_HEIGHT + GAP; row <= 4 * NODE_HEIGHT; row += 4) {
    for (let ry = 4; ry <= 1200; ry += 4) {
      const nodes = arcs(count, row, ry);
      if (nodes && tidy(nodes)) {
        found = nodes.map((p) => ({ x: tenth(p.x), y: tenth(p.y) + 0 })); // no -0
        break search;
      }
    }
  }
  layouts.set(count, found);
  return found;
}

/** The end of a line from `a` towards `b`, where it leaves the node at `a` (and a little more). */
function edgeEnd(a: Point, b: Point): Point {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const s = Math.min(
    dx === 0 ? Infinity : (NODE_WIDTH / 2 + 2) / Math.abs(dx),
    dy === 0 ? Infinity : (NODE_HEIGHT / 2 + 2) / Math.abs(dy),
  );
  return { x: tenth(a.x + dx * s), y: tenth(a.y + dy * s) };
}

/**
 * A title on at most two lines of {@linkcode LINE_MAX} characters, cut between words where it
 * can be (what is cut ends in an ellipsis).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(titleLines("Saltmarrow Harbor"), ["Saltmarrow", "Harbor"]);
 * assert.deepEqual(titleLines("The Order of the Drowned Bell"), ["The Order of", "the Drowned…"]);
 * ```
 */
export function titleLines(title: string): string[] {
  const lines: string[] = [];
  for (const word of title.split(/\s+/).filter(Boolean)) {
    const joined = lines.length > 0 ? `${lines[lines.length - 1]} ${word}` : "";
    if (joined && joined.length <= LINE_MAX) lines[lines.length - 1] = joined;
    else lines.push(word);
  }
  const two = lines.length > 2 ? [lines[0], lines.slice(1).join(" ")] : lines;
  return two.map((line) => shorten(line, LINE_MAX));
}

/**
 * A node: its box, the kinds of relation (none for the centre) and its title, clipped to the box
 * (a nested `<svg>` clips what overflows it), baselines set for one or two lines.
 */
function box(at: Point, title: string, kinds: string | null): SafeHtml {
  const lines = titleLines(title);
  const top = kinds ? 38 : 28;
  const baselines = lines.length === 2 ? [top, top + 17] : [kinds ? 42 : 36];
  const x = NODE_WIDTH / 2;
  const text = lines.map((line, i) =>
    html`<text class="name" x="${x}" y="${baselines[i]}">${line}</text>`
  );
  return html`<svg x="${tenth(at.x - x)}" y="${
    tenth(at.y - NODE_HEIGHT / 2)
  }" width="${NODE_WIDTH}" height="${NODE_HEIGHT}">
<rect x="1" y="1" width="${NODE_WIDTH - 2}" height="${NODE_HEIGHT - 2}" rx="12"></rect>
${kinds && html`<text class="kind" x="${x}" y="19">${shorten(kinds, KINDS_MAX)}</text>`}${text}
</svg>`;
}

/** A line from the centre to a node, an arrow at each end a relation points to. */
function edge(centre: Point, at: Point, node: RelatedNode): SafeHtml {
  const a = edgeEnd(centre, at);
  const b = edgeEnd(at, centre);
  const start = node.from && html`
    marker-start="url(#relation-arrow)"
  `;
  const end = node.to && html`
    marker-end="url(#relation-arrow)"
  `;
  return html`
    <line class="edge" x1="${a.x}" y1="${a.y}" x2="${b.x}" y2="${b.y}"
      ${start}${end}></line>
  `;
}

/**
 * The diagram of a character or faction with at least one related note, else `false`. Its input
 * is what the page's "Related" list shows: the note's own relations and those other notes hold
 * to it, grouped by kind (only visible notes, nothing kept private). The list must carry the id
 * {@linkcode RELATED_LIST_ID}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const svg = relationDiagram(
 *   { noteId: "mira", title: "Mira", loreType: "character" },
 *   [["Inhabits", [{ name: "relInhabits", targetNoteId: "harbor", targetTitle: "Harbor <1>", loreType: null }]]],
 *   [],
 * );
 * assert.ok(svg);
 * assert.match(svg.html, /<a href="\/public\/lore\/harbor"><title>Harbor &lt;1&gt; \(Inhabits\)<\/title>/);
 * assert.equal(relationDiagram({ noteId: "x", title: "X", loreType: "location" }, [], []), false);
 * ```
 */
export function relationDiagram(
  note: { noteId: string; title: string; loreType: string | null },
  outgoing: ByKind<PublicRelation>,
  incoming: ByKind<RelatedFrom>,
): SafeHtml | false {
  if (!note.loreType || !DIAGRAM_TYPES.has(note.loreType)) return false;
  const related = relatedNodes(note.noteId, outgoing, incoming);
  if (related.length === 0) return false;
  const shown = related.length > MAX_NODES ? related.slice(0, MAX_NODES - 1) : related;
  const more = related.length - shown.length;
  const points = ringLayout(shown.length + (more > 0 ? 1 : 0));
  const half = Math.max(...points.map((p) => Math.abs(p.y))) + NODE_HEIGHT / 2 + MARGIN;
  const centre = { x: VIEW_WIDTH / 2, y: half };
  const at = (p: Point) => ({ x: tenth(centre.x + p.x), y: tenth(centre.y + p.y) });
  const height = 2 * half;
  const count = `${related.length} related ${related.length === 1 ? "note" : "notes"}`;
  const name = `Relationship diagram of ${note.title}: ${count}, all listed below`;
  // a link's name is its <title> (hover shows it): the whole title, then the kinds of relation
  const nodes = shown.map((n, i) => {
    const kinds = n.kinds.join(", ");
    const drawn = box(at(points[i]), n.title, kinds);
    return html`<a href="${n.href}"><title>${n.title} (${kinds})</title>${drawn}</a>`;
  });
  const rest = more > 0 && box(at(points[shown.length]), `and ${more} more`, "see the list");
  return html`
    <svg class="diagram" viewBox="0 0 ${VIEW_WIDTH} ${height}" width="${VIEW_WIDTH}" height="${height}"
      role="group" aria-labelledby="relation-diagram-title">
    <title id="relation-diagram-title">${name}</title>
    <defs><marker id="relation-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6"
      markerHeight="6" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z"></path></marker></defs>
    ${shown.map((n, i) => edge(centre, at(points[i]), n))}
    <g class="centre">${box(centre, note.title, null)}</g>
    ${nodes}${rest && html`
      <a class="more"
        href="#${RELATED_LIST_ID}"><title>and ${more} more, in the list below</title>${rest}</a>
    `}
    </svg>
  `;
}
