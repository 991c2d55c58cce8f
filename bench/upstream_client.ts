/**
 * `deno task bench:upstream`: what the service's upstream client costs on the pass-through route
 * `GET /api/lore/:id`, with `UPSTREAM_CLIENT=fetch` and `UPSTREAM_CLIENT=pooled` side by side,
 * against the Core double directly and nginx in front of it (when installed). Every process
 * runs on its own: the Core double, nginx, and two services from main.ts in their production
 * configuration (`LOG_LEVEL=info` to a drained stdout pipe, default deadlines), one per client.
 * The rows alternate round by round, the order reversed every other round, so drift on a busy
 * machine affects them alike; each row is the median of its rounds.
 *
 * Options (env): BENCH_SECONDS (per round, default 5), BENCH_ROUNDS (default 5),
 * BENCH_CONNECTIONS (default 50), BENCH_NOTE (the note, default one without relations).
 *
 * @module
 */
import { W } from "../sims/world.ts";
import { type HttpRow, resultsTable, runHttpGroup } from "./http_rows.ts";
import { loadGenerator } from "./load.ts";
import { startNginx } from "./nginx.ts";
import { numberOption } from "./options.ts";
import { ratio } from "./report.ts";
import { backendEnv, processGroup, spawnRole, spawnService } from "./roles.ts";

const seconds = numberOption("BENCH_SECONDS", 5);
const rounds = numberOption("BENCH_ROUNDS", 5);
const connections = numberOption("BENCH_CONNECTIONS", 50);
const note = Deno.env.get("BENCH_NOTE") ?? W.locReef;

const loadAverage = () => Deno.readTextFileSync("/proc/loadavg").split(" ")[0];
const loadAtStart = loadAverage();
const load = await loadGenerator();
/** Everything started so far, stopped in reverse order at the end or when a start fails. */
const { start, stopAll } = processGroup();

const core = await start(spawnRole(["core"]));
const coreEnv = backendEnv(core);
const viaFetch = await start(spawnService({ ...coreEnv, UPSTREAM_CLIENT: "fetch" }));
const viaPooled = await start(spawnService({ ...coreEnv, UPSTREAM_CLIENT: "pooled" }));
const nginx = await start(startNginx(core.info.url, core.info.token));

const path = `/etapi/notes/${note}`;
const rows: HttpRow[] = [
  {
    name: "direct",
    what: "Core double `GET /etapi/notes/:id`",
    target: { url: `${core.info.url}${path}`, headers: { authorization: core.info.token } },
    expect: 200,
  },
  ...(nginx
    ? [{
      name: "nginx",
      what: "nginx → Core double, the same",
      target: { url: `${nginx.url}${path}` },
      expect: 200 as const,
    }]
    : []),
  {
    name: "fetch",
    what: "`GET /api/lore/:id`, `UPSTREAM_CLIENT=fetch`",
    target: { url: `${viaFetch.url}/api/lore/${note}` },
    expect: 200,
    pid: viaFetch.child.pid,
  },
  {
    name: "pooled",
    what: "`GET /api/lore/:id`, `UPSTREAM_CLIENT=pooled`",
    target: { url: `${viaPooled.url}/api/lore/${note}` },
    expect: 200,
    pid: viaPooled.child.pid,
  },
];

/** Waits until every process answers a trivial request: nothing queued from the last run. */
async function quiesce(): Promise<void> {
  const pings: [string, Record<string, string>][] = [
    [`${core.info.url}/etapi/app-info`, { authorization: core.info.token }],
    [`${viaFetch.url}/healthz`, {}],
    [`${viaPooled.url}/healthz`, {}],
    ...(nginx ? [[`${nginx.url}/etapi/app-info`, {}] as [string, Record<string, string>]] : []),
  ];
  await Promise.all(pings.map(async ([url, headers]) => {
    await (await fetch(url, { headers })).body?.cancel();
  }));
}

let results;
try {
  results = await runHttpGroup(rows, { load: load.run, seconds, rounds, connections, quiesce });
} finally {
  await stopAll();
}

console.log(
  `\n${navigator.hardwareConcurrency} cores, load average ${loadAtStart} at start and ` +
    `${loadAverage()} at end; load by ${load.name}, ${connections} connections, ${rounds} ` +
    `alternating rounds × ${seconds} s, medians\n`,
);
console.log(resultsTable(results));
const row = (name: string) => results.find((r) => r.name === name);
const lines: string[] = [];
for (const [a, b] of [["fetch", "nginx"], ["pooled", "nginx"], ["pooled", "fetch"]]) {
  const [x, y] = [row(a), row(b)];
  if (x && y) {
    lines.push(`${a}/${b}: throughput ${ratio(x.rps, y.rps)}, p50 ${ratio(x.p50, y.p50)}`);
  }
}
console.log(`\n${lines.map((l) => `- ${l}`).join("\n")}`);
