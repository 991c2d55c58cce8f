/**
 * The system under test for benchmarks. `deno run bench/stack.ts core` starts the Core double
 * with the sample world; `parser <coreUrl> <token>` starts the Parser double wired to it (its
 * answer carries the owner's bearer token); `service <coreUrl> <token> [parserUrl parserToken]`
 * starts the service wired to them. Each runs in its own process (as the backends and the
 * service do in production) and prints one JSON line with its address, then serves until killed.
 *
 * @module
 */
import { loadConfig } from "../src/config.ts";
import { startServer } from "../src/server.ts";
import { startCoreSim } from "../sims/core.ts";
import { startParserSim } from "../sims/parser.ts";

const [role, coreUrl, token, parserUrl, parserToken] = Deno.args;
if (role === "core") {
  const core = await startCoreSim();
  console.log(JSON.stringify({ url: core.url, token: core.token }));
} else if (role === "parser") {
  const parser = await startParserSim({
    core: { url: coreUrl, token },
    brainDump: { paceMs: Number(Deno.env.get("BENCH_PACE_MS") ?? 0) },
    rateLimits: { "brain-dump": { max: 1_000_000, windowMs: 60_000 } },
  });
  console.log(JSON.stringify({ url: parser.url, token: parser.ownerToken() }));
} else if (role === "service") {
  const server = await startServer({
    config: loadConfig({
      HOST: "127.0.0.1",
      PORT: "0",
      CORE_URL: coreUrl,
      CORE_TOKEN: token,
      ...(parserUrl ? { PARSER_URL: parserUrl, PARSER_TOKEN: parserToken } : {}),
      LOG_LEVEL: Deno.env.get("BENCH_LOG_LEVEL") ?? "silent",
    }),
  });
  console.log(JSON.stringify({ url: server.url }));
} else {
  console.error(
    "usage: stack.ts core | parser <coreUrl> <token> | service <coreUrl> <token> [parserUrl parserToken]",
  );
  Deno.exit(2);
}

// exit cleanly on SIGTERM so profilers (--cpu-prof) can write their output
Deno.addSignalListener("SIGTERM", () => Deno.exit(0));
