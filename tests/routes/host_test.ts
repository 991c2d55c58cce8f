/**
 * Our own host only (http/host_check.ts), through the real app on the doubles, with raw requests
 * because `fetch` sends its own `Host`: a host the service does not answer to is refused before
 * any work — our error shape on `/api/*` and the health routes, the site's HTML error page
 * elsewhere — with no backend call and no zero-login session; loopback names, IP literals,
 * `ALLOWED_HOSTS` and `PUBLIC_ORIGIN`'s host are answered; the forwarded host counts only behind
 * a trusted proxy; and the public site's absolute URLs come from `PUBLIC_ORIGIN` whatever the
 * request names.
 */
import assert from "node:assert/strict";
import { createApp, type RequestInfo } from "../../src/app.ts";
import { loadConfig } from "../../src/config/service_config.ts";
import { ApiError, errorResponse } from "../../src/http/errors.ts";
import { jsonLogger } from "../../src/http/log.ts";
import { openApiDocument } from "../../src/api/openapi.ts";
import { answerProblem, responseCheck } from "../../src/pipeline/response_check.ts";
import { jsonAnswerPaths, routeResponses } from "../../src/api/route_responses.ts";
import { allRoutes } from "../../src/routes/index.ts";
import { type Harness, type HarnessOptions, withHarness } from "../helpers/harness.ts";
import { type RawExchange, rawExchange } from "../helpers/raw_http.ts";
import { setCookies } from "../helpers/session.ts";
import { HARBOR_ALIAS, W } from "../../sims/world.ts";

const FOREIGN = "attacker.example";

/** One request over its own connection, naming `host`, with extra headers and a body. */
function send(
  h: Harness,
  method: string,
  path: string,
  host: string,
  headers: Record<string, string> = {},
  body = "",
): Promise<RawExchange> {
  const all = { ...headers, ...(body ? { "Content-Length": String(body.length) } : {}) };
  const lines = Object.entries(all).map(([k, v]) => `${k}: ${v}\r\n`).join("");
  return rawExchange(
    h.url,
    `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\n${lines}Connection: close\r\n\r\n${body}`,
  );
}

/** The harness's own port, for hosts that name it. */
const port = (h: Harness) => new URL(h.url).port;

/** Both backends' recorded requests, emptied. */
function clearBackends(h: Harness): void {
  h.core.clearRequests();
  h.parser?.clearRequests();
}

function assertNoBackendCall(h: Harness, what: string): void {
  assert.deepEqual(h.core.requests.map((r) => `${r.method} ${r.path}`), [], `${what}: Core`);
  assert.deepEqual(
    (h.parser?.requests ?? []).map((r) => `${r.method} ${r.path}`),
    [],
    `${what}: Parser`,
  );
}

/** Asserts the JSON refusal: 421 in our error shape, its request id logged with the host. */
function assertJsonRefusal(h: Harness, r: RawExchange, host: string, what: string): void {
  assert.equal(r.status, 421, `${what}: ${r.text.slice(0, 300)}`);
  assert.match(r.headers.get("content-type") ?? "", /^application\/json/, what);
  const body = JSON.parse(r.body);
  assert.deepEqual(Object.keys(body).sort(), ["error", "message", "requestId"], what);
  assert.equal(body.error, "MISDIRECTED_REQUEST", what);
  assert.match(body.message, /ALLOWED_HOSTS/, what);
  assert.equal(r.headers.get("x-request-id"), body.requestId, what);
  assert.equal(r.headers.get("set-cookie"), null, `${what}: no cookie`);
  const lines = h.logs.map((l) => JSON.parse(l)).filter((l) => l.requestId === body.requestId);
  assert.deepEqual(lines.map((l) => l.msg), ["host refused", "request"], what);
  assert.equal(lines[0].host, host, what);
  assert.equal(lines[1].status, 421, what);
}

const zeroLogin: HarnessOptions = {
  parser: true,
  noCoreCredentials: true,
  env: { ZERO_LOGIN: "true" },
};

