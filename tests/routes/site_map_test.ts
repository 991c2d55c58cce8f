/**
 * The public map page over HTTP against the Core double, on the showcase's real-size chart: pins
 * a phone can tap and read at any image size (sizes computed from the markup), zoom levels as
 * links with bad ones refused, the full-size view with its pins, and only visible notes as pins
 * in every view.
 */
import assert from "node:assert/strict";
import { labelWidth, PIN_LABEL_SIZE } from "../../src/site/map_pins.ts";
import { assertNoSecrets, type Harness, withHarness } from "../helpers/harness.ts";
import { createLoreNote, HARBOR_ALIAS, makePng, W } from "../../sims/world.ts";
import { MAP_SIZE, seedShowcase } from "../../sims/showcase.ts";

const MAP = `/public/maps/${W.locChart}`;
const VIEWS = ["", "?zoom=2", "?zoom=4", "?zoom=full"];

/** The map's width (CSS px) in the column of a 390 px phone (16 px padding, 1 px border a side). */
const PHONE_MAP = 390 - 2 * 16 - 2;
/** The same on a 1280 px desktop (72rem column, 16rem navigation, 1.5rem gap). */
const DESKTOP_MAP = 1152 - 2 * 16 - 256 - 24 - 2;

async function get(h: Harness, path: string) {
  const res = await h.request(path);
  const text = await res.text();
  assertNoSecrets(h, text);
  // markup as a browser reads it: whitespace between and inside tags does not matter
  const body = text.replace(/\s+/g, " ").replace(/>\s+</g, "><").replace(/\s+>/g, ">");
  return { status: res.status, headers: res.headers, body };
}

const attr = (tag: string, name: string) =>
  new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1] ?? null;

interface DrawnPin {
  href: string;
  name: string | null;
  /** Tap target and label size in CSS px when the map is `width` px wide. */
  target: (width: number) => number;
  label: (width: number) => number;
  text: string | null;
  left: number;
  dx: number;
  anchor: string | null;
}

/**
 * The pins of a map page as its markup draws them. The pins' SVG spans the map; with a viewBox
 * one of its units is (map width / viewBox width) CSS px, without one it is one CSS px.
 */
function drawnPins(body: string): DrawnPin[] {
  const svg = /<svg class="map-pins"[^>]*>([\s\S]*?)<\/svg>/.exec(body);
  assert.ok(svg, "the map's pins are drawn");
  const viewBox = attr(svg[0].slice(0, svg[0].indexOf(">") + 1), "viewBox");
  const unit = (width: number) => viewBox ? width / Number(viewBox.split(" ")[2]) : 1;
  return [...svg[1].matchAll(/<a [^>]*class="pin"[^>]*>[\s\S]*?<\/a>/g)].map(([a]) => {
    const open = a.slice(0, a.indexOf(">") + 1);
    const target = /<circle class="pin-target"[^>]*>/.exec(a)?.[0] ?? "";
    const text = /<text [^>]*>([^<]*)<\/text>/.exec(a);
    const size = Number(text ? attr(text[0], "font-size") : NaN);
    const r = Number(attr(target, "r"));
    return {
      href: attr(open, "href")!,
      name: attr(open, "aria-label") ?? text?.[1] ?? null,
      target: (width) => 2 * r * unit(width),
      label: (width) => size * unit(width),
      text: text?.[1] ?? null,
      left: parseFloat(text ? attr(text[0], "x")! : "NaN"),
      dx: Number(text ? attr(text[0], "dx") : NaN),
      anchor: text ? attr(text[0], "text-anchor") : null,
    };
  });
}

function label(h: Harness, noteId: string, name: string, value = "") {
  h.core.store.createAttribute({ noteId, type: "label", name, value });
}

/** Moves a note's pin. */
function pinAt(h: Harness, noteId: string, x: number, y: number) {
  for (const a of h.core.store.ownAttributes(noteId)) {
    if (a.name === "geolocation") h.core.store.deleteAttribute(a.attributeId);
  }
  label(h, noteId, "geolocation", `${x}, ${y}`);
}

