/**
 * The system under test for benchmarks. `deno run bench/stack.ts core` starts the Core double
 * with the sample world; `deno run bench/stack.ts service <coreUrl> <token>` starts the service
 * wired to it. Each runs in its own process (as Core and the service do in production) and prints
 * one JSON line with its address, then serves until killed.
 *
 * @module
 */
import { loadConfig } from "../src/config.ts";
import { startServer } from "../src/server.ts";
import { startCoreSim } from "../tests/sims/core.ts";

const [role, coreUrl, token] = Deno.args;
if (role === "core") {
  const core = await startCoreSim();
  console.log(JSON.stringify({ url: core.url, token: core.token }));
} else if (role === "service") {
  const server = await startServer({
    config: loadConfig({
      HOST: "127.0.0.1",
      PORT: "0",
      CORE_URL: coreUrl,
      CORE_TOKEN: token,
      LOG_LEVEL: Deno.env.get("BENCH_LOG_LEVEL") ?? "silent",
    }),
  });
  console.log(JSON.stringify({ url: server.url }));
} else {
  console.error("usage: stack.ts core | service <coreUrl> <token>");
  Deno.exit(2);
}

// exit cleanly on SIGTERM so profilers (--cpu-prof) can write their output
Deno.addSignalListener("SIGTERM", () => Deno.exit(0));