Deno.test("host: a foreign Host on the API is 421 in our error shape; nothing reaches a backend", () =>
  withHarness(async (h) => {
    const host = `${FOREIGN}:${port(h)}`;
    clearBackends(h);
    const json = { "Content-Type": "application/json" };
    const requests: [string, string, Record<string, string>, string][] = [
      ["GET", `/api/lore/${W.charMira}`, {}, ""],
      ["POST", "/api/lore", { ...json, Origin: `http://${host}` }, '{"title":"Planted"}'],
      ["GET", "/api/public/tree", {}, ""],
      ["GET", "/api/no-such-route", {}, ""],
      ["OPTIONS", "/api/lore", {
        Origin: `http://${host}`,
        "Access-Control-Request-Method": "POST",
      }, ""],
      // health routes answer JSON too
      ["GET", "/healthz", {}, ""],
      ["GET", "/readyz", {}, ""],
    ];
    for (const [method, path, headers, body] of requests) {
      const r = await send(h, method, path, host, headers, body);
      assertJsonRefusal(h, r, host, `${method} ${path}`);
    }
    assertNoBackendCall(h, "foreign host");
    assert.ok(
      !h.core.store.noteIds().some((id) => h.core.store.getNote(id)?.title === "Planted"),
      "no note was created",
    );
  }, zeroLogin));

Deno.test("host: a foreign Host on the site gets the HTML error page, no Core call", () =>
  withHarness(async (h) => {
    clearBackends(h);
    for (
      const path of [
        "/",
        `/public/lore/${HARBOR_ALIAS}`,
        "/sitemap.xml",
        "/robots.txt",
        "/public/feed.atom",
        "/no-such-page",
      ]
    ) {
      const r = await send(h, "GET", path, FOREIGN);
      assert.equal(r.status, 421, path);
      assert.equal(r.headers.get("content-type"), "text/html; charset=utf-8", path);
      assert.equal(r.headers.get("cache-control"), "no-store", path);
      assert.match(r.body, /<h1>Wrong address<\/h1>/, path);
      assert.match(r.body, new RegExp(`Reference: <code>${r.headers.get("x-request-id")}</code>`));
      assert.ok(!r.body.includes(FOREIGN), `${path}: the foreign name is not echoed`);
    }
    assertNoBackendCall(h, "foreign host on the site");
  }));

Deno.test("host: zero-login mints a session for an accepted host only", () =>
  withHarness(async (h) => {
    // the foreign host first: no auto-provision call, no cookie, nothing read
    clearBackends(h);
    const foreign = await send(h, "GET", `/api/lore/${W.charMira}`, `${FOREIGN}:${port(h)}`);
    assertJsonRefusal(h, foreign, `${FOREIGN}:${port(h)}`, "zero-login, foreign host");
    assertNoBackendCall(h, "zero-login, foreign host");
    // the control: the same request on the loopback address provisions and reads
    const own = await send(h, "GET", `/api/lore/${W.charMira}`, `127.0.0.1:${port(h)}`);
    assert.equal(own.status, 200, own.text.slice(0, 300));
    assert.equal(JSON.parse(own.body).noteId, W.charMira);
    assert.ok(own.headers.get("set-cookie"), "the minted session's cookie");
    assert.ok(
      h.parser!.requests.some((r) => r.path === "/internal/auto-provision"),
      "the Parser minted it",
    );
  }, zeroLogin));

Deno.test("host: loopback names and IP literals are answered on any port without settings", () =>
  withHarness(async (h) => {
    for (
      const host of [
        `127.0.0.1:${port(h)}`,
        "127.0.0.1",
        `localhost:${port(h)}`,
        "localhost",
        `portal.localhost:${port(h)}`,
        `[::1]:${port(h)}`,
        "[::1]",
        "10.1.2.3:8080",
        "192.168.1.20",
        "[fd00::7]:80",
      ]
    ) {
      const r = await send(h, "GET", `/api/lore/${W.charMira}`, host);
      assert.equal(r.status, 200, `${host}: ${r.text.slice(0, 200)}`);
      const page = await send(h, "GET", `/public/lore/${HARBOR_ALIAS}`, host);
      assert.equal(page.status, 200, `${host}: the site`);
    }
    // a name that merely starts or ends like one is someone else's
    for (const host of ["localhost.attacker.example", "127.0.0.1.nip.io", "localhostx"]) {
      assert.equal((await send(h, "GET", "/healthz", host)).status, 421, host);
    }
  }));

