/**
 * Three instances of the service behind a real nginx balancing round-robin (no sticky routing), as
 * docs/instances.md describes them: one `SESSION_SECRET`, `PORTAL_CONFIG_STORE=core`, each its own
 * empty data dir. A login made through nginx works on every instance and a portal config change
 * made on one is read on the others. Without a shared store the login rate limit holds per
 * instance (N × the limit in all) and a logout on one leaves a copied cookie working on the others
 * while they cache its credentials; with `STATE_URL` on a real Redis the limit is one for all and
 * the logout ends the session everywhere at once. Public traffic spread over the three reads the
 * share from Core three times as often as on one without a store, about as often with one; a
 * write through one then shows on the others' pages within 250 ms, and a store that is down
 * leaves the public pages as without it.
 */
import assert from "node:assert/strict";
import { uploadHalfway } from "../helpers/halfway_upload.ts";
import { loadConfig } from "../../src/config/service_config.ts";
import { jsonLogger } from "../../src/http/log.ts";
import { responseCheck } from "../../src/pipeline/response_check.ts";
import { PORTAL_CONFIG_CACHE_MS } from "../../src/state/portal_config_in_core.ts";
import { type RunningServer, startServer } from "../../src/server.ts";
import { type CoreSim, startCoreSim } from "../../sims/core.ts";
import {
  DEFAULT_OWNER,
  type ParserSim,
  type ParserSimOptions,
  startParserSim,
} from "../../sims/parser.ts";
import type { Deadlines } from "../../src/util/deadlines.ts";
import { createClient } from "@redis/client";
import { KEY_PREFIX } from "../../src/store/redis_store.ts";
import { eventually, manualDeadlines } from "../helpers/manual_deadlines.ts";
import { W } from "../../sims/world.ts";
import { TEST_SESSION_SECRET } from "../helpers/harness.ts";
import { cookieHeader } from "../helpers/session.ts";
import { type RedisServer, redisTestsRun, withRedis } from "../helpers/redis.ts";
import { SHARE_VERSION_CHECK_MS } from "../../src/share/share_version.ts";
import { type FrontProxy, nginxTestsRun, startNginxSite } from "./front_proxy.ts";

const RUNS = nginxTestsRun("instances behind nginx");
const WITH_STORE = RUNS && redisTestsRun("instances behind nginx sharing Redis");

/** One instance: its server, its own data dir, and a clock the test moves on. */
interface Instance {
  server: RunningServer;
  /** `host:port` as nginx's `$upstream_addr` names it. */
  addr: string;
  dataDir: string;
  advance(ms: number): void;
}

/** Everything one test runs: both doubles, three instances, nginx in front. */
interface Cluster {
  core: CoreSim;
  parser: ParserSim;
  instances: [Instance, Instance, Instance];
  /** nginx's base URL. */
  url: string;
  /** The instances' `STATE_URL`, if they share a store. */
  stateUrl?: string;
  /** The server behind `stateUrl`. */
  redis?: RedisServer;
  problems: string[];
}

async function startInstance(
  env: Record<string, string>,
  problems: string[],
  deadlines: Deadlines | undefined,
): Promise<Instance> {
  const dataDir = await Deno.makeTempDir({ prefix: "lpp-instance-" });
  let skew = 0;
  const server = await startServer({
    config: loadConfig({ ...env, DATA_DIR: dataDir }),
    log: jsonLogger("silent"),
    now: () => Date.now() + skew,
    deadlines,
    checkResponse: responseCheck((p) => problems.push(p)),
  });
  return {
    server,
    addr: new URL(server.url).host,
    dataDir,
    advance: (ms) => skew += ms,
  };
}

/** The balancer's site: the instances in one upstream, round-robin (nginx's default). */
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

/** How {@linkcode withCluster} differs from its default. */
interface ClusterOptions {
  /** The instances share a real Redis (`STATE_URL`). */
  store?: boolean;
  parser?: ParserSimOptions;
  /** One clock for the instances and the Parser double, moved by the test. */
  deadlines?: Deadlines;
}

/**
 * Runs `fn` with the doubles, three instances (sharing a real Redis with `store`) and nginx, and
 * always tears them down.
 */
