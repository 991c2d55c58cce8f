/** The Parser conformance command line: options and settings from the environment. */
import assert from "node:assert/strict";
import { ConfigError } from "../../src/config/service_config.ts";
import { parseFlags } from "./cli.ts";
import { PARSER_FLAGS } from "./parser_suite.ts";
import { BOOTSTRAP_OWNER, parserFromEnv } from "./run_parser.ts";

const ENV = {
  PARSER_URL: "http://parser:3001/",
  PARSER_INTERNAL_SECRET: "internal-secret",
  CORE_URL: "http://core:8080",
  CORE_TOKEN: "tok_en",
};

Deno.test("test:parser options: --integration and --all; anything else is refused", () => {
  assert.deepEqual(parseFlags([], PARSER_FLAGS), { kind: "run", flags: [] });
  assert.deepEqual(parseFlags(["--all"], PARSER_FLAGS), { kind: "run", flags: ["integration"] });
  assert.deepEqual(parseFlags(["--share"], PARSER_FLAGS), {
    kind: "error",
    message: "unknown option --share",
  });
});

Deno.test("test:parser settings: Parser, secret and Core needed; the owner defaults to the bootstrap account", () => {
  assert.deepEqual(parserFromEnv(ENV), {
    parserUrl: "http://parser:3001",
    internalSecret: "internal-secret",
    owner: { ...BOOTSTRAP_OWNER },
    coreUrl: "http://core:8080",
    coreToken: "tok_en",
  });
  assert.deepEqual(
    parserFromEnv({ ...ENV, PARSER_EMAIL: "gm@example.org", PARSER_PASSWORD: "pw" }).owner,
    { email: "gm@example.org", password: "pw" },
  );
  for (const name of Object.keys(ENV)) {
    assert.throws(() => parserFromEnv({ ...ENV, [name]: undefined }), ConfigError, name);
  }
  assert.throws(() => parserFromEnv({ ...ENV, PARSER_URL: "ftp://parser" }), ConfigError);
});
