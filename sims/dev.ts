/**
 * `deno task dev`: the service on embedded sample backends with zero configuration. Starts the
 * Core double with the sample world, the Parser double (its default owner connected to that
 * Core) and the service wired to the Parser the production way: zero-login on (turn it off with
 * `ZERO_LOGIN=false`), no `CORE_TOKEN` — Core credentials come from the Parser per user. The
 * owner's semantic index holds the sample lore from the start (brain dumps add theirs). It
 * listens on the loopback address and prints a `localhost` URL, both of which the host rule
 * accepts without settings; any other name needs `ALLOWED_HOSTS` (http/host_check.ts).
 *
 * @module
 */
import { ConfigError } from "../src/config/service_config.ts";
import { namedHosts } from "../src/http/host_check.ts";
import { type DevStack, startDevStack } from "./dev_stack.ts";
import { DEFAULT_OWNER } from "./parser.ts";
import { HARBOR_ALIAS, W, WORLD_SUMMARY } from "./world.ts";

let stack: DevStack;
try {
  stack = await startDevStack(Deno.env.toObject());
} catch (e) {
  if (!(e instanceof ConfigError)) throw e;
  console.error(e.message);
  Deno.exit(2);
}
const { core, parser, config, base, indexed, world } = stack;
const worldLine = world
  ? `Generated world (SIM_WORLD_NOTES): ${world.publicIds.length} public notes ` +
    `(${world.imageIds.length} of them images) and ${world.hiddenIds.length} hidden ones, ` +
    `under ${base}/public/lore/${world.folderId}\n`
  : "";

console.error(`
Lore Portal Proxy — development mode (embedded sample backends)

  service   ${base}
  core      ${core.url}  (in-memory Core double)
  parser    ${parser.url}  (in-memory Parser double; Core credentials come from here;
            ${indexed} sample notes in its semantic index)

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
  curl -H 'content-type: application/json' -d '{"text":"lighthouse keeper"}' ${base}/api/rag

Public site (published lore only, no login):  ${base}/   and  ${base}/public/lore/${HARBOR_ALIAS}
${worldLine}
Sample world:
${WORLD_SUMMARY.split("\n").map((l) => `  ${l}`).join("\n")}

Request log follows (one JSON line per request). Ctrl-C stops.
`);

const stop = async () => {
  await stack.stop();
  Deno.exit(0);
};
Deno.addSignalListener("SIGINT", stop);
Deno.addSignalListener("SIGTERM", stop);
