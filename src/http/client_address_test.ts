import assert from "node:assert/strict";
import { clientKey } from "./client_address.ts";

const req = (xff?: string | string[]) => {
  const headers = new Headers();
  for (const v of typeof xff === "string" ? [xff] : xff ?? []) headers.append("x-forwarded-for", v);
  return new Request("http://127.0.0.1/api/login", { method: "POST", headers });
};
const peer = { remoteAddr: "10.0.0.5" };

Deno.test("clientKey: without a trusted proxy, X-Forwarded-For is ignored", () => {
  assert.equal(clientKey(req("203.0.113.7"), peer, false), "10.0.0.5");
  assert.equal(clientKey(req("203.0.113.7"), peer, 0), "10.0.0.5");
  assert.equal(clientKey(req(), { remoteAddr: "198.51.100.1" }, false), "198.51.100.1");
});

Deno.test("clientKey: behind a trusted proxy, the hop the proxy appended is used", () => {
  assert.equal(clientKey(req("203.0.113.7"), peer, true), "203.0.113.7");
  // the client sent a forged entry; the proxy appended the real address to it
  assert.equal(clientKey(req("1.1.1.1, 203.0.113.7"), peer, true), "203.0.113.7");
  assert.equal(clientKey(req(" 9.9.9.9 ,  203.0.113.7 "), peer, true), "203.0.113.7");
  // several header lines are one list
  assert.equal(clientKey(req(["1.1.1.1", "203.0.113.7"]), peer, true), "203.0.113.7");
  // rotating the forged part does not change the key
  const keys = new Set(
    Array.from({ length: 20 }, (_, i) => clientKey(req(`10.9.8.${i}, 203.0.113.7`), peer, true)),
  );
  assert.deepEqual([...keys], ["203.0.113.7"]);
});

Deno.test("clientKey: with n chained proxies, the n-th entry from the right", () => {
  const r = req("1.1.1.1, 203.0.113.7, 172.16.0.2");
  assert.equal(clientKey(r, peer, 2), "203.0.113.7");
  assert.equal(clientKey(r, peer, 1), "172.16.0.2");
  assert.equal(clientKey(req("203.0.113.7"), peer, 2), "10.0.0.5"); // too few hops: the peer
});

Deno.test("clientKey: unusable forwarded entries fall back to the peer address", () => {
  for (
    const xff of [
      "",
      "unknown",
      "_hidden",
      "evil.example",
      "1.2.3",
      "1.2.3.4.5",
      "256.1.1.1",
      "01.2.3.4",
      "1.2.3.4, garbage",
      "2001:db8::1::2",
      "1:2:3:4:5:6:7:8:9",
      "12345::",
      ":::",
      "[2001:db8::1",
      "1.1.1.1, " + "9".repeat(5000),
    ]
  ) {
    assert.equal(clientKey(req(xff), peer, true), "10.0.0.5", JSON.stringify(xff));
  }
  assert.equal(clientKey(req("garbage"), {}, true), "unknown");
  assert.equal(clientKey(req(), {}, false), "unknown");
  assert.equal(clientKey(req(), { remoteAddr: "not-an-ip" }, false), "unknown");
});

Deno.test("clientKey: ports added by proxies are stripped", () => {
  assert.equal(clientKey(req("203.0.113.7:54321"), peer, true), "203.0.113.7");
  assert.equal(clientKey(req("[2001:db8:1:2::7]:443"), peer, true), "2001:db8:1:2::/64");
  assert.equal(clientKey(req("[2001:db8:1:2::7]"), peer, true), "2001:db8:1:2::/64");
});

Deno.test("clientKey: IPv6 is keyed by its /64 in one canonical spelling", () => {
  const k = (a: string) => clientKey(req(), { remoteAddr: a }, false);
  const same = [
    "2001:db8:1:2::1",
    "2001:db8:1:2:ffff:ffff:ffff:ffff",
    "2001:0DB8:0001:0002:0000:0000:0000:0099",
    "2001:db8:1:2:a:b:c:d",
    "2001:db8:1:2::",
    "2001:db8:1:2:0:0:1.2.3.4",
  ];
  for (const a of same) assert.equal(k(a), "2001:db8:1:2::/64", a);
  assert.equal(k("2001:db8:1:3::1"), "2001:db8:1:3::/64");
  assert.equal(k("::1"), "0:0:0:0::/64");
  assert.equal(k("::"), "0:0:0:0::/64");
  assert.equal(k("fe80::1%eth0"), "fe80:0:0:0::/64");
  assert.equal(k("2001:db8::"), "2001:db8:0:0::/64");
  assert.equal(k("1:2:3:4:5:6:7::"), "1:2:3:4::/64");
  assert.equal(k("::2:3:4:5:6:7:8"), "0:2:3:4::/64");
});

Deno.test("clientKey: IPv4-mapped IPv6 (dual-stack sockets) counts as IPv4", () => {
  const k = (a: string) => clientKey(req(), { remoteAddr: a }, false);
  assert.equal(k("::ffff:203.0.113.7"), "203.0.113.7");
  assert.equal(k("::FFFF:cb00:7107"), "203.0.113.7");
  assert.equal(k("0:0:0:0:0:ffff:203.0.113.7"), "203.0.113.7");
  assert.notEqual(k("::ffff:203.0.113.7"), k("::ffff:203.0.113.8"));
});

Deno.test("clientKey: never throws on random forwarded headers", () => {
  const chars = "0123456789abcdefABCDEF:.,[]% \tx-";
  for (let i = 0; i < 3000; i++) {
    let s = "";
    const len = Math.floor(Math.random() * 50);
    for (let j = 0; j < len; j++) s += chars[Math.floor(Math.random() * chars.length)];
    let r: Request;
    try {
      r = req(s);
    } catch {
      continue; // not a valid header value
    }
    const key = clientKey(r, peer, true);
    assert.match(key, /^(?:\d{1,3}(?:\.\d{1,3}){3}|(?:[0-9a-f]{1,4}:){4}:\/64)$/);
  }
});
