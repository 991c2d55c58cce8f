import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "./service_config.ts";

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

Deno.test("config: stream deadlines per kind; a total shorter than the idle deadline is refused", () => {
  const c = loadConfig({});
  assert.equal(c.STREAM_IDLE_TIMEOUT_MS, 60_000);
  assert.equal(c.STREAM_TOTAL_TIMEOUT_MS, 300_000);
  assert.equal(c.SSE_TOTAL_TIMEOUT_MS, 900_000);
  assert.equal(c.MAX_UPSTREAM_BODY_BYTES, 16 * 1024 * 1024);
  assert.throws(
    () => loadConfig({ STREAM_IDLE_TIMEOUT_MS: "5000", STREAM_TOTAL_TIMEOUT_MS: "1000" }),
    /STREAM_TOTAL_TIMEOUT_MS: must be at least STREAM_IDLE_TIMEOUT_MS/,
  );
  assert.throws(
    () => loadConfig({ STREAM_IDLE_TIMEOUT_MS: "5000", SSE_TOTAL_TIMEOUT_MS: "1000" }),
    /SSE_TOTAL_TIMEOUT_MS: must be at least STREAM_IDLE_TIMEOUT_MS/,
  );
  assert.throws(() => loadConfig({ MAX_UPSTREAM_BODY_BYTES: "10" }), /MAX_UPSTREAM_BODY_BYTES/);
});

Deno.test("config: slow-client deadlines have defaults and bounds", () => {
  const c = loadConfig({});
  assert.deepEqual(
    [c.CLIENT_HEADER_TIMEOUT_MS, c.CLIENT_BODY_TIMEOUT_MS, c.CLIENT_IDLE_TIMEOUT_MS],
    [15_000, 10_000, 75_000],
  );
  for (
    const name of ["CLIENT_HEADER_TIMEOUT_MS", "CLIENT_BODY_TIMEOUT_MS", "CLIENT_IDLE_TIMEOUT_MS"]
  ) {
    assert.throws(() => loadConfig({ [name]: "0" }), new RegExp(name));
    assert.throws(() => loadConfig({ [name]: "soon" }), new RegExp(name));
  }
});

Deno.test("config: AI deadlines have defaults; the total may not be shorter than the wait", () => {
  const c = loadConfig({});
  assert.deepEqual(
    [c.AI_TIMEOUT_MS, c.AI_TOTAL_TIMEOUT_MS, c.AI_RESULT_TTL_MS],
    [180_000, 600_000, 900_000],
  );
  assert.equal(loadConfig({ AI_RESULT_TTL_MS: "0" }).AI_RESULT_TTL_MS, 0);
  assert.throws(
    () => loadConfig({ AI_TIMEOUT_MS: "300000", AI_TOTAL_TIMEOUT_MS: "200000" }),
    /AI_TOTAL_TIMEOUT_MS: must be at least AI_TIMEOUT_MS/,
  );
  assert.throws(() => loadConfig({ AI_TIMEOUT_MS: "50" }), /AI_TIMEOUT_MS/);
});

Deno.test("config: PUBLIC_ORIGIN is one http(s) origin, written as browsers write Origin", () => {
  assert.equal(loadConfig({}).PUBLIC_ORIGIN, undefined);
  const origin = (v: string) => loadConfig({ PUBLIC_ORIGIN: v }).PUBLIC_ORIGIN;
  assert.equal(origin("https://Lore.Example.org/"), "https://lore.example.org");
  assert.equal(origin("https://lore.example.org:443"), "https://lore.example.org");
  assert.equal(origin("http://lore.lan:8080"), "http://lore.lan:8080");
  for (
    const bad of [
      "lore.example.org",
      "https://lore.example.org/wiki",
      "https://lore.example.org/?x=1",
      "https://u:p@lore.example.org",
      "ftp://lore.example.org",
      "https://lore.example.org,https://other.example",
    ]
  ) {
    assert.throws(
      () => loadConfig({ PUBLIC_ORIGIN: bad }),
      /^ConfigError: invalid configuration:\n {2}PUBLIC_ORIGIN: must be an http\(s\) origin/,
      bad,
    );
  }
});

Deno.test("config: ALLOWED_HOSTS are host names without port, normalised like requests' hosts", () => {
  assert.deepEqual(loadConfig({}).ALLOWED_HOSTS, []);
  assert.deepEqual(
    loadConfig({ ALLOWED_HOSTS: " Lore.Example.org. , lore.lan,proxy_1,bücher.example,[::1] " })
      .ALLOWED_HOSTS,
    ["lore.example.org", "lore.lan", "proxy_1", "xn--bcher-kva.example", "[::1]"],
  );
  for (
    const [bad, entry] of [
      ["lore.lan:8080", 1],
      ["lore.lan, https://lore.example.org", 2],
      ["*.example.org", 1],
      ["*", 1],
      ["lore.lan/x", 1],
      ["user@lore.lan", 1],
      ["[::1]:8080", 1],
      ["-lore.lan", 1],
    ] as const
  ) {
    assert.throws(
      () => loadConfig({ ALLOWED_HOSTS: bad }),
      new RegExp(
        `^ConfigError: invalid configuration:\\n {2}ALLOWED_HOSTS: entry ${entry}: ` +
          "must be a host name",
      ),
      bad,
    );
  }
});
