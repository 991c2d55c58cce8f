/**
 * Two instances of the service behind a real nginx balancing round-robin, as docs/instances.md
 * describes them: one `SESSION_SECRET`, `PORTAL_CONFIG_STORE=core`, each its own empty data dir.
 * A login made through nginx works on both instances, a portal config change made on one is read
 * on the other, and the login rate limit holds per instance (N × the limit in all).
 */
import assert from "node:assert/strict";
import { loadConfig } from "../../src/config/service_config.ts";
import { jsonLogger } from "../../src/http/log.ts";
import { responseCheck } from "../../src/pipeline/response_check.ts";
import { PORTAL_CONFIG_CACHE_MS } from "../../src/state/portal_config_in_core.ts";
import { type RunningServer, startServer } from "../../src/server.ts";
import { type CoreSim, startCoreSim } from "../../sims/core.ts";
import { DEFAULT_OWNER, type ParserSim, startParserSim } from "../../sims/parser.ts";
import { W } from "../../sims/world.ts";
import { TEST_SESSION_SECRET } from "../helpers/harness.ts";
import { cookieHeader } from "../helpers/session.ts";
import { type FrontProxy, nginxTestsRun, startNginxSite } from "./front_proxy.ts";

const RUNS = nginxTestsRun("two instances behind nginx");

/** One instance: its server, its own data dir, and a clock the test moves on. */
interface Instance {
  server: RunningServer;
  /** `host:port` as nginx's `$upstream_addr` names it. */
  addr: string;
  dataDir: string;
  advance(ms: number): void;
}

/** Everything one test runs: both doubles, both instances, nginx in front. */
interface Cluster {
  core: CoreSim;
  parser: ParserSim;
  a: Instance;
  b: Instance;
  /** nginx's base URL. */
  url: string;
  problems: string[];
}

async function startInstance(env: Record<string, string>, problems: string[]): Promise<Instance> {
  const dataDir = await Deno.makeTempDir({ prefix: "lpp-instance-" });
  let skew = 0;
  const server = await startServer({
    config: loadConfig({ ...env, DATA_DIR: dataDir }),
    log: jsonLogger("silent"),
    now: () => Date.now() + skew,
    checkResponse: responseCheck((p) => problems.push(p)),
  });
  return {
    server,
    addr: new URL(server.url).host,
    dataDir,
    advance: (ms) => skew += ms,
  };
}

/** The balancer's site: both instances in one upstream, round-robin (nginx's default). */
function balancerSite(port: number, servers: string[]): string {
  return `upstream lore_portal_proxy {
${servers.map((s) => `    server ${s};`).join("\n")}
}
server {
    listen 127.0.0.1:${port};
    location / {
        proxy_pass http://lore_portal_proxy;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host $host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Host $http_host;
        proxy_set_header X-Forwarded-Proto $scheme;
        # test only: which instance answered
        add_header X-Upstream $upstream_addr always;
    }
}
`;
}

/** Starts nginx in front of `servers`; resolves once it accepts connections. */
function startNginx(servers: string[]): Promise<FrontProxy> {
  return startNginxSite((_, port) => balancerSite(port, servers));
}

/** Runs `fn` with the doubles, two instances and nginx, and always tears them down. */
async function withCluster(
  env: Record<string, string>,
  fn: (c: Cluster) => Promise<void>,
): Promise<void> {
  const core = await startCoreSim();
  const parser = await startParserSim({ core: { url: core.url, token: core.token } });
  const shared = {
    HOST: "127.0.0.1",
    PORT: "0",
    SHUTDOWN_GRACE_MS: "200",
    UPSTREAM_TIMEOUT_MS: "2000",
    SESSION_SECRET: TEST_SESSION_SECRET,
    PORTAL_CONFIG_STORE: "core",
    // a token for the server's own use only: the private routes need a login
    CORE_URL: core.url,
    PUBLIC_CORE_TOKEN: core.token,
    PARSER_URL: parser.url,
    PARSER_INTERNAL_SECRET: parser.internalSecret ?? "",
    TRUST_PROXY: "true",
    ...env,
  };
  const problems: string[] = [];
  const a = await startInstance(shared, problems);
  const b = await startInstance(shared, problems);
  try {
    const nginx = await startNginx([a.addr, b.addr]);
    try {
      await fn({ core, parser, a, b, url: nginx.url, problems });
    } finally {
      await nginx.close();
    }
  } finally {
    for (const i of [a, b]) {
      await i.server.stop();
      await Deno.remove(i.dataDir, { recursive: true });
    }
    await parser.close();
    await core.close();
  }
  assert.deepEqual(problems, [], "answers that break their route's declared responses");
}

