/**
 * `deno task screenshots`: the public site of the dressed sample world in headless Chromium —
 * home, a character, a map (fit and zoomed), the timeline, a search, the contents menu and a
 * password-protected page — at phone and desktop width in the light scheme, written to
 * `docs/screenshots/<page>-<width>.png`, and a few in the dark scheme (`<page>-<width>-dark.png`).
 *
 * @module
 */
import { withBrowser } from "../helpers/browser.ts";
import { withHarness } from "../helpers/harness.ts";
import { seedShowcase } from "../../sims/showcase.ts";
import { W } from "../../sims/world.ts";

/** The pages shown, by file name. */
export const SCREENSHOT_PAGES: Readonly<Record<string, string>> = {
  home: "/",
  character: `/public/lore/${W.charMira}`,
  map: `/public/maps/${W.locChart}`,
  "map-zoom": `/public/maps/${W.locChart}?zoom=2`,
  timeline: "/public/timeline",
  search: "/?q=harbor",
  contents: "/#site-nav",
  password: `/public/lore/${W.guideVault}`,
};

/** The pages also shown in the dark scheme. */
export const DARK_PAGES: readonly string[] = ["home", "character"];

/** The widths shown, by file name suffix. */
export const SCREENSHOT_VIEWPORTS = {
  phone: { width: 390, height: 844 },
  desktop: { width: 1280, height: 900 },
} as const;

/** Where the screenshots go, relative to the repository. */
export const SCREENSHOT_DIR = "docs/screenshots";

if (import.meta.main) {
  await Deno.mkdir(SCREENSHOT_DIR, { recursive: true });
  await withHarness((h) =>
    withBrowser(async (browser) => {
      seedShowcase(h.core.store);
      const shots = Object.entries(SCREENSHOT_VIEWPORTS).flatMap(([width, viewport]) =>
        (["light", "dark"] as const).map((scheme) => ({ width, viewport, scheme }))
      );
      for (const { width, viewport, scheme } of shots) {
        const context = await browser.newContext({ viewport, colorScheme: scheme });
        const page = await context.newPage();
        for (const [name, path] of Object.entries(SCREENSHOT_PAGES)) {
          if (scheme === "dark" && !DARK_PAGES.includes(name)) continue;
          await page.goto(h.url + path, { waitUntil: "networkidle" });
          // lazy images below the fold load before the full-page picture is taken
          await page.evaluate(() =>
            Promise.all([...document.images].map((i) => {
              i.loading = "eager";
              return i.decode().catch(() => {});
            }))
          );
          const suffix = scheme === "dark" ? "-dark" : "";
          const file = `${SCREENSHOT_DIR}/${name}-${width}${suffix}.png`;
          await page.screenshot({ path: file, fullPage: true });
          console.log(file);
        }
        await context.close();
      }
    })
  );
}