async function withCluster(
  env: Record<string, string>,
  fn: (c: Cluster) => Promise<void>,
  opts: ClusterOptions = {},
): Promise<void> {
  if (opts.store) {
    return withRedis((redis) =>
      withCluster({ ...env, STATE_URL: redis.url }, (c) => fn({ ...c, redis }), {
        ...opts,
        store: false,
      })
    );
  }
  const core = await startCoreSim();
  const parser = await startParserSim({
    ...opts.parser,
    core: { url: core.url, token: core.token },
    deadlines: opts.deadlines,
  });
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
  const instances: Instance[] = [];
  try {
    for (let n = 0; n < 3; n++) {
      instances.push(await startInstance(shared, problems, opts.deadlines));
    }
    const nginx = await startNginx(instances.map((i) => i.addr));
    try {
      await fn({
        core,
        parser,
        instances: instances as Cluster["instances"],
        url: nginx.url,
        stateUrl: env.STATE_URL,
        problems,
      });
    } finally {
      await nginx.close();
    }
  } finally {
    for (const i of instances) {
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
    "instances behind nginx: one login works on every one, a config change on one shows on the others",
  ignore: !RUNS,
  fn: () =>
    withCluster({}, async (c) => {
      const { instances, url } = c;
      const [a, b] = instances;
      const cookie = await login(c);
      assert.match(cookie, /parser_token=/);

      // the session the one instance sealed opens on every one, directly and through nginx
      for (const i of instances) {
        const session = await getJson(`${i.server.url}/api/auth/session`, cookie);
        assert.equal(session.status, 200, i.addr);
        assert.equal((session.body as { user: { email: string } }).user.email, DEFAULT_OWNER.email);
      }
      const answeredBy = new Set<string>();
      for (let n = 0; n < 6; n++) {
        const res = await fetch(`${url}/api/auth/session`, { headers: { cookie } });
        await res.body?.cancel();
        assert.equal(res.status, 200);
        answeredBy.add(res.headers.get("x-upstream") ?? "");
      }
      assert.deepEqual([...answeredBy].sort(), instances.map((i) => i.addr).sort());

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

      // nothing of it is on any instance's disk
      for (const i of instances) {
        assert.deepEqual([...Deno.readDirSync(i.dataDir)].map((e) => e.name), [], i.addr);
      }
    }),
});

/**
 * Sends failed logins through nginx until every instance refused one (at most `max`): which
 * instance let how many through, and how many sign-ins reached the Parser.
 */
async function failedLogins(
  c: Cluster,
  max: number,
): Promise<{ allowed: Map<string, number>; refused: Set<string>; signIns: number }> {
  const allowed = new Map(c.instances.map((i) => [i.addr, 0]));
  const refused = new Set<string>();
  for (let n = 0; n < max && refused.size < c.instances.length; n++) {
    const res = await fetch(`${c.url}/api/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: DEFAULT_OWNER.email, password: "wrong password" }),
    });
    const body = await res.json() as { error: string };
    const by = res.headers.get("x-upstream") ?? "";
    assert.ok(allowed.has(by), by);
    if (res.status === 429) {
      assert.equal(body.error, "RATE_LIMITED");
      assert.ok(Number(res.headers.get("retry-after")) >= 1);
      refused.add(by);
    } else {
      assert.equal(res.status, 401);
      assert.equal(refused.has(by), false, "an instance let an attempt through after a 429");
      allowed.set(by, allowed.get(by)! + 1);
    }
  }
  const signIns = c.parser.requests.filter((r) => r.path.includes("sign-in")).length;
  return { allowed, refused, signIns };
}

Deno.test({
  name: "instances behind nginx, no store: the login rate limit holds per instance, N × the limit",
  ignore: !RUNS,
  fn: () =>
    withCluster({ AUTH_RATE_LIMIT: "2" }, async (c) => {
      const { allowed, refused, signIns } = await failedLogins(c, 40);
      // each instance counted its own attempts: 3 instances × 2 reached the Parser
      assert.equal(refused.size, 3);
      assert.deepEqual([...allowed.values()], [2, 2, 2]);
      assert.equal(signIns, 6);
    }),
});

Deno.test({
  name: "instances sharing Redis: 40 failed logins through nginx, the Parser sees the limit once",
  ignore: !WITH_STORE,
  fn: () =>
    withCluster({ AUTH_RATE_LIMIT: "2" }, async (c) => {
      const { allowed, refused, signIns } = await failedLogins(c, 40);
      // every instance refuses once the client used its two attempts, wherever it made them
      assert.equal(refused.size, 3);
      assert.equal([...allowed.values()].reduce((x, y) => x + y), 2);
      assert.equal(signIns, 2);
    }, { store: true }),
});

/** Logs in through nginx: the session cookie. */
async function login(c: Cluster): Promise<string> {
  const res = await fetch(`${c.url}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: DEFAULT_OWNER.email, password: DEFAULT_OWNER.password }),
  });
  assert.equal(res.status, 200, await res.text());
  return cookieHeader(res);
}

