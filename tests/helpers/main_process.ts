/**
 * `main.ts` as its own process, as production starts it: a clean environment, the start task's
 * permissions, and its JSON log lines collected as they arrive on stdout.
 *
 * @module
 */

const REPO = new URL("../..", import.meta.url);

/** The permissions `deno task start` grants. */
export const MAIN_PERMISSIONS = [
  "--allow-net",
  "--allow-env",
  "--allow-read",
  "--allow-write",
  "--allow-sys",
];

/**
 * What Deno needs to run (`PATH`, `HOME`, its cache), plus `extra`: nothing else of this
 * process's environment leaks into the child.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(cleanEnv({ PORT: "0" }).PORT, "0");
 * ```
 */
export function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = { ...extra };
  for (const k of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"]) {
    const v = Deno.env.get(k);
    if (v !== undefined) env[k] = v;
  }
  return env;
}

/** A running `main.ts`. */
export interface MainProcess {
  child: Deno.ChildProcess;
  /** Every log line so far, parsed. */
  lines: Record<string, unknown>[];
  /** Resolves once stdout has ended (after the process exits). */
  reading: Promise<void>;
  /** Waits (up to 30 s) until `done` holds for the lines so far. */
  until(done: (lines: Record<string, unknown>[]) => boolean): Promise<void>;
  /** Kills the process if it still runs, waits for it, removes its own data directory. */
  close(): Promise<void>;
}

/**
 * Starts `main.ts` on a free loopback port with `env` and its own temporary `DATA_DIR` (unless
 * `env` names one, which is then left in place).
 *
 * @example
 * ```ts
 * async function listeningPort(): Promise<unknown> {
 *   const main = await spawnMain();
 *   try {
 *     await main.until((lines) => lines.some((l) => l.msg === "listening"));
 *     return main.lines.find((l) => l.msg === "listening")?.port;
 *   } finally {
 *     await main.close();
 *   }
 * }
 * ```
 */
export async function spawnMain(env: Record<string, string> = {}): Promise<MainProcess> {
  // a DATA_DIR the caller names outlives the process (a restart reads it); else a temporary one
  const ownDir = env.DATA_DIR === undefined;
  const dataDir = env.DATA_DIR ?? await Deno.makeTempDir({ prefix: "lpp-main-" });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...MAIN_PERMISSIONS, "main.ts"],
    cwd: REPO,
    env: cleanEnv({ HOST: "127.0.0.1", PORT: "0", DATA_DIR: dataDir, ...env }),
    clearEnv: true,
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const lines: Record<string, unknown>[] = [];
  const reading = (async () => {
    let rest = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop()!;
      lines.push(...parts.map((l) => JSON.parse(l)));
    }
  })();
  let exited = false;
  child.status.then(() => exited = true);
  return {
    child,
    lines,
    reading,
    until: async (done) => {
      // lines arrive within the log's flush interval
      for (let i = 0; i < 600 && !done(lines) && !exited; i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: async () => {
      try {
        child.kill("SIGKILL");
      } catch { /* already exited */ }
      await child.status;
      await reading.catch(() => {});
      if (ownDir) await Deno.remove(dataDir, { recursive: true });
    },
  };
}
