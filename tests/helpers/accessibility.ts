/// <reference lib="dom" />
/**
 * Accessibility checks of a page open in Chromium: axe-core's rules, and the size of every tap
 * target (WCAG 2.2's 2.5.8, at least 24 × 24 CSS pixels).
 *
 * @module
 */
import axe from "axe-core";
import type { Page } from "playwright-core";

/** One rule axe-core found broken, with the elements that break it. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  /** Each element's selector with axe's summary of what is wrong. */
  nodes: string[];
}

/**
 * axe-core's violations on the page as it is laid out now (width, colour scheme). axe is
 * evaluated through the DevTools protocol, not added as a `<script>`: the site's CSP (rightly)
 * refuses inline scripts, and the page under test keeps its CSP.
 *
 * @example
 * ```ts
 * import type { Page } from "playwright-core";
 * // Declared, not run here: it needs a page open in Chromium.
 * async function expectNone(page: Page): Promise<void> {
 *   const found = await axeViolations(page);
 *   if (found.length > 0) throw new Error(formatViolations(found));
 * }
 * ```
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  if (!await page.evaluate(() => "axe" in globalThis)) await page.evaluate(axe.source);
  return await page.evaluate(async () => {
    const run = (globalThis as unknown as { axe: typeof axe }).axe;
    const result = await run.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? null,
      help: v.help,
      nodes: v.nodes.map((n) => `${n.target.join(" ")}: ${n.failureSummary ?? ""}`),
    }));
  });
}

/** Violations as lines a reader can act on: rule, impact, help, then each element. */
export function formatViolations(found: readonly AxeViolation[]): string {
  return found.map((v) =>
    `${v.id} (${v.impact ?? "?"}): ${v.help}\n${
      v.nodes.map((n) => `    ${n.replace(/\s+/g, " ")}`).join("\n")
    }`
  ).join("\n");
}

/** Smallest width and height of a tap target, in CSS pixels (WCAG 2.5.8). */
export const MIN_TARGET = 24;

/**
 * Every visible tap target of the page smaller than {@linkcode MIN_TARGET} in either direction,
 * as `tag "text" W×H`. Exempt, as WCAG 2.5.8 exempts them: a target inside running text (it is
 * laid out inline and its line holds text outside any target), and a link drawn in an SVG picture
 * (map pins) when a target of full size leads to the same place (the list of places).
 *
 * @example
 * ```ts
 * import type { Page } from "playwright-core";
 * // Declared, not run here: it needs a page open in Chromium.
 * async function expectTappable(page: Page): Promise<void> {
 *   const small = await smallTapTargets(page);
 *   if (small.length > 0) throw new Error(small.join("\n"));
 * }
 * ```
 */
export async function smallTapTargets(page: Page): Promise<string[]> {
  return await page.evaluate((min) => {
    const TARGET =
      "a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex]:not([tabindex='-1'])";
    /** The nearest ancestor that lays out lines (not itself inline). */
    const blockOf = (el: Element): Element => {
      let e = el.parentElement!;
      while (e.parentElement && ["inline", "contents"].includes(getComputedStyle(e).display)) {
        e = e.parentElement;
      }
      return e;
    };
    const inRunningText = (el: Element): boolean => {
      if (getComputedStyle(el).display !== "inline") return false;
      const block = blockOf(el);
      const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
      for (let t = walker.nextNode(); t; t = walker.nextNode()) {
        const target = t.parentElement?.closest(TARGET);
        if ((!target || !block.contains(target)) && t.textContent!.trim()) return true;
      }
      return false;
    };
    const sized = [...document.querySelectorAll(TARGET)].flatMap((el) => {
      const r = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      // not rendered, or off-screen until focused (the skip link)
      if (el.getClientRects().length === 0 || style.visibility === "hidden" || r.right <= 0) {
        return [];
      }
      return [{ el, r, ok: r.width >= min - 0.01 && r.height >= min - 0.01 }];
    });
    const fullSize = new Set(sized.filter((s) => s.ok).map((s) => s.el.getAttribute("href")));
    return sized.filter(({ el, ok }) =>
      !ok && !inRunningText(el) &&
      !(el.closest("svg") && fullSize.has(el.getAttribute("href")))
    ).map(({ el, r }) =>
      `${el.tagName.toLowerCase()} "${
        (el.textContent || el.getAttribute("aria-label") || "").trim().slice(0, 40)
      }" ${r.width.toFixed(1)}×${r.height.toFixed(1)}`
    );
  }, MIN_TARGET);
}