/** Logs in through nginx, warms every instance's Core credentials, then logs out on the first. */
async function loginEverywhereThenLogout(c: Cluster): Promise<string> {
  const cookie = await login(c);
  for (const i of c.instances) {
    assert.equal((await getJson(`${i.server.url}/api/lore`, cookie)).status, 200, i.addr);
  }
  const logout = await fetch(`${c.instances[0].server.url}/api/auth/logout`, {
    method: "POST",
    headers: { cookie },
  });
  assert.deepEqual(await logout.json(), { ok: true, parserSignedOut: true });
  return cookie;
}

/** What a copied cookie gets from one instance: a read and a write. */
async function replay(i: Instance, cookie: string): Promise<[number, number]> {
  const read = await getJson(`${i.server.url}/api/lore`, cookie);
  const write = await fetch(`${i.server.url}/api/lore/${W.charMira}`, {
    ...json({ title: "Written after the logout" }, cookie),
    method: "PATCH",
  });
  await write.body?.cancel();
  return [read.status, write.status];
}

Deno.test({
  name:
    "instances behind nginx, no store: after a logout on one, a copied cookie still works on the others",
  ignore: !RUNS,
  fn: () =>
    withCluster({}, async (c) => {
      const cookie = await loginEverywhereThenLogout(c);
      const [a, b, cc] = c.instances;
      assert.deepEqual(await replay(a, cookie), [401, 401]);
      // the others cached the session's Core credentials: they go on until CREDENTIALS_CACHE_MS
      assert.deepEqual(await replay(b, cookie), [200, 200]);
      assert.deepEqual(await replay(cc, cookie), [200, 200]);
    }),
});

Deno.test({
  name: "instances sharing Redis: a logout on one ends the session on every instance at once",
  ignore: !WITH_STORE,
  fn: () =>
    withCluster({}, async (c) => {
      const cookie = await loginEverywhereThenLogout(c);
      for (const i of c.instances) assert.deepEqual(await replay(i, cookie), [401, 401], i.addr);
      const before = c.core.requests.length;
      assert.deepEqual(await replay(c.instances[1], cookie), [401, 401]);
      assert.equal(c.core.requests.length, before, "nothing reached Core for the copied cookie");
    }, { store: true }),
});

const AI_TIMEOUT_MS = 300;
const SLOW_MS = 1_000;
const roomy = { max: 1_000, windowMs: 60_000 };

Deno.test({
  name: "instances sharing Redis: an AI call past its deadline, retried through nginx, runs once",
  ignore: !WITH_STORE,
  fn: () => {
    const time = manualDeadlines();
    return withCluster(
      // the store's own deadline stays out of the way of the time the test moves
      {
        AI_TIMEOUT_MS: String(AI_TIMEOUT_MS),
        STATE_TIMEOUT_MS: "60000",
        LORE_ROOT_NOTE_ID: W.loreRoot,
      },
      async (c) => {
        const cookie = await login(c);
        const brainDump = () =>
          fetch(`${c.url}/api/brain-dump`, {
            method: "POST",
            headers: { "content-type": "application/json", cookie },
            body: JSON.stringify({ rawText: "Captain Ysolde Farrow charts the Amber Shoals." }),
          });
        const first = brainDump();
        await eventually(
          "the client waits while the model works",
          () => time.pendingOf(AI_TIMEOUT_MS) === 1 && time.pendingOf(SLOW_MS) === 1,
        );
        time.advance(AI_TIMEOUT_MS);
        const cutOff = await first;
        const firstBy = cutOff.headers.get("x-upstream");
        assert.equal(cutOff.status, 504);
        assert.equal((await cutOff.json()).details.retry, "repeat the same request");

        // the model answers on the instance that ran it; nobody waits there: kept in the store
        time.advance(SLOW_MS);
        const peek = createClient({ url: c.stateUrl });
        await peek.connect();
        try {
          await eventually(
            "the answer is kept in the store",
            async () => (await peek.keys(`${KEY_PREFIX}ai-kept:*`)).length === 1,
          );
        } finally {
          peek.destroy();
        }
        const calls = () => c.parser.requests.filter((r) => r.path.startsWith("/brain-dump/"));
        assert.equal(calls().length, 1);
        const retry = await brainDump();
        assert.notEqual(retry.headers.get("x-upstream"), firstBy, "the retry went elsewhere");
        assert.equal(retry.status, 200);
        const body = await retry.json();
        assert.equal(body.cached, false, "the original answer, not the Parser's idempotency cache");
        assert.ok(body.created.length > 0);
        assert.equal(calls().length, 1, "one Parser call for the request and its retry");
      },
      {
        store: true,
        deadlines: time,
        parser: { brainDump: { llmDelayMs: SLOW_MS }, rateLimits: { "brain-dump": roomy } },
      },
    );
  },
});

