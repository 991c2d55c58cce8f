import assert from "node:assert/strict";
import { ApiError } from "./errors.ts";
import { checkCsrf, publicOrigin } from "./csrf.ts";

const req = (method: string, headers: Record<string, string>) =>
  new Request("http://127.0.0.1:8080/api/lore", { method, headers });

Deno.test("csrf: safe methods pass whatever their origin", () => {
  checkCsrf(req("GET", { origin: "https://evil.example", "sec-fetch-site": "cross-site" }), false);
});

Deno.test("csrf: a cross-site POST is refused by Sec-Fetch-Site", () => {
  assert.throws(
    () => checkCsrf(req("POST", { "sec-fetch-site": "cross-site" }), false),
    (e: unknown) => e instanceof ApiError && e.status === 403 && e.code === "CSRF_REJECTED",
  );
  // a sibling subdomain is "same-site" but still another origin
  assert.throws(() => checkCsrf(req("DELETE", { "sec-fetch-site": "same-site" }), false));
});

Deno.test("csrf: a foreign or opaque Origin is refused; our own passes", () => {
  assert.throws(() => checkCsrf(req("PUT", { origin: "https://evil.example" }), false));
  assert.throws(() => checkCsrf(req("PATCH", { origin: "null" }), false));
  checkCsrf(
    req("POST", { origin: "http://127.0.0.1:8080", "sec-fetch-site": "same-origin" }),
    false,
  );
  checkCsrf(req("POST", {}), false); // curl / server-to-server: no ambient browser credentials
});

Deno.test("csrf: forwarded host and proto count only behind a trusted proxy", () => {
  const r = req("POST", {
    origin: "https://lore.example",
    "x-forwarded-host": "lore.example",
    "x-forwarded-proto": "https",
  });
  assert.equal(publicOrigin(r, true), "https://lore.example");
  checkCsrf(r, true);
  assert.throws(() => checkCsrf(r, false));
});