Deno.test("map page: pins a phone can tap and read, whatever the image's size", () =>
  withHarness(async (h) => {
    seedShowcase(h.core.store);
    const sizes: [string, { width: number; height: number }][] = [
      ["showcase", MAP_SIZE],
      ["wide", { width: 2400, height: 800 }],
      ["tiny", { width: 64, height: 48 }],
    ];
    for (const [name, size] of sizes) {
      if (name !== "showcase") {
        const png = makePng(size.width, size.height, () => [9, 80, 120]);
        h.core.store.putNoteContent(W.imgChart, png);
        // the showcase's pins, moved to the same places on the new image
        pinAt(h, W.locHarbor, (300 / 960) * size.width, (430 / 640) * size.height);
        pinAt(h, W.locLighthouse, (760 / 960) * size.width, (205 / 640) * size.height);
      }
      const page = await get(h, MAP);
      assert.equal(page.status, 200, name);
      assert.match(
        page.body,
        new RegExp(`<img src="[^"]+" width="${size.width}" height="${size.height}"`),
      );
      const pins = drawnPins(page.body);
      assert.deepEqual(pins.map((p) => [p.href, p.name]), [
        [`/public/lore/${HARBOR_ALIAS}`, "Saltmarrow Harbor"],
        [`/public/lore/${W.locLighthouse}`, "Greyfin Lighthouse"],
      ], name);
      for (const p of pins) {
        for (const width of [PHONE_MAP, DESKTOP_MAP]) {
          assert.ok(p.target(width) >= 24, `${name} ${p.name} at ${width}: ${p.target(width)} px`);
          assert.ok(p.label(width) >= 12, `${name} ${p.name} at ${width}: ${p.label(width)} px`);
        }
      }
    }
    // the places again as a list under the map, for reading on a phone
    const page = await get(h, MAP);
    assert.match(
      page.body,
      new RegExp(
        `<h2 id="pins-title">Places on this map</h2><ul class="links"><li><a href="/public/lore/${HARBOR_ALIAS}">Saltmarrow Harbor</a></li><li><a href="/public/lore/${W.locLighthouse}">Greyfin Lighthouse</a></li></ul>`,
      ),
    );
  }, { env: { PUBLIC_CACHE_MS: "0" } }));

Deno.test("map page: labels stay on the map on a phone, a long one shortened but named whole", () =>
  withHarness(async (h) => {
    seedShowcase(h.core.store);
    const long = "The Lighthouse Keepers and their Drowned Cottage Below the Cliffs";
    const cottage = createLoreNote(h.core.store, W.locChart, long, "location");
    label(h, cottage, "geolocation", "480, 600");
    for (const view of VIEWS) {
      const page = await get(h, MAP + view);
      const width = view === "?zoom=full" ? MAP_SIZE.width : PHONE_MAP * (Number(view.at(-1)) || 1);
      const pins = drawnPins(page.body);
      assert.equal(pins.length, 3, view);
      for (const p of pins) {
        assert.ok(p.text, `${view} ${p.name} has a label`);
        const at = (p.left / 100) * width + p.dx;
        const w = labelWidth(p.text);
        const x0 = p.anchor === "end" ? at - w : p.anchor === "middle" ? at - w / 2 : at;
        const x1 = x0 + w;
        assert.ok(x0 >= 0 && x1 <= width, `${view} ${p.text}: ${x0}..${x1} of ${width}`);
      }
      const cottagePin = pins.find((p) => p.href === `/public/lore/${cottage}`)!;
      assert.equal(cottagePin.name, long, "the link is named by the whole title");
      if (view === "") assert.match(cottagePin.text!, /^The Lighthouse Keepers .*…$/);
      if (view === "?zoom=4") assert.equal(cottagePin.text, long);
    }
    assert.ok(PIN_LABEL_SIZE >= 12);
  }));

