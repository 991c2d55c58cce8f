import assert from "node:assert/strict";
import { callerQueryError, mapCoreError } from "./core.ts";

const body = (status: number, code: string) =>
  JSON.stringify({ status, code, message: `Note 'x' secret detail` });

Deno.test("mapCoreError: 404 stays 404 with our own message, never Core's text", () => {
  const e = mapCoreError(404, body(404, "NOTE_NOT_FOUND"), new Headers());
  assert.equal(e.status, 404);
  assert.equal(e.message, "Note not found");
  assert.deepEqual(e.details, { service: "core", upstreamCode: "NOTE_NOT_FOUND" });
});

Deno.test("mapCoreError: every Core status to our error table", () => {
  const cases: [number, string, number, string][] = [
    [401, "NOT_AUTHENTICATED", 401, "UPSTREAM_UNAUTHORIZED"],
    [403, "", 403, "UPSTREAM_FORBIDDEN"],
    [400, "NOTE_IS_PROTECTED", 403, "FORBIDDEN"],
    [400, "PROPERTY_NOT_ALLOWED", 400, "UPSTREAM_REJECTED"],
    [409, "", 409, "CONFLICT"],
    [422, "", 422, "UPSTREAM_REJECTED"],
    [500, "GENERIC", 502, "UPSTREAM_ERROR"],
    [503, "", 502, "UPSTREAM_ERROR"],
  ];
  for (const [status, code, want, wantCode] of cases) {
    const e = mapCoreError(
      status,
      code ? body(status, code) : "<html>proxy error</html>",
      new Headers(),
    );
    assert.equal(e.status, want, `${status} ${code}`);
    assert.equal(e.code, wantCode);
    assert.ok(!e.message.includes("secret detail"));
  }
});

Deno.test("mapCoreError: 429 keeps a numeric Retry-After, else 60", () => {
  const e = mapCoreError(429, "Too many requests", new Headers({ "retry-after": "12" }));
  assert.equal(e.status, 429);
  assert.equal(new Headers(e.headers).get("retry-after"), "12");
  const e2 = mapCoreError(
    429,
    "",
    new Headers({ "retry-after": "Wed, 21 Oct 2015 07:28:00 GMT<script>" }),
  );
  assert.equal(new Headers(e2.headers).get("retry-after"), "60");
});

Deno.test("mapCoreError: a code that is not code-shaped is not echoed", () => {
  const e = mapCoreError(400, JSON.stringify({ code: "<img src=x>" }), new Headers());
  assert.equal(e.message, "Core rejected the request");
});

Deno.test("callerQueryError: only Core's query failures, as 400 without Core's text", () => {
  const generic = (message: string) => JSON.stringify({ status: 500, code: "GENERIC", message });
  const regex = callerQueryError(500, generic("Invalid regular expression: /[/ms: secret detail"));
  assert.equal(regex?.status, 400);
  assert.equal(regex?.code, "INVALID_REQUEST");
  assert.ok(!JSON.stringify([regex?.message, regex?.details]).includes("secret detail"));
  const blank = callerQueryError(
    500,
    generic("Invalid tokens: empty or whitespace-only tokens are not allowed"),
  );
  assert.match(blank?.message ?? "", /empty quoted search term/);
  for (
    const [status, body] of [
      [500, generic("Can't find note path for note x")],
      [500, "Invalid regular expression (not Core's JSON)"],
      [400, generic("Invalid regular expression: /[/")],
      [500, JSON.stringify({ code: "METRICS_ERROR", message: "Invalid regular expression" })],
    ] as const
  ) {
    assert.equal(callerQueryError(status, body), undefined, body);
  }
});
