/**
 * The judge of `deno task test:client`: what the browser recorded during one step (console lines,
 * uncaught exceptions, the `/api` calls and their answers, the page's visible text) turned into
 * the problems a user would notice — a failed `/api` call, a crash banner or error message of the
 * UI, an error in the console, or text such as "undefined", "NaN", "Invalid Date". Pure: the
 * browser side lives in monitor.ts.
 *
 * @module
 */

/** One `/api` call of the page: its answer, or `status: 0` and the network error. */
export interface ApiCall {
  method: string;
  /** Absolute URL as the page requested it. */
  url: string;
  /** The answer's status; 0 when no answer came (then `failure` says why). */
  status: number;
  /** Chromium's network error (`net::ERR_…`) when no answer came. */
  failure?: string;
  /** The first part of an error answer's body, for the report. */
  body?: string;
}

/** One console line of type `error`. */
export interface ConsoleLine {
  text: string;
  /** The resource the line is about (for "Failed to load resource": the URL that failed). */
  url?: string;
}

/** Everything one step recorded. */
export interface StepEvents {
  consoleErrors: readonly ConsoleLine[];
  /** Uncaught exceptions in the page. */
  pageErrors: readonly string[];
  calls: readonly ApiCall[];
  /** `document.body.innerText` after the step: what the user sees. */
  text: string;
  /** Whether Next's development error overlay is on the page (it lives in a shadow root). */
  errorOverlay?: boolean;
}

/** An error answer a step provokes on purpose: not a problem when it comes. */
export interface Allowance {
  method: string;
  /** The path (query excluded), or a pattern it matches. */
  path: string | RegExp;
  status: number;
}

/**
 * Crash banners and error messages of the UI, as the user reads them. Each is the UI's own wording
 * (the file that shows it in the comment), so that a page that degrades into an error message
 * fails even when no call failed (a 200 answer of the wrong shape).
 */
export const ERROR_TEXTS: readonly { pattern: RegExp; what: string }[] = [
  // Next.js, an exception during rendering with no error boundary
  { pattern: /Application error: a (client|server)-side exception has occurred/, what: "crash" },
  // app/(portal)/error.tsx, ai/error.tsx, brain-dump/error.tsx, lore/[id]/error.tsx
  { pattern: /Something went wrong/, what: "crash" },
  { pattern: /AI tools unavailable/, what: "crash" },
  { pattern: /Brain dump unavailable/, what: "crash" },
  { pattern: /Could not load lore entry/, what: "crash" },
  // components/portal/ServiceBanner.tsx
  {
    pattern: /\b(AllCodex|AllKnower) (unavailable|not connected|credentials expired)\b/,
    what: "error banner",
  },
  // quests, timeline, statblocks, brain-dump/[id], RelationshipGraph: failed loads
  { pattern: /Failed to load [\w ]+/, what: "error message" },
  { pattern: /Connection error/, what: "error message" },
  // lore/[id]/edit: content and metadata saves, portrait uploads
  {
    pattern: /Failed to save [\w ]+|Unable to reach server|Failed to upload [\w ]+/,
    what: "error message",
  },
  // session, brain dump, import: failed actions
  {
    pattern: /Capture failed|Import failed|Failed to apply relation|Failed: \S/,
    what: "error message",
  },
];

/** Text that shows a value the UI could not render. */
export const BROKEN_TEXTS: readonly RegExp[] = [
  /\bundefined\b/,
  /\bNaN\b/,
  /Invalid Date/,
  /\[object Object\]/,
];

