import assert from "node:assert/strict";
import { NAV_WHOLE_TREE_MAX, siteNavigation } from "./navigation.ts";
import type { NavNode, SiteFrame } from "./site_model.ts";

/** A world of `branches` branches of `leaves` notes each, under one root. */
function world(branches: number, leaves: number): SiteFrame {
  const node = (noteId: string, children: NavNode[] = []): NavNode => ({
    noteId,
    id: noteId,
    title: `Title ${noteId}`,
    children,
  });
  const tree = node(
    "root",
    Array.from(
      { length: branches },
      (_, b) => node(`b${b}`, Array.from({ length: leaves }, (_, l) => node(`b${b}n${l}`))),
    ),
  );
  return {
    title: "World",
    description: "",
    tree,
    loreTypes: [],
    maps: [],
    hasTimeline: false,
    card: { path: "/public/card/k.png", alt: "World", width: 1200, height: 630 },
    origin: "https://lore.example.org",
  };
}

const linked = (nav: string) =>
  [...nav.matchAll(/href="\/public\/lore\/([^"]+)"/g)].map((m) => m[1]);

Deno.test("navigation: a small world's tree is drawn whole on every page", () => {
  const site = world(4, 10); // 45 notes
  const nav = siteNavigation(site, "b2n3").html;
  assert.equal(linked(nav).length, 44); // every note but the root (the home link)
  assert.match(nav, /<a href="\/public\/lore\/b2n3"\s+aria-current="page"\s*>/);
  assert.equal(nav.match(/<details\s+open\s*>/g)?.length, 1); // only the page's branch is open
});

Deno.test("navigation: a large world draws the page's branch and the first level of the others", () => {
  const site = world(10, 50); // 511 notes
  assert.ok(10 * 50 > NAV_WHOLE_TREE_MAX);
  const nav = siteNavigation(site, "b3n7").html;
  const links = linked(nav);
  // every branch, and every note of the page's own branch
  assert.deepEqual(links.filter((id) => /^b\d$/.test(id)).length, 10);
  assert.deepEqual(links.filter((id) => id.startsWith("b3n")).length, 50);
  assert.equal(links.length, 60);
  assert.match(nav, /<a href="\/public\/lore\/b3n7"\s+aria-current="page"\s*>/);
  // another page of the same world draws its own branch, not the last page's
  const other = linked(siteNavigation(site, "b8").html);
  assert.equal(other.filter((id) => id.startsWith("b8n")).length, 50);
  assert.equal(other.filter((id) => id.startsWith("b3n")).length, 0);
  // the home page: the first level only
  assert.equal(linked(siteNavigation(site, "root").html).length, 10);
});

Deno.test("navigation: a branch's link sits beside its disclosure, never inside the <summary>", () => {
  // as a browser reads it: whitespace between tags and before a tag's end does not matter
  const nav = siteNavigation(world(2, 2), "b1n0").html.replace(/\s+/g, " ")
    .replace(/>\s+</g, "><").replace(/\s+>/g, ">");
  const summaries = [...nav.matchAll(/<summary>([\s\S]*?)<\/summary>/g)].map((m) => m[1]);
  assert.equal(summaries.length, 2);
  for (const s of summaries) assert.doesNotMatch(s, /<a\b/, "no control inside a control");
  assert.match(
    nav,
    /<li class="branch"><a href="\/public\/lore\/b1">Title b1<\/a><details open><summary><span class="visually-hidden">Notes in Title b1<\/span><\/summary>/,
  );
  // the header's Contents link leads here; "Close contents" leads back to the page
  assert.match(nav, /^<nav class="site-nav" id="site-nav" aria-label="World">/);
  assert.match(nav, /<a class="nav-close" href="#main">Close contents<\/a>/);
});
