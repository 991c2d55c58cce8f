import assert from "node:assert/strict";
import { backendBaseUrl } from "./backend_url.ts";
import { ConfigError, configNotes, loadConfig } from "./service_config.ts";

const url = (backend: "core" | "parser", raw: string) => {
  const r = backendBaseUrl(backend, raw);
  return r.ok ? r.url : `refused: ${r.message}`;
};

Deno.test("backend URL: formatting is normalised, so allow-lists compare as strings", () => {
  assert.equal(url("core", "HTTP://Core.Example:8080//"), "http://core.example:8080");
  assert.equal(url("core", "https://core.example:443/"), "https://core.example");
  assert.equal(url("parser", " http://parser:3001 "), "http://parser:3001");
  // a reverse proxy's own prefix is kept
  assert.equal(url("core", "https://lore.example/trilium/"), "https://lore.example/trilium");
  assert.equal(url("parser", "https://lore.example/ai/"), "https://lore.example/ai");
});

Deno.test("backend URL: Core's /etapi is removed and said; a path deeper into it is refused", () => {
  for (
    const raw of ["http://core:8080/etapi", "http://core:8080/etapi/", "http://core:8080/ETAPI"]
  ) {
    const r = backendBaseUrl("core", raw);
    assert.ok(r.ok, raw);
    assert.equal(r.url, "http://core:8080", raw);
    assert.match(r.note ?? "", /\/etapi .* removed/, raw);
  }
  const proxied = backendBaseUrl("core", "https://lore.example/trilium/etapi");
  assert.equal(proxied.ok && proxied.url, "https://lore.example/trilium");
  assert.deepEqual(backendBaseUrl("core", "http://core:8080"), {
    ok: true,
    url: "http://core:8080",
  }, "nothing to say without /etapi");
  assert.match(
    url("core", "http://core:8080/etapi/notes"),
    /^refused: .*without \/etapi\/… \(e\.g\./,
  );
  // the Parser has no /etapi of its own to strip
  assert.equal(url("parser", "http://parser:3001/etapi"), "http://parser:3001/etapi");
});

Deno.test("backend URL: a Parser path naming one of its routes is refused, naming the fix", () => {
  for (
    const [raw, part] of [
      ["http://parser:3001/api/auth", "/api/auth"],
      ["http://parser:3001/api/auth/", "/api/auth"],
      ["http://parser:3001/api", "/api"],
      ["http://parser:3001/health", "/health"],
      ["https://lore.example/ai/reference", "/reference"],
    ]
  ) {
    assert.equal(
      url("parser", raw),
      `refused: must be the Parser's base address, where its ` +
        `routes start: remove ${part} (e.g. http://parser:3001)`,
      raw,
    );
  }
});

Deno.test("backend URL: credentials, queries, fragments and other schemes are refused unnamed", () => {
  for (
    const raw of ["http://u:p@core", "http://core/?x=1", "http://core/#x", "ftp://core", "core"]
  ) {
    const r = backendBaseUrl("core", raw);
    assert.equal(r.ok, false, raw);
    assert.ok(!r.ok && !r.message.includes("core"), "the message never repeats the URL");
  }
});

Deno.test("config: the rule applies to CORE_URL, PARSER_URL and both allow-lists", () => {
  const env = {
    CORE_URL: "http://core:8080/etapi/",
    CORE_TOKEN: "t",
    PARSER_URL: "http://Parser:3001/",
    CORE_ALLOWED_URLS: "http://other:8080/etapi, http://third:8080",
    PARSER_ALLOWED_URLS: "http://parser-b:3001",
  };
  const c = loadConfig(env);
  assert.equal(c.CORE_URL, "http://core:8080");
  assert.equal(c.PARSER_URL, "http://parser:3001");
  assert.deepEqual(c.CORE_ALLOWED_URLS, ["http://other:8080", "http://third:8080"]);
  assert.deepEqual(configNotes(env), [
    "CORE_URL: the trailing /etapi (Core's API path, which the service adds itself) was removed",
    "CORE_ALLOWED_URLS: the trailing /etapi (Core's API path, which the service adds itself) " +
    "was removed",
  ]);
  assert.deepEqual(configNotes({ CORE_URL: "http://core:8080" }), []);
});

Deno.test("config: a refused backend URL names the variable and the fix, never the URL", () => {
  const refused = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (e) {
      assert.ok(e instanceof ConfigError);
      return e.problems.join("\n");
    }
    assert.fail("accepted");
  };
  assert.match(
    refused({ PARSER_URL: "http://parser:3001/api/auth" }),
    /^PARSER_URL: must be the Parser's base address, where its routes start: remove \/api\/auth/,
  );
  assert.match(refused({ CORE_URL: "http://core/etapi/notes", CORE_TOKEN: "t" }), /^CORE_URL: /);
  const list = refused({ PARSER_ALLOWED_URLS: "http://a:1, http://user:secret@b:2" });
  assert.match(list, /^PARSER_ALLOWED_URLS: entry 2: /);
  assert.doesNotMatch(list, /secret/);
});
