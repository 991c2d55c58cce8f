/**
 * The development stack: the Core double with the sample world (dressed by the showcase), the
 * Parser double (its default owner connected to that Core, the sample lore in its semantic index)
 * and the service wired to them the production way — zero-login on unless `ZERO_LOGIN=false`, no
 * `CORE_TOKEN` (Core credentials come from the Parser per user). `SIM_WORLD_NOTES=N` adds a generated
 * world of N public notes for scale tests (world_gen.ts). `deno task dev` runs it and prints how to
 * use it; `deno task test:client` runs it behind the real front end.
 *
 * @module
 */
import { type Config, ConfigError, loadConfig } from "../src/config/service_config.ts";
import { type RunningServer, startServer } from "../src/server.ts";
import { type CoreSim, startCoreSim } from "./core.ts";
import { type ParserSim, reindexForOwner, startParserSim } from "./parser.ts";
import { seedShowcase } from "./showcase.ts";
import { type GeneratedWorld, seedGeneratedWorld } from "./world_gen.ts";
import { W } from "./world.ts";

/**
 * Most public notes `SIM_WORLD_NOTES` may ask for: a bound on start-up time and memory (the
 * Parser's start-up reindex alone reads every lore note, about a millisecond each).
 */
export const MAX_WORLD_NOTES = 20_000;

/**
 * `SIM_WORLD_NOTES`: how many public notes to generate, undefined when unset or empty. Throws
 * `ConfigError` for anything but a whole number from 1 to {@linkcode MAX_WORLD_NOTES}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(worldNotesOf({ SIM_WORLD_NOTES: "3000" }), 3000);
 * assert.equal(worldNotesOf({}), undefined);
 * assert.throws(() => worldNotesOf({ SIM_WORLD_NOTES: "3k" }), /SIM_WORLD_NOTES/);
 * ```
 */
export function worldNotesOf(env: Record<string, string | undefined>): number | undefined {
  const raw = env.SIM_WORLD_NOTES?.trim();
  if (!raw) return undefined;
  const notes = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(notes >= 1 && notes <= MAX_WORLD_NOTES)) {
    throw new ConfigError([
      `SIM_WORLD_NOTES: expected a whole number of public notes from 1 to ${MAX_WORLD_NOTES}, ` +
      `got ${JSON.stringify(env.SIM_WORLD_NOTES)}`,
    ]);
  }
  return notes;
}

/** A running development stack. */
export interface DevStack {
  core: CoreSim;
  parser: ParserSim;
  server: RunningServer;
  config: Config;
  /** The service's URL under a loopback name the host rule always accepts (`localhost`). */
  base: string;
  /** How many sample notes the Parser's semantic index holds from the start. */
  indexed: number;
  /** The generated world, with `SIM_WORLD_NOTES`. */
  world?: GeneratedWorld;
  /** Stops the service (draining its requests), then the doubles. */
  stop(): Promise<void>;
}

/**
 * Starts the doubles, then the service configured from `env` (environment-style settings, e.g.
 * `Deno.env.toObject()`): `PORT` defaults to 8080, `DATA_DIR` to `.dev-data`, `LOG_LEVEL` to
 * `info`; the backend settings always point at the doubles, whatever `env` says;
 * `SIM_WORLD_NOTES` adds a generated world (see {@linkcode worldNotesOf}). Throws
 * `ConfigError` for an unusable `env` and the listener's error when the port is taken, in both
 * cases with nothing left running.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const dataDir = await Deno.makeTempDir();
 * const stack = await startDevStack({ PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "error", DATA_DIR: dataDir });
 * try {
 *   const r = await fetch(`${stack.server.url}/api/lore/wCharMira001`);
 *   assert.equal((await r.json()).title, "Mira Tallowend");
 * } finally {
 *   await stack.stop();
 *   await Deno.remove(dataDir, { recursive: true });
 * }
 * ```
 */
export async function startDevStack(env: Record<string, string | undefined>): Promise<DevStack> {
  const worldNotes = worldNotesOf(env); // before anything runs: junk leaves nothing behind
  const core = await startCoreSim({ port: Number(env.DEV_CORE_PORT ?? 0) });
  seedShowcase(core.store); // real-size pictures and more of the world shared
  const world = worldNotes === undefined
    ? undefined
    : seedGeneratedWorld(core.store, { notes: worldNotes });
  const parser = await startParserSim({
    port: Number(env.DEV_PARSER_PORT ?? 0),
    core: { url: core.url, token: core.token },
  });
  const stopDoubles = async () => {
    await parser.close();
    await core.close();
  };
  try {
    // the owner's semantic index, as a real Parser has it after its first reindex: semantic
    // search, consistency sampling and relationship suggestions answer from the start
    const { indexed } = await reindexForOwner(parser);
    const config = loadConfig({
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
    return {
      core,
      parser,
      server,
      config,
      // a loopback name the host rule always accepts (an IP literal, e.g. with HOST=0.0.0.0, is too)
      base: server.url.replace("127.0.0.1", "localhost"),
      indexed,
      world,
      async stop() {
        await server.stop();
        await stopDoubles();
      },
    };
  } catch (e) {
    await stopDoubles();
    throw e;
  }
}
