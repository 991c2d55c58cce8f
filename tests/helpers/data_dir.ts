/**
 * Services that share a `DATA_DIR`, as restarts of one deployment are: each started from its
 * configuration as production starts it, on a test harness's Core double.
 *
 * @module
 */
import { loadConfig } from "../../src/config/service_config.ts";
import { type RunningServer, startServer } from "../../src/server.ts";
import type { Harness } from "./harness.ts";

/** Runs `fn` with a fresh temporary `DATA_DIR`, removed after it whatever happens. */
export async function withDataDir<T>(fn: (dataDir: string) => Promise<T>): Promise<T> {
  const dataDir = await Deno.makeTempDir({ prefix: "lpp-data-" });
  try {
    return await fn(dataDir);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
}

/**
 * The service on `dataDir` and the harness's Core (its token), on a free loopback port, logging
 * errors only; `extra` adds or overrides settings.
 */
export function startOnDataDir(
  h: Harness,
  dataDir: string,
  extra: Record<string, string> = {},
): Promise<RunningServer> {
  return startServer({
    config: loadConfig({
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "error",
      DATA_DIR: dataDir,
      CORE_URL: h.core.url,
      CORE_TOKEN: h.core.token,
      ...extra,
    }),
  });
}
