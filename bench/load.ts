/**
 * The load generator of the benchmarks: `wrk` when installed, otherwise a built-in loop of
 * `fetch` calls with the same number of connections (slower, so its numbers only compare with
 * each other).
 *
 * @module
 */
import { percentile } from "./stats.ts";
import { type LoadResult, type LoadTarget, runWrk } from "./wrk.ts";

/** Runs load against one target. */
export type LoadRunner = (
  target: LoadTarget,
  opts: { seconds: number; connections: number },
) => Promise<LoadResult>;

/**
 * Whether a command is on the PATH.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(await commandExists("sh"), true);
 * assert.equal(await commandExists("no-such-command-here"), false);
 * ```
 */
export async function commandExists(cmd: string): Promise<boolean> {
  try {
    const out = await new Deno.Command("sh", {
      args: ["-c", 'command -v "$1"', "sh", cmd],
      stdout: "null",
      stderr: "null",
    }).output();
    return out.success;
  } catch {
    return false;
  }
}

/**
 * `wrk` when installed, otherwise {@linkcode runFetchLoop}, with the name to print.
 */
export async function loadGenerator(): Promise<{ name: string; run: LoadRunner }> {
  return await commandExists("wrk")
    ? { name: "wrk", run: runWrk }
    : { name: "built-in fetch loop", run: runFetchLoop };
}

/**
 * `connections` concurrent loops of `fetch` for `seconds`; each answer is read whole. Answers
 * that are not 2xx/3xx count as errors, like wrk's.
 */
export async function runFetchLoop(
  target: LoadTarget,
  opts: { seconds: number; connections: number },
): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const end = started + opts.seconds * 1000;
  await Promise.all(Array.from({ length: opts.connections }, async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      try {
        const res = await fetch(target.url, { headers: target.headers });
        await res.arrayBuffer();
        if (res.status >= 400) errors++;
      } catch {
        errors++;
      }
      latencies.push(performance.now() - t0);
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  return {
    requests: latencies.length,
    rps: latencies.length / elapsed,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    errors,
  };
}
