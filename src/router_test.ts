import assert from "node:assert/strict";
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