Deno.test("host: ALLOWED_HOSTS and PUBLIC_ORIGIN's host are answered, and only they", () =>
  withHarness(async (h) => {
    for (
      const host of ["lore.lan", `LORE.LAN:${port(h)}`, "lore.example.org", "lore.example.org."]
    ) {
      const r = await send(h, "GET", `/api/lore/${W.charMira}`, host);
      assert.equal(r.status, 200, `${host}: ${r.text.slice(0, 200)}`);
    }
    for (const host of ["www.lore.example.org", "lan", "sub.lore.lan"]) {
      assertJsonRefusal(h, await send(h, "GET", "/api/lore", host), host, host);
    }
  }, { env: { ALLOWED_HOSTS: "lore.lan", PUBLIC_ORIGIN: "https://lore.example.org" } }));

Deno.test("host: the forwarded host is checked only behind a trusted proxy, and with Host", async () => {
  const path = `/api/lore/${W.charMira}`;
  const forwarded = (host: string) => ({ "X-Forwarded-Host": host, "X-Forwarded-Proto": "https" });
  // without TRUST_PROXY the header is the client's word: not read at all
  await withHarness(async (h) => {
    assert.equal((await send(h, "GET", path, "127.0.0.1", forwarded(FOREIGN))).status, 200);
  }, { env: { ALLOWED_HOSTS: "lore.example.org" } });
  await withHarness(async (h) => {
    clearBackends(h);
    const refused = await send(h, "GET", path, "127.0.0.1", forwarded(FOREIGN));
    assertJsonRefusal(h, refused, FOREIGN, "trusted proxy, foreign forwarded host");
    const page = await send(h, "GET", "/", "127.0.0.1", forwarded(FOREIGN));
    assert.equal(page.status, 421);
    assert.match(page.body, /<h1>Wrong address<\/h1>/);
    // a rebinding page's script can add the header itself; its browser's Host gives it away
    const rebound = await send(h, "GET", path, FOREIGN, forwarded("lore.example.org"));
    assertJsonRefusal(h, rebound, FOREIGN, "foreign Host, allowed forwarded host");
    assertNoBackendCall(h, "refused forwarded hosts");
    const malformed = await send(h, "GET", path, "127.0.0.1", forwarded("a b"));
    assert.equal(malformed.status, 400);
    assert.equal(JSON.parse(malformed.body).error, "INVALID_REQUEST");
    // what a proxy in front sends: its own or the public name as Host, the public name forwarded
    for (const host of ["127.0.0.1", "lore.example.org"]) {
      const ok = await send(h, "GET", path, host, forwarded("lore.example.org"));
      assert.equal(ok.status, 200, host);
    }
  }, { env: { TRUST_PROXY: "true", ALLOWED_HOSTS: "lore.example.org" } });
});

