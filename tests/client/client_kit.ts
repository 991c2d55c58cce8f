/**
 * The toolkit of `deno task test:client`: the run's state, the step type (a page visit or a
 * journey, reported as one row of page × journey), running one step into its row — the step's own
 * checks plus the judge's verdict on what the browser recorded — and the helpers the steps share:
 * opening a page, waiting for what the user should see, asking the Core double directly.
 *
 * @module
 */
import type { Locator, Page } from "playwright-core";
import { Blocked, CheckFailed, type NoteRef, short, Skip } from "../conformance/kit.ts";
import { reasonOf, type StepResult } from "../conformance/report.ts";
import type { CoreStore } from "../../sims/core_store.ts";
import { type Allowance, describeCall, judge } from "./judge.ts";
import type { Monitor } from "./monitor.ts";
import type { PortalPage } from "./pages.ts";

/** Optional parts of a run. */
export const CLIENT_FLAGS = ["screenshots"] as const;

/** One of {@linkcode CLIENT_FLAGS}. */
export type ClientFlag = typeof CLIENT_FLAGS[number];

/** Where `--screenshots` writes, relative to the repository. */
export const SCREENSHOT_DIR = "docs/screenshots/portal";

/** How long the UI may take to show what a step waits for. */
export const EXPECT_TIMEOUT_MS = 20_000;

/** Everything a step can use; steps record what they create for later steps. */
export interface ClientState {
  page: Page;
  monitor: Monitor;
  /** The UI's origin, e.g. `http://127.0.0.1:3100`. */
  portalUrl: string;
  /** The service the run started (what the UI's `/api/*` reaches). */
  serviceUrl: string;
  /** The Core double behind the service, asked directly to confirm what reached it. */
  core: { url: string; token: string; store: CoreStore };
  /** The Parser double's sample account. */
  account: { email: string; password: string };
  /** Random token in every title the run writes. */
  tag: string;
  flags: ReadonlySet<string>;
  /** Notes by role: sample notes the run reads ("mira") and notes it created ("created"). */
  notes: Map<string, NoteRef>;
  /** Other values earlier steps produced (a brain dump's id, …). */
  facts: Map<string, string>;
}

/** One row of the run: a visit of a page or a journey through it. */
export interface ClientStep {
  /** The page it runs on, as the UI's route tree names it (`/lore/[id]/edit`). */
  page: string;
  /** `visit`, or what the journey does. */
  journey: string;
  /** What a pass shows, in a few words (the reason column of an ok row). */
  check: string;
  /** Error answers the step provokes on purpose. */
  allow?: readonly Allowance[];
  /** Throws {@linkcode CheckFailed} (or Blocked, Skip) when the UI does not show what it should. */
  run(s: ClientState): Promise<void | string>;
}

/** A step's row, and the full story of a failure (the row's reason is one short line). */
export interface ClientOutcome {
  row: StepResult;
  details: string[];
}

/**
 * Runs one step: its own checks, then the wait for the page to settle, then the judge on what the
 * browser recorded in the meantime. The row (`method` holds the page, `path` the journey) is ok
 * only when both are clean; a FAIL's reason puts failed calls first, since they usually explain
 * the rest, and `details` lists every problem and every `/api` call of the step.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ClientState } from "./client_kit.ts";
 * const events = { consoleErrors: [], pageErrors: [], calls: [], text: "Lore Browser" };
 * const state = {
 *   flags: new Set<string>(),
 *   monitor: { mark() {}, settle: async () => {}, read: async () => events, calls: () => [] },
 * } as unknown as ClientState;
 * const step = { page: "/lore", journey: "visit", check: "lists the lore", run: async () => {} };
 * const { row } = await runClientStep(step, state);
 * assert.deepEqual(row, { method: "/lore", path: "visit", result: "ok", reason: "lists the lore" });
 * ```
 */
export async function runClientStep(step: ClientStep, s: ClientState): Promise<ClientOutcome> {
  const row = (result: StepResult["result"], reason: string): StepResult => ({
    method: step.page,
    path: step.journey,
    result,
    reason,
  });
  s.monitor.mark();
  let failure: unknown;
  let seen: void | string = undefined;
  try {
    seen = await step.run(s);
  } catch (e) {
    if (e instanceof Skip) return { row: row("skipped", `skipped (${e.message})`), details: [] };
    if (e instanceof Blocked) return { row: row("FAIL", `blocked: ${e.message}`), details: [] };
    failure = e;
  }
  try {
    await s.monitor.settle();
  } catch (e) {
    failure ??= e;
  }
  const problems = judge(await s.monitor.read(), step.allow);
  if (failure !== undefined) problems.push(reasonOf(failure));
  if (problems.length === 0) return { row: row("ok", seen || step.check), details: [] };
  const calls = s.monitor.calls().map((c) => `  call: ${describeCall(c)}`);
  return {
    row: row("FAIL", short(problems.join("; "))),
    details: [...problems.map((p) => `  ${p}`), ...calls],
  };
}

