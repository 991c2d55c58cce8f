/**
 * Starts the processes of a benchmark, each on its own as in production: the roles of
 * bench/stack.ts (Core double, Parser double, bare `Deno.serve`) and the service itself from
 * main.ts with a production environment. Every child's stdout is drained for its whole life,
 * the way a container runtime reads a service's log, and its lines are counted.
 *
 * @module
 */

const REPO = decodeURIComponent(new URL("..", import.meta.url).pathname);

/** What a child wrote to stdout so far. */
export interface OutputCount {
  lines: number;
  bytes: number;
}

/** A started child process. */
export interface Role {
  child: Deno.ChildProcess;
  /** The JSON line a bench/stack.ts role prints first (`token` is empty for `bare`). */
  info: { url: string; token: string; [more: string]: unknown };
  output: OutputCount;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

/**
 * The service's environment for doubles started by {@linkcode spawnRole}: `CORE_URL` and
 * `CORE_TOKEN` of the Core double, and with a Parser double its `PARSER_URL` and `PARSER_TOKEN`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const core = { info: { url: "http://127.0.0.1:4001", token: "core-token" } };
 * const parser = { info: { url: "http://127.0.0.1:4002", token: "parser-token" } };
 * assert.deepEqual(backendEnv(core), { CORE_URL: core.info.url, CORE_TOKEN: "core-token" });
 * assert.equal(backendEnv(core, parser).PARSER_TOKEN, "parser-token");
 * ```
 */
export function backendEnv(
  core: Pick<Role, "info">,
  parser?: Pick<Role, "info">,
): Record<string, string> {
  return {
    CORE_URL: core.info.url,
    CORE_TOKEN: core.info.token,
    ...(parser && { PARSER_URL: parser.info.url, PARSER_TOKEN: parser.info.token }),
  };
}

/**
 * Calls the Core double's ETAPI directly with its token: the JSON answer, or null for a 204;
 * any other status that is not OK throws with the answer's text.
 */
export async function coreEtapi(core: Pick<Role, "info">, path: string, init: RequestInit) {
  const res = await fetch(`${core.info.url}${path}`, {
    ...init,
    headers: { authorization: core.info.token, ...init.headers },
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? null : await res.json();
}

/**
 * Starts one role of bench/stack.ts in its own process and reads its address line.
 */
export async function spawnRole(args: string[]): Promise<Role> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net",
      "--allow-env",
      "--allow-read",
      "--allow-sys",
      `${REPO}bench/stack.ts`,
      ...args,
    ],
    cwd: REPO,
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const output: OutputCount = { lines: 0, bytes: 0 };
  const first = await drain(child.stdout, output);
  if (first === null) throw new Error(`bench stack ${args[0]} exited early`);
  const info = JSON.parse(first);
  return {
    child,
    info: { ...info, url: info.url, token: info.token ?? "" },
    output,
    stop: () => stop(child),
  };
}

/**
 * The Deno flags of `deno task start` (permissions, V8 flags), read from deno.json so the bench
 * runs the service exactly as deployed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.ok((await startTaskFlags()).includes("--allow-net"));
 * ```
 */
export async function startTaskFlags(): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(`${REPO}deno.json`));
  const words = String(config.tasks.start).split(/\s+/);
  if (words[0] !== "deno" || words[1] !== "run" || words.at(-1) !== "main.ts") {
    throw new Error(
      `deno.json's start task is not "deno run <flags> main.ts": ${config.tasks.start}`,
    );
  }
  return words.slice(2, -1);
}

/** The service started by {@linkcode spawnService}. */
export interface Service {
  child: Deno.ChildProcess;
  url: string;
  /** Its log lines on stdout. */
  output: OutputCount;
  stop(): Promise<void>;
}

/**
 * Starts the service as `deno task start` does (main.ts, the same flags) on a free port,
 * with `env` added to this process's environment, and waits until `/healthz` answers. `LOG_LEVEL`
 * defaults to `info` and `DATA_DIR` to a fresh temporary directory (removed by `stop`).
 * `denoFlags` go before the script (e.g. `--cpu-prof`, `--v8-flags=…`).
 */
export async function spawnService(
  env: Record<string, string>,
  denoFlags: string[] = [],
): Promise<Service> {
  const port = freePort();
  const dataDir = await Deno.makeTempDir({ prefix: "lpp-bench-data-" });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...denoFlags, ...await startTaskFlags(), `${REPO}main.ts`],
    cwd: REPO,
    env: { LOG_LEVEL: "info", DATA_DIR: dataDir, ...env, HOST: "127.0.0.1", PORT: String(port) },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const output: OutputCount = { lines: 0, bytes: 0 };
  drain(child.stdout, output).catch(() => {}); // a broken pipe shows as the service failing
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/healthz`, child.status);
  return {
    child,
    url,
    output,
    stop: async () => {
      await stop(child);
      await Deno.remove(dataDir, { recursive: true });
    },
  };
}

/**
 * A TCP port free on 127.0.0.1 right now (for a child told which port to listen on).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const port = freePort();
 * assert.ok(port > 0 && port < 65_536);
 * Deno.listen({ hostname: "127.0.0.1", port }).close(); // nothing holds it
 * ```
 */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/**
 * Waits until `url` answers at all (any status), failing when `exited` settles first (the child
 * died) or after `timeoutMs`.
 */
export async function waitForHttp(
  url: string,
  exited: Promise<unknown>,
  timeoutMs = 15_000,
): Promise<void> {
  let gone = false;
  exited.then(() => gone = true, () => gone = true);
  const deadline = Date.now() + timeoutMs;
  while (!gone && Date.now() < deadline) {
    try {
      await (await fetch(url)).body?.cancel();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(gone ? `${url}: the process exited before it answered` : `${url}: no answer`);
}

/**
 * Reads `stream` to its end in the background, counting lines and bytes into `output`; resolves
 * with the first line (null when the stream ends before one).
 */
function drain(stream: ReadableStream<Uint8Array>, output: OutputCount): Promise<string | null> {
  const decoder = new TextDecoder();
  let firstLine: string | null = null;
  let pending = "";
  return new Promise((resolve, reject) => {
    (async () => {
      for await (const chunk of stream) {
        output.bytes += chunk.byteLength;
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) output.lines++;
        if (firstLine === null) {
          pending += decoder.decode(chunk, { stream: true });
          const end = pending.indexOf("\n");
          if (end !== -1) {
            firstLine = pending.slice(0, end);
            resolve(firstLine);
          }
        }
      }
      resolve(firstLine);
    })().catch(reject);
  });
}

async function stop(child: Deno.ChildProcess): Promise<void> {
  try {
    child.kill("SIGTERM");
  } catch {
    // already exited
  }
  await child.status;
}

/** What {@linkcode processGroup} gives: `start` keeps what it starts, `stopAll` ends them. */
export interface ProcessGroup {
  /** Awaits a start; on failure stops everything started so far and rethrows. */
  start<T extends { stop(): Promise<void> } | null>(starting: Promise<T>): Promise<T>;
  /** Stops every process started, the last first. */
  stopAll(): Promise<void>;
}

/**
 * The processes of one benchmark run, stopped together (in reverse order) at the end or as soon
 * as one of them fails to start.
 */
export function processGroup(): ProcessGroup {
  const running: { stop(): Promise<void> }[] = [];
  const stopAll = async () => {
    for (const r of running.splice(0).reverse()) await r.stop();
  };
  return {
    stopAll,
    async start(starting) {
      const started = await starting.catch(async (e) => {
        await stopAll();
        throw e;
      });
      if (started) running.push(started);
      return started;
    },
  };
}
