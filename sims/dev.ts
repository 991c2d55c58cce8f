/**
 * `deno task dev`: the service on embedded sample backends with zero configuration. Starts the
 * Core double with the sample world, the Parser double (its default owner connected to that
 * Core) and the service wired to the Parser the production way: zero-login on (turn it off with
 * `ZERO_LOGIN=false`), no `CORE_TOKEN` — Core credentials come from the Parser per user. It
 * listens on the loopback address and prints a `localhost` URL, both of which the host rule
 * accepts without settings; any other name needs `ALLOWED_HOSTS` (http/host_check.ts).
 *
 * @module
 */
import { loadConfigOrExit } from "../src/config.ts";
import { namedHosts } from "../src/http/host_check.ts";
import { startServer } from "../src/server.ts";
import { startCoreSim } from "./core.ts";
import { DEFAULT_OWNER, startParserSim } from "./parser.ts";
import { seedShowcase } from "./showcase.ts";
import { HARBOR_ALIAS, W, WORLD_SUMMARY } from "./world.ts";

const env = Deno.env.toObject();
const core = await startCoreSim({ port: Number(env.DEV_CORE_PORT ?? 0) });
seedShowcase(core.store); // real-size pictures and more of the world shared
const parser = await startParserSim({
  port: Number(env.DEV_PARSER_PORT ?? 0),
  core: { url: core.url, token: core.token },
});
const config = loadConfigOrExit({
  LOG_LEVEL: "info",
  ...env,
  PORT: env.PORT ?? "8080",
  DATA_DIR: env.DATA_DIR ?? ".dev-data",
  ZERO_LOGIN: env.ZERO_LOGIN ?? "true",
  // the embedded backends always win over production settings left in the shell
  CORE_URL: core.url,
  CORE_TOKEN: undefined,
  // the public site reads the share tree with its own server-side token, as in production
  PUBLIC_CORE_TOKEN: core.token,
  CORE_ALLOWED_URLS: core.url,
  PARSER_URL: parser.url,
  PARSER_TOKEN: undefined,
  PARSER_INTERNAL_SECRET: parser.internalSecret ?? undefined,
  LORE_ROOT_NOTE_ID: env.LORE_ROOT_NOTE_ID ?? W.loreRoot,
});
const server = await startServer({ config });
// a loopback name the host rule always accepts (an IP literal, e.g. with HOST=0.0.0.0, is too)
const base = server.url.replace("127.0.0.1", "localhost");

console.error(`
Lore Portal Proxy — development mode (embedded sample backends)

  service   ${base}
  core      ${core.url}  (in-memory Core double)
  parser    ${parser.url}  (in-memory Parser double; Core credentials come from here)

Zero-login is ${config.ZERO_LOGIN ? "ON: a browser works at once" : "OFF: log in first"}${
  config.ZERO_LOGIN ? " (turn it off: ZERO_LOGIN=false deno task dev)" : ""
}.
Answers localhost and IP addresses${
  namedHosts(config).length ? `, and ${namedHosts(config).join(", ")}` : ""
}; another name: ALLOWED_HOSTS=<name> deno task dev.
Sample account: ${DEFAULT_OWNER.email} / ${DEFAULT_OWNER.password}
  curl -c jar -H 'content-type: application/json' \\
    -d '{"email":"${DEFAULT_OWNER.email}","password":"${DEFAULT_OWNER.password}"}' ${base}/api/auth/login

Try:
  curl ${base}/api/lore
  curl ${base}/api/lore/${W.charMira}
  curl '${base}/api/lore/${W.charMira}/preview?mode=player'
  curl ${base}/api/share/tree
  curl ${base}/api/openapi.json
  curl ${base}/api/config/status
  curl -H 'content-type: application/json' -d '{"rawText":"Captain Ilsa Venn sails from Saltmarrow Harbor to the Ember Isles.","mode":"auto"}' ${base}/api/brain-dump
  curl -N -H 'content-type: application/json' -d '{"rawText":"The Tidewright Guild hired Oskar Brine."}' ${base}/api/brain-dump/stream

Public site (published lore only, no login):  ${base}/   and  ${base}/public/lore/${HARBOR_ALIAS}

Sample world:
${WORLD_SUMMARY.split("\n").map((l) => `  ${l}`).join("\n")}

Request log follows (one JSON line per request). Ctrl-C stops.
`);

const stop = async () => {
  await server.stop();
  await parser.close();
  await core.close();
  Deno.exit(0);
};
Deno.addSignalListener("SIGINT", stop);
Deno.addSignalListener("SIGTERM", stop);
