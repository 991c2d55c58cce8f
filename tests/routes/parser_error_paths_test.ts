/**
 * Error paths shared by every Parser-backed route, table-driven over the samples
 * in tests/routes/samples/, plus a check that no Parser-backed route lacks a sample.
 * Route-specific cases (bad input never forwarded, Parser-specific bodies) live in each
 * feature's own test file.
 */
import assert from "node:assert/strict";
import { allRoutes } from "../../src/routes/index.ts";
import {
  assertNoSecrets,
  type Harness,
  type HarnessOptions,
  startHarness,
} from "../helpers/harness.ts";
import { answerMovingTime, manualDeadlines } from "../helpers/manual_deadlines.ts";
import type { ParserSample } from "./samples/parser_sample.ts";
import { samples as brainDump } from "./samples/brain_dump.ts";
import { samples as ai } from "./samples/ai.ts";
import { samples as copilot } from "./samples/copilot.ts";
import { samples as extras } from "./samples/extras.ts";

const SAMPLES: ParserSample[] = [...brainDump, ...ai, ...copilot, ...extras];

/** Parser paths the service calls for a feature (not sign-in or the credential lookups). */
const FEATURE_PATHS = /^\/(?!api\/auth\/|internal\/)/;

const pattern = (path: string) => new URLPattern({ pathname: path });
const label = (s: ParserSample) => `${s.method} ${s.path}`;

Deno.test("every Parser-backed route has an error-path sample", () => {
  const parserRoutes = allRoutes.filter((r) =>
    (r.backend === "Parser" || r.backend === "Both") && r.path.startsWith("/api/") &&
    !r.path.startsWith("/api/auth/") && !r.path.startsWith("/api/integrations/") &&
    !r.path.startsWith("/api/config/") // sessions and config: auth_test.ts, config_test.ts
  );
  for (const r of parserRoutes) {
    const route = pattern(r.path); // parsed once, tried against every sample
    const covered = SAMPLES.some((s) =>
      s.method === r.method && route.test({ pathname: s.path.split("?")[0] })
    );
    assert.ok(covered, `no Parser error-path sample for ${r.method} ${r.path}`);
  }
});

/** The status and error code a sample answered with (the last SSE event for streams). */
async function outcome(
  s: ParserSample,
  res: Response,
  h: Harness,
): Promise<{ status: number; code: unknown; headers: Headers }> {
  const text = await res.text();
  assertNoSecrets(h, text);
  if (s.streamsFirst && res.headers.get("content-type")?.startsWith("text/event-stream")) {
    const events = text.split("\n\n").filter((e) => e.startsWith("event: "));
    const last = events.at(-1) ?? "";
    assert.match(last, /^event: error\n/, `${label(s)}: stream must end with error: ${text}`);
    const data = JSON.parse(last.split("\ndata: ")[1]);
    return {
      status: data.error === undefined ? 0 : res.status,
      code: data.error,
      headers: res.headers,
    };
  }
  const body = text ? JSON.parse(text) : null;
  return { status: res.status, code: body?.error, headers: res.headers };
}

/**
 * Sends every sample under the fault `setup` makes and checks each answer. With `atOnce` the
 * samples are sent side by side under one fault: for faults that only wait out a deadline.
 */
async function eachSample(
  opts: HarnessOptions,
  setup: (h: Harness) => void,
  check: (
    s: ParserSample,
    o: { status: number; code: unknown; headers: Headers },
    h: Harness,
  ) => void,
  { atOnce = false } = {},
) {
  const h = await startHarness({ parser: true, parserSession: true, ...opts });
  const ask = async (s: ParserSample) => {
    const res = await h.request(s.path, { method: s.method, ...s.init });
    return { s, o: await outcome(s, res, h) };
  };
  try {
    if (atOnce) {
      setup(h);
      for (const { s, o } of await Promise.all(SAMPLES.map(ask))) check(s, o, h);
      h.parser?.clearFaults();
    } else {
      for (const s of SAMPLES) {
        setup(h);
        const { o } = await ask(s);
        check(s, o, h);
        h.parser?.clearFaults();
      }
    }
    assertNoSecrets(h, h.logs.join("\n"));
  } finally {
    await h.close();
  }
}

/** What a sample answers when the Parser fails with `status`/`code` (or degrades). */
function expect(
  s: ParserSample,
  o: { status: number; code: unknown },
  status: number,
  code: string,
) {
  if (s.degradesTo !== undefined) {
    assert.equal(o.status, s.degradesTo, label(s));
    return;
  }
  assert.equal(o.code, code, label(s));
  if (!s.streamsFirst) assert.equal(o.status, status, label(s));
}

