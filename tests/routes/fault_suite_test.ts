/**
 * The fault suite: every Core- and Parser-backed route of the table, under every fault a broken
 * backend or network produces (sims/fault_proxy.ts sits between the service and the
 * doubles). Under each fault each route must answer — in our error shape with the fault's
 * status, or, for a stream already started, by ending it (an aborted body, or a terminal SSE
 * `error`) — leak nothing of what the backend sent, release every upstream connection, and
 * leave the process healthy. Samples come from tests/routes/samples/ (shared with the error-path
 * matrices) plus the routes only this suite covers; a route without a sample fails the suite.
 *
 * Time: the service and the doubles run on a clock the suite moves itself (`manualDeadlines`).
 * Under the faults that answer (refuse, reset, …) it never moves: no deadline can pass, so a busy
 * machine only makes the suite slower, never turns an answer into a timeout. Under the faults
 * that wait out deadlines (hang, stall, drip) it moves from one deadline to the next only while
 * the faulted backend holds a request: every held request meets its deadline, however slowly the
 * machine runs. Routes that answer from the other backend when one fails (`degradesTo`) have a
 * test of their own, where time moves only while every pending deadline is a call the fault
 * holds, so the other backend is never cut off.
 */
import assert from "node:assert/strict";
import { allRoutes } from "../../src/routes/index.ts";
import { concatBytes } from "../../src/util/bytes.ts";
import { mapLimit } from "../../src/util/concurrency.ts";
import { assertNoSecrets, type Harness, startHarness } from "../helpers/harness.ts";
import {
  answerMovingTime,
  HANG_GUARD_MS,
  type ManualDeadlines,
  manualDeadlines,
} from "../helpers/manual_deadlines.ts";
import { DEFAULT_CORE_PASSWORD } from "../../sims/core.ts";
import {
  FAULT_MARK,
  FAULT_MODES,
  type FaultMode,
  type FaultProxy,
  startFaultProxy,
} from "../../sims/fault_proxy.ts";
import { DEFAULT_OWNER } from "../../sims/parser.ts";
import { W } from "../../sims/world.ts";
import { samples as aiSamples } from "./samples/ai.ts";
import { samples as brainDumpSamples } from "./samples/brain_dump.ts";
import { samples as copilotSamples } from "./samples/copilot.ts";
import { samples as coreSamples } from "./samples/core.ts";
import { samples as extraSamples } from "./samples/extras.ts";

/** One request, and how its route answers when the faulted backend fails. */
interface FaultSample {
  method: string;
  path: string;
  init?: RequestInit & { json?: unknown };
  /** The backend faulted while this sample runs (the other one answers normally). */
  faulted: "core" | "parser";
  /** The route still answers this status from the other backend. */
  degradesTo?: number;
  /** A public site page: failures are HTML pages with the status. */
  page?: boolean;
  /** Failures are plain text with the status (robots.txt). */
  plainText?: boolean;
  /** A status route: it reports backend failures as facts, so any timely answer will do. */
  reports?: boolean;
  /** It changes what other samples rely on (the Parser's Core integration, all lore). */
  isolated?: boolean;
  /** Its JSON answer is read from a Parser SSE stream (see samples/parser_sample.ts). */
  fromStream?: boolean;
}

const login = { json: { email: DEFAULT_OWNER.email, password: DEFAULT_OWNER.password } };
const signUp = {
  json: { name: "Fault Tester", email: "faults@example.com", password: "x".repeat(12) },
};
const connect = { json: { password: DEFAULT_CORE_PASSWORD } };
/** The site's password form, posted as a script would (its 303 is the answer). */
const unlock: RequestInit = {
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: "user=player&password=lantern&return=%2Fpublic",
  redirect: "manual",
};

