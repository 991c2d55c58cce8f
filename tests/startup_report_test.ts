/**
 * The start-up summary against real sockets: each way a backend can fail is named, Core's
 * version is reported, and no line carries a URL or token. The check's deadline runs on a clock
 * the test moves (it passes only where a test lets it) and host names go to a resolver the test
 * answers for, so no outcome depends on how busy the machine is or on its resolver.
 */
import assert from "node:assert/strict";
import { loadConfig } from "../src/config/service_config.ts";
import { NOTHING_CONFIGURED } from "../src/state/readiness.ts";
import {
  hostReport,
  logStartupReport,
  STARTUP_CHECK_MS,
  type StartupCheckOptions,
  type StartupLine,
  startupReport,
} from "../src/state/startup_report.ts";
import { jsonLogger } from "../src/http/log.ts";
import { REFUSED_URL } from "./helpers/harness.ts";
import { eventually, manualDeadlines } from "./helpers/manual_deadlines.ts";
import { startCoreSim } from "../sims/core.ts";
import { startParserSim } from "../sims/parser.ts";

/** The resolver of these tests: `*.invalid` does not resolve, other names do. */
const resolves = (hostname: string) => Promise.resolve(!hostname.endsWith(".invalid"));

/**
 * Every line as logged, checked to name no address and no token. The check's deadline never
 * passes unless `opts.deadlines` is a clock the test moves.
 */
async function report(
  env: Record<string, string>,
  opts: StartupCheckOptions = {},
): Promise<StartupLine[]> {
  const lines = await startupReport(loadConfig({ UPSTREAM_TIMEOUT_MS: "1000", ...env }), fetch, {
    resolves,
    deadlines: manualDeadlines(),
    ...opts,
  });
  for (const line of lines) {
    const text = JSON.stringify(line);
    assert.doesNotMatch(text, /127\.0\.0\.1|invalid|:\/\//, "no address in a line");
    for (const secret of [env.CORE_TOKEN, env.PUBLIC_CORE_TOKEN].filter(Boolean)) {
      assert.ok(!text.includes(secret!), "no token in a line");
    }
  }
  return lines;
}

const byBackend = (lines: StartupLine[], backend: string) =>
  lines.find((l) => l.fields.backend === backend)!;

/** Runs `fn` with the URL of a server answering every request with `handler`. */
async function answering(
  fn: (url: string) => Promise<void>,
  handler: () => Response | Promise<Response>,
) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handler);
  try {
    await fn(`http://127.0.0.1:${server.addr.port}`);
  } finally {
    await server.shutdown();
  }
}

Deno.test("start-up: nothing configured is one warning that names what to set", async () => {
  const lines = await report({});
  assert.deepEqual(lines, [{ level: "warn", msg: NOTHING_CONFIGURED, fields: {} }]);
  assert.match(NOTHING_CONFIGURED, /CORE_URL.*PARSER_URL/);
});

Deno.test("start-up: Core and Parser reachable; Core's version, the Parser's status", async () => {
  const core = await startCoreSim();
  const parser = await startParserSim({ core: { url: core.url, token: core.token } });
  try {
    const lines = await report({
      CORE_URL: core.url + "/etapi",
      CORE_TOKEN: core.token,
      PARSER_URL: parser.url,
    });
    const c = byBackend(lines, "core");
    assert.equal(c.level, "info");
    assert.equal(c.fields.reachable, true);
    assert.equal(typeof c.fields.version, "string");
    const p = byBackend(lines, "parser");
    assert.equal(p.level, "info");
    assert.equal(p.fields.reachable, true);
    assert.equal(p.fields.status, "ok");
  } finally {
    await parser.close();
    await core.close();
  }
});

Deno.test("start-up: Core refusing the server's token is named as such", async () => {
  const core = await startCoreSim();
  try {
    const c = byBackend(await report({ CORE_URL: core.url, CORE_TOKEN: "wrong-token" }), "core");
    assert.equal(c.level, "warn");
    assert.equal(c.fields.failure, "token refused");
  } finally {
    await core.close();
  }
});

Deno.test("start-up: refused, DNS, TLS and timeout are told apart", async () => {
  const failure = async (url: string) =>
    byBackend(await report({ PARSER_URL: url }), "parser").fields.failure;
  assert.equal(await failure(REFUSED_URL), "refused");
  assert.equal(await failure("http://backend.invalid"), "DNS");
  await answering(async (url) => {
    assert.equal(await failure(url.replace("http:", "https:")), "TLS");
  }, () => new Response("plain http"));
  // accepts the connection, never answers: the check times out when its deadline passes
  const silent = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of silent) held.push(conn);
  })();
  try {
    const time = manualDeadlines();
    const lines = report({
      PARSER_URL: `http://127.0.0.1:${silent.addr.port}`,
      UPSTREAM_TIMEOUT_MS: "200",
    }, { deadlines: time });
    await eventually("the backend holds the connection", () => held.length === 1);
    time.advance(200);
    const parser = byBackend(await lines, "parser");
    assert.deepEqual([parser.fields.failure, parser.fields.error], ["timeout", "UPSTREAM_TIMEOUT"]);
  } finally {
    silent.close();
    await accepting.catch(() => {});
    for (const c of held) c.close();
  }
});

