/**
 * `deno task test:client` without a browser: the judge on canned browser events, one step's row,
 * the command line (options, `PORTAL_URL`/`BFF_URL`), the page × journey report, and the task
 * refusing to start without `PORTAL_URL`.
 */
import assert from "node:assert/strict";
import { ConfigError } from "../../src/config/service_config.ts";
import { Blocked, CheckFailed, Skip } from "../conformance/kit.ts";
import { formatReport } from "../conformance/report.ts";
import { cleanEnv } from "../helpers/main_process.ts";
import { type ClientState, type ClientStep, runClientStep } from "./client_kit.ts";
import { type ApiCall, judge, type StepEvents } from "./judge.ts";
import { clientFromEnv, parseArgs } from "./run_client.ts";

const UI = "http://127.0.0.1:3100";
const quiet: StepEvents = {
  consoleErrors: [],
  pageErrors: [],
  calls: [],
  text: "Lore Browser\n16 entries",
};
const call = (
  method: string,
  path: string,
  status: number,
  extra: Partial<ApiCall> = {},
): ApiCall => ({
  method,
  url: UI + path,
  status,
  ...extra,
});

Deno.test("judge: a clean step has no problems; answers below 400 and aborted calls are fine", () => {
  assert.deepEqual(judge(quiet), []);
  assert.deepEqual(
    judge({
      ...quiet,
      calls: [
        call("GET", "/api/lore?q=%23lore", 200),
        call("PUT", "/api/lore/a1/content", 204),
        call("GET", "/api/images/i1/x.png", 301),
        call("GET", "/api/lore/note-search?q=mi", 0, { failure: "net::ERR_ABORTED" }),
      ],
    }),
    [],
  );
});

Deno.test("judge: every failed /api call, with its answer or network error", () => {
  const problems = judge({
    ...quiet,
    calls: [
      call("PUT", "/api/lore/a1/content", 415, {
        body: '{"error":"UNSUPPORTED_MEDIA_TYPE","message":"send text/plain"}\n',
      }),
      call("GET", "/api/rag", 400),
      call("POST", "/api/brain-dump", 0, { failure: "net::ERR_EMPTY_RESPONSE" }),
      call("GET", "/api/config/status", 200),
    ],
  });
  assert.deepEqual(problems, [
    'PUT /api/lore/a1/content → 415 {"error":"UNSUPPORTED_MEDIA_TYPE","message":"send text/plain"}',
    "GET /api/rag → 400",
    "POST /api/brain-dump → net::ERR_EMPTY_RESPONSE",
  ]);
});

Deno.test("judge: a deliberate error answer is allowed, only for its method, path and status", () => {
  const allow = [{ method: "POST", path: "/api/auth/login", status: 401 }];
  assert.deepEqual(judge({ ...quiet, calls: [call("POST", "/api/auth/login", 401)] }, allow), []);
  assert.deepEqual(
    judge({
      ...quiet,
      calls: [call("POST", "/api/auth/login", 500), call("POST", "/api/auth/register", 401)],
    }, allow),
    ["POST /api/auth/login → 500", "POST /api/auth/register → 401"],
  );
  assert.deepEqual(
    judge({ ...quiet, calls: [call("DELETE", "/api/lore/a1/attributes", 404)] }, [
      { method: "DELETE", path: /^\/api\/lore\/[^/]+\/attributes$/, status: 404 },
    ]),
    [],
  );
});

Deno.test("judge: crash banners, error boundaries and the UI's error messages", () => {
  const cases: [string, string][] = [
    ["Application error: a client-side exception has occurred (see the browser console)", "crash"],
    ["Something went wrong\neo?.slice is not a function\nTry again", "crash"],
    ["Could not load lore entry", "crash"],
    ["AI tools unavailable", "crash"],
    ["Brain dump unavailable", "crash"],
    ["AllCodex unavailable\nHTTP 502", "error banner"],
    ["AllKnower credentials expired", "error banner"],
    ["AllCodex not connected", "error banner"],
    ["Failed to load quests. Check your AllCodex connection in Settings.", "error message"],
    ["Connection error", "error message"],
    ["Failed to save content. Please try again.", "error message"],
    ["Failed: Unknown relationship type: ally", "error message"],
  ];
  for (const [text, what] of cases) {
    const problems = judge({ ...quiet, text: `Dashboard\n${text}` });
    assert.equal(problems.length, 1, text);
    assert.match(problems[0], new RegExp(`^${what}: "`), text);
  }
  assert.deepEqual(judge({ ...quiet, errorOverlay: true }), [
    "crash: the Next.js error overlay is shown",
  ]);
});