/** Routes no shared sample list covers: public share and site, status, sessions, settings. */
const OWN_SAMPLES: FaultSample[] = [
  { faulted: "core", method: "GET", path: `/api/public/lore/${W.guideWelcome}` },
  { faulted: "core", method: "GET", path: "/api/public/search?q=harbor" },
  { faulted: "core", method: "GET", path: `/api/public/images/${W.imgChart}/chart.png` },
  { faulted: "core", method: "GET", path: "/", page: true },
  { faulted: "core", method: "GET", path: `/public/lore/${W.guideWelcome}`, page: true },
  { faulted: "core", method: "GET", path: "/robots.txt", plainText: true },
  { faulted: "core", method: "GET", path: "/public/types/character", page: true },
  { faulted: "core", method: "GET", path: "/public/timeline", page: true },
  { faulted: "core", method: "GET", path: `/public/maps/${W.locChart}`, page: true },
  { faulted: "core", method: "GET", path: "/sitemap.xml", page: true },
  { faulted: "core", method: "GET", path: "/public/feed.atom", page: true },
  { faulted: "core", method: "GET", path: "/public/card/any.png", page: true },
  { faulted: "core", method: "POST", path: "/public/unlock", init: unlock, page: true },
  { faulted: "core", method: "POST", path: "/api/integrations/codex/connect", init: connect },
  ...(["core", "parser"] as const).flatMap((faulted): FaultSample[] => [
    { faulted, method: "GET", path: "/readyz", reports: true },
    { faulted, method: "GET", path: "/api/config/status", reports: true },
  ]),
  { faulted: "parser", method: "POST", path: "/api/auth/login", init: login },
  { faulted: "parser", method: "POST", path: "/api/config/parser-login", init: login },
  { faulted: "parser", method: "POST", path: "/api/auth/register", init: signUp },
  { faulted: "parser", method: "POST", path: "/api/config/parser-register", init: signUp },
  // without a browser session there is nothing to end at the Parser: cookies are cleared
  { faulted: "parser", method: "POST", path: "/api/auth/logout", degradesTo: 200 },
  { faulted: "parser", method: "GET", path: "/api/auth/session" },
  { faulted: "parser", method: "POST", path: "/api/integrations/codex/connect", init: connect },
  { faulted: "parser", method: "GET", path: "/api/integrations/codex/status" },
  { faulted: "parser", method: "DELETE", path: "/api/integrations/codex", isolated: true },
  { faulted: "parser", method: "GET", path: "/api/config/models" },
  {
    faulted: "parser",
    method: "POST",
    path: "/api/config/wipe",
    init: { json: { confirm: "DELETE ALL LORE" } },
    isolated: true,
  },
];

const SAMPLES: FaultSample[] = [
  ...coreSamples.map((s) => ({ ...s, faulted: "core" as const })),
  ...[...brainDumpSamples, ...aiSamples, ...copilotSamples, ...extraSamples].map((s) => ({
    method: s.method,
    path: s.path,
    init: s.init,
    degradesTo: s.degradesTo,
    fromStream: s.fromStream,
    faulted: "parser" as const,
  })),
  ...OWN_SAMPLES,
];

/** Routes whose 200 is a backend body passed through: once started, a fault aborts it. */
const STREAMED_BODIES = [
  "/api/lore/:id/content",
  "/api/lore/:id/revisions/:revId/content",
  "/api/lore/:id/image",
  "/api/attachments/:attachmentId/image/:filename",
  "/api/public/images/:id/:filename",
].map((pathname) => new URLPattern({ pathname }));

/** The answer each fault must give (before a stream starts). */
const EXPECTED: Record<FaultMode, { status: number; code: string }> = {
  pass: { status: 200, code: "" },
  refuse: { status: 503, code: "UNREACHABLE" },
  hang: { status: 504, code: "UPSTREAM_TIMEOUT" },
  reset: { status: 502, code: "UPSTREAM_ERROR" },
  garbage: { status: 502, code: "UPSTREAM_ERROR" },
  stall: { status: 504, code: "UPSTREAM_TIMEOUT" },
  truncate: { status: 502, code: "UPSTREAM_ERROR" },
  drip: { status: 504, code: "UPSTREAM_TIMEOUT" },
  oversize: { status: 502, code: "UPSTREAM_ERROR" },
  "invalid-json": { status: 502, code: "UPSTREAM_ERROR" },
  "html-500": { status: 502, code: "UPSTREAM_ERROR" },
};

/**
 * Faults that reach the double and mangle its real answer: an error status the double chose
 * (a 404 for an id it does not know) arrives intact, so the route may keep it.
 */
const MANGLES_ANSWER: ReadonlySet<FaultMode> = new Set([
  "reset",
  "stall",
  "truncate",
  "drip",
  "oversize",
  "invalid-json",
]);

