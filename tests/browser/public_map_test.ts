/// <reference lib="dom" />
/**
 * The public map page in headless Chromium on a 390 px phone (and a desktop), on the showcase's
 * real-size chart, in every view (fitted, 2×, 4×, full size): pins over the right spots of the
 * image with tap targets of at least 24 px and labels of at least 12 px kept on the map, the
 * zoomed map scrolling inside a region the keyboard scrolls while the page does not, the full
 * view at the image's own size, and no axe-core violation or small tap target.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { axeViolations, formatViolations, smallTapTargets } from "../helpers/accessibility.ts";
import { browserTestsRun, withBrowser } from "../helpers/browser.ts";
import { withHarness } from "../helpers/harness.ts";
import { W } from "../../sims/world.ts";
import { MAP_SIZE, seedShowcase } from "../../sims/showcase.ts";

const SUITE = "public map in Chromium";
const MAP = `/public/maps/${W.locChart}`;
const VIEWS = ["", "?zoom=2", "?zoom=4", "?zoom=full"];
/** The showcase's pins, in the image's pixels. */
const PINS = [[300, 430], [760, 205]];

interface Rect {
  left: number;
  top: number;
  right: number;
  bottom: number;
  width: number;
  height: number;
}

/** What a visitor sees of the map, measured as laid out. */
async function measure(page: Page) {
  return await page.evaluate(() => {
    const rect = (e: Element) => {
      const r = e.getBoundingClientRect();
      return {
        left: r.left,
        top: r.top,
        right: r.right,
        bottom: r.bottom,
        width: r.width,
        height: r.height,
      };
    };
    const frame = document.querySelector<HTMLElement>(".map-frame");
    const img = document.querySelector<HTMLImageElement>(".map-canvas img");
    if (!frame || !img) return null;
    return {
      overflow: document.documentElement.scrollWidth - globalThis.innerWidth,
      frame: { scroll: frame.scrollWidth, client: frame.clientWidth, tabIndex: frame.tabIndex },
      img: { ...rect(img), natural: img.naturalWidth },
      svg: rect(document.querySelector(".map-pins")!),
      pins: [...document.querySelectorAll(".map-pins a.pin")].map((a) => ({
        target: rect(a.querySelector(".pin-target")!),
        dot: rect(a.querySelector(".pin-dot")!),
        label: a.querySelector("text") && rect(a.querySelector("text")!),
        font: parseFloat(getComputedStyle(a.querySelector("text")!).fontSize),
      })),
    };
  });
}

const within = (inner: Rect, outer: Rect) =>
  inner.left >= outer.left - 0.5 && inner.right <= outer.right + 0.5 &&
  inner.top >= outer.top - 0.5 && inner.bottom <= outer.bottom + 0.5;

Deno.test({
  name: "public map in Chromium: pins tappable and readable on a phone in every view",
  ignore: !browserTestsRun(SUITE),
  fn: () =>
    withHarness((h) =>
      withBrowser(async (browser) => {
        seedShowcase(h.core.store);
        const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
        const page = await context.newPage();
        const problems: string[] = [];
        let targetSize: number | null = null;
        for (const view of VIEWS) {
          const res = await page.goto(h.url + MAP + view);
          assert.equal(res?.status(), 200, view);
          await page.waitForFunction(() => [...document.images].every((i) => i.complete));
          const where = view || "fit";
          const m = await measure(page);
          assert.ok(m, `${where}: no map drawn over its image`);
          assert.ok(m.overflow <= 0, `${where}: the page scrolls sideways`);
          // the pins' layer lies exactly over the image
          for (const k of ["left", "top", "width", "height"] as const) {
            assert.ok(Math.abs(m.svg[k] - m.img[k]) < 0.5, `${where}: pins' ${k}`);
          }
          assert.equal(m.pins.length, PINS.length, where);
          m.pins.forEach((p, i) => {
            // each pin on its spot of the image
            const [x, y] = PINS[i];
            const cx = (p.dot.left + p.dot.right) / 2 - m.img.left;
            const cy = (p.dot.top + p.dot.bottom) / 2 - m.img.top;
            assert.ok(Math.abs(cx - (x / MAP_SIZE.width) * m.img.width) < 1, `${where} pin ${i}`);
            assert.ok(Math.abs(cy - (y / MAP_SIZE.height) * m.img.height) < 1, `${where} pin ${i}`);
            assert.ok(p.target.width >= 24 && p.target.height >= 24, `${where} pin ${i} target`);
            assert.ok(p.font >= 12 && p.label!.height >= 12, `${where} pin ${i} label`);
            assert.ok(within(p.label!, m.img), `${where} pin ${i}: label off the map`);
            assert.ok(within(p.target, m.img), `${where} pin ${i}: target off the map`);
            // the same size on screen at every zoom
            targetSize ??= p.target.width;
            assert.equal(p.target.width, targetSize, `${where} pin ${i} changed size`);
          });
          if (view === "") {
            assert.ok(m.frame.scroll <= m.frame.client, "fitted, the map fits the column");
          } else {
            // zoomed: larger than the column, scrolled inside its frame with the keyboard
            assert.ok(m.frame.scroll > m.frame.client, `${where}: the map does not scroll`);
            assert.equal(m.frame.tabIndex, 0, `${where}: the map's region takes focus`);
            await page.focus(".map-frame");
            await page.keyboard.press("ArrowRight"); // scrolls at once: no smooth scrolling
            await page.waitForFunction(() => document.querySelector(".map-frame")!.scrollLeft > 0);
          }
          if (view === "?zoom=full") {
            assert.equal(m.img.natural, MAP_SIZE.width);
            assert.equal(m.img.width, MAP_SIZE.width, "drawn at the image's own size");
          }
          for (const small of await smallTapTargets(page)) problems.push(`${where}: ${small}`);
          for (const width of [390, 1280]) {
            await page.setViewportSize({ width, height: 844 });
            const found = await axeViolations(page);
            if (found.length > 0) problems.push(`${where} ${width}: ${formatViolations(found)}`);
          }
          await page.setViewportSize({ width: 390, height: 844 });
        }
        assert.deepEqual(problems, [], problems.join("\n"));
        await context.close();
      }, ["--disable-smooth-scrolling"])
    ),
});