Deno.test("judge: uncaught exceptions and console errors; a failed call's console line is not repeated", () => {
  const problems = judge({
    ...quiet,
    calls: [call("GET", "/api/rag", 400)],
    pageErrors: ["TypeError: notes.slice is not a function\n    at Dashboard (page.js:1:2)"],
    consoleErrors: [
      {
        text: "Failed to load resource: the server responded with a status of 400 ()",
        url: `${UI}/api/rag`,
      },
      {
        text: "Failed to load resource: the server responded with a status of 404 (Not Found)",
        url: `${UI}/lore/m1/api/images/i1/m.png`,
      },
      { text: "[portal error] TypeError: x is undefined\n  at y" },
    ],
  });
  assert.deepEqual(problems, [
    "GET /api/rag → 400",
    "uncaught: TypeError: notes.slice is not a function",
    "console: Failed to load resource: the server responded with a status of 404 (Not Found) (/lore/m1/api/images/i1/m.png)",
    "console: [portal error] TypeError: x is undefined",
  ]);
});

Deno.test("judge: text that shows a value the UI could not render, with its context", () => {
  const problems = judge({ ...quiet, text: "Mira Tallowend\nModified Invalid Date" });
  assert.deepEqual(problems, ['text: "Mira Tallowend Modified Invalid Date"']);
  const long = "Recent Entries\nRAG Indexed NaN\nundefined notes in the RAG index\n[object Object]";
  assert.deepEqual(judge({ ...quiet, text: long }), [
    'text: "…ecent Entries RAG Indexed NaN undefined notes in the RAG index [objec…"',
    'text: "Recent Entries RAG Indexed NaN undefined notes in the RAG in…"',
    'text: "…efined notes in the RAG index [object Object]"',
  ]);
  // words that merely contain the broken ones are fine
  assert.deepEqual(judge({ ...quiet, text: "Nanny Ogg, undefinedness, a NaNa" }), []);
});

/** A state whose monitor replays `events` and records nothing else. */
function stateWith(events: StepEvents): ClientState {
  return {
    flags: new Set<string>(),
    monitor: {
      mark() {},
      settle: async () => {},
      read: () => Promise.resolve(events),
      calls: () => events.calls,
    },
  } as unknown as ClientState;
}

const step = (run: ClientStep["run"], allow?: ClientStep["allow"]): ClientStep => ({
  page: "/lore/[id]",
  journey: "GM-only toggle",
  check: "GM Only on and off",
  allow,
  run,
});

Deno.test("one step: ok with what it saw; FAIL with the failed calls first, then its own check", async () => {
  const ok = await runClientStep(step(() => Promise.resolve("toggled twice")), stateWith(quiet));
  assert.deepEqual(ok.row, {
    method: "/lore/[id]",
    path: "GM-only toggle",
    result: "ok",
    reason: "toggled twice",
  });
  assert.deepEqual(ok.details, []);

  const events = {
    ...quiet,
    calls: [call("POST", "/api/lore/a1/attributes", 400), call("GET", "/api/lore/a1", 200)],
  };
  const failed = await runClientStep(
    step(() => Promise.reject(new CheckFailed("the GM Only badge after a click is not shown"))),
    stateWith(events),
  );
  assert.equal(failed.row.result, "FAIL");
  assert.equal(
    failed.row.reason,
    "POST /api/lore/a1/attributes → 400; the GM Only badge after a click is not shown",
  );
  assert.deepEqual(failed.details, [
    "  POST /api/lore/a1/attributes → 400",
    "  the GM Only badge after a click is not shown",
    "  call: POST /api/lore/a1/attributes → 400",
    "  call: GET /api/lore/a1 → 200",
  ]);

  const judged = await runClientStep(
    step(async () => {}),
    stateWith({ ...quiet, text: "Something went wrong" }),
  );
  assert.deepEqual([judged.row.result, judged.row.reason], [
    "FAIL",
    'crash: "Something went wrong"',
  ]);

  const allowed = await runClientStep(
    step(async () => {}, [{ method: "POST", path: "/api/lore/a1/attributes", status: 400 }]),
    stateWith(events),
  );
  assert.equal(allowed.row.result, "ok");
});

