import assert from "node:assert/strict";
import { loadConfig } from "../config/service_config.ts";
import { hostRule, type HostVerdict, namedHosts, requestOrigin } from "./host_check.ts";

const rule = (env: Record<string, string> = {}) => hostRule(loadConfig(env));

/** The verdict on a request to `url`, with extra headers. */
function verdict(
  r: ReturnType<typeof hostRule>,
  url: string,
  headers: Record<string, string> = {},
): HostVerdict {
  return r.check(new Request(url, { headers }), new URL(url));
}

const status = (v: HostVerdict) => v.ok ? 200 : v.error.status;

Deno.test("host rule: without settings, IP literals and loopback names only, on any port", () => {
  const r = rule();
  for (
    const ok of [
      "http://127.0.0.1:8080/",
      "http://10.0.0.5/",
      "http://192.168.1.20:3000/api/lore",
      "http://[::1]:8080/",
      "http://[fd00::5]/",
      "http://localhost:8080/",
      "http://LOCALHOST./",
      "http://lore.localhost:8080/",
      // the URL parser writes other forms of an IPv4 address in dotted form
      "http://0x7f.1:8080/",
    ]
  ) {
    assert.equal(status(verdict(r, ok)), 200, ok);
  }
  for (
    const bad of [
      "http://attacker.example:8080/",
      "http://localhost.attacker.example/",
      "http://127.0.0.1.nip.io/",
      "http://lore/",
      "http://localhostx/",
    ]
  ) {
    const v = verdict(r, bad);
    assert.equal(status(v), 421, bad);
    assert.ok(!v.ok && v.error.code === "MISDIRECTED_REQUEST");
    assert.equal(!v.ok && v.host, new URL(bad).host, "the refused host, for the log");
  }
});

Deno.test("host rule: ALLOWED_HOSTS and PUBLIC_ORIGIN's host are accepted, any port, any case", () => {
  const r = rule({
    ALLOWED_HOSTS: "lore.lan, Lore.Example.com.",
    PUBLIC_ORIGIN: "https://site.example",
  });
  for (
    const ok of [
      "http://lore.lan:8080/",
      "http://LORE.LAN/",
      "http://lore.example.com/",
      "http://lore.example.com./",
      "https://site.example/",
      "http://site.example:8443/",
      "http://127.0.0.1/", // still: health checks and local tools
    ]
  ) {
    assert.equal(status(verdict(r, ok)), 200, ok);
  }
  for (const bad of ["http://x.lore.lan/", "http://lan/", "http://www.site.example/"]) {
    assert.equal(status(verdict(r, bad)), 421, bad);
  }
});

Deno.test("host rule: behind a trusted proxy the forwarded host must be accepted too", () => {
  const trusted = rule({ TRUST_PROXY: "true", ALLOWED_HOSTS: "lore.example.org" });
  const untrusted = rule({ ALLOWED_HOSTS: "lore.example.org" });
  const url = "http://127.0.0.1:8080/api/lore";
  const fwd = (host: string) => ({ "x-forwarded-host": host });
  assert.equal(status(verdict(trusted, url, fwd("lore.example.org"))), 200);
  assert.equal(status(verdict(trusted, url, fwd("lore.example.org:443, proxy.internal"))), 200);
  assert.equal(status(verdict(trusted, url, fwd("localhost:8080"))), 200);
  assert.equal(status(verdict(trusted, url)), 200, "a proxy that sends none: Host alone");
  const refused = verdict(trusted, url, fwd("attacker.example"));
  assert.equal(status(refused), 421);
  assert.equal(!refused.ok && refused.host, "attacker.example");
  // malformed: 400, like a malformed Host
  for (const bad of ["a b", "user@lore.example.org", "lore.example.org/x", "x:99999"]) {
    const v = verdict(trusted, url, fwd(bad));
    assert.equal(status(v), 400, bad);
    assert.ok(!v.ok && v.error.code === "INVALID_REQUEST");
  }
  // without TRUST_PROXY the header is the client's word, and is not read at all
  assert.equal(status(verdict(untrusted, url, fwd("attacker.example"))), 200);
  // a forwarded host never excuses the connection's own Host: a rebinding page's script can
  // add the header on a same-origin request, but cannot change its browser's Host
  const rebound = "http://attacker.example:8080/api/lore";
  assert.equal(status(verdict(trusted, rebound, fwd("lore.example.org"))), 421);
});

