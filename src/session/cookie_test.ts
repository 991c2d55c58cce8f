import assert from "node:assert/strict";
import {
  expireCookie,
  MAX_COOKIE_HEADER_LENGTH,
  MAX_COOKIE_PAIRS,
  parseCookies,
  serializeCookie,
} from "./cookie.ts";

const obj = (m: Map<string, string>) => Object.fromEntries(m);

Deno.test("parseCookies: plain pairs, whitespace and `=` inside values", () => {
  assert.deepEqual(obj(parseCookies("a=1; b=2;c=3 ;\td=x=y==")), {
    a: "1",
    b: "2",
    c: "3",
    d: "x=y==",
  });
  assert.deepEqual(obj(parseCookies("parser_url=v1.AbC-_d")), { parser_url: "v1.AbC-_d" });
  assert.deepEqual(obj(parseCookies("empty=; x=1")), { empty: "", x: "1" });
});

Deno.test("parseCookies: absent or empty header gives an empty map", () => {
  assert.equal(parseCookies(null).size, 0);
  assert.equal(parseCookies(undefined).size, 0);
  assert.equal(parseCookies("").size, 0);
  assert.equal(parseCookies(";;; ;").size, 0);
});

Deno.test("parseCookies: first occurrence wins", () => {
  const m = parseCookies("parser_token=first; other=1; parser_token=second");
  assert.equal(m.get("parser_token"), "first");
});

Deno.test("parseCookies: strips one pair of surrounding quotes only", () => {
  const m = parseCookies('a="quoted"; b=""; c="; d=x"y"; e=""z""');
  assert.equal(m.get("a"), "quoted");
  assert.equal(m.get("b"), "");
  assert.equal(m.get("c"), '"');
  assert.equal(m.get("d"), 'x"y"');
  assert.equal(m.get("e"), '"z"');
});

Deno.test("parseCookies: skips malformed pairs without throwing", () => {
  const m = parseCookies(
    "novalue; =nokey; bad name=1; bad(name)=2; ok=yes; ctl=a\x01b; tab=a\tb; good=1",
  );
  assert.deepEqual(obj(m), { ok: "yes", good: "1" });
  // names that are dangerous as object keys are fine in a Map and do not pollute anything
  const p = parseCookies("__proto__=x; constructor=y");
  assert.equal(p.get("__proto__"), "x");
  assert.equal(({} as Record<string, unknown>).x, undefined);
});

Deno.test("parseCookies: bounded by header length and pair count", () => {
  const big = "a=1; " + "x".repeat(MAX_COOKIE_HEADER_LENGTH);
  assert.equal(parseCookies(big).size, 0);
  const pairs = Array.from({ length: MAX_COOKIE_PAIRS + 20 }, (_, i) => `c${i}=${i}`).join("; ");
  const m = parseCookies(pairs);
  assert.equal(m.size, MAX_COOKIE_PAIRS);
  assert.equal(m.get(`c${MAX_COOKIE_PAIRS - 1}`), String(MAX_COOKIE_PAIRS - 1));
  assert.equal(m.has(`c${MAX_COOKIE_PAIRS}`), false);
});

Deno.test("parseCookies: never throws on random input", () => {
  const alphabet = 'ab=; "\t\r\n\x00\x7f\u00e9,\\=;=';
  for (let i = 0; i < 3000; i++) {
    let s = "";
    const len = Math.floor(Math.random() * 60);
    for (let j = 0; j < len; j++) s += alphabet[Math.floor(Math.random() * alphabet.length)];
    const m = parseCookies(s);
    for (const [k] of m) assert.match(k, /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/);
  }
});

