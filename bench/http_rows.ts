/**
 * Rows of the benchmark table and the way HTTP rows are measured: rounds of load over a group
 * of rows that are compared with each other, the order reversed every other round so drift
 * (a busy machine, a warming JIT, a growing heap) affects them equally, with the memory of the
 * process under test watched during each round.
 *
 * @module
 */
import type { LoadRunner } from "./load.ts";
import { mib, peakBytes, readMemory, sampleMemory } from "./memory.ts";
import { markdownTable, ms, rate } from "./report.ts";
import { median } from "./stats.ts";
import type { LoadResult, LoadTarget } from "./wrk.ts";

/** One line of the table. */
export interface RowResult {
  name: string;
  what: string;
  rps: number;
  /** ms */
  p50: number;
  /** ms */
  p99: number;
  /** Resident size of the process under test after the row, bytes (null: not watched). */
  rssAfter: number | null;
  /** Its peak during the row, bytes. */
  rssPeak: number | null;
  notes: string[];
  /** Median latency at one connection, ms (rows measured that way too). */
  p50Single?: number;
  /** Median time to the first event, ms (stream rows). */
  firstEvent?: number;
  /** Largest resident growth during one request over the size before it, bytes (uploads). */
  growth?: number;
}

/** A row measured under HTTP load. */
export interface HttpRow {
  name: string;
  what: string;
  target: LoadTarget;
  /** The status every answer must have (checked once before the load). */
  expect: 200 | 304;
  /** The process under test whose memory the row reports; none for baselines. */
  pid?: number;
}

/** How a group is loaded. */
export interface GroupOptions {
  load: LoadRunner;
  seconds: number;
  rounds: number;
  connections: number;
  /** Also run the rounds at one connection and report that median latency. */
  single?: boolean;
  /** Waits until every process has worked off what the last run left queued. */
  quiesce(): Promise<void>;
}

/**
 * Checks each row's status, warms each up for a second, then runs `rounds` rounds of load over
 * the rows in turn (reversed every other round) and summarises each row by medians over its
 * rounds; the peak memory is the highest over its rounds, the memory after is read once the
 * row's last round is over and the processes are quiet.
 */
export async function runHttpGroup(
  rows: readonly HttpRow[],
  opts: GroupOptions,
): Promise<RowResult[]> {
  for (const r of rows) {
    const res = await fetch(r.target.url, { headers: r.target.headers });
    await res.body?.cancel();
    if (res.status !== r.expect) throw new Error(`${r.name}: ${res.status}, not ${r.expect}`);
    await opts.load(r.target, { seconds: 1, connections: opts.connections });
    await opts.quiesce();
  }
  const loaded = new Map(rows.map((r) => [r.name, [] as LoadResult[]]));
  const single = new Map(rows.map((r) => [r.name, [] as LoadResult[]]));
  const peaks = new Map(rows.map((r) => [r.name, [] as number[]]));
  const after = new Map<string, number | null>();
  const passes = [{ connections: opts.connections, into: loaded }];
  if (opts.single) passes.push({ connections: 1, into: single });
  for (const [pass, { connections, into }] of passes.entries()) {
    for (let round = 0; round < opts.rounds; round++) {
      for (const r of round % 2 ? [...rows].reverse() : rows) {
        const sampler = r.pid ? sampleMemory(r.pid) : null;
        const res = await opts.load(r.target, { seconds: opts.seconds, connections });
        const peak = sampler ? peakBytes(sampler.stop()) : null;
        await opts.quiesce();
        into.get(r.name)!.push(res);
        if (peak !== null) peaks.get(r.name)!.push(peak);
        if (r.pid && pass === 0) after.set(r.name, readMemory(r.pid)?.rss ?? null);
      }
    }
  }
  return rows.map((r) => {
    const runs = loaded.get(r.name)!;
    const errors = [...runs, ...single.get(r.name)!].reduce((n, l) => n + l.errors, 0);
    const notes = errors ? [`${errors} errors`] : [];
    const p50Single = opts.single ? median(single.get(r.name)!.map((l) => l.p50)) : undefined;
    if (p50Single !== undefined) notes.push(`p50 at one connection ${ms(p50Single)} ms`);
    const rowPeaks = peaks.get(r.name)!;
    return {
      name: r.name,
      what: r.what,
      rps: median(runs.map((l) => l.rps)),
      p50: median(runs.map((l) => l.p50)),
      p99: median(runs.map((l) => l.p99)),
      rssAfter: after.get(r.name) ?? null,
      rssPeak: rowPeaks.length ? Math.max(...rowPeaks) : null,
      notes,
      p50Single,
    };
  });
}

/**
 * The rows as the Markdown table every benchmark prints: throughput, latency and the memory of
 * the process under test ("—" where none was watched).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const table = resultsTable([{
 *   name: "bare", what: "constant", rps: 1000, p50: 1, p99: 2,
 *   rssAfter: null, rssPeak: null, notes: [],
 * }]);
 * assert.match(table, /\| bare +\| constant +\| 1 000 /);
 * ```
 */
export function resultsTable(results: readonly RowResult[]): string {
  return markdownTable(
    ["row", "what", "req/s", "p50 ms", "p99 ms", "RSS after MiB", "RSS peak MiB", "notes"],
    results.map((r) => [
      r.name,
      r.what,
      rate(r.rps),
      ms(r.p50),
      ms(r.p99),
      mib(r.rssAfter),
      mib(r.rssPeak),
      r.notes.join("; "),
    ]),
  );
}