/** Faults that leave a non-JSON body whole (padded, or untouched): a stream of it may complete. */
const BODY_INTACT: ReadonlySet<FaultMode> = new Set(["oversize", "invalid-json"]);

/**
 * Routes whose backend answers carry no body (Core's 204 to a DELETE): there is nothing to
 * oversize or corrupt, so under those faults they succeed.
 */
const BODILESS_ANSWERS = [{ method: "DELETE", pathname: "/api/lore/:id" }]
  .map(({ method, pathname }) => ({ method, pattern: new URLPattern({ pathname }) }));

/** The cap on backend answers read whole, small so that padding past it stays cheap. */
const CAP = 64 * 1024;

/** Small deadlines, so that the faults that wait them out resolve within seconds. */
const ENV = {
  UPSTREAM_TIMEOUT_MS: "4000",
  AI_TIMEOUT_MS: "4000",
  AI_TOTAL_TIMEOUT_MS: "6000", // AI calls run on past their client's wait, but not past this
  STREAM_IDLE_TIMEOUT_MS: "1500",
  STREAM_TOTAL_TIMEOUT_MS: "6000",
  SSE_TOTAL_TIMEOUT_MS: "6000",
  MAX_UPSTREAM_BODY_BYTES: String(CAP),
  PUBLIC_SHARE_MAX_BYTES: String(CAP), // the share's own bound, as small
  PUBLIC_CACHE_MS: "0", // every public request must reach (faulted) Core, not a cached snapshot
  AUTOLINK_CACHE_MS: "0",
  AUTH_RATE_LIMIT: "10000",
  ENABLE_WIPE: "true",
};

const CONCURRENCY = 64;
/** Well inside the idle deadline; most answers then take longer than UPSTREAM_TIMEOUT_MS. */
const DRIP_MS = 400;

const label = (mode: FaultMode, s: FaultSample) => `[${mode}] ${s.method} ${s.path}`;

/** A service wired to both doubles through one fault proxy each, all on the clock `time`. */
interface Rig {
  h: Harness;
  proxies: Record<"core" | "parser", FaultProxy>;
  /** The clock of every deadline in the service and the doubles: it moves when a test says. */
  time: ManualDeadlines;
  close(): Promise<void>;
}

async function startRig(opts: { padBytes?: number } = {}): Promise<Rig> {
  // padded to 4× the cap: enough to prove the cap, cheap enough for dozens at once
  const padBytes = opts.padBytes ?? 4 * CAP;
  const time = manualDeadlines();
  const core = await startFaultProxy({ dripMs: DRIP_MS, padBytes });
  const parser = await startFaultProxy({ dripMs: DRIP_MS, padBytes });
  // The doubles' own waits (the Parser's calls to Core) on a clock that never moves: time moved
  // for the service's sake must not cut a double's work short.
  const still = manualDeadlines();
  const h = await startHarness({
    parser: { deadlines: still },
    core: { deadlines: still },
    parserSession: true,
    coreUrlOverride: core.url,
    env: { ...ENV, PARSER_URL: parser.url, PARSER_ALLOWED_URLS: parser.url },
    deadlines: time,
  });
  core.retarget(h.core.url);
  parser.retarget(h.parser!.url);
  return {
    h,
    proxies: { core, parser },
    time,
    async close() {
      await h.close();
      await core.close();
      await parser.close();
    },
  };
}

/** What a client saw: status, type, every byte it got, and whether the body ended cleanly. */
interface Outcome {
  status: number;
  type: string;
  text: string;
  ended: "complete" | "aborted";
}

