import assert from "node:assert/strict";
import { ApiError } from "./errors.ts";
import { requestUrl, validAuthority } from "./request_url.ts";
import { prng } from "../../tests/helpers/prng.ts";

/**
 * A request as Deno builds it: `req.url` is "http://" + the raw Host + the raw target, with
 * `localhost:<port>` for a missing or empty Host.
 */
function denoRequest(host: string | null, target: string): Request {
  const req = new Request("http://placeholder/");
  const headers = new Headers(host === null ? {} : { host });
  return new Proxy(req, {
    get: (t, p) =>
      p === "url"
        ? `http://${host || "localhost:8080"}${target}`
        : p === "headers"
        ? headers
        : Reflect.get(t, p),
  });
}

const invalid = (e: unknown) => e instanceof ApiError && e.status === 400;

Deno.test("request url: plain host names, IPs and ports are valid authorities", () => {
  for (const ok of ["lore.example", "127.0.0.1:8080", "[::1]:8080", "[::1]", "a_b.local:1"]) {
    assert.ok(validAuthority(ok), ok);
  }
  for (const bad of ["a b/c@d", "x:99999", "[::1", "a%zz", "u@h", "h/p", "h?q", "h#f", "", "h:"]) {
    assert.ok(!validAuthority(bad), bad);
  }
});

Deno.test("request url: a malformed Host is a 400, never a crash", () => {
  for (const host of ["a b/c@d", "x:99999", "[::1", "a%zz", "ex.com\\foo", "1.2.3.999"]) {
    assert.throws(() => requestUrl(denoRequest(host, "/healthz")), invalid, host);
  }
});

Deno.test("request url: the path comes from the request target, never from the Host", () => {
  // a Host with a path is refused rather than allowed to move the route
  assert.throws(
    () => requestUrl(denoRequest("127.0.0.1:8080/api/lore/X/content?", "/healthz")),
    invalid,
  );
  const u = requestUrl(denoRequest("lore.example:8080", "//evil.example/api/lore?q=x#frag"));
  assert.equal(u.host, "lore.example:8080");
  assert.equal(u.pathname, "//evil.example/api/lore");
  assert.equal(u.searchParams.get("q"), "x");
  assert.equal(requestUrl(denoRequest(null, "/x")).pathname, "/x");
});

Deno.test("request url: dot segments and backslashes are refused, encoded or not", () => {
  for (const target of ["/a/../b", "/a/./b", "/a/%2e%2E/b", "/%2e/x", "/a/.%2e", "/a\\b", "/.."]) {
    assert.throws(() => requestUrl(denoRequest("h", target)), invalid, target);
  }
  // dots inside a segment are ordinary characters
  assert.equal(requestUrl(denoRequest("h", "/public/site.css")).pathname, "/public/site.css");
});

Deno.test("request url: an absolute-form target is checked like a Host", () => {
  const abs = (url: string) =>
    new Proxy(new Request("http://placeholder/"), {
      get: (t, p) => p === "url" ? url : Reflect.get(t, p),
    });
  assert.equal(requestUrl(abs("http://h:1/p?x=1")).pathname, "/p");
  assert.equal(requestUrl(abs("http://h?x/y")).pathname, "/");
  for (const bad of ["http://x:99999/a", "http://u@h/a", "ftp://h/a", "http://[::1/a"]) {
    assert.throws(() => requestUrl(abs(bad)), invalid, bad);
  }
});

Deno.test("request url: a served request must carry its own Host; one made in the process need not", () => {
  // Deno fills in `localhost:<port>` for a request that sent none (or an empty one)
  for (const host of [null, ""]) {
    assert.throws(
      () => requestUrl(denoRequest(host, "/healthz"), true),
      (e) => invalid(e) && (e as Error).message === "A Host header is required",
      `Host: ${host}`,
    );
    assert.equal(requestUrl(denoRequest(host, "/healthz")).host, "localhost:8080");
  }
  assert.equal(requestUrl(denoRequest("127.0.0.1:8080", "/healthz"), true).host, "127.0.0.1:8080");
  assert.equal(requestUrl(new Request("http://lore.example/x")).host, "lore.example");
});

Deno.test("request url: a usual target read as given equals the same target taken apart", () => {
  // the same request twice: as Deno gives it (read as it is) and with the target's authority in
  // capitals, which differs from the Host and so is taken apart and rebuilt
  const asGiven = (host: string, target: string) => requestUrl(denoRequest(host, target), true);
  const takenApart = (host: string, target: string) => {
    const req = denoRequest(host, target);
    return requestUrl(
      new Proxy(req, {
        get: (t, p) => p === "url" ? `http://${host.toUpperCase()}${target}` : Reflect.get(t, p),
      }),
      true,
    );
  };
  const rng = prng(20261128);
  const alphabet = [..."abzAZ09-_~/?=&+!$'()*,;:@é€ "];
  for (let i = 0; i < 500; i++) {
    const host = ["lore.example", "lore.example:8080", "a-b.local:1"][i % 3];
    const tail = Array.from(
      { length: Math.floor(rng() * 24) },
      () => alphabet[Math.floor(rng() * alphabet.length)],
    ).join("");
    const target = `/${tail}`;
    assert.equal(asGiven(host, target).href, takenApart(host, target).href, target);
  }
});
