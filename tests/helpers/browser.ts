/**
 * Headless Chromium for browser tests: Debian's `/usr/bin/chromium` driven by playwright-core
 * (which brings no browser of its own). Without Chromium a browser test is skipped with a console
 * line — except under CI (`CI` set), where it must fail instead of passing silently.
 *
 * @module
 */
import { type Browser, chromium } from "playwright-core";

/** Where Debian installs Chromium (`apt-get install chromium`). */
export const CHROMIUM_PATH = "/usr/bin/chromium";

/** Flags for a quiet, self-contained headless run (no network of its own, no first-run UI). */
export const CHROMIUM_ARGS: readonly string[] = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

function chromiumInstalled(): boolean {
  try {
    return Deno.statSync(CHROMIUM_PATH).isFile;
  } catch {
    return false;
  }
}

/**
 * Whether browser tests run here: skipped (with a console line saying why) only when Chromium is
 * missing and `CI` is not set. Use as `ignore: !browserTestsRun("…")`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * // in a *_test.ts file: Deno.test({ name, ignore: !browserTestsRun(name), fn })
 * const runs = browserTestsRun("site in a browser"); // false, with a console line, if skipped
 * if (Deno.env.get("CI")) assert.equal(runs, true); // under CI a missing Chromium fails instead
 * ```
 */
export function browserTestsRun(suite: string): boolean {
  if (chromiumInstalled() || Deno.env.get("CI")) return true;
  console.log(
    `${suite}: skipped — ${CHROMIUM_PATH} is missing (install it with: apt-get install chromium)`,
  );
  return false;
}

/**
 * Launches Chromium (with {@linkcode CHROMIUM_ARGS} and any `extraArgs`), runs `fn`, always
 * closes it. Fails with a clear message when Chromium is missing (reached only under CI, see
 * {@linkcode browserTestsRun}).
 *
 * @example
 * ```ts
 * import type { Harness } from "./harness.ts";
 * // Declared, not run here: it starts Chromium.
 * async function homeTitle(h: Harness): Promise<string> {
 *   let title = "";
 *   await withBrowser(async (browser) => {
 *     const page = await browser.newPage();
 *     await page.goto(h.url);
 *     title = await page.title();
 *   });
 *   return title;
 * }
 * ```
 */
export async function withBrowser(
  fn: (browser: Browser) => Promise<void>,
  extraArgs: readonly string[] = [],
): Promise<void> {
  if (!chromiumInstalled()) {
    throw new Error(`${CHROMIUM_PATH} is missing; CI needs it (apt-get install chromium)`);
  }
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [...CHROMIUM_ARGS, ...extraArgs],
  });
  try {
    await fn(browser);
  } finally {
    await browser.close();
  }
}
