/**
 * HTTP load with `wrk` (one thread, `connections` kept-alive connections, latency distribution)
 * and the parsing of its report.
 *
 * @module
 */

/** What one load run measured. */
export interface LoadResult {
  requests: number;
  /** Requests per second over the run. */
  rps: number;
  /** Median latency, ms. */
  p50: number;
  /** 99th percentile latency, ms. */
  p99: number;
  /** Socket errors (connect, read, write, timeout) and answers that were not 2xx/3xx. */
  errors: number;
}

/** A request to repeat under load. */
export interface LoadTarget {
  url: string;
  headers?: Record<string, string>;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

/**
 * Reads the numbers out of a `wrk --latency` report (NaN where a line is missing).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const report = [
 *   "  Latency Distribution",
 *   "     50%  812.00us",
 *   "     99%    4.20ms",
 *   "  3000 requests in 1.00s, 1.00MB read",
 *   "  Socket errors: connect 0, read 2, write 0, timeout 0",
 *   "Requests/sec:   2990.10",
 * ].join("\n");
 * assert.deepEqual(
 *   parseWrkReport(report),
 *   { requests: 3000, rps: 2990.1, p50: 0.812, p99: 4.2, errors: 2 },
 * );
 * ```
 */
export function parseWrkReport(text: string): LoadResult {
  const ms = (label: string) => {
    const m = text.match(new RegExp(`^\\s*${label}\\s+([\\d.]+)(us|ms|s|m)\\s*$`, "m"));
    return m ? Number(m[1]) * UNIT_MS[m[2]] : NaN;
  };
  const socket = text.match(
    /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/,
  );
  const socketErrors = socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  const non2xx = Number(text.match(/Non-2xx or 3xx responses: (\d+)/)?.[1] ?? 0);
  return {
    requests: Number(text.match(/(\d+) requests in /)?.[1] ?? NaN),
    rps: Number(text.match(/Requests\/sec:\s+([\d.]+)/)?.[1] ?? NaN),
    p50: ms("50%"),
    p99: ms("99%"),
    errors: socketErrors + non2xx,
  };
}

/**
 * Runs `wrk` against one URL for `seconds` with `connections` connections on one thread (so the
 * load generator takes as little as it can of a small machine's cores).
 */
export async function runWrk(
  target: LoadTarget,
  opts: { seconds: number; connections: number },
): Promise<LoadResult> {
  // a slow answer is still an answer: count its latency rather than wrk's default 2 s timeout
  const args = [
    "-t1",
    `-c${opts.connections}`,
    `-d${opts.seconds}s`,
    "--timeout",
    "10s",
    "--latency",
    target.url,
  ];
  for (const [k, v] of Object.entries(target.headers ?? {})) args.push("-H", `${k}: ${v}`);
  const out = await new Deno.Command("wrk", { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(`wrk ${target.url} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  return parseWrkReport(text);
}
