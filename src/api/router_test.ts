import assert from "node:assert/strict";
import { prng } from "../../tests/helpers/prng.ts";
import { compileRoutes, defineRoute, matchRoute, type Method } from "./router.ts";

const row = (method: Method, path: string) =>
  defineRoute({
    method,
    path,
    summary: path,
    backend: "None",
    access: "public",
    tag: "test",
    responses: { 200: "ok" },
    handler: () => new Response(path),
  });

function found(table: ReturnType<typeof compileRoutes>, method: string, path: string) {
  const m = matchRoute(table, method, path);
  return m.kind === "found" ? m.route.path : m.kind;
}

Deno.test("routes: the leftmost literal wins, whatever the table order", () => {
  const batch = row("GET", "/api/x/batch/:batchId");
  const diffs = row("GET", "/api/x/:id/diffs");
  for (const order of [[batch, diffs], [diffs, batch]]) {
    const table = compileRoutes(order);
    assert.equal(found(table, "GET", "/api/x/batch/diffs"), "/api/x/batch/:batchId");
    assert.equal(found(table, "GET", "/api/x/abc/diffs"), "/api/x/:id/diffs");
    assert.equal(found(table, "GET", "/api/x/batch/b1"), "/api/x/batch/:batchId");
  }
});

Deno.test("routes: a literal path shadows parameterised ones for every method (405)", () => {
  const table = compileRoutes([row("GET", "/api/x/:id"), row("POST", "/api/x/move")]);
  assert.deepEqual(matchRoute(table, "GET", "/api/x/move"), { kind: "method", allow: ["POST"] });
  assert.equal(found(table, "GET", "/api/x/n1"), "/api/x/:id");
  assert.equal(found(table, "HEAD", "/api/x/n1"), "/api/x/:id");
});

Deno.test("routes: rows no request could tell apart are refused at start-up", () => {
  assert.throws(
    () => compileRoutes([row("GET", "/api/x/:a/y"), row("GET", "/api/x/:b/y")]),
    /ambiguous routes: GET \/api\/x\/:a\/y and \/api\/x\/:b\/y/,
  );
  assert.throws(() => compileRoutes([row("GET", "/a"), row("GET", "/a")]), /ambiguous routes/);
  // the same shape with another method is fine
  assert.doesNotThrow(() => compileRoutes([row("GET", "/api/x/:a"), row("DELETE", "/api/x/:b")]));
});

Deno.test("routes: params read off the segments equal URLPattern's, for any encoded path", () => {
  const table = compileRoutes([
    row("GET", "/api/x/:id"),
    row("GET", "/api/x/:id/diffs/:rev"),
    row("POST", "/api/x/move"),
    row("GET", "/api/:kind/list"),
  ]);
  // ASCII punctuation, spaces, percent signs and non-ASCII: what a client may put in a segment
  const alphabet = [..." !\"#$%&'()*+,-.;<=>@[\\]^_`{|}~azAZ09é€✓", "%2F", "%2e", "%zz"];
  const rng = prng(7);
  const rand = (n: number) => Math.floor(rng() * n);
  const segment = () => Array.from({ length: 1 + rand(6) }, () => alphabet[rand(alphabet.length)]);
  let checked = 0;
  for (let i = 0; i < 2000; i++) {
    const raw = [
      ["api", "x", segment().join("")],
      ["api", "x", segment().join(""), "diffs", segment().join("")],
      ["api", segment().join(""), "list"],
    ][i % 3];
    // the app matches URL-parsed pathnames only (see requestUrl)
    if (!URL.canParse(`http://h/${raw.join("/")}`)) continue;
    const pathname = new URL(`http://h/${raw.join("/")}`).pathname;
    const m = matchRoute(table, "GET", pathname);
    if (m.kind !== "found") continue;
    const compiled = table.find((r) => r.route === m.route)!;
    assert.deepEqual(
      m.params,
      { ...compiled.pattern.exec({ pathname })?.pathname.groups },
      pathname,
    );
    checked++;
  }
  assert.ok(checked > 1000, `only ${checked} paths were checked`);
});