/**
 * The problems of one step, most telling first: failed `/api` calls (the usual cause of what
 * follows), crash banners and error messages, uncaught exceptions, console errors, broken text.
 * A call the browser aborted (`net::ERR_ABORTED`: the page navigated away or cancelled a search it
 * no longer needs) is the page's own doing, not a failure. A console "Failed to load resource"
 * line about a call already reported is not repeated.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const problems = judge({
 *   consoleErrors: [{ text: "Failed to load resource: 400", url: "http://ui/api/rag" }],
 *   pageErrors: [],
 *   calls: [
 *     { method: "GET", url: "http://ui/api/rag", status: 400, body: '{"error":"BAD_REQUEST"}' },
 *     { method: "GET", url: "http://ui/api/lore", status: 200 },
 *   ],
 *   text: "Something went wrong\nTotal Lore Entries NaN",
 * });
 * assert.deepEqual(problems, [
 *   'GET /api/rag → 400 {"error":"BAD_REQUEST"}',
 *   'crash: "Something went wrong"',
 *   'text: "…went wrong Total Lore Entries NaN"',
 * ]);
 * ```
 */
export function judge(events: StepEvents, allow: readonly Allowance[] = []): string[] {
  const problems: string[] = [];
  const failedUrls = new Set<string>();
  for (const call of events.calls) {
    if (call.status > 0 && call.status < 400) continue;
    if (call.status === 0 && call.failure === "net::ERR_ABORTED") continue;
    failedUrls.add(call.url);
    if (allow.some((a) => allows(a, call))) continue;
    problems.push(describeCall(call));
  }
  for (const { pattern, what } of ERROR_TEXTS) {
    const m = events.text.match(pattern);
    if (m) problems.push(`${what}: "${m[0]}"`);
  }
  if (events.errorOverlay) problems.push("crash: the Next.js error overlay is shown");
  for (const e of events.pageErrors) problems.push(`uncaught: ${firstLine(e)}`);
  for (const line of events.consoleErrors) {
    if (line.url && failedUrls.has(line.url) && /^Failed to load resource/.test(line.text)) {
      continue;
    }
    const where = line.url && /^Failed to load resource/.test(line.text)
      ? ` (${pathOf(line.url)})`
      : "";
    problems.push(`console: ${firstLine(line.text)}${where}`);
  }
  for (const pattern of BROKEN_TEXTS) {
    const m = pattern.exec(events.text);
    if (m) problems.push(`text: "${around(events.text, m.index, m[0].length)}"`);
  }
  return problems;
}

/**
 * A call as one report line: method, path with query, and the answer (status and the start of an
 * error body) or the network error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(
 *   describeCall({ method: "PUT", url: "http://ui/api/lore/a1/content", status: 415 }),
 *   "PUT /api/lore/a1/content → 415",
 * );
 * assert.equal(
 *   describeCall({ method: "GET", url: "http://ui/api/x?q=1", status: 0, failure: "net::ERR_EMPTY_RESPONSE" }),
 *   "GET /api/x?q=1 → net::ERR_EMPTY_RESPONSE",
 * );
 * ```
 */
export function describeCall(call: ApiCall): string {
  const answer = call.status === 0 ? call.failure ?? "no answer" : String(call.status);
  const body = call.body ? ` ${firstLine(call.body).slice(0, 160)}` : "";
  return `${call.method} ${pathOf(call.url)} → ${answer}${body}`;
}

function allows(a: Allowance, call: ApiCall): boolean {
  const path = new URL(call.url).pathname;
  const pathOk = typeof a.path === "string" ? a.path === path : a.path.test(path);
  return pathOk && a.method === call.method && a.status === call.status;
}

function pathOf(url: string): string {
  try {
    const u = new URL(url);
    return u.pathname + u.search;
  } catch {
    return url;
  }
}

function firstLine(text: string): string {
  return text.split("\n")[0].trim();
}

/** The match with up to 30 characters of context each side, on one line. */
function around(text: string, index: number, length: number): string {
  const start = Math.max(0, index - 30);
  const end = Math.min(text.length, index + length + 30);
  return (start > 0 ? "…" : "") + text.slice(start, end).replace(/\s+/g, " ").trim() +
    (end < text.length ? "…" : "");
}
