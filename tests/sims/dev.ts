/**
 * `deno task dev`: the service on embedded sample backends with zero configuration. Starts the
 * Core double with the sample world and the service wired to it, then prints where everything is.
 *
 * @module
 */
import { ConfigError, loadConfig } from "../../src/config.ts";
import { startServer } from "../../src/server.ts";
import { startCoreSim } from "./core.ts";
import { W, WORLD_SUMMARY } from "./world.ts";

const env = Deno.env.toObject();
const core = await startCoreSim({ port: Number(env.DEV_CORE_PORT ?? 0) });
let config;
try {
  config = loadConfig({
    LOG_LEVEL: "info",
    ...env,
    PORT: env.PORT ?? "8080",
    DATA_DIR: env.DATA_DIR ?? ".dev-data",
    // the embedded backends always win over a production CORE_* left in the shell
    CORE_URL: core.url,
    CORE_TOKEN: core.token,
    LORE_ROOT_NOTE_ID: env.LORE_ROOT_NOTE_ID ?? W.loreRoot,
  });
} catch (e) {
  if (e instanceof ConfigError) {
    console.error(e.message);
    Deno.exit(2);
  }
  throw e;
}
const server = await startServer({ config });
const base = server.url.replace("127.0.0.1", "localhost");

console.error(`
Lore Portal Proxy — development mode (embedded sample backends)

  service   ${base}
  core      ${core.url}  (in-memory Core double)

Try:
  curl ${base}/api/lore
  curl ${base}/api/lore/${W.charMira}
  curl '${base}/api/lore/${W.charMira}/preview?mode=player'
  curl ${base}/api/share/tree
  curl ${base}/api/openapi.json

Sample world:
${WORLD_SUMMARY.split("\n").map((l) => `  ${l}`).join("\n")}

Request log follows (one JSON line per request). Ctrl-C stops.
`);

const stop = async () => {
  await server.stop();
  await core.close();
  Deno.exit(0);
};
Deno.addSignalListener("SIGINT", stop);
Deno.addSignalListener("SIGTERM", stop);