const json = (body: unknown, cookie?: string): RequestInit => ({
  method: "PUT",
  headers: { "content-type": "application/json", ...(cookie ? { cookie } : {}) },
  body: JSON.stringify(body),
});

/** GET `path` as JSON, with `cookie`. */
async function getJson(url: string, cookie?: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { headers: cookie ? { cookie } : {} });
  return { status: res.status, body: await res.json() };
}

Deno.test({
  name:
    "two instances behind nginx: one login works on both, a config change on one shows on the other",
  ignore: !RUNS,
  fn: () =>
    withCluster({}, async ({ a, b, url }) => {
      const login = await fetch(`${url}/api/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: DEFAULT_OWNER.email, password: DEFAULT_OWNER.password }),
      });
      assert.equal(login.status, 200, await login.text());
      const cookie = cookieHeader(login);
      assert.match(cookie, /parser_token=/);

      // the session the one instance sealed opens on either, directly and through nginx
      for (const i of [a, b]) {
        const session = await getJson(`${i.server.url}/api/auth/session`, cookie);
        assert.equal(session.status, 200, i.addr);
        assert.equal((session.body as { user: { email: string } }).user.email, DEFAULT_OWNER.email);
      }
      const answeredBy = new Set<string>();
      for (let n = 0; n < 4; n++) {
        const res = await fetch(`${url}/api/auth/session`, { headers: { cookie } });
        await res.body?.cancel();
        assert.equal(res.status, 200);
        answeredBy.add(res.headers.get("x-upstream") ?? "");
      }
      assert.deepEqual([...answeredBy].sort(), [a.addr, b.addr].sort());

      // B reads the config (nothing stored yet) before A changes it
      const before = { loreRootNoteId: "root", source: "env" };
      assert.deepEqual((await getJson(`${b.server.url}/api/config/portal`)).body, before);
      const unauthenticated = await fetch(
        `${a.server.url}/api/config/portal`,
        json({ loreRootNoteId: W.loreRoot }),
      );
      await unauthenticated.body?.cancel();
      assert.equal(unauthenticated.status, 401);
      const put = await fetch(
        `${a.server.url}/api/config/portal`,
        json({ loreRootNoteId: W.loreRoot }, cookie),
      );
      assert.equal(put.status, 200, await put.text());
      const after = { loreRootNoteId: W.loreRoot, source: "file" };
      assert.deepEqual((await getJson(`${a.server.url}/api/config/portal`)).body, after);

      // B answers what it read until its cache time is up, then what A stored
      assert.deepEqual((await getJson(`${b.server.url}/api/config/portal`)).body, before);
      b.advance(PORTAL_CONFIG_CACHE_MS);
      assert.deepEqual((await getJson(`${b.server.url}/api/config/portal`)).body, after);
      for (let n = 0; n < 2; n++) {
        assert.deepEqual((await getJson(`${url}/api/config/portal`)).body, after);
      }
      // and B puts new lore under the root A chose
      const created = await fetch(`${b.server.url}/api/lore`, {
        ...json({ title: "Made on the other instance" }, cookie),
        method: "POST",
      });
      assert.equal(created.status, 201);
      const note = await created.json() as { branch: { parentNoteId: string } };
      assert.equal(note.branch.parentNoteId, W.loreRoot);

      // nothing of it is on either instance's disk
      for (const i of [a, b]) {
        assert.deepEqual([...Deno.readDirSync(i.dataDir)].map((e) => e.name), [], i.addr);
      }
    }),
});

Deno.test({
  name: "two instances behind nginx: the login rate limit holds per instance, N × the limit in all",
  ignore: !RUNS,
  fn: () =>
    withCluster({ AUTH_RATE_LIMIT: "2" }, async ({ a, b, url, parser }) => {
      const allowed = new Map<string, number>([[a.addr, 0], [b.addr, 0]]);
      const refused = new Set<string>();
      for (let n = 0; n < 20 && refused.size < 2; n++) {
        const res = await fetch(`${url}/api/auth/login`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email: DEFAULT_OWNER.email, password: "wrong password" }),
        });
        await res.body?.cancel();
        const by = res.headers.get("x-upstream") ?? "";
        assert.ok(allowed.has(by), by);
        if (res.status === 429) refused.add(by);
        else {
          assert.equal(res.status, 401);
          assert.equal(refused.has(by), false, "an instance let an attempt through after a 429");
          allowed.set(by, allowed.get(by)! + 1);
        }
      }
      // each instance counted its own attempts: 2 instances × 2 reached the Parser
      assert.deepEqual([...refused].sort(), [a.addr, b.addr].sort());
      assert.deepEqual([...allowed.values()], [2, 2]);
      const signIns = parser.requests.filter((r) => r.path.includes("sign-in")).length;
      assert.equal(signIns, 4);
    }),
});
