import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "./config.ts";

Deno.test("config: defaults, trimming of URLs, empty strings count as unset", () => {
  const c = loadConfig({ CORE_URL: "http://core:8080/", CORE_TOKEN: "t", PARSER_URL: "" });
  assert.equal(c.PORT, 8080);
  assert.equal(c.HOST, "127.0.0.1");
  assert.equal(c.CORE_URL, "http://core:8080");
  assert.equal(c.PARSER_URL, undefined);
  assert.equal(c.MAX_JSON_BYTES, 1024 * 1024);
});

Deno.test("config: every problem is reported, by variable name", () => {
  try {
    loadConfig({ PORT: "70000", CORE_URL: "ftp://x", LOG_LEVEL: "loud", TRUST_PROXY: "maybe" });
    assert.fail("should throw");
  } catch (e) {
    assert.ok(e instanceof ConfigError);
    const joined = e.problems.join("\n");
    for (const name of ["PORT", "CORE_URL", "LOG_LEVEL", "TRUST_PROXY"]) {
      assert.match(joined, new RegExp(name));
    }
  }
});

Deno.test("config: backend URLs may not carry credentials or queries; URL and token go together", () => {
  assert.throws(() => loadConfig({ CORE_URL: "http://u:p@core", CORE_TOKEN: "t" }), ConfigError);
  assert.throws(() => loadConfig({ CORE_URL: "http://core/?x=1", CORE_TOKEN: "t" }), ConfigError);
  assert.throws(() => loadConfig({ CORE_URL: "http://core" }), /CORE_URL needs CORE_TOKEN/);
});