Deno.test("request origin: the request's own, or the forwarded one behind a trusted proxy", () => {
  const url = new URL("http://127.0.0.1:8080/api");
  const withHeaders = (headers: Record<string, string>) => new Request(url, { headers });
  const fwd = { "x-forwarded-host": "lore.example.org", "x-forwarded-proto": "https" };
  assert.equal(requestOrigin(withHeaders(fwd), url, true), "https://lore.example.org");
  assert.equal(requestOrigin(withHeaders(fwd), url, false), "http://127.0.0.1:8080");
  // no or an unknown protocol: the connection's own
  const hostOnly = withHeaders({ "x-forwarded-host": "lore.example.org:8080" });
  assert.equal(requestOrigin(hostOnly, url, true), "http://lore.example.org:8080");
  const odd = withHeaders({ "x-forwarded-host": "lore.example.org", "x-forwarded-proto": "ftp" });
  assert.equal(requestOrigin(odd, url, true), "http://lore.example.org");
  // a malformed forwarded host (refused by the host rule first) never makes an origin
  assert.equal(requestOrigin(withHeaders({ "x-forwarded-host": "a b" }), url, true), url.origin);
});

Deno.test("request origin: X-Forwarded-Proto counts behind a trusted proxy also without a forwarded host", () => {
  // a load balancer that terminates TLS and keeps the visitor's Host
  const url = new URL("http://lore.example.org/api/lore");
  const lb = new Request(url, { headers: { "x-forwarded-proto": "https" } });
  assert.equal(requestOrigin(lb, url, true), "https://lore.example.org");
  assert.equal(requestOrigin(lb, url, false), "http://lore.example.org", "untrusted: not read");
});

Deno.test("request origin: PUBLIC_ORIGIN's host has PUBLIC_ORIGIN's scheme and port, whatever a hop says", () => {
  const pub = "https://lore.example.org";
  const origin = (url: string, headers: Record<string, string> = {}, trust = false) =>
    requestOrigin(new Request(url, { headers }), new URL(url), trust, pub);
  assert.equal(origin("http://lore.example.org/"), pub);
  assert.equal(origin("http://LORE.example.org:443/"), pub);
  assert.equal(origin("http://127.0.0.1/", { "x-forwarded-host": "lore.example.org" }, true), pub);
  assert.equal(
    origin("http://127.0.0.1/", {
      "x-forwarded-host": "lore.example.org",
      "x-forwarded-proto": "http",
    }, true),
    pub,
  );
  // a trailing dot stays: browsers write it in `Origin` too
  assert.equal(origin("http://lore.example.org./"), "https://lore.example.org.");
  // the same name on another port is another origin: the connection's
  assert.equal(origin("http://lore.example.org:8080/"), "http://lore.example.org:8080");
  // other names are untouched
  assert.equal(origin("http://lore.lan:8080/"), "http://lore.lan:8080");
  assert.equal(origin("http://www.lore.example.org/"), "http://www.lore.example.org");
  // a public origin on a port of its own
  const odd = "https://lore.example.org:8443";
  const on = (url: string) => requestOrigin(new Request(url), new URL(url), false, odd);
  assert.equal(on("http://lore.example.org:8443/"), odd);
  assert.equal(on("http://lore.example.org/"), odd, "a proxy that drops the port");
  assert.equal(on("http://lore.example.org:8080/"), "http://lore.example.org:8080");
});

Deno.test("named hosts: PUBLIC_ORIGIN's, then ALLOWED_HOSTS, each once, as the rule compares them", () => {
  const config = loadConfig({
    PUBLIC_ORIGIN: "https://Lore.Example.org.",
    ALLOWED_HOSTS: "lore.lan, LORE.EXAMPLE.ORG",
  });
  assert.deepEqual(namedHosts(config), ["lore.example.org", "lore.lan"]);
  assert.deepEqual(namedHosts(loadConfig({})), []);
});

Deno.test("host rule: IPv6 zone ids, which name an interface of one machine, are never a host", () => {
  const r = rule({ TRUST_PROXY: "true" });
  const url = "http://127.0.0.1:8080/";
  for (const zoned of ["[fe80::1%eth0]", "[fe80::1%25eth0]:8080"]) {
    assert.equal(status(verdict(r, url, { "x-forwarded-host": zoned })), 400, zoned);
  }
  assert.throws(() => loadConfig({ ALLOWED_HOSTS: "[fe80::1%eth0]" }), /ALLOWED_HOSTS: entry 1/);
});
