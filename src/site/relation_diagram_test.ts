import assert from "node:assert/strict";
import type { PublicRelation } from "../share/public_types.ts";
import {
  MAX_NODES,
  RELATED_LIST_ID,
  relationDiagram,
  ringLayout,
  titleLines,
} from "./relation_diagram.ts";

const mira = { noteId: "mira", title: "Mira Tallowend", loreType: "character" };

const to = (id: string, title: string): PublicRelation => ({
  name: "relAlly",
  targetNoteId: id,
  targetTitle: title,
  loreType: "character",
});

const from = (id: string, title: string) => ({
  name: "relAlly",
  fromNoteId: id,
  from: { id: `alias-${id}`, title },
});

/** The diagram of `count` allies. */
function allies(count: number): string {
  const targets = Array.from({ length: count }, (_, i) => to(`n${i}`, `Ally number ${i}`));
  const svg = relationDiagram(mira, [["Ally", targets]], []);
  assert.ok(svg);
  return svg.html;
}

const LINE = /<line class="edge" x1="([\d.]+)" y1="([\d.]+)" x2="([\d.]+)" y2="([\d.]+)"/g;

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The nodes' boxes (nested `<svg>`s), the centre's first, and the diagram's own size. */
function boxes(svg: string): { view: Box; nodes: Box[] } {
  const [view, ...nodes] = [...svg.matchAll(/<svg ([^>]*)>/g)].map(([, attrs]) => {
    const n = (name: string) => Number(new RegExp(`(?:^|\\s)${name}="([^"]*)"`).exec(attrs)?.[1]);
    return { x: n("x") || 0, y: n("y") || 0, width: n("width"), height: n("height") };
  });
  return { view, nodes };
}

Deno.test("relation diagram: every count up to the cap lies inside the diagram, no node on another", () => {
  for (let count = 1; count <= MAX_NODES; count++) {
    const { view, nodes } = boxes(allies(count));
    assert.equal(nodes.length, count + 1, `${count}: the centre and each related note`);
    for (const [i, a] of nodes.entries()) {
      assert.ok(a.x >= 0 && a.x + a.width <= view.width, `${count}: node ${i} inside (x)`);
      assert.ok(a.y >= 0 && a.y + a.height <= view.height, `${count}: node ${i} inside (y)`);
      // tappable at 390 px: the diagram is drawn ~0.9 px a unit there
      assert.ok(a.width * 0.85 >= 24 && a.height * 0.85 >= 24, `${count}: node ${i} size`);
      for (const b of nodes.slice(i + 1)) {
        const apart = a.x + a.width <= b.x || b.x + b.width <= a.x ||
          a.y + a.height <= b.y || b.y + b.height <= a.y;
        assert.ok(apart, `${count}: ${JSON.stringify(a)} and ${JSON.stringify(b)} overlap`);
      }
    }
    // lines run between boxes, through none
    const lines = [...allies(count).matchAll(LINE)];
    assert.equal(lines.length, count);
    for (const [, x1, y1, x2, y2] of lines) {
      for (let t = 0; t <= 1; t += 0.02) {
        const x = Number(x1) + (Number(x2) - Number(x1)) * t;
        const y = Number(y1) + (Number(y2) - Number(y1)) * t;
        const through = nodes.find((b) =>
          x > b.x + 1 && x < b.x + b.width - 1 && y > b.y + 1 && y < b.y + b.height - 1
        );
        assert.equal(through, undefined, `${count}: a line through a node at ${x}, ${y}`);
      }
    }
  }
});

Deno.test("relation diagram: the same relations are drawn the same, nodes clockwise from top right", () => {
  assert.equal(allies(7), allies(7));
  const six = ringLayout(6);
  assert.deepEqual(six.map((p) => [Math.sign(p.x), Math.sign(p.y)]), [
    [1, -1],
    [1, 0],
    [1, 1],
    [-1, 1],
    [-1, 0],
    [-1, -1],
  ]);
  // the drawing follows the layout: a node's box is centred on its point
  const { view, nodes } = boxes(allies(6));
  const centre = nodes[0];
  nodes.slice(1).forEach((b, i) => {
    const offset = (v: number) => Math.round(v * 10) / 10;
    assert.equal(offset(b.x + b.width / 2 - (centre.x + centre.width / 2)), six[i].x);
    assert.equal(offset(b.y + b.height / 2 - (centre.y + centre.height / 2)), six[i].y);
  });
  assert.equal(centre.x + centre.width / 2, view.width / 2);
});

