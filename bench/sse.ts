/**
 * `deno task bench:sse`: what the service adds to a streamed brain dump
 * (`POST /api/brain-dump/stream`), measured against the same stream read straight from the Parser
 * double in the same run. Each round runs one stream per target, alternating, with a fresh text
 * (the Parser's idempotency cache would otherwise answer), and records the time to the first event
 * and to the end of the stream. Medians and the service/direct ratios are printed; absolute
 * numbers depend on the machine. The service runs as in production (bench/roles.ts). The same
 * rows are part of `deno task bench`.
 *
 * Options (env): BENCH_STREAMS (per target, default 40), BENCH_PACE_MS (the double's pause between
 * events, default 0 = as fast as it can write).
 *
 * @module
 */
import { numberOption } from "./options.ts";
import { backendEnv, spawnRole, spawnService } from "./roles.ts";
import { alternateStreams, brainDumpTargets } from "./sse_stream.ts";
import { median } from "./stats.ts";

const streams = numberOption("BENCH_STREAMS", 40);

const core = await spawnRole(["core"]);
const parser = await spawnRole(["parser", core.info.url, core.info.token]);
const service = await spawnService(backendEnv(core, parser));
const targets = brainDumpTargets(parser.info, service.url);

let results;
try {
  results = await alternateStreams(targets, streams);
} finally {
  for (const r of [service, parser, core]) await r.stop();
}

const summary = targets.map((t) => {
  const rs = results.get(t.name)!;
  return {
    name: t.name,
    first: median(rs.map((r) => r.first)),
    total: median(rs.map((r) => r.total)),
    events: median(rs.map((r) => r.events)),
  };
});
console.log(`brain-dump stream: ${streams} streams per target, alternating`);
console.log("| target  | events | first event ms | whole stream ms |");
console.log("| ------- | ------ | -------------- | --------------- |");
for (const s of summary) {
  console.log(
    `| ${s.name.padEnd(7)} | ${String(s.events).padEnd(6)} | ${s.first.toFixed(2).padEnd(14)} | ${
      s.total.toFixed(2).padEnd(15)
    } |`,
  );
}
const [direct, svc] = summary;
console.log(
  `service/direct: first event ${(svc.first / direct.first).toFixed(2)}× (+${
    (svc.first - direct.first).toFixed(2)
  } ms), whole stream ${(svc.total / direct.total).toFixed(2)}× (+${
    (svc.total - direct.total).toFixed(2)
  } ms)`,
);
