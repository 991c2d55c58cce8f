/**
 * The deploy recipes when instances fail, in a real nginx (and Caddy where installed): with no
 * instance answering, `/api/*` callers get the service's JSON error shape (503 `UNREACHABLE`,
 * `service: "proxy"`) and the site's visitors a short page, while the service's own error
 * answers, its 5xx included, pass byte for byte. With several instances
 * (`deploy/nginx-instances.conf`, the Caddyfile's several-instances block), a GET an instance
 * reset goes on to the next instance, a POST it got does not (it may have run there), a request
 * an instance refused goes on whatever its method, and sticky routing keeps a client on one.
 */
import assert from "node:assert/strict";
import net from "node:net";
import { errorBodySchema } from "../../src/http/errors.ts";
import { W } from "../../sims/world.ts";
import { REFUSED_URL, withHarness } from "../helpers/harness.ts";
import {
  caddyTestsRun,
  type FrontProxy,
  nginxForTest,
  nginxTestsRun,
  readDeployFile,
  startCaddy,
  startNginx,
  startNginxSite,
} from "./front_proxy.ts";

interface ProxyKind {
  name: string;
  start(serviceUrl: string | readonly string[]): Promise<FrontProxy>;
  runs: boolean;
  /**
   * A request with a body that an instance refused is sent on to the next one. Caddy before its
   * 2026 fix (its issue 7546; Debian's 2.6 among them) closes the body at the refusal and answers
   * 502 instead, which the recipe turns into the JSON error: nothing ran, repeating is safe.
   */
  resendsRefusedBody: boolean;
}

const PROXIES: ProxyKind[] = [
  {
    name: "nginx",
    start: (u) => startNginx(u),
    runs: nginxTestsRun("instance failures"),
    resendsRefusedBody: true,
  },
  {
    name: "Caddy",
    start: startCaddy,
    runs: caddyTestsRun("instance failures behind Caddy"),
    resendsRefusedBody: false,
  },
];

/** Runs `fn` with `proxy` started, always stopping it. */
async function withProxy<T>(proxy: Promise<FrontProxy>, fn: (p: FrontProxy) => Promise<T>) {
  const p = await proxy;
  try {
    return await fn(p);
  } finally {
    await p.close();
  }
}

/** What a caller gets when no instance answers an API request: the proxy's JSON error. */
async function assertUnreachableJson(res: Response, what: string): Promise<string> {
  const text = await res.text();
  assert.equal(res.status, 503, `${what}: ${text.slice(0, 200)}`);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json\b/, what);
  assert.equal(res.headers.get("cache-control"), "no-store", what);
  assert.ok(!text.includes("<"), `${what}: no HTML`);
  const body = errorBodySchema.parse(JSON.parse(text));
  assert.equal(body.error, "UNREACHABLE", what);
  assert.match(body.message, /restarting or unreachable: repeat the request/, what);
  assert.ok(body.requestId.length >= 8, `${what}: a request id`);
  assert.equal(res.headers.get("x-request-id"), body.requestId, what);
  assert.deepEqual(body.details, { service: "proxy", retry: "repeat the same request" }, what);
  return body.requestId;
}

/** What a visitor gets on a site page when no instance answers: a short HTML page. */
async function assertUnreachablePage(res: Response, what: string): Promise<void> {
  const text = await res.text();
  assert.equal(res.status, 503, what);
  assert.match(res.headers.get("content-type") ?? "", /^text\/html\b/, what);
  assert.equal(res.headers.get("cache-control"), "no-store", what);
  assert.match(text, /<h1>Back in a moment<\/h1>/, what);
  assert.match(text, /Reload the page in a moment/, what);
  assert.doesNotMatch(text, /nginx|caddy|bad gateway/i, `${what}: not the proxy's own page`);
}

/** API requests of every kind: plain, a write with a body, an event stream, an image. */
const API_CALLS: [string, RequestInit][] = [
  ["/api/lore", {}],
  ["/api/lore", { method: "POST", body: JSON.stringify({ title: "Lost" }) }],
  ["/api/brain-dump/stream", { method: "POST", body: JSON.stringify({ rawText: "x" }) }],
  ["/api/images/map.png", {}],
];

