import assert from "node:assert/strict";
import { ApiError } from "./errors.ts";
import { checkCrossSite, publicOrigin } from "./csrf.ts";

const URL_ = new URL("http://127.0.0.1:8080/api/lore");
const req = (method: string, headers: Record<string, string>) =>
  new Request(URL_, { method, headers });
const check = (r: Request, access: "public" | "private" = "private", trustProxy = false) =>
  checkCrossSite(r, URL_, access === "public", trustProxy);
const refused = (e: unknown) =>
  e instanceof ApiError && e.status === 403 && e.code === "CSRF_REJECTED";

Deno.test("cross-site: public routes take safe methods from anywhere", () => {
  check(req("GET", { origin: "https://evil.example", "sec-fetch-site": "cross-site" }), "public");
  check(req("HEAD", { "sec-fetch-site": "same-site" }), "public");
});

Deno.test("cross-site: private routes refuse every method from another site, GET included", () => {
  for (const method of ["GET", "HEAD", "POST"]) {
    assert.throws(() => check(req(method, { "sec-fetch-site": "cross-site" })), refused);
    // a sibling subdomain is "same-site" but still another origin
    assert.throws(() => check(req(method, { "sec-fetch-site": "same-site" })), refused);
  }
  assert.throws(() => check(req("GET", { origin: "https://evil.example" })), refused);
  // the user's own navigation (typed address, bookmark) and our own pages pass
  check(req("GET", { "sec-fetch-site": "none", "sec-fetch-mode": "navigate" }));
  check(req("GET", { "sec-fetch-site": "same-origin" }));
});

Deno.test("cross-site: unsafe methods are refused on public routes too", () => {
  assert.throws(() => check(req("POST", { "sec-fetch-site": "cross-site" }), "public"), refused);
  assert.throws(() => check(req("DELETE", { origin: "https://evil.example" }), "public"), refused);
});

Deno.test("cross-site: a foreign or opaque Origin is refused; our own passes", () => {
  assert.throws(() => check(req("PUT", { origin: "https://evil.example" })), refused);
  assert.throws(() => check(req("PATCH", { origin: "null" })), refused);
  check(req("POST", { origin: "http://127.0.0.1:8080", "sec-fetch-site": "same-origin" }));
  check(req("POST", {})); // curl / server-to-server: no other site's page involved
});

Deno.test("cross-site: forwarded host and proto count only behind a trusted proxy", () => {
  const r = req("POST", {
    origin: "https://lore.example",
    "x-forwarded-host": "lore.example",
    "x-forwarded-proto": "https",
  });
  assert.equal(publicOrigin(r, URL_, true), "https://lore.example");
  check(r, "private", true);
  assert.throws(() => check(r, "private", false), refused);
});