Deno.test("one step: blocked by an earlier step, or skipped, without judging the page", async () => {
  const broken = stateWith({ ...quiet, text: "Something went wrong" });
  const blocked = await runClientStep(
    step(() => Promise.reject(new Blocked('needs note "created"'))),
    broken,
  );
  assert.deepEqual([blocked.row.result, blocked.row.reason], [
    "FAIL",
    'blocked: needs note "created"',
  ]);
  const skipped = await runClientStep(step(() => Promise.reject(new Skip("no UI"))), broken);
  assert.deepEqual([skipped.row.result, skipped.row.reason], ["skipped", "skipped (no UI)"]);
});

Deno.test("test:client options: --screenshots (and --all); anything else is refused", () => {
  assert.deepEqual(parseArgs([]), { kind: "run", flags: [] });
  assert.deepEqual(parseArgs(["--screenshots"]), { kind: "run", flags: ["screenshots"] });
  assert.deepEqual(parseArgs(["--all"]), { kind: "run", flags: ["screenshots"] });
  assert.deepEqual(parseArgs(["--share"]), { kind: "error", message: "unknown option --share" });
  assert.deepEqual(parseArgs(["--help"]), { kind: "help" });
});

Deno.test("test:client settings: PORTAL_URL required, BFF_URL defaulted; both plain origins", () => {
  assert.deepEqual(clientFromEnv({ PORTAL_URL: "http://127.0.0.1:3100" }), {
    portalUrl: "http://127.0.0.1:3100",
    bffUrl: "http://127.0.0.1:8080",
  });
  assert.deepEqual(
    clientFromEnv({ PORTAL_URL: "https://portal.example/", BFF_URL: "http://[::1]:9000/" }),
    {
      portalUrl: "https://portal.example",
      bffUrl: "http://[::1]:9000",
    },
  );
  const refused = (env: Record<string, string>, problem: RegExp) => {
    assert.throws(
      () => clientFromEnv(env),
      (e) => e instanceof ConfigError && problem.test(e.message),
    );
  };
  refused({}, /PORTAL_URL is required/);
  refused({ BFF_URL: "http://127.0.0.1:8080" }, /PORTAL_URL is required/);
  refused(
    { PORTAL_URL: "127.0.0.1:3100" },
    /PORTAL_URL: not a URL|PORTAL_URL: an http\(s\) origin/,
  );
  refused({ PORTAL_URL: "ftp://ui" }, /PORTAL_URL: an http\(s\) origin/);
  refused({ PORTAL_URL: "http://ui/portal" }, /PORTAL_URL: an http\(s\) origin/);
  refused({ PORTAL_URL: "http://user:pw@ui" }, /PORTAL_URL: an http\(s\) origin/);
  refused({ PORTAL_URL: "http://ui", BFF_URL: "https://127.0.0.1:8080" }, /BFF_URL: .*speaks http/);
});

Deno.test("test:client report: one row per page and journey, under PAGE and JOURNEY", () => {
  assert.equal(
    formatReport([
      { method: "/", path: "visit", result: "ok", reason: "16 entries" },
      {
        method: "/lore/[id]/edit",
        path: "edit content and save",
        result: "FAIL",
        reason: "PUT … → 415",
      },
    ], ["PAGE", "JOURNEY"]),
    [
      "PAGE             JOURNEY                RESULT  REASON",
      "/                visit                  ok      16 entries",
      "/lore/[id]/edit  edit content and save  FAIL    PUT … → 415",
      "",
      "1 ok, 1 FAIL, 0 skipped",
    ].join("\n"),
  );
});

Deno.test("deno task test:client without PORTAL_URL: exit 2, says what is missing, starts nothing", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-check", "-A", "tests/client/run_client.ts"],
    cwd: new URL("../..", import.meta.url),
    env: cleanEnv({ BFF_URL: "http://127.0.0.1:1" }),
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 2, stderr);
  assert.equal(new TextDecoder().decode(out.stdout), "");
  assert.match(stderr, /PORTAL_URL is required: the address of the running UI/);
  assert.match(stderr, /^usage: PORTAL_URL=/m);
});
