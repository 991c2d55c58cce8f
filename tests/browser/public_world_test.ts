/// <reference lib="dom" />
/**
 * The public site's quality bars in headless Chromium, at phone and desktop width, on the sample
 * world dressed with real-size pictures: no horizontal overflow, images at their real size, every
 * internal link of every public page resolves and none reaches a hidden note, preview metadata
 * present, print hides the navigation, headings in order, landmarks, `lang`, readable contrast in
 * the default theme, no axe-core violation at either width in either colour scheme, tap targets of
 * at least 24 px on a phone, and the contents one tap from the top of a phone's page.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { axeViolations, formatViolations, smallTapTargets } from "../helpers/accessibility.ts";
import { browserTestsRun, withBrowser } from "../helpers/browser.ts";
import { withHarness } from "../helpers/harness.ts";
import { W } from "../../sims/world.ts";
import { LANDSCAPE_SIZE, MAP_SIZE, PORTRAIT_SIZE, seedShowcase } from "../../sims/showcase.ts";

const SUITE = "public world in Chromium";

/** Names and ids of notes that exist in Core but are never public. */
const HIDDEN = [
  "Rumours on the Docks",
  "The Drowned Bell",
  "Work in Progress",
  "Unfinished Sea Charts",
  "harbourmaster is in Brannoch",
  "debt she cannot pay",
  "The Lantern Vault",
  W.guideDraft,
  W.guideGmOnly,
  W.guideWip,
  W.guideWipChild,
  W.guideVault,
  W.guideProtected,
];

const VIEWPORTS = [
  { name: "phone", width: 390, height: 844 },
  { name: "desktop", width: 1280, height: 900 },
];

const SCHEMES = ["light", "dark"] as const;

/** Pages no link leads to: a search's results, and the error page of a missing note. */
const UNLINKED: Readonly<Record<string, number>> = {
  "/?q=harbor": 200,
  "/public/lore/no-such-note": 404,
};

/**
 * The page as laid out now at `width`, in both colour schemes: no axe-core violation, and (on a
 * phone) no tap target under 24 px. Failures are collected, so one run names them all.
 */
async function accessibilityProblems(page: Page, where: string, width: string): Promise<string[]> {
  const problems: string[] = [];
  for (const colorScheme of SCHEMES) {
    await page.emulateMedia({ colorScheme });
    const found = await axeViolations(page);
    if (found.length > 0) {
      problems.push(`${where} ${width} ${colorScheme}: ${formatViolations(found)}`);
    }
  }
  if (width === "phone") {
    for (const small of await smallTapTargets(page)) problems.push(`${where} phone: ${small}`);
  }
  return problems;
}

/** Hrefs of the links a reader meets on the page as laid out (the GM's own text aside). */
async function visibleLinks(page: Page): Promise<string[]> {
  return await page.evaluate(() =>
    [...document.querySelectorAll("a[href]")]
      .filter((a) =>
        a.checkVisibility() && a.getBoundingClientRect().right > 0 && !a.closest(".content")
      )
      .map((a) => a.getAttribute("href")!)
  );
}

/**
 * On a phone the navigation waits behind the header's Contents link, which opens it at the top
 * (and "Close contents" puts it away), so the home page names each link once; the skip link leads
 * past the header into the page; on a desktop the navigation is the sidebar, with no Contents link.
 */
async function contentsFromTheTop(page: Page, base: string): Promise<void> {
  const [phone, desktop] = VIEWPORTS;
  await page.setViewportSize(phone);
  await page.goto(base + "/");
  const nav = page.locator(".site-nav");
  assert.equal(await nav.isVisible(), false, "a phone's navigation waits behind Contents");
  const links = await visibleLinks(page);
  const twice = links.filter((href, i) => links.indexOf(href) !== i);
  assert.deepEqual(twice, [], "a phone's home page names each link once");
  const menu = page.locator(".site-header .menu-link");
  const box = await menu.boundingBox();
  assert.ok(box && box.y + box.height <= phone.height, "Contents is on the first screen");
  await menu.click();
  const opened = await page.evaluate(() => ({
    nav: document.querySelector(".site-nav")!.getBoundingClientRect().top,
    main: document.querySelector("main")!.getBoundingClientRect().top,
  }));
  assert.ok(opened.nav < opened.main, "the contents open above the page");
  assert.ok(opened.nav >= 0 && opened.nav < 50, `scrolled to the contents (${opened.nav})`);
  await page.locator(".nav-close").click();
  assert.equal(await nav.isVisible(), false, "Close contents puts them away");

  await page.goto(`${base}/public/lore/${W.charMira}`);
  await page.keyboard.press("Tab");
  const skip = await page.evaluate(() => ({
    focused: document.activeElement?.className,
    left: document.activeElement!.getBoundingClientRect().left,
  }));
  assert.equal(skip.focused, "skip", "the skip link comes first");
  assert.ok(skip.left >= 0, "the skip link shows when focused");
  await page.keyboard.press("Enter");
  await page.keyboard.press("Tab");
  assert.ok(
    await page.evaluate(() => document.activeElement?.closest("main") !== null),
    "after the skip link, Tab goes on inside the page",
  );

  await page.setViewportSize(desktop);
  assert.equal(await nav.isVisible(), true, "the desktop's sidebar");
  assert.equal(await menu.isVisible(), false, "no Contents link beside the sidebar");
  const sides = await page.evaluate(() => ({
    nav: document.querySelector(".site-nav")!.getBoundingClientRect().right,
    main: document.querySelector("main")!.getBoundingClientRect().left,
  }));
  assert.ok(sides.nav <= sides.main, "the sidebar left of the page");
}