async function call(h: Harness, s: FaultSample, what: string): Promise<Outcome> {
  const guard = new AbortController();
  const timer = setTimeout(() => guard.abort(), HANG_GUARD_MS);
  try {
    const res = await h.request(s.path, { method: s.method, ...s.init, signal: guard.signal });
    const chunks: Uint8Array[] = [];
    let ended: Outcome["ended"] = "complete";
    try {
      for await (const chunk of res.body ?? []) chunks.push(chunk);
    } catch {
      ended = "aborted";
    }
    if (guard.signal.aborted) throw new Error("hang guard");
    const length = chunks.reduce((n, c) => n + c.byteLength, 0);
    const text = new TextDecoder().decode(concatBytes(chunks, length));
    return { status: res.status, type: res.headers.get("content-type") ?? "", text, ended };
  } catch (e) {
    if (guard.signal.aborted) assert.fail(`${what}: no answer within ${HANG_GUARD_MS} ms`);
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

/** The events of an SSE body, as `[name, data]`. */
function sseEvents(text: string): [string, string][] {
  return text.split(/\n\n/).filter((b) => /^event: /m.test(b)).map((b) => [
    b.match(/^event: (.*)$/m)![1],
    b.match(/^data: (.*)$/m)?.[1] ?? "",
  ]);
}

/** Nothing the backend (or the proxy) made up, and no internal address, reaches the client. */
function assertNoLeak(rig: Rig, text: string, what: string, page = false) {
  assert.ok(
    !text.includes(FAULT_MARK),
    `${what}: leaked the backend's bytes: ${text.slice(0, 200)}`,
  );
  assert.ok(!text.includes("/srv/backend"), `${what}: leaked the backend's error page`);
  if (!page) assert.ok(!/<html|<!doctype/i.test(text), `${what}: leaked an HTML page`);
  for (const p of Object.values(rig.proxies)) {
    assert.ok(!text.includes(new URL(p.url).host), `${what}: leaked an internal address`);
  }
  assertNoSecrets(rig.h, text);
}

/** Checks one answer against its fault. */
function check(mode: FaultMode, s: FaultSample, o: Outcome, baseline: number, what: string) {
  const expected = EXPECTED[mode];
  if (s.reports) return; // any timely answer: checked for leaks only
  if (s.degradesTo !== undefined) {
    assert.equal(o.status, s.degradesTo, `${what}: still answers from the other backend`);
    return;
  }
  // a drip slow enough for most answers, yet a short one may still arrive whole in time
  if (mode === "drip" && o.ended === "complete" && o.status === baseline && baseline < 300) return;
  // an answer read from a stream the fault left whole (only JSON bodies are replaced)
  if (s.fromStream && mode === "invalid-json" && o.status === baseline) return;
  if (o.status === 200 && o.type.startsWith("text/event-stream")) {
    const last = sseEvents(o.text).at(-1);
    assert.ok(last, `${what}: a started stream must end with an event`);
    if (last[0] !== "error") {
      assert.ok(BODY_INTACT.has(mode), `${what}: stream ended with ${last[0]}, not error`);
      assert.equal(last[0], "done", what);
      return;
    }
    const data = JSON.parse(last[1]);
    assert.ok(typeof data.message === "string" && typeof data.requestId === "string", what);
    assert.equal(data.error, expected.code, `${what}: terminal error ${last[1]}`);
    return;
  }
  const streamed = s.method === "GET" &&
    STREAMED_BODIES.some((p) => p.test({ pathname: s.path.split("?")[0] }));
  if (o.status === 200 && streamed) {
    assert.ok(
      o.ended === "aborted" || BODY_INTACT.has(mode),
      `${what}: a faulted stream must abort, not end cleanly`,
    );
    return;
  }
  assert.equal(o.ended, "complete", `${what}: an error answer is whole`);
  const bodiless = BODILESS_ANSWERS.some((b) =>
    b.method === s.method && b.pattern.test({ pathname: s.path.split("?")[0] })
  );
  if (bodiless && BODY_INTACT.has(mode)) {
    assert.equal(o.status, baseline, `${what}: nothing to mangle, so it succeeds`);
    return;
  }
  if (s.page) {
    assert.match(o.type, /^text\/html/, what);
  } else if (s.plainText) {
    assert.match(o.type, /^text\/plain/, what);
  } else {
    const body = JSON.parse(o.text);
    assert.deepEqual(
      Object.keys(body).filter((k) => k !== "details").sort(),
      ["error", "message", "requestId"],
      `${what}: our error shape`,
    );
    if (o.status === expected.status) assert.equal(body.error, expected.code, what);
  }
  // an error status the double chose (it does not know the id) survives a mangled body
  const decided = baseline >= 400 && baseline !== 502 && baseline !== 504;
  const allowed = MANGLES_ANSWER.has(mode) && decided
    ? [expected.status, baseline]
    : [expected.status];
  assert.ok(allowed.includes(o.status), `${what}: status ${o.status}, want ${allowed}: ${o.text}`);
}

/** Samples that share a world: each backend's, and every `isolated` one in a world of its own. */
interface Group {
  faulted: "core" | "parser";
  samples: FaultSample[];
}

const GROUPS: Group[] = (["core", "parser"] as const).flatMap((faulted) => {
  const mine = SAMPLES.filter((s) => s.faulted === faulted);
  return [
    { faulted, samples: mine.filter((s) => !s.isolated) },
    ...mine.filter((s) => s.isolated).map((s) => ({ faulted, samples: [s] })),
  ];
});

/** Runs a group's samples side by side, each under the hang guard. */
function runAll(
  rig: Rig,
  samples: FaultSample[],
  what: (s: FaultSample) => string,
  concurrency = CONCURRENCY,
): Promise<Outcome[]> {
  return mapLimit(samples, concurrency, (s) => call(rig.h, s, what(s)));
}

const pattern = (path: string) => new URLPattern({ pathname: path });

Deno.test("fault suite: every Core- and Parser-backed route has a sample", () => {
  for (const r of allRoutes.filter((r) => r.backend !== "None")) {
    const route = pattern(r.path); // parsed once, tried against every sample
    const covered = SAMPLES.some((s) =>
      s.method === r.method && route.test({ pathname: s.path.split("?")[0] })
    );
    assert.ok(covered, `no fault-suite sample for ${r.method} ${r.path}`);
  }
});

/** The faults that wait out deadlines (only a deadline ends what they hold). */
const WAITING: ReadonlySet<FaultMode> = new Set(
  FAULT_MODES.filter((m) => EXPECTED[m].code === "UPSTREAM_TIMEOUT"),
);

/**
 * Moves `time` from one deadline to the next while `proxy` holds a request back, until stopped:
 * each held request meets its deadline however slowly the machine runs, and no deadline passes
 * while nothing waits on the fault.
 */
function moveWhileHeld(time: ManualDeadlines, proxy: FaultProxy): () => Promise<void> {
  let stopped = false;
  const moving = (async () => {
    while (!stopped) {
      if (proxy.held() > 0) time.advanceToNext();
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  return () => {
    stopped = true;
    return moving;
  };
}

/**
 * One fault on one backend for one group, in a fresh world (writes that reached a double under
 * another fault are gone); the other backend answers normally. Under a waiting fault a sample
 * that degrades to the other backend is left to its own test: time moving for others could cut
 * its call to the other backend short. Returns every broken expectation.
 */
async function faultPass(
  rig: Rig,
  mode: FaultMode,
  group: Group,
  baseline: Map<FaultSample, number>,
): Promise<string[]> {
  const { faulted } = group;
  const waiting = WAITING.has(mode);
  const samples = waiting ? group.samples.filter((s) => s.degradesTo === undefined) : group.samples;
  const stopTime = waiting
    ? moveWhileHeld(rig.time, rig.proxies[faulted])
    : () => Promise.resolve();
  try {
    await rig.proxies[faulted].setMode(mode);
    const outcomes = await runAll(rig, samples, (s) => label(mode, s));
    const failures = samples.flatMap((s, i) => {
      const what = label(mode, s);
      try {
        assertNoLeak(rig, outcomes[i].text, what, s.page);
        check(mode, s, outcomes[i], baseline.get(s)!, what);
        return [];
      } catch (e) {
        return [(e as Error).message];
      }
    });
    const where = `[${mode}, ${faulted} faulted]`;
    await rig.proxies[faulted].setMode("pass");
    // AI calls run on past their clients' deadlines: time keeps moving until they end too
    for (const p of Object.values(rig.proxies)) {
      if (!await p.drained(HANG_GUARD_MS)) {
        failures.push(`${where} an upstream connection was kept open`);
      }
    }
    await stopTime();
    const main = !samples.some((s) => s.isolated);
    if (main && (mode === "stall" || mode === "drip") && rig.proxies[faulted].cutShort() === 0) {
      failures.push(`${where} no upstream body was cancelled`);
    }
    const health = await call(rig.h, { faulted, method: "GET", path: "/healthz" }, where);
    if (health.status !== 200) failures.push(`${where} /healthz answered ${health.status}`);
    try {
      assertNoLeak(rig, rig.h.logs.join("\n"), `${where} logs`);
    } catch (e) {
      failures.push((e as Error).message);
    }
    return failures;
  } finally {
    await stopTime();
    await rig.close();
  }
}

Deno.test("fault suite: every route under every fault answers, ends its stream, leaks nothing", async () => {
  // What each sample answers with no fault: an error status the backend chose survives a
  // fault that only mangles the body of that answer.
  const baseline = new Map<FaultSample, number>();
  await Promise.all(GROUPS.map(async ({ samples }) => {
    const rig = await startRig();
    try {
      const outcomes = await runAll(rig, samples, (s) => label("pass", s), 4);
      samples.forEach((s, i) => baseline.set(s, outcomes[i].status));
    } finally {
      await rig.close();
    }
  }));
  const underFault = async (mode: FaultMode) => {
    // every group has a rig of its own, so they all run side by side (started before any
    // request, so that no request waits on another rig's start)
    const started = await Promise.allSettled(GROUPS.map(() => startRig()));
    const rigs = started.flatMap((r) => r.status === "fulfilled" ? [r.value] : []);
    if (rigs.length < GROUPS.length) {
      await Promise.all(rigs.map((r) => r.close()));
      throw started.find((r) => r.status === "rejected")!.reason;
    }
    return (await Promise.all(GROUPS.map((g, i) => faultPass(rigs[i], mode, g, baseline))))
      .flat();
  };
  // Faults that wait out deadlines mostly sleep: they run side by side. The rest are quick.
  const failures = (await Promise.all([...WAITING].map(underFault))).flat();
  for (const mode of FAULT_MODES.filter((m) => !WAITING.has(m))) {
    failures.push(...await underFault(mode));
  }
  assert.deepEqual(failures, [], failures.join("\n"));
});

Deno.test("fault suite: parallel oversized answers are cut off at the cap and released", async () => {
  // 12 answers of 32 MiB each: far more than the socket buffers hold, so the proxy notices when
  // the service stops reading (it must, at the 64 KiB cap) instead of taking them whole.
  const rig = await startRig({ padBytes: 32 * 1024 * 1024 });
  try {
    await rig.proxies.core.setMode("oversize");
    const sample: FaultSample = { faulted: "core", method: "GET", path: "/api/lore" };
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, () => call(rig.h, sample, "oversize ×12")),
    );
    for (const o of outcomes) {
      assert.equal(o.status, 502);
      assert.equal(JSON.parse(o.text).error, "UPSTREAM_ERROR");
    }
    assert.ok(await rig.proxies.core.drained(HANG_GUARD_MS), "every upstream connection released");
    assert.equal(rig.proxies.core.cutShort(), 12, "each body was cancelled, not read to its end");
    assert.equal((await call(rig.h, { ...sample, path: "/healthz" }, "healthz")).status, 200);
  } finally {
    await rig.close();
  }
});

Deno.test("fault suite: a route that degrades answers from the other backend once the faulted one's deadline passes", async () => {
  const degrading = SAMPLES.filter((s) => s.degradesTo !== undefined);
  const waitedOut: string[] = [];
  for (const mode of ["hang", "stall"] as const) {
    for (const s of degrading) {
      const what = label(mode, s);
      const rig = await startRig();
      const { time } = rig;
      try {
        const faulted = rig.proxies[s.faulted];
        await faulted.setMode(mode);
        // time moves once, to the deadline of the call the fault holds, when it is the only one
        // pending: the other backend's calls are never cut short
        const held = () =>
          time.now() === 0 && faulted.held() > 0 && time.pending() === faulted.held();
        const o = await answerMovingTime(time, call(rig.h, s, what), held, what);
        assertNoLeak(rig, o.text, what);
        assert.equal(o.status, s.degradesTo, `${what}: ${o.text}`);
        if (time.now() > 0) waitedOut.push(what);
        assert.ok(await faulted.drained(HANG_GUARD_MS), `${what}: the held connection is closed`);
      } finally {
        await rig.close();
      }
    }
  }
  // all but logout without a session (nothing to end at the Parser) wait on the faulted backend
  assert.equal(waitedOut.length, 2 * (degrading.length - 1), waitedOut.join("\n"));
});