Deno.test("map page: zoom levels as links; zoomed views scroll in a focusable region, noindex", () =>
  withHarness(async (h) => {
    seedShowcase(h.core.store);
    const base = await get(h, MAP);
    assert.match(
      base.body,
      new RegExp(
        `<p class="map-zoom">Zoom: <a href="${MAP}" aria-current="page">Fit</a> ?<a href="${MAP}\\?zoom=2">2×</a> ?<a href="${MAP}\\?zoom=4">4×</a> ?<a href="${MAP}\\?zoom=full">Full size</a></p>`,
      ),
    );
    assert.match(base.body, /<div class="map-frame"><div class="map-canvas">/);
    assert.ok(!base.body.includes('name="robots"'));
    assert.equal(base.headers.get("x-robots-tag"), null);
    assert.ok(!base.body.includes("Full-size map image"), "no link to the bare image");
    const basePins = drawnPins(base.body).map((p) => [p.href, p.target(PHONE_MAP)]);
    for (const view of VIEWS.slice(1)) {
      const zoom = view.slice("?zoom=".length);
      const page = await get(h, MAP + view);
      assert.equal(page.status, 200, view);
      assert.match(
        page.body,
        new RegExp(
          `<div class="map-frame zoom-${zoom}" tabindex="0" role="region" aria-label="Chart of the Shattered Coast, [^"]+ \\(scrolls\\)"><div class="map-canvas">`,
        ),
      );
      assert.match(page.body, new RegExp(`<a href="${MAP}\\?zoom=${zoom}" aria-current="page">`));
      assert.match(page.body, /<meta name="robots" content="noindex">/);
      assert.equal(page.headers.get("x-robots-tag"), "noindex");
      assert.match(page.body, new RegExp(`<link rel="canonical" href="${h.url}${MAP}">`));
      // the same pins, the same size on screen
      assert.deepEqual(drawnPins(page.body).map((p) => [p.href, p.target(PHONE_MAP)]), basePins);
    }
    const sitemap = await get(h, "/sitemap.xml");
    assert.ok(sitemap.body.includes(`<loc>${h.url}${MAP}</loc>`));
    assert.ok(!sitemap.body.includes("zoom="), "zoomed views are not in the sitemap");
  }));

Deno.test("map page: the full-size view draws the image at its own size with its pins", () =>
  withHarness(async (h) => {
    seedShowcase(h.core.store);
    const page = await get(h, `${MAP}?zoom=full`);
    assert.equal(page.status, 200);
    assert.match(page.body, /<title>Map: Chart of the Shattered Coast \(Full size\) · /);
    assert.match(
      page.body,
      /<div class="map-frame zoom-full"[^>]*><div class="map-canvas"><img src="\/api\/public\/images\/wImgChart001\/[^"]+" width="960" height="640" alt="">/,
    );
    assert.deepEqual(drawnPins(page.body).map((p) => p.name), [
      "Saltmarrow Harbor",
      "Greyfin Lighthouse",
    ]);
    // the showcase pins at (300, 430) and (760, 205) of 960 × 640
    assert.match(page.body, /<circle class="pin-dot" cx="31.25%" cy="67.188%"/);
    assert.match(page.body, /<circle class="pin-dot" cx="79.167%" cy="32.031%"/);
  }));

Deno.test("map page: a bad zoom is an HTML 400 before anything is read", () =>
  withHarness(async (h) => {
    seedShowcase(h.core.store);
    for (const zoom of ["3", "1", "", "FULL", "2x", "0.5", "%3Cb%3E"]) {
      h.core.clearRequests();
      const res = await h.request(`${MAP}?zoom=${zoom}`);
      const body = await res.text();
      assert.equal(res.status, 400, zoom);
      assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
      assert.match(body, /<h1>Bad request<\/h1>/);
      assert.ok(!body.includes("<b>"), "the value is not echoed as markup");
      assert.deepEqual(h.core.requests, [], `${zoom}: nothing sent to Core`);
    }
    // a parameter the page does not know is ignored, as elsewhere on the site
    assert.equal((await get(h, `${MAP}?utm_source=chat`)).status, 200);
  }));

Deno.test("map page: only visible notes become pins, in every view", () =>
  withHarness(async (h) => {
    seedShowcase(h.core.store);
    const wreck = createLoreNote(h.core.store, W.locChart, "Wreck of the Heron", "location");
    label(h, wreck, "geolocation", "500, 500");
    label(h, wreck, "gmOnly");
    const cache = createLoreNote(h.core.store, W.locChart, "Smugglers' Cache", "location");
    label(h, cache, "geolocation", "600, 100");
    label(h, cache, "draft");
    // a pin under a hidden pin is no child of the map, and hidden besides
    const deep = createLoreNote(h.core.store, wreck, "Heron's Strongbox", "location");
    label(h, deep, "geolocation", "510, 510");
    for (const view of VIEWS) {
      const page = await get(h, MAP + view);
      assert.equal(page.status, 200, view);
      for (const hidden of ["Wreck of the Heron", "Smugglers", "Strongbox", wreck, cache, deep]) {
        assert.ok(!page.body.includes(hidden), `${view || "fit"} shows ${hidden}`);
      }
      assert.deepEqual(drawnPins(page.body).map((p) => p.name), [
        "Saltmarrow Harbor",
        "Greyfin Lighthouse",
      ]);
    }
    // a hidden map has no view at all
    label(h, W.locChart, "draft");
    for (const view of VIEWS) assert.equal((await get(h, MAP + view)).status, 404, view);
  }, { env: { PUBLIC_CACHE_MS: "0" } }));
