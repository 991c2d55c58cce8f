/**
 * `deno task bench:sse`: what the service adds to a streamed brain dump
 * (`POST /api/brain-dump/stream`), measured against the same stream read straight from the Parser
 * double in the same run. Each round runs one stream per target, alternating, with a fresh text
 * (the Parser's idempotency cache would otherwise answer), and records the time to the first event
 * and to the end of the stream. Medians and the service/direct ratios are printed; absolute
 * numbers depend on the machine.
 *
 * Options (env): BENCH_STREAMS (per target, default 40), BENCH_PACE_MS (the double's pause between
 * events, default 0 = as fast as it can write).
 *
 * @module
 */
import { median, spawnRole } from "./roles.ts";

const streams = Number(Deno.env.get("BENCH_STREAMS") ?? 40);

const core = await spawnRole(["core"]);
const parser = await spawnRole(["parser", core.info.url, core.info.token]);
const service = await spawnRole([
  "service",
  core.info.url,
  core.info.token,
  parser.info.url,
  parser.info.token,
]);

const targets: { name: string; url: string; headers: Record<string, string> }[] = [
  {
    name: "direct",
    url: `${parser.info.url}/brain-dump/stream`,
    headers: { authorization: `Bearer ${parser.info.token}` },
  },
  { name: "service", url: `${service.info.url}/api/brain-dump/stream`, headers: {} },
];

/** A text with capitalised names no earlier round used (base-26 letters, no digits). */
function freshText(n: number): string {
  let word = "";
  for (let i = n + 26 * 26; i > 0; i = Math.floor(i / 26)) {
    word = String.fromCharCode(97 + (i % 26)) + word;
  }
  const name = word[0].toUpperCase() + word.slice(1);
  return `Captain ${name} Venn sails from Saltmarrow Harbor to the ${name} Isles.`;
}

async function oneStream(
  target: (typeof targets)[number],
  text: string,
): Promise<{ first: number; total: number; events: number }> {
  const started = performance.now();
  const res = await fetch(target.url, {
    method: "POST",
    headers: { ...target.headers, "content-type": "application/json" },
    body: JSON.stringify({ rawText: text }),
  });
  if (!res.ok || !res.body) throw new Error(`${target.name}: HTTP ${res.status}`);
  const decoder = new TextDecoder();
  let first = 0;
  let buffered = "";
  for await (const chunk of res.body) {
    buffered += decoder.decode(chunk, { stream: true });
    if (!first && buffered.includes("\n\n")) first = performance.now() - started;
  }
  const events = buffered.split("\n\n").filter((e) => e.startsWith("event: ")).length;
  if (!/event: done\n/.test(buffered)) throw new Error(`${target.name}: stream did not complete`);
  return { first, total: performance.now() - started, events };
}

const results = new Map(
  targets.map((t) => [t.name, [] as Awaited<ReturnType<typeof oneStream>>[]]),
);
try {
  // one warm-up stream per target, not counted
  for (const t of targets) await oneStream(t, freshText(0));
  // the order alternates per round: each stream sees a world one stream larger than the last
  for (let i = 1; i <= streams; i++) {
    const order = i % 2 ? targets : [...targets].reverse();
    for (const [k, t] of order.entries()) {
      results.get(t.name)!.push(await oneStream(t, freshText(i * 2 + k)));
    }
  }
} finally {
  for (const r of [service, parser, core]) r.child.kill("SIGTERM");
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