Deno.test("serializeCookie: attributes in a stable order", () => {
  assert.equal(
    serializeCookie("parser_token", "v1.abc", {
      httpOnly: true,
      secure: true,
      sameSite: "Lax",
      path: "/",
      maxAge: 3600,
      domain: "lore.example",
      expires: new Date(Date.UTC(2030, 0, 2, 3, 4, 5)),
    }),
    "parser_token=v1.abc; Path=/; Domain=lore.example; Max-Age=3600; " +
      "Expires=Wed, 02 Jan 2030 03:04:05 GMT; HttpOnly; Secure; SameSite=Lax",
  );
  assert.equal(serializeCookie("a", "b"), "a=b");
  assert.equal(serializeCookie("a", ""), "a=");
  assert.equal(serializeCookie("a", '"quoted"'), 'a="quoted"');
  assert.equal(
    serializeCookie("a", "b", { sameSite: "None", secure: true }),
    "a=b; Secure; SameSite=None",
  );
});

Deno.test("serializeCookie: refuses attribute and header injection", () => {
  const bad: [string, string, Parameters<typeof serializeCookie>[2]][] = [
    ["a", "x; Domain=evil.example", {}],
    ["a", "x\r\nSet-Cookie: evil=1", {}],
    ["a", "x\nb", {}],
    ["a", "x,y", {}],
    ["a", "x y", {}],
    ["a", "x\\y", {}],
    ["a", 'x"y', {}],
    ["a", "x\x00", {}],
    ["a", "caf\u00e9", {}],
    ["a; Domain=evil", "x", {}],
    ["a=b", "x", {}],
    ["", "x", {}],
    ["a b", "x", {}],
    ["a\r\n", "x", {}],
    ["a", "x", { path: "/; Domain=evil.example" }],
    ["a", "x", { path: "/\r\nX-Evil: 1" }],
    ["a", "x", { path: "" }],
    ["a", "x", { domain: "evil.example; Secure" }],
    ["a", "x", { domain: "lore.example\r\n" }],
    ["a", "x", { domain: "" }],
    ["a", "x", { maxAge: -1 }],
    ["a", "x", { maxAge: 1.5 }],
    ["a", "x", { maxAge: NaN }],
    ["a", "x", { maxAge: Infinity }],
    ["a", "x", { expires: new Date(NaN) }],
    ["a", "x", { sameSite: "None" }],
    ["a", "x", { sameSite: "lax; Domain=evil" as "Lax" }],
    ["__Secure-a", "x", { path: "/" }],
    ["__Host-a", "x", { secure: true, path: "/app" }],
    ["__Host-a", "x", { secure: true, path: "/", domain: "lore.example" }],
  ];
  for (const [name, value, attrs] of bad) {
    assert.throws(
      () => serializeCookie(name, value, attrs),
      TypeError,
      `expected a TypeError for ${JSON.stringify([name, value, attrs])}`,
    );
  }
});

Deno.test("serializeCookie: error messages never contain the value", () => {
  const secret = "s3cret;token";
  try {
    serializeCookie("parser_token", secret);
    assert.fail("should throw");
  } catch (e) {
    assert.ok(e instanceof TypeError);
    assert.ok(!e.message.includes(secret));
  }
});

Deno.test("serializeCookie: prefixed names that follow the rules are accepted", () => {
  assert.equal(
    serializeCookie("__Host-sid", "x", { secure: true, path: "/" }),
    "__Host-sid=x; Path=/; Secure",
  );
  assert.equal(serializeCookie("__Secure-sid", "x", { secure: true }), "__Secure-sid=x; Secure");
});

Deno.test("expireCookie: empty value, Max-Age=0, past Expires, same path and flags", () => {
  assert.equal(
    expireCookie("parser_url", { httpOnly: true, secure: true, sameSite: "Lax", path: "/" }),
    "parser_url=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; Secure; " +
      "SameSite=Lax",
  );
  assert.throws(() => expireCookie("bad;name"), TypeError);
  // callers cannot smuggle a lifetime back in
  const s = expireCookie("a", { maxAge: 99 } as never);
  assert.match(s, /Max-Age=0/);
  assert.doesNotMatch(s, /99/);
});

Deno.test("round trip: a serialized cookie parses back", () => {
  const header = serializeCookie("parser_token", "v1.AAA-_bb", { httpOnly: true, path: "/" });
  const pair = header.split(";")[0];
  assert.equal(parseCookies(`other=1; ${pair}`).get("parser_token"), "v1.AAA-_bb");
});