for (const kind of PROXIES) {
  Deno.test({
    name: `${kind.name}, no instance answers: the API's JSON error 503 UNREACHABLE, a short page`,
    ignore: !kind.runs,
    fn: () =>
      withProxy(kind.start(REFUSED_URL), async (front) => {
        const ids = new Set<string>();
        for (const [path, init] of API_CALLS) {
          const headers = { "content-type": "application/json" };
          const res = await fetch(front.url + path, { headers, ...init });
          ids.add(await assertUnreachableJson(res, `${init.method ?? "GET"} ${path}`));
        }
        assert.equal(ids.size, API_CALLS.length, "each request its own id");
        for (const path of ["/", `/public/lore/${W.charMira}`]) {
          await assertUnreachablePage(await fetch(front.url + path), path);
        }
      }),
  });

  Deno.test({
    name: `${kind.name}: the service's own error answers, its 5xx included, pass untouched`,
    ignore: !kind.runs,
    fn: () =>
      withHarness(async (h) => {
        // Core fails this note's reads (502 UPSTREAM_ERROR); no Parser is configured (503)
        h.core.fault({ path: `/etapi/notes/${W.charMira}`, status: 500 });
        await withProxy(kind.start(h.url), async (front) => {
          const cases: [string, number, string][] = [
            [`/api/lore/${W.charMira}`, 502, "UPSTREAM_ERROR"],
            ["/api/brain-dump/history", 503, "NOT_CONFIGURED"],
            ["/api/lore/no_such_note1", 404, "NOT_FOUND"],
          ];
          for (const [path, status, code] of cases) {
            // one request id for both, so that the two answers can be equal byte for byte
            const init = { headers: { "x-request-id": `same-id-${status}` } };
            const direct = await fetch(h.url + path, init);
            const through = await fetch(front.url + path, init);
            const bytes = new Uint8Array(await direct.arrayBuffer());
            assert.equal(direct.status, status, path);
            assert.equal(JSON.parse(new TextDecoder().decode(bytes)).error, code, path);
            assert.equal(through.status, status, path);
            assert.equal(
              through.headers.get("content-type"),
              direct.headers.get("content-type"),
              path,
            );
            assert.deepEqual(new Uint8Array(await through.arrayBuffer()), bytes, path);
          }
        });
      }),
  });
}

Deno.test({
  name: "nginx-with-portal.conf, no instance answers: the API's JSON error, a short page",
  ignore: !nginxTestsRun("one origin, instances down"),
  async fn() {
    const snippet = await readDeployFile("nginx-with-portal.conf");
    const ui = "server 127.0.0.1:3000;";
    assert.ok(snippet.includes(ui), "the recipe's UI upstream moved");
    const refused = new URL(REFUSED_URL).host;
    const site = (_: string, port: number) =>
      nginxForTest(snippet, port, refused).replace(ui, `server ${refused};`);
    await withProxy(startNginxSite(site, true), async (front) => {
      for (const [path, init] of API_CALLS) {
        const res = await fetch(front.url + path, init);
        await assertUnreachableJson(res, `${init.method ?? "GET"} ${path}`);
      }
      for (const path of ["/", "/public", "/share/x"]) {
        await assertUnreachablePage(await fetch(front.url + path), path);
      }
    });
  },
});

/** A test instance that records what reached it (`method path`). */
interface FakeInstance {
  url: string;
  close(): Promise<void>;
}

/**
 * An instance dying mid-request: it reads each request whole (head and `Content-Length` body),
 * records it in `seen`, then resets the connection without a byte of answer.
 */