Deno.test("relation diagram: past the cap, the last node says how many more the list holds", () => {
  const svg = allies(MAX_NODES + 3);
  const links = [...svg.matchAll(/<a [^>]*href="([^"]*)"/g)].map((m) => m[1]);
  assert.equal(links.length, MAX_NODES);
  assert.deepEqual(
    links.slice(0, MAX_NODES - 1),
    Array.from({ length: MAX_NODES - 1 }, (_, i) => `/public/lore/n${i}`),
  );
  assert.equal(links[MAX_NODES - 1], `#${RELATED_LIST_ID}`);
  assert.match(svg, /<text class="name" [^>]*>and 4 more<\/text>/);
  assert.match(svg, /<title id="relation-diagram-title">[^<]*: 15 related notes, all listed below/);
  assert.equal(svg.match(/<line /g)?.length, MAX_NODES - 1, "no line to the rest");
  assert.equal(allies(MAX_NODES).match(/<a /g)?.length, MAX_NODES, "at the cap: all drawn");
});

Deno.test("relation diagram: titles are escaped, links encoded, labels cut between words", () => {
  const evil = `<img src=x onerror="alert(1)"> & "Co"`;
  const svg = relationDiagram(
    { ...mira, title: evil },
    [["Enemy", [to("a/b?c", evil)]]],
    [["Member of", [from("x", "The Order of the Drowned Bell")]]],
  );
  assert.ok(svg);
  assert.doesNotMatch(svg.html, /<img|onerror="/);
  assert.match(
    svg.html,
    /<title>&lt;img src=x onerror=&quot;alert\(1\)&quot;&gt; &amp; &quot;Co&quot; \(Enemy\)/,
  );
  assert.match(svg.html, /<a href="\/public\/lore\/a%2Fb%3Fc">/);
  // a relation held to the note links its source by the id its URL uses (an alias here)
  assert.match(
    svg.html,
    /<a href="\/public\/lore\/alias-x"><title>The Order of the Drowned Bell \(Member of\)/,
  );
  assert.match(svg.html, />The Order of<\/text>\s*<text class="name" [^>]*>the Drowned…<\/text>/);
  assert.deepEqual(titleLines("Saltmarrow Harbor"), ["Saltmarrow", "Harbor"]);
  assert.deepEqual(titleLines("Aldous Kettlewick-Fane"), ["Aldous", "Kettlewick-…"]);
  assert.deepEqual(titleLines("Pell"), ["Pell"]);
});

Deno.test("relation diagram: a note related both ways is one node with an arrow at each end", () => {
  const svg = relationDiagram(
    mira,
    [["Ally", [to("iselde", "Iselde Crane")]], ["Inhabits", [to("harbor", "Harbor")]]],
    [["Ally", [from("iselde", "Iselde Crane")]], ["Rival", [from("oskar", "Oskar")]]],
  );
  assert.ok(svg);
  const lines = svg.html.match(/<line [^>]*>/g) ?? [];
  assert.equal(lines.length, 3);
  assert.match(lines[0], /marker-start="url\(#relation-arrow\)"\s+marker-end=/, "both ways");
  assert.match(lines[1], /marker-end=/);
  assert.doesNotMatch(lines[1], /marker-start=/, "to the harbor only");
  assert.match(lines[2], /marker-start=/);
  assert.doesNotMatch(lines[2], /marker-end=/, "from Oskar only");
  assert.match(svg.html, /<title>Iselde Crane \(Ally\)<\/title>/);
});

Deno.test("relation diagram: only for characters and factions with a related note", () => {
  const ally = [["Ally", [to("iselde", "Iselde")]]] as const;
  assert.equal(relationDiagram({ ...mira, loreType: "location" }, ally, []), false);
  assert.equal(relationDiagram({ ...mira, loreType: null }, ally, []), false);
  assert.ok(relationDiagram({ ...mira, loreType: "faction" }, ally, []));
  assert.equal(relationDiagram(mira, [], []), false);
  // a relation to itself is no one around it
  assert.equal(relationDiagram(mira, [["Ally", [to("mira", "Mira")]]], []), false);
});
