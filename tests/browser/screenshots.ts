/**
 * `deno task screenshots`: the public site of the dressed sample world in headless Chromium —
 * home, a character, a map and a search — at phone and desktop width, written to
 * `docs/screenshots/<page>-<width>.png`.
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
  search: "/?q=harbor",
};

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
      for (const [width, viewport] of Object.entries(SCREENSHOT_VIEWPORTS)) {
        const context = await browser.newContext({ viewport, colorScheme: "light" });
        const page = await context.newPage();
        for (const [name, path] of Object.entries(SCREENSHOT_PAGES)) {
          await page.goto(h.url + path, { waitUntil: "networkidle" });
          // lazy images below the fold load before the full-page picture is taken
          await page.evaluate(() =>
            Promise.all([...document.images].map((i) => {
              i.loading = "eager";
              return i.decode().catch(() => {});
            }))
          );
          const file = `${SCREENSHOT_DIR}/${name}-${width}.png`;
          await page.screenshot({ path: file, fullPage: true });
          console.log(file);
        }
        await context.close();
      }
    })
  );
}