async function startResetter(seen: string[]): Promise<FakeInstance> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((sock) => {
    sockets.add(sock);
    sock.on("close", () => sockets.delete(sock));
    sock.on("error", () => {});
    let data = "";
    sock.on("data", (chunk: Uint8Array) => {
      data += new TextDecoder("latin1").decode(chunk);
      const end = data.indexOf("\r\n\r\n");
      if (end < 0) return;
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(data.slice(0, end))?.[1] ?? 0);
      if (data.length < end + 4 + length) return;
      seen.push(data.split(" ", 2).join(" "));
      sock.resetAndDestroy();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/**
 * A healthy instance: answers 200 `{ ok: true }` and records each request in `seen`, except one
 * whose body was cut off (it ran nowhere).
 */
function startCounter(seen: string[], name = ""): FakeInstance {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    if (!(await req.arrayBuffer().catch(() => null))) return new Response(null, { status: 400 });
    const url = new URL(req.url);
    seen.push(`${name}${req.method} ${url.pathname}${url.search}`);
    return Response.json({ ok: true });
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

/** Runs `fn` with the instances started, always closing them. */
async function withInstances(
  instances: FakeInstance[],
  fn: (urls: string[]) => Promise<void>,
): Promise<void> {
  try {
    await fn(instances.map((i) => i.url));
  } finally {
    for (const i of instances) await i.close();
  }
}

/**
 * Requests an instance resets after reading them. Caddy cannot send a body it already sent once
 * anyway, so only the POST without one shows its retry rule (`lb_retry_match`) at work.
 */
const RESET_CASES = [
  { method: "GET", withBody: false, what: "goes on to the next one" },
  { method: "POST", withBody: true, what: "(a body) is not sent again" },
  { method: "POST", withBody: false, what: "(no body) is not sent again" },
];

for (const kind of PROXIES) {
  for (const { method, withBody, what } of RESET_CASES) {
    Deno.test({
      name: `${kind.name}, several instances: a ${method} an instance reset ${what}`,
      ignore: !kind.runs,
      async fn() {
        const reset: string[] = [];
        const answered: string[] = [];
        const instances = [await startResetter(reset), startCounter(answered)];
        instances.push(startCounter(answered));
        await withInstances(instances, (urls) =>
          // a fresh balancer: nginx would skip the instance that failed for fail_timeout
          withProxy(kind.start(urls), async (front) => {
            // round-robin reaches the resetting instance within one turn
            for (let n = 0; n < urls.length && reset.length === 0; n++) {
              const request = `${method} /api/lore?try=${n}`;
              const body = withBody ? JSON.stringify({ title: `Try ${n}` }) : undefined;
              const res = await fetch(`${front.url}/api/lore?try=${n}`, { method, body });
              if (!reset.includes(request)) {
                assert.deepEqual(await res.json(), { ok: true }, `${request}: a healthy instance`);
                continue;
              }
              if (method === "GET") {
                assert.equal(res.status, 200, `${request}: answered by the next instance`);
                assert.deepEqual(await res.json(), { ok: true });
                assert.equal(answered.filter((r) => r === request).length, 1, request);
              } else {
                await assertUnreachableJson(res, request);
                assert.ok(!answered.includes(request), `${request} reached no other instance`);
              }
            }
            assert.equal(reset.length, 1, "the resetting instance got one request");
          }));
      },
    });
  }

  Deno.test({
    name: `${kind.name}, several instances: a request an instance refused goes on to the next`,
    ignore: !kind.runs,
    async fn() {
      const answered: string[] = [];
      // nothing listens at REFUSED_URL: each request there is refused before anything is sent
      const healthy = [startCounter(answered), startCounter(answered)];
      await withInstances(healthy, async ([a, b]) => {
        for (const method of ["GET", "POST"]) {
          // a fresh balancer each time: round-robin reaches the refusing instance within one turn
          await withProxy(kind.start([REFUSED_URL, a, b]), async (front) => {
            for (let n = 0; n < 3; n++) {
              const request = `${method} /api/lore?try=${n}`;
              const body = method === "POST" ? JSON.stringify({ title: `Try ${n}` }) : undefined;
              const res = await fetch(`${front.url}/api/lore?try=${n}`, { method, body });
              const times = answered.filter((r) => r === request).length;
              if (method === "GET" || kind.resendsRefusedBody || times === 1) {
                assert.deepEqual(await res.json(), { ok: true }, request);
                assert.equal(times, 1, `${request} answered once, by a healthy instance`);
              } else await assertUnreachableJson(res, request);
            }
          });
        }
      });
    },
  });
}

Deno.test({
  name: "nginx, several instances, sticky routing: one client's requests go to one instance",
  ignore: !nginxTestsRun("sticky instances behind nginx"),
  async fn() {
    const answered: string[] = [];
    const instances = ["a ", "b ", "c "].map((name) => startCounter(answered, name));
    await withInstances(instances, async (urls) => {
      for (const sticky of [false, true]) {
        answered.length = 0;
        await withProxy(startNginx(urls, { sticky }), async (front) => {
          for (let n = 0; n < 6; n++) await (await fetch(`${front.url}/api/lore`)).body?.cancel();
        });
        const by = new Set(answered.map((r) => r.split(" ")[0]));
        assert.equal(answered.length, 6);
        // round-robin as shipped spreads them; the hash keeps them on one
        assert.equal(by.size, sticky ? 1 : 3, `sticky ${sticky}: ${[...by]}`);
      }
    });
  },
});
