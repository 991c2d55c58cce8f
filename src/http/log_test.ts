import assert from "node:assert/strict";
import { jsonLogger, redact } from "./log.ts";

Deno.test("redact: URLs, bearer/basic credentials and ETAPI-shaped tokens disappear", () => {
  const token = "AbCdEfGh1234_" + "x".repeat(43) + "=";
  const text =
    `fetch http://core.internal:8080/etapi/notes failed; Authorization: Bearer abc.def ` +
    `Basic ZXRhcGk6dG9rZW4= token ${token}`;
  const out = redact(text);
  for (const leaked of ["core.internal", "abc.def", "ZXRhcGk6dG9rZW4", token]) {
    assert.ok(!out.includes(leaked), `${leaked} leaked: ${out}`);
  }
  assert.match(out, /^fetch \[redacted\] failed/);
});

Deno.test("redact: configured literal secrets are masked even when they look harmless", () => {
  assert.equal(redact("the secret is plainword", ["plainword"]), "the secret is [redacted]");
});

Deno.test("jsonLogger: one JSON object per line, level filter, string fields redacted", () => {
  const lines: string[] = [];
  const log = jsonLogger("info", (l) => lines.push(l), ["s3cr3t-value"], () => new Date(0));
  log.log("debug", "hidden");
  log.log("warn", "upstream failed", {
    error: "GET http://10.0.0.5/x with s3cr3t-value",
    status: 502,
  });
  assert.equal(lines.length, 1);
  assert.deepEqual(JSON.parse(lines[0]), {
    ts: "1970-01-01T00:00:00.000Z",
    level: "warn",
    msg: "upstream failed",
    error: "GET [redacted] with [redacted]",
    status: 502,
  });
});