Deno.test({
  name: "instances sharing Redis: a lore-root change on one is used by the others at once",
  ignore: !WITH_STORE,
  fn: () =>
    withCluster({}, async (c) => {
      const [a, b, cc] = c.instances;
      const cookie = await login(c);
      // B and C read the config (nothing stored yet) before A changes it
      const before = { loreRootNoteId: "root", source: "env" };
      for (const i of [b, cc]) {
        assert.deepEqual((await getJson(`${i.server.url}/api/config/portal`)).body, before);
      }
      const put = await fetch(
        `${a.server.url}/api/config/portal`,
        json({ loreRootNoteId: W.loreRoot }, cookie),
      );
      assert.equal(put.status, 200, await put.text());
      // no clock moved: the others answer the new root and create under it a second later
      const after = { loreRootNoteId: W.loreRoot, source: "file" };
      for (const i of [b, cc]) {
        assert.deepEqual((await getJson(`${i.server.url}/api/config/portal`)).body, after);
      }
      const created = await fetch(`${b.server.url}/api/lore`, {
        ...json({ title: "Made right after the change" }, cookie),
        method: "POST",
      });
      assert.equal(created.status, 201);
      const note = await created.json() as { branch: { parentNoteId: string } };
      assert.equal(note.branch.parentNoteId, W.loreRoot);
    }, { store: true }),
});

/** Moves every instance's clock on by `ms` (together, as real clocks move). */
function advanceAll(c: Cluster, ms: number): void {
  for (const i of c.instances) i.advance(ms);
}

/** The share's own Core calls so far: its two root searches and its subtree search. */
function shareReads(c: Cluster): number {
  const shareSearches = ["#shareRoot", "note.noteId != ''"];
  return c.core.requests.filter((r) =>
    r.path === "/etapi/notes" &&
    shareSearches.includes(new URLSearchParams(r.search).get("search") ?? "")
  ).length;
}

/** GET a public page: its status, HTML and the instance that answered. */
async function page(url: string): Promise<{ status: number; body: string; by: string | null }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text(), by: res.headers.get("x-upstream") };
}

/** Public pages visitors read, in turn: the home page and a note's. */
const PAGES = ["/", `/public/lore/${W.charMira}`];

/** The snapshot's cache time in the public traffic tests (the default): reloads from half of it. */
const PUBLIC_CACHE_MS = 5_000;

/**
 * One minute of public traffic at 2 requests a second to `base` (an instance, or nginx), moving
 * every clock on between requests: the share's Core calls it caused, and who answered.
 */
async function minuteOfVisitors(
  c: Cluster,
  base: string,
): Promise<{ coreCalls: number; answeredBy: Map<string, number> }> {
  const before = shareReads(c);
  const answeredBy = new Map<string, number>();
  for (let n = 0; n < 120; n++) {
    advanceAll(c, 500);
    const { status, by } = await page(base + PAGES[n % 2]);
    assert.equal(status, 200);
    answeredBy.set(by ?? base, (answeredBy.get(by ?? base) ?? 0) + 1);
  }
  return { coreCalls: shareReads(c) - before, answeredBy };
}

/**
 * The share's Core calls in a minute of the same traffic on the first instance alone, then spread
 * over all three by nginx (each instance has read the share before either minute is counted).
 */