Deno.test("routes: a literal path needs no params and answers HEAD like GET", () => {
  const table = compileRoutes([row("GET", "/healthz"), row("GET", "/:page")]);
  assert.deepEqual(matchRoute(table, "HEAD", "/healthz"), {
    kind: "found",
    route: table.find((r) => r.route.path === "/healthz")!.route,
    params: {},
  });
  assert.equal(found(table, "GET", "/other"), "/:page");
  assert.equal(found(table, "GET", "/healthz/"), "none");
  assert.deepEqual(matchRoute(table, "POST", "/healthz"), { kind: "method", allow: ["GET"] });
});

Deno.test("routes: an alias answers as its route, with its own params, and is never ambiguous", () => {
  const login = { ...row("POST", "/api/x/parser-login"), aliases: ["/api/x/allknower-login"] };
  const status = { ...row("GET", "/api/x/codex/:id"), aliases: ["/api/x/allcodex/:id"] };
  const table = compileRoutes([login, status, row("GET", "/api/x/:id")]);
  assert.equal(found(table, "POST", "/api/x/allknower-login"), "/api/x/parser-login");
  assert.equal(found(table, "POST", "/api/x/parser-login"), "/api/x/parser-login");
  const m = matchRoute(table, "GET", "/api/x/allcodex/n1");
  assert.equal(m.kind === "found" && m.route.path, "/api/x/codex/:id");
  assert.equal(m.kind === "found" && m.params.id, "n1");
  // an alias literal shadows parameterised rows like any literal path
  assert.deepEqual(matchRoute(table, "GET", "/api/x/allknower-login"), {
    kind: "method",
    allow: ["POST"],
  });
  const clash = { ...row("GET", "/api/y/a"), aliases: ["/api/y/b"] };
  assert.throws(() => compileRoutes([clash, row("GET", "/api/y/b")]), /ambiguous/);
});

/**
 * The table read row by row, as the router's rules say: the rows whose literal path is the
 * pathname, else the parameterised rows that fit it, in table order; the method's row, else
 * the methods there are.
 */
function scanned(table: ReturnType<typeof compileRoutes>, method: string, pathname: string) {
  const m = method === "HEAD" ? "GET" : method;
  const parts = pathname.split("/");
  const literal = table.filter((r) => !r.path.includes(":") && r.path === pathname);
  const rows = literal.length > 0
    ? literal
    : table.filter((r) =>
      r.path.includes(":") && r.segments.length === parts.length &&
      r.segments.every((seg, i) => seg === null ? parts[i] !== "" : seg === parts[i])
    );
  if (rows.length === 0) return "none";
  const hit = rows.find((r) => r.route.method === m);
  return hit ? `found ${hit.path}` : `method ${rows.map((r) => r.route.method).join(",")}`;
}

Deno.test("routes: the index finds what reading the whole table finds, parameter-first rows too", () => {
  const rng = prng(20261128);
  const rand = (n: number) => Math.floor(rng() * n);
  const pick = <T>(xs: readonly T[]) => xs[rand(xs.length)];
  let compared = 0;
  for (let t = 0; t < 200; t++) {
    // a random table of short paths; rows the router would refuse as ambiguous are left out
    const shapes = new Set<string>();
    const rows = [];
    for (let i = 0; i < 8; i++) {
      const segments = Array.from({ length: 1 + rand(3) }, () => pick(["a", "b", ":p", ":q"]));
      const method = pick(["GET", "POST"] as const);
      const shape = `${method} ${segments.map((s) => s.startsWith(":") ? ":" : s).join("/")}`;
      if (shapes.has(shape)) continue;
      shapes.add(shape);
      // parameter names differ per segment, as URLPattern requires
      rows.push(
        row(method, "/" + segments.map((s, k) => s.startsWith(":") ? `${s}${k}` : s).join("/")),
      );
    }
    const table = compileRoutes(rows);
    for (let i = 0; i < 30; i++) {
      const path = "/" +
        Array.from({ length: 1 + rand(3) }, () => pick(["a", "b", "c", ""])).join("/");
      const method = pick(["GET", "HEAD", "POST", "DELETE"]);
      const m = matchRoute(table, method, path);
      const got = m.kind === "found"
        ? `found ${
          table.find((r) => r.route === m.route && r.path === m.route.path)?.path ?? m.route.path
        }`
        : m.kind === "method"
        ? `method ${m.allow.join(",")}`
        : "none";
      assert.equal(
        got,
        scanned(table, method, path),
        `${method} ${path} in ${rows.map((r) => r.path)}`,
      );
      compared++;
    }
  }
  assert.equal(compared, 6000);
});
