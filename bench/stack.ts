/**
 * The system under test for benchmarks, in its own process so the load generator does not share
 * its event loop: the Core double with the sample world, the service wired to it, and (when nginx
 * is installed) a plain nginx reverse proxy in front of the same Core as a second baseline.
 * Prints one JSON line with the addresses, then serves until killed.
 *
 * @module
 */
import { loadConfig } from "../src/config.ts";
import { startServer } from "../src/server.ts";
import { startCoreSim } from "../tests/sims/core.ts";

const core = await startCoreSim();
const server = await startServer({
  config: loadConfig({
    HOST: "127.0.0.1",
    PORT: "0",
    CORE_URL: core.url,
    CORE_TOKEN: core.token,
    LOG_LEVEL: Deno.env.get("BENCH_LOG_LEVEL") ?? "silent",
  }),
});
console.log(JSON.stringify({ core: core.url, token: core.token, service: server.url }));