async function shareReadsPerMinute(c: Cluster): Promise<{ one: number; three: number }> {
  const warm = async () => {
    for (const i of c.instances) assert.equal((await page(i.server.url + PAGES[0])).status, 200);
  };
  await warm();
  const one = await minuteOfVisitors(c, c.instances[0].server.url);
  await warm(); // the idle instances' snapshots expired meanwhile
  const three = await minuteOfVisitors(c, c.url);
  assert.deepEqual([...three.answeredBy.values()], [40, 40, 40], "round-robin over the three");
  return { one: one.coreCalls, three: three.coreCalls };
}

Deno.test({
  name: "instances behind nginx, no store: each instance reads the share from Core on its own",
  ignore: !RUNS,
  fn: () =>
    withCluster({ PUBLIC_CACHE_MS: String(PUBLIC_CACHE_MS) }, async (c) => {
      const { one, three } = await shareReadsPerMinute(c);
      // each instance reloads every PUBLIC_CACHE_MS/2 it has visitors, whatever their number
      assert.ok(three >= 2 * one, `${three} Core calls on three, ${one} on one`);
    }),
});

Deno.test({
  name: "instances sharing Redis: steady public traffic reads the share about once for all",
  ignore: !WITH_STORE,
  fn: () =>
    withCluster({ PUBLIC_CACHE_MS: String(PUBLIC_CACHE_MS) }, async (c) => {
      const { one, three } = await shareReadsPerMinute(c);
      assert.ok(one > 0);
      assert.ok(three <= 1.5 * one, `${three} Core calls on three, ${one} on one`);
    }, { store: true }),
});

Deno.test({
  name: "instances sharing Redis: a write through one shows on the others' public pages at once",
  ignore: !WITH_STORE,
  fn: () =>
    // snapshots kept for a minute: only the shared version can tell the others of the write
    withCluster({ PUBLIC_CACHE_MS: "60000" }, async (c) => {
      const cookie = await login(c);
      const [a, b, cc] = c.instances;
      const title = "Mira, Harbourmaster Elect";
      const miraPage = (i: Instance) => page(`${i.server.url}/public/lore/${W.charMira}`);
      for (const i of c.instances) {
        const seen = await miraPage(i);
        assert.equal(seen.status, 200);
        assert.equal(seen.body.includes(title), false);
      }
      const write = await fetch(`${a.server.url}/api/lore/${W.charMira}`, {
        ...json({ title }, cookie),
        method: "PATCH",
      });
      assert.equal(write.status, 200, await write.text());
      assert.ok((await miraPage(a)).body.includes(title), "the writer's own pages at once");
      advanceAll(c, SHARE_VERSION_CHECK_MS);
      for (const i of [b, cc]) assert.ok((await miraPage(i)).body.includes(title), i.addr);
      for (let n = 0; n < 3; n++) {
        assert.ok((await page(`${c.url}/public/lore/${W.charMira}`)).body.includes(title));
      }
    }, { store: true }),
});