/** Every absolute http(s) URL in `text` but XML namespaces and schema names. */
const absoluteUrls = (text: string) =>
  [...text.matchAll(/https?:\/\/[^\s"<>]+/g)].map((m) => m[0])
    .filter((u) => !/w3\.org|sitemaps\.org|ogp\.me/.test(u));

/** A page's own absolute URLs: its canonical link and metadata (not links in its content). */
const pageUrls = (html: string) =>
  [...html.matchAll(/<(?:link rel="canonical" href|meta [^>]*content)="(https?:[^"]+)"/g)]
    .map((m) => m[1]);

/** The site's documents that carry absolute URLs, each as the given host sees it. */
async function absoluteUrlsOnSite(
  h: Harness,
  host: string,
  headers: Record<string, string> = {},
): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  const page = `/public/lore/${W.charMira}`;
  for (const path of ["/sitemap.xml", "/public/feed.atom", "/robots.txt", page]) {
    const r = await send(h, "GET", path, host, headers);
    assert.equal(r.status, 200, `${path}: ${r.text.slice(0, 200)}`);
    out[path] = path === page ? pageUrls(r.body) : absoluteUrls(r.body);
  }
  return out;
}

Deno.test("host: with PUBLIC_ORIGIN every absolute URL is on it, whatever Host or proxy says", () =>
  withHarness(async (h) => {
    const seen = [
      await absoluteUrlsOnSite(h, `127.0.0.1:${port(h)}`),
      await absoluteUrlsOnSite(h, "lore.lan"),
      await absoluteUrlsOnSite(h, "127.0.0.1", { "X-Forwarded-Host": "lore.lan" }),
    ];
    for (const urls of seen) {
      assert.ok(
        urls["/sitemap.xml"].includes(`https://lore.example.org/public/lore/${W.charMira}`),
      );
      assert.ok(urls["/public/feed.atom"].includes("https://lore.example.org/public/feed.atom"));
      assert.deepEqual(urls["/robots.txt"], ["https://lore.example.org/sitemap.xml"]);
      assert.ok(
        urls[`/public/lore/${W.charMira}`].includes(
          `https://lore.example.org/public/lore/${W.charMira}`,
        ),
        "canonical and og:url",
      );
      for (const [path, list] of Object.entries(urls)) {
        assert.ok(list.length > 0, path);
        for (const url of list) {
          assert.ok(url.startsWith("https://lore.example.org/"), `${path}: ${url}`);
        }
      }
    }
  }, {
    env: {
      PUBLIC_ORIGIN: "https://lore.example.org",
      ALLOWED_HOSTS: "lore.lan",
      TRUST_PROXY: "true",
    },
  }));

Deno.test("host: without PUBLIC_ORIGIN absolute URLs are on the accepted host the request named", () =>
  withHarness(async (h) => {
    const urls = await absoluteUrlsOnSite(h, "lore.lan:8080");
    for (const [path, list] of Object.entries(urls)) {
      assert.ok(list.length > 0, path);
      for (const url of list) assert.ok(url.startsWith("http://lore.lan:8080/"), `${path}: ${url}`);
    }
  }, { env: { ALLOWED_HOSTS: "lore.lan" } }));

Deno.test("host: PUBLIC_ORIGIN passes the cross-site check where a proxy rewrote the Host", () =>
  withHarness(async (h) => {
    const post = (origin: string) =>
      send(h, "POST", "/api/lore", `127.0.0.1:${port(h)}`, {
        "Content-Type": "application/json",
        Origin: origin,
        "Sec-Fetch-Site": "same-origin",
      }, '{"title":"From the public origin"}');
    const ours = await post("https://lore.example.org");
    assert.equal(ours.status, 201, ours.text.slice(0, 300));
    const other = await post("https://lore.example.org.attacker.example");
    assert.equal(other.status, 403);
    assert.equal(JSON.parse(other.body).error, "CSRF_REJECTED");
  }, { env: { PUBLIC_ORIGIN: "https://lore.example.org" } }));

Deno.test("host: every route documents the host rule's answers exactly as the app gives them", async () => {
  const app = createApp({ config: loadConfig({ TRUST_PROXY: "true" }), log: jsonLogger("silent") });
  const answersJson = jsonAnswerPaths(allRoutes);
  const operations = openApiDocument(allRoutes).paths;
  for (const route of allRoutes) {
    const path = route.path.replace(/:\w+/g, "x1");
    const at = (host: string, headers: Record<string, string> = {}) =>
      new Request(`http://${host}${path}`, { method: route.method, headers });
    const cases: [string, Request, RequestInfo, number][] = [
      ["a foreign Host", at(`${FOREIGN}:8080`), {}, 421],
      ["a foreign forwarded host", at("127.0.0.1:8080", { "x-forwarded-host": FOREIGN }), {}, 421],
      // off a connection (`served`), a request without Host has none of its own
      ["no Host", at("127.0.0.1:8080"), { served: true }, 400],
      ["a malformed Host", at("127.0.0.1:8080", { host: "a b" }), {}, 400],
      ["a malformed forwarded host", at("127.0.0.1:8080", { "x-forwarded-host": "a b" }), {}, 400],
    ];
    for (const [what, req, info, status] of cases) {
      const where = `${route.method} ${route.path}, ${what}`;
      const res = await app.handle(req, info);
      assert.equal(res.status, status, where);
      // the documented answers (what the OpenAPI document and docs/api.md say) allow it
      assert.equal(await answerProblem(routeResponses(route), route.method, res), undefined, where);
      const page = status === 421 && !answersJson(route.path);
      assert.match(
        res.headers.get("content-type") ?? "",
        page ? /^text\/html/ : /^application\/json/,
        where,
      );
      const text = await res.text();
      if (page) assert.match(text, /<h1>Wrong address<\/h1>/, where);
      else {
        const error = status === 421 ? "MISDIRECTED_REQUEST" : "INVALID_REQUEST";
        assert.equal(JSON.parse(text).error, error, where);
      }
    }
    const op = operations[route.path.replace(/:(\w+)/g, "{$1}")][route.method.toLowerCase()] as {
      responses: Record<string, { description: string; content: Record<string, unknown> }>;
    };
    assert.match(op.responses[400].description, /`INVALID_REQUEST`: a missing or malformed `Host`/);
    assert.match(op.responses[421].description, /a host name the service does not answer to/);
    assert.deepEqual(
      Object.keys(op.responses[421].content),
      [answersJson(route.path) ? "application/json" : "text/html"],
      `${route.method} ${route.path}`,
    );
  }
});

Deno.test("host: a route that answered 421 itself would fail the response check", async () => {
  // the host rule answers before any route: a route giving its answers would be a bug
  const problems: string[] = [];
  const check = responseCheck((p) => problems.push(p));
  const route = allRoutes.find((r) => r.path === "/healthz")!;
  const req = new Request("http://127.0.0.1:8080/healthz");
  const misdirected = errorResponse(new ApiError(421, "MISDIRECTED_REQUEST", "no"), "r1");
  assert.equal((await check(route, req, misdirected, "r1")).status, 500);
  assert.match(problems[0], /^GET \/healthz answered 421: status 421 is not declared/);
});

Deno.test("host: edge forms of a host name — case, trailing dots, IPv6 zones, ports, duplicates", () =>
  withHarness(async (h) => {
    const answered = [
      "LOCALHOST",
      "localhost.",
      `Localhost.:${port(h)}`,
      "app.localhost.",
      "127.0.0.1.",
      "127.1", // the URL parser's 127.0.0.1
      "[::ffff:127.0.0.1]",
      "LORE.LAN.",
      `Lore.Lan:${port(h)}`,
      "lore.lan:65535",
    ];
    for (const host of answered) {
      assert.equal((await send(h, "GET", "/healthz", host)).status, 200, host);
    }
    // someone else's names: refused in our error shape
    for (const host of ["localhost..", "lore.lan.attacker.example", "xn--bcher-kva.example"]) {
      assertJsonRefusal(h, await send(h, "GET", "/healthz", host), host, host);
    }
    // not a host name with an optional port: 400, never looked up or guessed at
    for (
      const host of [
        "[fe80::1%25eth0]", // an IPv6 zone id: meaningless to anyone but this machine
        `[fe80::1%eth0]:${port(h)}`,
        "lore.lan:",
        "lore.lan:65536",
        "lore.lan:8080:8080",
        "lore.lan, attacker.example",
      ]
    ) {
      const r = await send(h, "GET", "/healthz", host);
      assert.equal(r.status, 400, host);
      assert.equal(JSON.parse(r.body).error, "INVALID_REQUEST", host);
    }
    // two Host headers: refused before the app sees either
    const twice = await rawExchange(
      h.url,
      `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: ${FOREIGN}\r\nConnection: close\r\n\r\n`,
    );
    assert.equal(twice.status, 400);
  }, { env: { ALLOWED_HOSTS: "lore.lan" } }));

/** The minted zero-login session cookie of a private read naming `host`: Secure or not. */
async function mintedCookieSecure(
  h: Harness,
  host: string,
  headers: Record<string, string> = {},
): Promise<boolean> {
  const r = await send(h, "GET", `/api/lore/${W.charMira}`, host, headers);
  assert.equal(r.status, 200, `${host}: ${r.text.slice(0, 200)}`);
  const cookie = setCookies(r).get("parser_token");
  assert.ok(cookie, `${host}: a session was minted`);
  return cookie.attrs.has("secure");
}

Deno.test("host: with an https PUBLIC_ORIGIN, cookies on its host are Secure, elsewhere as the connection came", async () => {
  const env = {
    ...zeroLogin.env,
    PUBLIC_ORIGIN: "https://lore.example.org",
    ALLOWED_HOSTS: "lore.lan",
  };
  await withHarness(async (h) => {
    // a TLS-terminating proxy that passes the visitor's Host and says nothing else
    assert.equal(await mintedCookieSecure(h, "lore.example.org"), true);
    assert.equal(await mintedCookieSecure(h, "lore.example.org:443"), true);
    assert.equal(await mintedCookieSecure(h, "Lore.Example.org."), true);
    // plain HTTP on other names and ports: a Secure cookie would be dropped by the browser
    assert.equal(await mintedCookieSecure(h, `lore.example.org:${port(h)}`), false);
    assert.equal(await mintedCookieSecure(h, `lore.lan:${port(h)}`), false);
    assert.equal(await mintedCookieSecure(h, `127.0.0.1:${port(h)}`), false);
    assert.equal(await mintedCookieSecure(h, "localhost"), false);
  }, { ...zeroLogin, env });
  await withHarness(async (h) => {
    const via = (proto: string, host = "lore.example.org") => ({
      "X-Forwarded-Host": host,
      "X-Forwarded-Proto": proto,
    });
    // a hop in between that says http does not make the public origin plain HTTP
    assert.equal(await mintedCookieSecure(h, "127.0.0.1", via("http")), true);
    assert.equal(await mintedCookieSecure(h, "127.0.0.1", via("https")), true);
    // on another name the proxy's word counts, as before
    assert.equal(await mintedCookieSecure(h, "127.0.0.1", via("https", "lore.lan")), true);
    assert.equal(await mintedCookieSecure(h, "127.0.0.1", via("http", "lore.lan")), false);
  }, { ...zeroLogin, env: { ...env, TRUST_PROXY: "true" } });
  // http:// public origin: never Secure there, unless COOKIE_SECURE=always
  await withHarness(async (h) => {
    assert.equal(await mintedCookieSecure(h, "lore.lan"), false);
  }, { ...zeroLogin, env: { ...zeroLogin.env, PUBLIC_ORIGIN: "http://lore.lan" } });
  await withHarness(async (h) => {
    assert.equal(await mintedCookieSecure(h, "lore.lan"), true);
  }, {
    ...zeroLogin,
    env: { ...zeroLogin.env, PUBLIC_ORIGIN: "http://lore.lan", COOKIE_SECURE: "always" },
  });
});

/** A same-origin-looking create from a page at `origin`, on a request naming `host`. */
const createFrom = (
  h: Harness,
  host: string,
  origin: string,
  headers: Record<string, string> = {},
) =>
  send(h, "POST", "/api/lore", host, {
    "Content-Type": "application/json",
    Origin: origin,
    "Sec-Fetch-Site": "same-origin",
    ...headers,
  }, JSON.stringify({ title: `From ${origin}` }));

Deno.test("host: on PUBLIC_ORIGIN's host the page of the same name over the other scheme is another origin", () =>
  withHarness(async (h) => {
    const ours = await createFrom(h, "lore.example.org", "https://lore.example.org");
    assert.equal(ours.status, 201, ours.text.slice(0, 300));
    // the plain-HTTP page of the HTTPS site, e.g. one an attacker on the network wrote
    const plain = await createFrom(h, "lore.example.org", "http://lore.example.org");
    assert.equal(plain.status, 403);
    assert.equal(JSON.parse(plain.body).error, "CSRF_REJECTED");
    // whatever a proxy in between reports
    const reported = await createFrom(h, "lore.example.org", "http://lore.example.org", {
      "X-Forwarded-Proto": "http",
    });
    assert.equal(reported.status, 403);
    // another accepted name keeps the scheme it came with
    const lan = await createFrom(h, `lore.lan:${port(h)}`, `http://lore.lan:${port(h)}`);
    assert.equal(lan.status, 201, lan.text.slice(0, 300));
  }, {
    env: {
      PUBLIC_ORIGIN: "https://lore.example.org",
      ALLOWED_HOSTS: "lore.lan",
      TRUST_PROXY: "true",
    },
  }));

Deno.test("host: behind a trusted proxy that keeps Host and sends only X-Forwarded-Proto, the origin is https", () =>
  withHarness(async (h) => {
    // a load balancer terminating TLS: the visitor's Host, X-Forwarded-Proto, no X-Forwarded-Host
    const lb = { "X-Forwarded-Proto": "https" };
    const created = await createFrom(h, "lore.example.org", "https://lore.example.org", lb);
    assert.equal(created.status, 201, created.text.slice(0, 300));
    const urls = await absoluteUrlsOnSite(h, "lore.example.org", lb);
    for (const [path, list] of Object.entries(urls)) {
      assert.ok(list.length > 0, path);
      for (const url of list) {
        assert.ok(url.startsWith("https://lore.example.org/"), `${path}: ${url}`);
      }
    }
  }, { env: { ALLOWED_HOSTS: "lore.example.org", TRUST_PROXY: "true" } }));
