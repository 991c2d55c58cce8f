import assert from "node:assert/strict";
import { ApiError } from "./errors.ts";
import { checkCrossSite, type OriginPolicy } from "./csrf.ts";

const URL_ = new URL("http://127.0.0.1:8080/api/lore");
const req = (method: string, headers: Record<string, string>) =>
  new Request(URL_, { method, headers });
const check = (
  r: Request,
  access: "public" | "private" = "private",
  trustProxy = false,
  policy: Partial<OriginPolicy> = {},
) => checkCrossSite(r, URL_, access === "public", { trustProxy, ...policy });
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

Deno.test("cross-site: our own page's form post under no-referrer (Origin: null) passes", () => {
  check(req("POST", { origin: "null", "sec-fetch-site": "same-origin" }), "public");
  // an opaque origin anywhere else (a sandboxed frame, a data: URL) is still refused
  for (const site of ["cross-site", "same-site"]) {
    const r = req("POST", { origin: "null", "sec-fetch-site": site });
    assert.throws(() => check(r, "public"), refused);
  }
});

Deno.test("cross-site: forwarded host and proto count only behind a trusted proxy", () => {
  const r = req("POST", {
    origin: "https://lore.example",
    "x-forwarded-host": "lore.example",
    "x-forwarded-proto": "https",
  });
  check(r, "private", true);
  assert.throws(() => check(r, "private", false), refused);
  // written as browsers write Origin: a default port left out, the host in lower case
  check(req("POST", { ...headersOf(r), "x-forwarded-host": "Lore.Example:443" }), "private", true);
});

const headersOf = (r: Request) => Object.fromEntries(r.headers);

Deno.test("cross-site: PUBLIC_ORIGIN is ours whatever Host the request came with", () => {
  const publicOrigin = "https://lore.example.org";
  // a proxy in front that rewrites Host to the service's own address, without X-Forwarded-*
  const ours = req("POST", { origin: publicOrigin, "sec-fetch-site": "same-origin" });
  check(ours, "private", false, { publicOrigin });
  assert.throws(() => check(ours, "private"), refused, "without the setting, another origin");
  // it is one origin: a sibling, another scheme or port is not it
  for (
    const other of ["https://x.lore.example.org", "http://lore.example.org", `${publicOrigin}:8443`]
  ) {
    assert.throws(
      () => check(req("POST", { origin: other }), "private", false, { publicOrigin }),
      refused,
      other,
    );
  }
  // a page on it calling another of our addresses is cross-site for the browser: still refused
  assert.throws(
    () =>
      check(
        req("POST", { origin: publicOrigin, "sec-fetch-site": "cross-site" }),
        "private",
        false,
        {
          publicOrigin,
        },
      ),
    refused,
  );
});

Deno.test("cross-site: CORS_ORIGINS keep passing beside PUBLIC_ORIGIN", () => {
  const allowed = (o: string | null) => o === "https://app.example.org";
  const policy = { publicOrigin: "https://lore.example.org", allowed };
  check(
    req("POST", { origin: "https://app.example.org", "sec-fetch-site": "cross-site" }),
    "private",
    false,
    policy,
  );
  assert.throws(
    () => check(req("POST", { origin: "https://evil.example" }), "private", false, policy),
    refused,
  );
});
