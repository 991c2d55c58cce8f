/**
 * The entry point's command line and start-up log, run as a subprocess the way an operator runs
 * it: `--help`, `--version`, a refused unknown argument, and the start-up summary.
 */
import assert from "node:assert/strict";
import { envSchema } from "../src/config/service_config.ts";
import { NOTHING_CONFIGURED } from "../src/state/readiness.ts";
import { VERSION } from "../src/config/version.ts";
import { startCoreSim } from "../sims/core.ts";
import { cleanEnv, MAIN_PERMISSIONS, spawnMain } from "./helpers/main_process.ts";

const REPO = new URL("..", import.meta.url);

/** Runs `main.ts args` to completion. */
async function run(...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...MAIN_PERMISSIONS, "main.ts", ...args],
    cwd: REPO,
    env: cleanEnv({ PORT: "0" }),
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

Deno.test("main.ts --help: usage, every option and every environment variable", async () => {
  for (const flag of ["--help", "-h"]) {
    const { code, stdout, stderr } = await run(flag);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^Usage: /m);
    for (const option of ["--help", "--version", "--print-routes"]) {
      assert.ok(stdout.includes(option), option);
    }
    for (const name of Object.keys(envSchema.shape)) {
      assert.match(stdout, new RegExp(`^  ${name}  `, "m"), name);
    }
    assert.doesNotMatch(stdout, /"msg":"listening"/, "no server started");
  }
});

Deno.test("main.ts --version prints the version alone", async () => {
  const { code, stdout } = await run("--version");
  assert.equal(code, 0);
  assert.equal(stdout, `${VERSION}\n`);
});

Deno.test("main.ts: an unknown argument exits 2 with a message, starting nothing", async () => {
  for (const args of [["--port", "80"], ["--help", "--verbose"], ["serve"]]) {
    const { code, stdout, stderr } = await run(...args);
    assert.equal(code, 2, args.join(" "));
    assert.equal(stdout, "", args.join(" "));
    assert.match(stderr, /unknown argument ".+": .*see --help/, args.join(" "));
  }
});

/** Starts the service with `env` and returns its log lines once `done` holds for them. */
async function startUpLines(
  env: Record<string, string>,
  done: (lines: Record<string, unknown>[]) => boolean,
): Promise<Record<string, unknown>[]> {
  const main = await spawnMain(env);
  try {
    await main.until(done);
    return [...main.lines];
  } finally {
    await main.close();
  }
}

Deno.test("main.ts start-up: with nothing configured, a warning that names what to set", async () => {
  const lines = await startUpLines({}, (ls) => ls.some((l) => l.msg === NOTHING_CONFIGURED));
  assert.equal(lines.find((l) => l.msg === "listening")?.version, VERSION);
  assert.equal(lines.find((l) => l.msg === NOTHING_CONFIGURED)?.level, "warn");
});

Deno.test("main.ts start-up: CORE_URL copied with /etapi is understood and said; Core's version", async () => {
  const core = await startCoreSim();
  try {
    const lines = await startUpLines(
      { CORE_URL: `${core.url}/etapi`, PUBLIC_CORE_TOKEN: core.token },
      (ls) => ls.some((l) => l.backend === "parser"),
    );
    const note = lines.find((l) => l.msg === "configuration");
    assert.match(String(note?.note), /^CORE_URL: the trailing \/etapi .* removed$/);
    const c = lines.find((l) => l.backend === "core");
    assert.equal(c?.reachable, true);
    assert.equal(typeof c?.version, "string");
    assert.equal(lines.find((l) => l.backend === "parser")?.configured, false);
    const text = JSON.stringify(lines);
    assert.ok(!text.includes(core.token), "no token logged");
    assert.ok(!text.includes(core.url), "no backend URL logged");
    // the same Core, asked for app-info once, at its base URL
    assert.ok(core.requests.some((r) => r.path === "/etapi/app-info"));
  } finally {
    await core.close();
  }
});

Deno.test("main.ts start-up: the host names answered, and a warning when browsers would get 421", async () => {
  // behind a proxy with no name set: every visitor's request by name would be refused
  const unnamed = await startUpLines(
    { TRUST_PROXY: "true" },
    (ls) => ls.some((l) => l.msg === NOTHING_CONFIGURED),
  );
  const warning = unnamed.find((l) => l.level === "warn" && /421/.test(String(l.msg)));
  assert.match(String(warning?.msg), /set PUBLIC_ORIGIN .* or list the names in ALLOWED_HOSTS$/);
  assert.equal(
    unnamed.find((l) => String(l.msg).startsWith("answering"))?.msg,
    "answering IP addresses, localhost and *.localhost only",
  );
  // named: said, and no warning
  const named = await startUpLines(
    { TRUST_PROXY: "true", PUBLIC_ORIGIN: "https://lore.example.org" },
    (ls) => ls.some((l) => l.msg === NOTHING_CONFIGURED),
  );
  assert.deepEqual(
    named.find((l) => String(l.msg).startsWith("answering"))?.hosts,
    ["lore.example.org"],
  );
  assert.ok(!named.some((l) => /421/.test(String(l.msg))), "no warning");
});