async function noOverflow(page: Page): Promise<boolean> {
  return await page.evaluate(() => document.documentElement.scrollWidth <= globalThis.innerWidth);
}

/** Relative luminance contrast of two CSS colours `rgb(r, g, b)`. */
function contrast(a: string, b: string): number {
  const lum = (c: string) => {
    const [r, g, bl] = (c.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number).map((v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

Deno.test({
  name: "public world in Chromium: every page reachable, tidy at both widths, nothing hidden",
  ignore: !browserTestsRun(SUITE),
  fn: () =>
    withHarness((h) =>
      withBrowser(async (browser) => {
        seedShowcase(h.core.store);
        // One page throughout, resized between the widths (a fresh one would load everything
        // anew). Crawl every public page from the home page, following same-origin links; the
        // markup does not depend on the width, so each page loads once and is laid out at both.
        const context = await browser.newContext({ viewport: VIEWPORTS[0] });
        const page = await context.newPage();
        const queue = ["/", ...Object.keys(UNLINKED)];
        const seen = new Set(queue);
        const problems: string[] = [];
        while (queue.length > 0) {
          const path = queue.shift()!;
          const res = await page.goto(h.url + path);
          assert.equal(res?.status(), UNLINKED[path] ?? 200, path);
          const type = res?.headers()["content-type"] ?? "";
          if (!type.startsWith("text/html")) continue;
          const markup = await page.content();
          for (const text of HIDDEN) assert.ok(!markup.includes(text), `${path} shows ${text}`);
          for (const viewport of VIEWPORTS) {
            await page.setViewportSize(viewport);
            assert.ok(await noOverflow(page), `${viewport.name} ${path} scrolls sideways`);
            if (viewport.name === "phone") {
              // the navigation opened from the header's Contents link: checked too
              await page.evaluate(() => location.hash = "site-nav");
              assert.ok(await noOverflow(page), `phone ${path}#site-nav scrolls sideways`);
            }
            problems.push(...await accessibilityProblems(page, path, viewport.name));
          }
          await page.emulateMedia({ colorScheme: null });
          const hrefs = await page.evaluate(() =>
            [...document.querySelectorAll("a[href]")].map((a) => a.getAttribute("href")!)
          );
          for (const href of hrefs) {
            const url = new URL(href, h.url + path);
            if (url.origin !== h.url || seen.has(url.pathname + url.search)) continue;
            if (url.pathname.startsWith("/api/public/images/")) {
              const image = await page.request.get(url.href);
              assert.equal(image.status(), 200, `${path} → ${href}`);
              continue;
            }
            seen.add(url.pathname + url.search);
            queue.push(url.pathname + url.search);
          }
        }
        assert.deepEqual(problems, [], `accessibility:\n${problems.join("\n")}`);
        assert.ok(seen.size > 10, `only ${seen.size} pages crawled`);
        for (const path of ["/public/timeline", `/public/maps/${W.locChart}`]) {
          assert.ok(seen.has(path), `${path} is linked`);
        }
        await contentsFromTheTop(page, h.url);

        for (const viewport of VIEWPORTS) {
          await page.setViewportSize(viewport);

          // images at their real size, with their size given up front
          await page.goto(`${h.url}/public/lore/${W.charMira}`);
          const portrait = page.locator("img.portrait");
          await page.waitForFunction(() =>
            document.querySelector<HTMLImageElement>("img.portrait")?.complete
          );
          assert.equal(
            await portrait.evaluate((i: HTMLImageElement) => i.naturalWidth),
            PORTRAIT_SIZE.width,
          );
          assert.equal(await portrait.getAttribute("width"), String(PORTRAIT_SIZE.width));
          // never drawn wider than the picture itself, nor than its box
          const drawn = await portrait.evaluate((i: HTMLImageElement) => ({
            width: i.getBoundingClientRect().width,
            box: i.closest(".infobox")!.getBoundingClientRect().width,
          }));
          assert.ok(drawn.width <= PORTRAIT_SIZE.width + 0.5, `${viewport.name}: ${drawn.width}`);
          assert.ok(drawn.width < drawn.box, `${viewport.name}: the portrait fits its box`);
          const og = await page.evaluate(() =>
            Object.fromEntries(
              [...document.querySelectorAll("meta[property^='og:'], meta[name^='twitter:']")]
                .map((
                  m,
                ) => [
                  m.getAttribute("property") ?? m.getAttribute("name"),
                  m.getAttribute("content"),
                ]),
            )
          );
          assert.equal(og["og:title"], "Mira Tallowend");
          // the picture the page shows, at its one URL, as the small card its size suits
          assert.equal(og["og:image"], h.url + (await portrait.getAttribute("src")));
          assert.equal(og["twitter:card"], "summary");
          for (const text of HIDDEN) assert.ok(!JSON.stringify(og).includes(text));

          await page.goto(`${h.url}/public/lore/${W.guideWelcome}`);
          const landscape = page.locator('img[alt="Greyfin Lighthouse at dusk"]');
          await landscape.scrollIntoViewIfNeeded();
          await page.waitForFunction(() =>
            document.querySelector<HTMLImageElement>('img[alt="Greyfin Lighthouse at dusk"]')
              ?.complete
          );
          const box = await landscape.evaluate((i: HTMLImageElement) => ({
            natural: i.naturalWidth,
            shown: i.getBoundingClientRect().width,
            column: i.closest(".content")!.getBoundingClientRect().width,
            lazy: i.loading,
          }));
          assert.equal(box.natural, LANDSCAPE_SIZE.width);
          assert.equal(box.lazy, "lazy");
          assert.ok(box.shown <= box.column + 0.5, "no wider than the column");
          assert.equal(
            Math.round(box.shown),
            Math.round(Math.min(box.column, LANDSCAPE_SIZE.width)),
          );

          // the map is drawn at its proportions with pins as links
          await page.goto(`${h.url}/public/maps/${W.locChart}`);
          const svg = await page.locator(".map svg").boundingBox();
          assert.ok(svg);
          assert.ok(Math.abs(svg.width / svg.height - MAP_SIZE.width / MAP_SIZE.height) < 0.02);
          assert.ok(await page.locator(".map a.pin").count() >= 2);

          // accessibility basics: lang, landmarks, heading order, contrast
          await page.goto(`${h.url}/public/lore/${W.charMira}`);
          const a11y = await page.evaluate(() => ({
            lang: document.documentElement.lang,
            landmarks: ["header", "main", "nav", "footer"].map((t) =>
              document.querySelectorAll(t).length
            ),
            levels: [...document.querySelectorAll("main h1, main h2, main h3, main h4")]
              .map((e) => Number(e.tagName[1])),
            text: [
              getComputedStyle(document.body).color,
              getComputedStyle(document.body).backgroundColor,
            ],
            link: getComputedStyle(document.querySelector("main a")!).color,
            muted: getComputedStyle(document.querySelector(".meta")!).color,
          }));
          assert.equal(a11y.lang, "en");
          assert.ok(a11y.landmarks.every((n) => n > 0), JSON.stringify(a11y.landmarks));
          assert.equal(a11y.levels[0], 1);
          a11y.levels.forEach((l, i) =>
            assert.ok(i === 0 || l <= a11y.levels[i - 1] + 1, "no skipped level")
          );
          assert.ok(contrast(a11y.text[0], a11y.text[1]) >= 7);
          assert.ok(contrast(a11y.link, a11y.text[1]) >= 4.5);
          assert.ok(contrast(a11y.muted, a11y.text[1]) >= 4.5);

          // print: the page, not the navigation
          await page.emulateMedia({ media: "print" });
          assert.equal(await page.locator(".site-nav").isVisible(), false);
          assert.equal(await page.locator("main h1").isVisible(), true);
          await page.emulateMedia({ media: null });
        }
        await context.close();
      })
    ),
});