Deno.test({
  name:
    "instances sharing Redis, the store down: reported by /readyz, logins refused, public pages served",
  ignore: !WITH_STORE,
  fn: () =>
    withCluster({ PUBLIC_CACHE_MS: String(PUBLIC_CACHE_MS) }, async (c) => {
      for (const i of c.instances) assert.equal((await page(i.server.url + PAGES[1])).status, 200);
      const ready = await getJson(`${c.instances[0].server.url}/readyz`);
      assert.equal(ready.status, 200);
      assert.deepEqual(
        Object.keys((ready.body as { state: object }).state).sort(),
        ["configured", "latencyMs", "ok"],
      );
      const cookie = await login(c);
      await c.redis!.stop();
      // a signed-in request is refused rather than served without its logout checked
      const unchecked = await getJson(`${c.instances[2].server.url}/api/lore`, cookie);
      assert.equal(unchecked.status, 503);
      assert.deepEqual((unchecked.body as { details: unknown }).details, { service: "state" });
      // readiness reports the store gone without failing (the public site does without it); a
      // login, which its rate limit needs, is refused
      const degraded = await getJson(`${c.instances[0].server.url}/readyz`);
      assert.equal(degraded.status, 200);
      assert.deepEqual(degraded.body, {
        ...(degraded.body as object),
        status: "ready",
        state: { ok: false, configured: true, error: "UNREACHABLE" },
        unavailable: [],
      });
      const refused = await fetch(`${c.instances[1].server.url}/api/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: DEFAULT_OWNER.email, password: DEFAULT_OWNER.password }),
      });
      assert.equal(refused.status, 503);
      assert.deepEqual((await refused.json()).details, { service: "state" });
      assert.equal(c.parser.requests.filter((r) => r.path.includes("sign-in")).length, 1);
      for (let n = 0; n < 6; n++) {
        const seen = await page(c.url + PAGES[n % 2]);
        assert.equal(seen.status, 200, seen.body);
      }
      // a change made in Core shows once the snapshots are due, as without a store
      const title = "Mira of the Drowned Lantern";
      c.core.store.patchNote(W.charMira, { title });
      advanceAll(c, PUBLIC_CACHE_MS);
      const before = shareReads(c);
      for (const i of c.instances) {
        const seen = await page(i.server.url + PAGES[1]);
        assert.equal(seen.status, 200, seen.body);
        assert.ok(seen.body.includes(title), i.addr);
      }
      assert.equal(shareReads(c) - before, 9, "each instance read the share: three Core calls");
    }, { store: true }),
});

Deno.test({
  name: "rolling restart, shared Redis: an upload in flight on the stopping instance completes",
  ignore: !WITH_STORE,
  fn: () =>
    withCluster({ SHUTDOWN_GRACE_MS: "600000" }, async (c) => {
      const [a] = c.instances;
      const cookie = await login(c);
      const before = c.core.requests.length;
      let stopped: Promise<void> | undefined;
      // half the body is in: the instance is told to stop, then the rest arrives
      const res = await uploadHalfway({
        url: a.server.url,
        filename: "tide-chart.png",
        headers: { cookie },
        started: () => c.core.requests.length > before,
        between: () => stopped = a.server.stop(),
      });
      assert.equal(res.status, 201, await res.clone().text());
      const { noteId } = await res.json() as { noteId: string };
      await stopped;
      assert.equal(c.core.store.getNote(noteId)?.type, "image");
      const titled = c.core.store.noteIds().filter((id) =>
        c.core.store.getNote(id)?.title === c.core.store.getNote(noteId)?.title
      );
      assert.equal(titled.length, 1, "one image note, no orphan");
    }, { store: true }),
});

Deno.test({
  name:
    "rolling restart, shared Redis: a brain dump cut off on the stopping instance is kept for the retry elsewhere",
  ignore: !WITH_STORE,
  fn: () => {
    const time = manualDeadlines();
    return withCluster(
      {
        AI_TIMEOUT_MS: String(AI_TIMEOUT_MS),
        STATE_TIMEOUT_MS: "60000",
        SHUTDOWN_GRACE_MS: "600000",
        LORE_ROOT_NOTE_ID: W.loreRoot,
      },
      async (c) => {
        const [a, b] = c.instances;
        const cookie = await login(c);
        const send = (i: Instance) =>
          fetch(`${i.server.url}/api/brain-dump`, {
            method: "POST",
            headers: { "content-type": "application/json", cookie },
            body: JSON.stringify({ rawText: "Captain Ysolde Farrow charts the Amber Shoals." }),
          });
        const first = send(a);
        await eventually(
          "the client waits while the model works",
          () => time.pendingOf(AI_TIMEOUT_MS) === 1 && time.pendingOf(SLOW_MS) === 1,
        );
        time.advance(AI_TIMEOUT_MS);
        assert.equal((await first).status, 504);
        // a is stopped while its call runs: the stop waits for it, and it ends meanwhile
        const stopped = a.server.stop();
        time.advance(SLOW_MS);
        await stopped;
        const retry = await send(b);
        assert.equal(retry.status, 200, await retry.clone().text());
        const body = await retry.json();
        assert.equal(body.cached, false, "the original answer");
        assert.ok(body.created.length > 0);
        const calls = c.parser.requests.filter((r) => r.path.startsWith("/brain-dump/"));
        assert.equal(calls.length, 1, "one Parser call across the restart");
      },
      {
        store: true,
        deadlines: time,
        parser: { brainDump: { llmDelayMs: SLOW_MS }, rateLimits: { "brain-dump": roomy } },
      },
    );
  },
});
