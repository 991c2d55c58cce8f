/**
 * What the browser shows `deno task test:client`: a recorder on one Playwright page (console
 * errors, uncaught exceptions, every `/api` call of the UI's origin with its answer) that a step
 * reads from its mark on, and the wait for the page to settle after an action.
 *
 * @module
 */
import type { Page, Request } from "playwright-core";
import type { ApiCall, ConsoleLine, StepEvents } from "./judge.ts";

/** The recorder of one page. */
export interface Monitor {
  /** Starts a new step: later reads see only what happens from now on. */
  mark(): void;
  /** What happened since the mark, with the page's visible text now. */
  read(): Promise<StepEvents>;
  /**
   * Waits until the page is quiet: no `/api` call in flight and no loading placeholder or spinner
   * for a moment. Throws, naming what is still loading, when that does not happen in time.
   */
  settle(): Promise<void>;
  /** The `/api` calls since the mark (answered or failed), in order. */
  calls(): readonly ApiCall[];
}

/** How long a page may keep loading after an action before the step fails. */
export const SETTLE_TIMEOUT_MS = 30_000;

/** How long the page must stay quiet to count as settled. */
const QUIET_MS = 400;

/** Loading placeholders and spinners of the UI (components/ui/skeleton.tsx, lucide's Loader2). */
const LOADING = '[data-slot="skeleton"], .animate-spin';

/**
 * Starts recording `page`; `/api` calls are those to `origin` (the UI's) under `/api/`.
 *
 * @example
 * ```ts
 * import type { Page } from "playwright-core";
 * // Declared, not run here: it needs a page in Chromium.
 * async function dashboardProblems(page: Page): Promise<number> {
 *   const monitor = watch(page, "http://127.0.0.1:3100");
 *   monitor.mark();
 *   await page.goto("http://127.0.0.1:3100/");
 *   await monitor.settle();
 *   return (await monitor.read()).consoleErrors.length;
 * }
 * ```
 */
export function watch(page: Page, origin: string): Monitor {
  let consoleErrors: ConsoleLine[] = [];
  let pageErrors: string[] = [];
  let calls: ApiCall[] = [];
  const inFlight = new Map<Request, string>();
  const bodies: Promise<unknown>[] = [];
  let lastActivity = 0;
  let clock = 0; // counts network events: a round is quiet when it saw none
  const isApi = (url: string) => url.startsWith(`${origin}/api/`);

  page.on("console", (m) => {
    if (m.type() !== "error") return;
    consoleErrors.push({ text: m.text(), url: m.location().url || undefined });
  });
  page.on("pageerror", (e) => pageErrors.push(e.stack ?? e.message));
  page.on("request", (r) => {
    if (!isApi(r.url())) return;
    inFlight.set(r, r.url());
    lastActivity = ++clock;
  });
  // A call ends with its answer's head: Chromium never finishes (or reports as aborted) the load of
  // a body the page does not read, as the UI's fire-and-check writes do.
  page.on("response", (response) => {
    const r = response.request();
    if (!inFlight.delete(r)) return;
    lastActivity = ++clock;
    const call: ApiCall = { method: r.method(), url: r.url(), status: response.status() };
    calls.push(call);
    if (call.status >= 400) {
      bodies.push(response.text().then((t) => (call.body = t)).catch(() => {}));
    }
  });
  page.on("requestfailed", (r) => {
    if (!inFlight.delete(r)) return; // answered already: the page dropped the body unread
    lastActivity = ++clock;
    calls.push({ method: r.method(), url: r.url(), status: 0, failure: r.failure()?.errorText });
  });

  return {
    mark() {
      consoleErrors = [];
      pageErrors = [];
      calls = [];
    },
    async read() {
      await Promise.all(bodies.splice(0));
      const text = await page.locator("body").innerText({ timeout: 5_000 }).catch(() => "");
      const errorOverlay = (await page.locator("nextjs-portal").count().catch(() => 0)) > 0;
      return { consoleErrors, pageErrors, calls, text, errorOverlay };
    },
    async settle() {
      let late = false;
      const timer = setTimeout(() => (late = true), SETTLE_TIMEOUT_MS);
      try {
        let quietSince = -1;
        while (true) {
          const loading = inFlight.size > 0 ||
            (await page.locator(LOADING).count().catch(() => 0)) > 0;
          if (!loading && quietSince === lastActivity) return; // a whole round quiet
          quietSince = loading ? -1 : lastActivity;
          if (late) {
            const pending = [...inFlight.values()].map((u) => new URL(u).pathname);
            throw new Error(
              `still loading after ${SETTLE_TIMEOUT_MS / 1000} s` +
                (pending.length ? `: waiting for ${pending.join(", ")}` : ": a spinner stays"),
            );
          }
          await page.waitForTimeout(QUIET_MS);
        }
      } finally {
        clearTimeout(timer);
      }
    },
    calls: () => calls,
  };
}