/**
 * Opens `path` of the UI and waits until it settled.
 */
export async function open(s: ClientState, path: string): Promise<void> {
  await s.page.goto(s.portalUrl + path, { waitUntil: "domcontentloaded" });
  await s.monitor.settle();
}

/**
 * Opens a page and waits for what shows it rendered; with `--screenshots`, saves its picture as
 * `docs/screenshots/portal/<shot>.png`.
 */
export async function visit(s: ClientState, page: PortalPage, path: string): Promise<void> {
  await open(s, path);
  await shown(page.ready(s.page), `${page.route}: its heading`);
  await snapshot(s, page);
}

/**
 * With `--screenshots`, saves the current page (settled) as `docs/screenshots/portal/<shot>.png`.
 */
export async function snapshot(s: ClientState, page: PortalPage): Promise<void> {
  if (!s.flags.has("screenshots")) return;
  await s.monitor.settle();
  await Deno.mkdir(SCREENSHOT_DIR, { recursive: true });
  await s.page.screenshot({ path: `${SCREENSHOT_DIR}/${page.shot}.png` });
}

/**
 * Waits until `locator` is visible; fails the step naming `what` otherwise.
 */
export async function shown(
  locator: Locator,
  what: string,
  timeout = EXPECT_TIMEOUT_MS,
): Promise<void> {
  try {
    await locator.first().waitFor({ state: "visible", timeout });
  } catch {
    throw new CheckFailed(`${what} is not shown`);
  }
}

/**
 * Waits until `locator` is gone (or hidden); fails the step naming `what` otherwise.
 */
export async function hidden(
  locator: Locator,
  what: string,
  timeout = EXPECT_TIMEOUT_MS,
): Promise<void> {
  try {
    await locator.first().waitFor({ state: "hidden", timeout });
  } catch {
    throw new CheckFailed(`${what} is still shown`);
  }
}

/**
 * The number shown before `label` in `text` ("12\nCreated" → 12), or undefined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(figure("Processing Complete\n3\nCreated\n0\nUpdated", "Created"), 3);
 * assert.equal(figure("— Total Lore Entries", "Total Lore Entries"), undefined);
 * ```
 */
export function figure(text: string, label: string): number | undefined {
  const m = new RegExp(`(\\d+)\\s*${label}`).exec(text);
  return m ? Number(m[1]) : undefined;
}

/**
 * The number shown after `label` in `text` ("Total Lore Entries\n16" → 16), or undefined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(figureAfter("Total Lore Entries\n16", "Total Lore Entries"), 16);
 * assert.equal(figureAfter("RAG Indexed\n—", "RAG Indexed"), undefined);
 * ```
 */
export function figureAfter(text: string, label: string): number | undefined {
  const m = new RegExp(`${label}\\s*(\\d+)`).exec(text);
  return m ? Number(m[1]) : undefined;
}

/**
 * A note an earlier step recorded under `role`; blocks the step when there is none.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ClientState } from "./client_kit.ts";
 * const s = { notes: new Map([["mira", { noteId: "m1", title: "Mira" }]]) } as ClientState;
 * assert.equal(noteOf(s, "mira").noteId, "m1");
 * assert.throws(() => noteOf(s, "created"), /an earlier step did not create/);
 * ```
 */
export function noteOf(s: ClientState, role: string): NoteRef {
  const note = s.notes.get(role);
  if (!note) throw new Blocked(`needs note "${role}", which an earlier step did not create`);
  return note;
}

/**
 * Asks the Core double itself (its ETAPI, not the service) for a note's content.
 */
export async function coreContent(s: ClientState, noteId: string): Promise<string> {
  const r = await fetch(`${s.core.url}/etapi/notes/${noteId}/content`, {
    headers: { authorization: s.core.token },
  });
  const text = await r.text();
  if (!r.ok) throw new CheckFailed(`Core has no content for ${noteId} (${r.status})`);
  return text;
}

/**
 * Waits until `probe` holds, asking again every half second (what the UI saves reaches Core after
 * its own debounce); fails with `what` when it never does.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * let calls = 0;
 * await eventually(() => Promise.resolve(++calls === 2), "the second call", 5_000);
 * assert.equal(calls, 2);
 * ```
 */
export async function eventually(
  probe: () => Promise<boolean>,
  what: string,
  timeout = EXPECT_TIMEOUT_MS,
): Promise<void> {
  let late = false;
  const timer = setTimeout(() => (late = true), timeout);
  try {
    while (!(await probe())) {
      if (late) throw new CheckFailed(`${what}: not after ${timeout / 1000} s`);
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    clearTimeout(timer);
  }
}
