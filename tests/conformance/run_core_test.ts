/** The conformance command line: options, Core settings from the environment, the report. */
import assert from "node:assert/strict";
import { ConfigError } from "../../src/config/service_config.ts";
import { formatReport } from "./report.ts";
import { coreFromEnv, parseArgs } from "./run_core.ts";

Deno.test("test:core options: --share and --all turn the share steps on; anything else is refused", () => {
  assert.deepEqual(parseArgs([]), { kind: "run", flags: [] });
  assert.deepEqual(parseArgs(["--share"]), { kind: "run", flags: ["share"] });
  assert.deepEqual(parseArgs(["--all"]), { kind: "run", flags: ["share"] });
  assert.deepEqual(parseArgs(["--wipe"]), { kind: "error", message: "unknown option --wipe" });
  assert.deepEqual(parseArgs(["--share", "--help"]), { kind: "help" });
});

Deno.test("test:core settings: CORE_URL and CORE_TOKEN are both needed and validated", () => {
  assert.deepEqual(coreFromEnv({ CORE_URL: "http://core:8080/", CORE_TOKEN: "tok_en" }), {
    coreUrl: "http://core:8080",
    coreToken: "tok_en",
  });
  assert.throws(() => coreFromEnv({ CORE_TOKEN: "tok_en" }), ConfigError);
  assert.throws(() => coreFromEnv({ CORE_URL: "http://core:8080" }), ConfigError);
  assert.throws(() => coreFromEnv({ CORE_URL: "ftp://core", CORE_TOKEN: "t" }), ConfigError);
});

Deno.test("test:core report: aligned columns, one row per step, and the counts", () => {
  const report = formatReport([
    { method: "GET", path: "/readyz", result: "ok", reason: "ready" },
    { method: "PUT", path: "/api/share", result: "skipped", reason: "skipped (needs --share)" },
    { method: "-", path: "(remove the scratch note)", result: "FAIL", reason: "Core: 500" },
  ]);
  assert.equal(
    report,
    [
      "METHOD  PATH                       RESULT   REASON",
      "GET     /readyz                    ok       ready",
      "PUT     /api/share                 skipped  skipped (needs --share)",
      "-       (remove the scratch note)  FAIL     Core: 500",
      "",
      "1 ok, 1 FAIL, 1 skipped",
    ].join("\n"),
  );
});
