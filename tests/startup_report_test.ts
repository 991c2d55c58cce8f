/**
 * The start-up summary against real sockets: each way a backend can fail is named, Core's
 * version is reported, and no line carries a URL or token.
 */
import assert from "node:assert/strict";
import { loadConfig } from "../src/config.ts";
import { NOTHING_CONFIGURED } from "../src/readiness.ts";
import { type StartupLine, startupReport } from "../src/startup_report.ts";
import { startCoreSim } from "../sims/core.ts";
import { startParserSim } from "../sims/parser.ts";

/** Every line as logged, checked to name no address and no token. */
async function report(env: Record<string, string>): Promise<StartupLine[]> {
  const lines = await startupReport(loadConfig({ UPSTREAM_TIMEOUT_MS: "1000", ...env }), fetch);
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
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const closedUrl = `http://127.0.0.1:${closed.addr.port}`;
  closed.close();
  const failure = async (url: string) =>
    byBackend(await report({ PARSER_URL: url }), "parser").fields.failure;
  assert.equal(await failure(closedUrl), "refused");
  assert.equal(await failure("http://backend.invalid"), "DNS");
  await answering(async (url) => {
    assert.equal(await failure(url.replace("http:", "https:")), "TLS");
  }, () => new Response("plain http"));
  // accepts the connection, never answers
  const silent = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of silent) held.push(conn);
  })();
  try {
    const lines = await report({
      PARSER_URL: `http://127.0.0.1:${silent.addr.port}`,
      UPSTREAM_TIMEOUT_MS: "200",
    });
    assert.equal(byBackend(lines, "parser").fields.failure, "timeout");
  } finally {
    silent.close();
    await accepting.catch(() => {});
    for (const c of held) c.close();
  }
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
