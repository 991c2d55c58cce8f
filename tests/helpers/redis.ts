/**
 * A real Redis server for the tests of the shared store (`STATE_URL`): Debian's `redis-server`
 * on a free port, in memory only (no dump, no append-only file), password-protected like a
 * production one, stopped with the test.
 */
import { freePort } from "../deploy/front_proxy.ts";

export const REDIS_PATH = "/usr/bin/redis-server";

/** The password of every test server: the URL the service gets carries it. */
export const REDIS_TEST_PASSWORD = "state-test-password-0123456789";

/**
 * Whether tests needing Redis run here: where it is installed, and always under CI (which
 * installs it, so a missing server fails instead of skipping). Use as `ignore: !redisTestsRun(…)`.
 */
export function redisTestsRun(suite: string): boolean {
  try {
    if (Deno.statSync(REDIS_PATH).isFile || Deno.env.get("CI")) return true;
  } catch {
    if (Deno.env.get("CI")) return true;
  }
  console.log(
    `${suite}: skipped — ${REDIS_PATH} is missing (install it with: apt-get install redis-server)`,
  );
  return false;
}

/** A running test server. */
export interface RedisServer {
  /** `redis://:password@127.0.0.1:<port>/0` */
  url: string;
  port: number;
  /** Stops the server (a store then sees it gone); `start()` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Freezes the server (SIGSTOP): connections stay open, nothing is answered; `resume()` thaws. */
  pause(): void;
  resume(): void;
}

/** Starts a server and waits until it answers; `fn` runs with it, and it stops after. */
export async function withRedis<T>(fn: (r: RedisServer) => Promise<T>): Promise<T> {
  const port = freePort();
  let child: Deno.ChildProcess | undefined;
  const start = async () => {
    child = new Deno.Command(REDIS_PATH, {
      args: [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--requirepass",
        REDIS_TEST_PASSWORD,
      ],
      stdout: "null",
      stderr: "null",
    }).spawn();
    await untilAnswers(port);
  };
  const stop = async () => {
    if (!child) return;
    child.kill("SIGCONT");
    child.kill("SIGKILL");
    await child.status;
    child = undefined;
  };
  await start();
  try {
    return await fn({
      url: `redis://:${REDIS_TEST_PASSWORD}@127.0.0.1:${port}/0`,
      port,
      stop,
      start,
      pause: () => child?.kill("SIGSTOP"),
      resume: () => child?.kill("SIGCONT"),
    });
  } finally {
    await stop();
  }
}

/** Polls the port until the server answers a PING (the server starts in milliseconds). */
async function untilAnswers(port: number): Promise<void> {
  for (let attempt = 0; attempt < 3000; attempt++) {
    try {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      try {
        await conn.write(new TextEncoder().encode("PING\r\n"));
        const buf = new Uint8Array(64);
        const n = await conn.read(buf);
        // any answer (PONG or NOAUTH) means it is up
        if (n) return;
      } finally {
        conn.close();
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`redis-server did not start on port ${port}`);
}