Deno.test("no Parser session → 401 UNAUTHORIZED (log in) and no call to the Parser", () =>
  eachSample({ parserSession: false }, () => {}, (s, o, h) => {
    if (s.degradesTo !== undefined) return assert.equal(o.status, s.degradesTo, label(s));
    expect(s, o, 401, "UNAUTHORIZED");
    assert.equal(h.parser!.requests.filter((r) => FEATURE_PATHS.test(r.path)).length, 0, label(s));
  }));

Deno.test("Parser unreachable → 503 UNREACHABLE", () =>
  eachSample(
    { env: { PARSER_URL: "http://127.0.0.1:9", PARSER_ALLOWED_URLS: "http://127.0.0.1:9" } },
    () => {},
    (s, o) => expect(s, o, 503, "UNREACHABLE"),
  ));

Deno.test("Parser never answers → 504 UPSTREAM_TIMEOUT", async () => {
  // One sample at a time on a clock that moves only while the Parser holds the request: from
  // one deadline to the next, and for a route that degrades to Core once, when the held call's
  // deadline is the only one pending (Core's calls are never cut short). An AI call may run no
  // longer than its client waits, so none is left running past its sample.
  const time = manualDeadlines();
  const h = await startHarness({
    parser: true,
    parserSession: true,
    deadlines: time,
    env: { UPSTREAM_TIMEOUT_MS: "150", AI_TIMEOUT_MS: "150", AI_TOTAL_TIMEOUT_MS: "150" },
  });
  try {
    for (const s of SAMPLES) {
      h.parser!.fault({ path: FEATURE_PATHS, hang: true });
      // The Parser holds every feature call: once this sample made one, only a deadline ends
      // its wait (for a route that degrades to Core: once that call's is the one deadline left).
      const from = h.parser!.requests.length;
      const asked = () => h.parser!.requests.slice(from).some((r) => FEATURE_PATHS.test(r.path));
      const t0 = time.now();
      const once = () => time.now() === t0 && time.pending() === 1;
      const held = () => asked() && (s.degradesTo === undefined || once());
      // the whole answer: a stream's head comes first, its end when the deadline passes
      const answer = h.request(s.path, { method: s.method, ...s.init })
        .then((res) => outcome(s, res, h));
      const o = await answerMovingTime(time, answer, held, label(s));
      expect(s, o, 504, "UPSTREAM_TIMEOUT");
      h.parser!.clearFaults();
    }
    assertNoSecrets(h, h.logs.join("\n"));
  } finally {
    await h.close();
  }
});

Deno.test("Parser 401 → 401 UNAUTHORIZED", () =>
  eachSample(
    {},
    (h) => h.parser!.fault({ path: FEATURE_PATHS, status: 401 }),
    (s, o) => expect(s, o, 401, "UNAUTHORIZED"),
  ));

Deno.test("Parser 422 → 422 UPSTREAM_REJECTED (the Parser's words are not passed on)", () =>
  eachSample(
    {},
    (h) =>
      h.parser!.fault({
        path: FEATURE_PATHS,
        status: 422,
        body: '{"type":"validation","on":"body","property":"/x","message":"internal detail"}',
      }),
    (s, o) => expect(s, o, 422, "UPSTREAM_REJECTED"),
  ));

Deno.test("Parser 429 → 429 RATE_LIMITED with Retry-After", () =>
  eachSample(
    {},
    (h) =>
      h.parser!.fault({
        path: FEATURE_PATHS,
        status: 429,
        body: '{"error":"Rate limit exceeded for AI tools.","code":"RATE_LIMITED"}',
      }),
    (s, o) => {
      expect(s, o, 429, "RATE_LIMITED");
      if (!s.streamsFirst && s.degradesTo === undefined) {
        assert.ok(o.headers.get("retry-after"), label(s));
      }
    },
  ));

Deno.test("Parser 500 text → 502 UPSTREAM_ERROR without the Parser's text", () =>
  eachSample(
    {},
    (h) =>
      h.parser!.fault({
        path: FEATURE_PATHS,
        status: 500,
        body: "LLM returned invalid JSON: secret prompt at /srv/parser",
        contentType: "text/plain;charset=utf-8",
      }),
    (s, o) => expect(s, o, 502, "UPSTREAM_ERROR"),
  ));

Deno.test("Parser 404 → 404 (or the route's documented meaning)", () =>
  eachSample(
    {},
    (h) =>
      h.parser!.fault({
        path: FEATURE_PATHS,
        status: 404,
        body: '{"error":"Brain dump entry not found","code":"ENTRY_NOT_FOUND"}',
      }),
    (s, o) => {
      if (s.degradesTo !== undefined) return assert.equal(o.status, s.degradesTo, label(s));
      const status = s.on404 ?? 404;
      if (!s.streamsFirst) assert.equal(o.status, status, label(s));
      if (status === 404) assert.equal(o.code, "NOT_FOUND", label(s));
    },
  ));