Deno.test("start-up: a name whose resolver does not answer is DNS, not a slow backend", async () => {
  const time = manualDeadlines();
  let asked = "";
  const silentResolver = (hostname: string) => {
    asked = hostname;
    return new Promise<boolean>(() => {});
  };
  const lines = report({ CORE_URL: "http://core.example:8080", CORE_TOKEN: "etapi-secret-token" }, {
    resolves: silentResolver,
    deadlines: time,
  });
  await eventually("the name is being looked up", () => asked === "core.example");
  time.advance(1000);
  const core = byBackend(await lines, "core");
  assert.equal(core.msg, "core: not available (DNS)");
  assert.deepEqual([core.fields.failure, core.fields.error], ["DNS", "UPSTREAM_TIMEOUT"]);
});

Deno.test("start-up: the check gives up after STARTUP_CHECK_MS even with a longer deadline", async () => {
  const time = manualDeadlines();
  const lines = report({ PARSER_URL: "http://parser.example", UPSTREAM_TIMEOUT_MS: "600000" }, {
    resolves: () => new Promise(() => {}),
    deadlines: time,
  });
  await eventually("the check waits", () => time.pending() === 1);
  time.advance(STARTUP_CHECK_MS - 1);
  assert.equal(time.pending(), 1);
  time.advance(1);
  assert.equal(byBackend(await lines, "parser").fields.failure, "DNS");
});

Deno.test("start-up: a bad answer, and a Parser address that is not the Parser", async () => {
  await answering(async (url) => {
    const c = byBackend(await report({ CORE_URL: url, CORE_TOKEN: "etapi-secret-token" }), "core");
    assert.deepEqual([c.level, c.fields.failure], ["warn", "bad answer"]);
  }, () => new Response("oops", { status: 500 }));
  await answering(async (url) => {
    const p = byBackend(await report({ PARSER_URL: url }), "parser");
    assert.deepEqual([p.level, p.fields.reachable, p.fields.failure], ["warn", true, "bad answer"]);
  }, () => new Response("<html>a web server</html>", { status: 404 }));
});

/** The host rule's start-up lines for `env`. */
const hostLines = (env: Record<string, string>) => hostReport(loadConfig(env));

Deno.test("start-up: listening beyond loopback with no host name set, one warning names what to set", () => {
  for (const HOST of ["0.0.0.0", "::", "192.168.1.20"]) {
    const [hosts, warning, ...rest] = hostLines({ HOST, PORT: "8080" });
    assert.deepEqual(rest, []);
    assert.equal(hosts.level, "info");
    assert.equal(hosts.msg, "answering IP addresses, localhost and *.localhost only");
    assert.deepEqual(hosts.fields.hosts, []);
    assert.equal(warning.level, "warn");
    assert.equal(
      warning.msg,
      `HOST=${HOST} takes connections from other machines, but no host name is answered: a ` +
        "request by name such as http://lore.lan:8080/ is refused with 421: set PUBLIC_ORIGIN " +
        "to the address browsers use, or list the names in ALLOWED_HOSTS",
    );
  }
  // port 80 is left out of the example, as browsers leave it out
  assert.match(hostLines({ HOST: "0.0.0.0", PORT: "80" })[1].msg, /http:\/\/lore\.lan\/ is/);
});

Deno.test("start-up: behind a trusted proxy with no host name set, the same warning", () => {
  const [, warning] = hostLines({ HOST: "127.0.0.1", TRUST_PROXY: "true" });
  assert.equal(warning.level, "warn");
  assert.match(warning.msg, /^TRUST_PROXY is on .* https:\/\/lore\.example\.org\/ is refused/);
  assert.match(warning.msg, /set PUBLIC_ORIGIN .* ALLOWED_HOSTS$/);
});

Deno.test("start-up: the host names answered are said; no warning once one is set or on loopback", () => {
  const named = hostLines({
    HOST: "0.0.0.0",
    PUBLIC_ORIGIN: "https://Lore.Example.org",
    ALLOWED_HOSTS: "lore.lan,wiki.example.com",
  });
  assert.deepEqual(named, [{
    level: "info",
    msg: "answering host names lore.example.org, lore.lan, wiki.example.com, and IP addresses, " +
      "localhost and *.localhost",
    fields: {
      hosts: ["lore.example.org", "lore.lan", "wiki.example.com"],
      alsoAnswered: "IP addresses, localhost and *.localhost",
    },
  }]);
  assert.deepEqual(hostLines({ HOST: "0.0.0.0", ALLOWED_HOSTS: "lore.lan" }).length, 1);
  // only this machine connects: addresses and localhost are all it can be called by
  for (const HOST of ["127.0.0.1", "localhost", "::1", "127.0.0.2"]) {
    assert.deepEqual(hostLines({ HOST }).map((l) => l.level), ["info"], HOST);
  }
});

Deno.test("start-up: the log has the host lines first, before any backend answers", async () => {
  const lines: Record<string, unknown>[] = [];
  const log = jsonLogger("info", (l) => lines.push(JSON.parse(l)));
  // a backend whose name never resolves: its line waits, the host lines do not
  const time = manualDeadlines();
  const config = loadConfig({ HOST: "0.0.0.0", PARSER_URL: "http://parser.example" });
  const reporting = logStartupReport(log, config, fetch, {
    resolves: () => new Promise(() => {}),
    deadlines: time,
  });
  assert.deepEqual(lines.map((l) => l.level), ["info", "warn"]);
  assert.match(String(lines[1].msg), /^HOST=0\.0\.0\.0 .* 421/);
  await eventually("the check waits", () => time.pending() === 1);
  time.advance(STARTUP_CHECK_MS);
  await reporting;
  assert.deepEqual(lines.slice(2).map((l) => l.backend), ["core", "parser"]);
});
