/**
 * `deno task bench`: the service side by side with its baselines, in one run, as one Markdown
 * table with the ratios that matter. Every process runs on its own: the Core double (sample world
 * plus `BENCH_NOTES` lore notes and a note with four relations), the Parser double, a bare
 * `Deno.serve`, nginx in front of the Core double (when installed), and the service from main.ts
 * in its production configuration (`LOG_LEVEL=info` to a drained stdout pipe, default deadlines;
 * only `MAX_UPLOAD_BYTES` is raised so the upload fits).
 *
 * Rows (`BENCH_ONLY` takes their names), in groups whose rows alternate round by round:
 *
 *  - runtime: `bare`, `floor` (a bare `Deno.serve` giving `/healthz`'s exact answer), `lean`
 *    (`floor` plus reading the request and one request line through the service's logger: the
 *    least a logged request costs), `healthz`,
 *    `healthz-quiet` (a second service with `LOG_LEVEL=warn`: what the request log costs),
 *    `public-api`, `public-api-304`, `public-page`, `public-page-304`, and each of these four
 *    with `-floor`: a bare `Deno.serve` replaying the service's exact answer (status, headers,
 *    body), what those bytes cost the runtime;
 *  - pass-through of `GET /api/lore/:id`: `direct` (Core double), `nginx`, `naive` (a bare
 *    `Deno.serve` forwarding with `fetch`: the runtime's own pass-through), `service`;
 *  - list: `list-direct` (Core search `#lore`), `list` (`GET /api/lore`);
 *  - relations: `relations-direct` (one Core call), `relations` (`GET /api/lore/:id`, 4 relations);
 *  - streams: `sse-direct` (Parser double), `sse` (`POST /api/brain-dump/stream`), one at a time;
 *  - uploads: `upload-direct` (create-note and content PUT to Core), `upload`
 *    (`POST /api/lore/upload-image`), `BENCH_UPLOAD_MIB` each, one at a time.
 *
 * HTTP rows run under `wrk` (or a built-in fetch loop without it) with `BENCH_CONNECTIONS`
 * connections, except the list rows (`BENCH_LIST_CONNECTIONS`: each answer is near a megabyte);
 * list and relations also at one connection, for the latency one request sees. After every run
 * the bench waits until each process answers again, so no row inherits another's backlog. Memory
 * columns are the process under test's (the service, or bare Deno): `VmRSS` after the row and the
 * peak during it (`VmHWM` reset before each round; `VmRSS` sampled every 50 ms besides).
 *
 * Options (env): BENCH_SECONDS (per round, default 3), BENCH_ROUNDS (default 3),
 * BENCH_CONNECTIONS (default 50), BENCH_LIST_CONNECTIONS (default 8), BENCH_ONLY (comma-separated
 * row names), BENCH_NOTE (the pass-through note, default one without relations), BENCH_NOTES
 * (extra lore notes, default 300), BENCH_STREAMS (per stream row, default 20), BENCH_UPLOAD_MIB
 * (default 100), BENCH_SERVICE_FLAGS (Deno flags for the service, e.g. `--cpu-prof`),
 * BENCH_LOG_LEVEL (default `info`, as deployed; another level only to see what logging costs).
 *
 * @module
 */
import { W } from "../sims/world.ts";
import { RELATED_NOTE_ID } from "./bench_notes.ts";
import { type HttpRow, resultsTable, type RowResult, runHttpGroup } from "./http_rows.ts";
import { largePng } from "./large_png.ts";
import { loadGenerator } from "./load.ts";
import { mib, peakBytes, readMemory, sampleMemory } from "./memory.ts";
import { startNginx } from "./nginx.ts";
import { numberOption, serviceFlagsOption } from "./options.ts";
import { count, ms, ratio, signedMs } from "./report.ts";
import { backendEnv, coreEtapi, processGroup, spawnRole, spawnService } from "./roles.ts";
import { alternateStreams, brainDumpTargets } from "./sse_stream.ts";
import { median, percentile } from "./stats.ts";

const seconds = numberOption("BENCH_SECONDS", 3);
const rounds = numberOption("BENCH_ROUNDS", 3);
const connections = numberOption("BENCH_CONNECTIONS", 50);
const listConnections = numberOption("BENCH_LIST_CONNECTIONS", 8);
const extraNotes = numberOption("BENCH_NOTES", 300);
const streams = numberOption("BENCH_STREAMS", 20);
const uploadBytes = numberOption("BENCH_UPLOAD_MIB", 100) * 1024 * 1024;
const passNote = Deno.env.get("BENCH_NOTE") ?? W.locReef;
const publicNote = W.charMira;
const logLevel = Deno.env.get("BENCH_LOG_LEVEL") ?? "info";

const ROW_NAMES = [
  "bare",
  "floor",
  "lean",
  "healthz",
  "healthz-quiet",
  "public-api",
  "public-api-304",
  "public-page",
  "public-page-304",
  "public-api-floor",
  "public-api-304-floor",
  "public-page-floor",
  "public-page-304-floor",
  "direct",
  "nginx",
  "naive",
  "service",
  "list-direct",
  "list",
  "relations-direct",
  "relations",
  "sse-direct",
  "sse",
  "upload-direct",
  "upload",
];
const only = Deno.env.get("BENCH_ONLY")?.split(",").map((s) => s.trim()).filter(Boolean);
const unknown = only?.filter((n) => !ROW_NAMES.includes(n)) ?? [];
if (unknown.length) {
  console.error(`BENCH_ONLY: unknown rows ${unknown.join(", ")}; rows: ${ROW_NAMES.join(", ")}`);
  Deno.exit(2);
}
const wanted = (name: string) => !only || only.includes(name);

const loadAverage = () => Deno.readTextFileSync("/proc/loadavg").split(" ")[0];
const loadAtStart = loadAverage();
const load = await loadGenerator();
/** Everything started so far, stopped in reverse order at the end or when a start fails. */
const { start, stopAll } = processGroup();
const core = await start(spawnRole(["core", String(extraNotes)]));
const parser = await start(spawnRole(["parser", core.info.url, core.info.token]));
const bare = await start(spawnRole(["bare"]));
const floor = wanted("floor") ? await start(spawnRole(["floor"])) : null;
const lean = wanted("lean") ? await start(spawnRole(["lean"])) : null;
const serviceEnv = {
  ...backendEnv(core, parser),
  MAX_UPLOAD_BYTES: String(Math.max(20 * 1024 * 1024, uploadBytes + 1024 * 1024)),
  LOG_LEVEL: logLevel,
};
const serviceFlags = serviceFlagsOption();
const service = await start(spawnService(serviceEnv, serviceFlags));
const quiet = wanted("healthz-quiet")
  ? await start(spawnService({ ...serviceEnv, LOG_LEVEL: "warn" }, serviceFlags))
  : null;
const nginx = wanted("nginx") ? await start(startNginx(core.info.url, core.info.token)) : null;
const naive = wanted("naive")
  ? await start(spawnRole(["naive", core.info.url, core.info.token]))
  : null;
/** Replays of the service's public answers (`*-floor` rows), started once the service is up. */
const replays: string[] = [];
const svcPid = service.child.pid;
const coreAuth = { authorization: core.info.token };

const results: RowResult[] = [];
let idle: { service: number | null; bare: number | null };
try {
  for (const url of [`${service.url}/healthz`, `${service.url}/healthz`, bare.info.url]) {
    await (await fetch(url)).body?.cancel();
  }
  idle = {
    service: readMemory(svcPid)?.rss ?? null,
    bare: readMemory(bare.child.pid)?.rss ?? null,
  };
  const group = { load: load.run, seconds, rounds, connections, quiesce };
  for (const { rows, ...opts } of await httpGroups()) {
    const selected = rows.filter((r) => wanted(r.name));
    if (selected.length) results.push(...await runHttpGroup(selected, { ...group, ...opts }));
  }
  if (wanted("sse-direct") || wanted("sse")) results.push(...await streamRows());
  if (wanted("upload-direct") || wanted("upload")) results.push(...await uploadRows());
} finally {
  await stopAll();
}
const loadAtEnd = loadAverage();

console.log(
  `\n${navigator.hardwareConcurrency} cores, load average ${loadAtStart} at start and ` +
    `${loadAtEnd} at end; load by ${load.name}, ${connections} connections (list ` +
    `${listConnections}), ${rounds} rounds × ${seconds} s, medians; ${extraNotes} extra lore ` +
    `notes; service LOG_LEVEL=${logLevel}\n`,
);
console.log(resultsTable(results));
console.log(`\n${ratioLines().map((l) => `- ${l}`).join("\n")}`);
console.log(
  `\nService RSS idle after two requests: ${mib(idle.service)} MiB; bare Deno: ${
    mib(idle.bare)
  } MiB. The service wrote ${count(service.output.lines)} log lines (${
    mib(service.output.bytes)
  } MiB) to stdout.`,
);

/** Waits until every process answers a trivial request: nothing queued from the last run. */
async function quiesce(): Promise<void> {
  const pings: [string, Record<string, string>][] = [
    [`${core.info.url}/etapi/app-info`, coreAuth],
    [`${parser.info.url}/health`, {}],
    [`${service.url}/healthz`, {}],
    [bare.info.url, {}],
    ...(floor ? [[floor.info.url, {}] as [string, Record<string, string>]] : []),
    ...(lean ? [[`${lean.info.url}/healthz`, {}] as [string, Record<string, string>]] : []),
    ...(quiet ? [[`${quiet.url}/healthz`, {}] as [string, Record<string, string>]] : []),
    ...replays.map((url) => [url, {}] as [string, Record<string, string>]),
  ];
  await Promise.all(pings.map(async ([url, headers]) => {
    await (await fetch(url, { headers })).body?.cancel();
  }));
}

/** The `If-None-Match` header that makes `url` answer 304. */
async function revalidation(url: string): Promise<Record<string, string>> {
  const res = await fetch(url);
  await res.body?.cancel();
  const etag = res.headers.get("etag");
  if (res.status !== 200 || !etag) throw new Error(`${url}: ${res.status}, ETag ${etag}`);
  return { "if-none-match": etag };
}

/** The HTTP rows, by group. */
async function httpGroups(): Promise<
  { rows: HttpRow[]; single?: boolean; connections?: number }[]
> {
  const publicApi = `${service.url}/api/public/lore/${publicNote}`;
  const publicPage = `${service.url}/public/lore/${publicNote}`;
  const svc = (name: string, what: string, url: string, headers?: Record<string, string>) => ({
    name,
    what,
    target: { url, headers },
    expect: headers ? 304 as const : 200 as const,
    pid: svcPid,
  });
  /** `name` with `-floor`: a bare `Deno.serve` replaying what the service answered there. */
  const floorOf = async (name: string, url: string, headers?: Record<string, string>) => {
    if (!wanted(`${name}-floor`)) return [];
    const etag = headers?.["if-none-match"];
    const role = await start(spawnRole(["replay", url, ...(etag ? [etag] : [])]));
    replays.push(role.info.url);
    return [{
      name: `${name}-floor`,
      what: "bare `Deno.serve` replaying that answer",
      target: { url: role.info.url, headers },
      expect: headers ? 304 as const : 200 as const,
      pid: role.child.pid,
    }];
  };
  const apiRevalidation = await revalidation(publicApi);
  const pageRevalidation = await revalidation(publicPage);
  const coreCall = (name: string, what: string, path: string) => ({
    name,
    what,
    target: { url: `${core.info.url}${path}`, headers: coreAuth },
    expect: 200 as const,
  });
  return [
    {
      rows: [
        {
          name: "bare",
          what: "bare `Deno.serve`, constant",
          target: { url: bare.info.url },
          expect: 200,
          pid: bare.child.pid,
        },
        ...(floor
          ? [{
            name: "floor",
            what: "bare `Deno.serve`, `/healthz`'s answer and headers",
            target: { url: floor.info.url },
            expect: 200 as const,
            pid: floor.child.pid,
          }]
          : []),
        ...(lean
          ? [{
            name: "lean",
            what: "`floor` + reading the request + one request log line",
            target: { url: `${lean.info.url}/healthz` },
            expect: 200 as const,
            pid: lean.child.pid,
          }]
          : []),
        svc("healthz", "`GET /healthz`", `${service.url}/healthz`),
        ...(quiet
          ? [{
            name: "healthz-quiet",
            what: "the same, `LOG_LEVEL=warn` (no request log)",
            target: { url: `${quiet.url}/healthz` },
            expect: 200 as const,
            pid: quiet.child.pid,
          }]
          : []),
        svc("public-api", "`GET /api/public/lore/:id`", publicApi),
        ...await floorOf("public-api", publicApi),
        svc("public-api-304", "the same, `If-None-Match`", publicApi, apiRevalidation),
        ...await floorOf("public-api-304", publicApi, apiRevalidation),
        svc("public-page", "`GET /public/lore/:id`", publicPage),
        ...await floorOf("public-page", publicPage),
        svc("public-page-304", "the same, `If-None-Match`", publicPage, pageRevalidation),
        ...await floorOf("public-page-304", publicPage, pageRevalidation),
      ],
    },
    {
      rows: [
        coreCall("direct", "Core double `GET /etapi/notes/:id`", `/etapi/notes/${passNote}`),
        ...(nginx
          ? [{
            name: "nginx",
            what: "nginx → Core double, the same",
            target: { url: `${nginx.url}/etapi/notes/${passNote}` },
            expect: 200 as const,
          }]
          : []),
        ...(naive
          ? [{
            name: "naive",
            what: "bare `Deno.serve` + `fetch` → Core double, the same",
            target: { url: `${naive.info.url}/api/lore/${passNote}` },
            expect: 200 as const,
          }]
          : []),
        svc("service", "`GET /api/lore/:id`, no relations", `${service.url}/api/lore/${passNote}`),
      ],
    },
    {
      single: true,
      connections: listConnections,
      rows: [
        coreCall("list-direct", "Core double search `#lore`", "/etapi/notes?search=%23lore"),
        svc("list", "`GET /api/lore`", `${service.url}/api/lore`),
      ],
    },
    {
      single: true,
      rows: [
        coreCall("relations-direct", "Core double, one note", `/etapi/notes/${RELATED_NOTE_ID}`),
        svc(
          "relations",
          "`GET /api/lore/:id`, 4 relations",
          `${service.url}/api/lore/${RELATED_NOTE_ID}`,
        ),
      ],
    },
  ];
}

/** Brain-dump streams one at a time, alternating between the Parser double and the service. */
async function streamRows(): Promise<RowResult[]> {
  const [direct, svc] = brainDumpTargets(parser.info, service.url);
  const targets = [...(wanted("sse-direct") ? [direct] : []), ...(wanted("sse") ? [svc] : [])];
  const sampler = sampleMemory(svcPid);
  const timings = await alternateStreams(targets, streams);
  const peak = peakBytes(sampler.stop());
  return targets.map((t) => {
    const ts = timings.get(t.name)!;
    const totals = ts.map((s) => s.total);
    const isService = t === svc;
    const firstEvent = median(ts.map((s) => s.first));
    return {
      name: isService ? "sse" : "sse-direct",
      what: isService ? "`POST /api/brain-dump/stream`" : "Parser double, the same stream",
      rps: ts.length / (totals.reduce((a, b) => a + b, 0) / 1000),
      p50: median(totals),
      p99: percentile(totals, 0.99),
      rssAfter: isService ? readMemory(svcPid)?.rss ?? null : null,
      rssPeak: isService ? peak : null,
      notes: [
        `one at a time, ${Math.round(median(ts.map((s) => s.events)))} events; first event p50 ${
          ms(firstEvent)
        } ms`,
      ],
      firstEvent,
    };
  });
}

/**
 * Uploads of one large image, one at a time, alternating between Core directly (create the note,
 * then PUT its content: what the service does) and the service. Each new note is deleted from
 * Core afterwards, so the double's memory stays flat. The service here is a fresh one, started for
 * this row: after the other rows its heap has already grown, and an upload's growth would hide in
 * it.
 */
async function uploadRows(): Promise<RowResult[]> {
  const fresh = wanted("upload") ? await start(spawnService(serviceEnv, serviceFlags)) : null;
  await (await fetch(`${fresh?.url ?? service.url}/healthz`)).body?.cancel();
  const body = largePng(uploadBytes);
  const size = `${mib(uploadBytes)} MiB`;
  const rows = [
    {
      name: "upload-direct",
      what: `Core double create-note + content PUT, ${size}`,
      send: async () => {
        const created = await coreEtapi(core, "/etapi/create-note", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            parentNoteId: W.media,
            title: "bench.png",
            type: "image",
            mime: "image/png",
            content: "",
          }),
        });
        await coreEtapi(core, `/etapi/notes/${created.note.noteId}/content`, {
          method: "PUT",
          headers: { "content-type": "application/octet-stream" },
          body,
        });
        return created.note.noteId as string;
      },
    },
    {
      name: "upload",
      what: `\`POST /api/lore/upload-image\`, ${size}, a fresh service`,
      pid: fresh?.child.pid,
      send: async () => {
        const res = await fetch(`${fresh!.url}/api/lore/upload-image?parentNoteId=${W.media}`, {
          method: "POST",
          headers: { "content-type": "image/png", "x-host-filename": "bench.png" },
          body,
        });
        const answer = await res.json();
        if (res.status !== 201) throw new Error(`upload: ${res.status} ${JSON.stringify(answer)}`);
        return answer.noteId as string;
      },
    },
  ].filter((r) => wanted(r.name));
  const runs = new Map(rows.map((r) => [r.name, { times: [] as number[], peak: 0, growth: 0 }]));
  for (let round = 0; round < rounds; round++) {
    for (const r of round % 2 ? [...rows].reverse() : rows) {
      const run = runs.get(r.name)!;
      const before = r.pid ? readMemory(r.pid)?.rss ?? 0 : 0;
      const sampler = r.pid ? sampleMemory(r.pid) : null;
      const t0 = performance.now();
      const noteId = await r.send();
      run.times.push(performance.now() - t0);
      const peak = sampler ? peakBytes(sampler.stop()) ?? 0 : 0;
      run.peak = Math.max(run.peak, peak);
      run.growth = Math.max(run.growth, peak - before);
      await coreEtapi(core, `/etapi/notes/${noteId}`, { method: "DELETE" });
    }
  }
  return rows.map((r) => {
    const { times, peak, growth } = runs.get(r.name)!;
    const total = times.reduce((a, b) => a + b, 0) / 1000;
    const speed = `${(uploadBytes * times.length / 1024 / 1024 / total).toFixed(0)} MiB/s`;
    return {
      name: r.name,
      what: r.what,
      rps: times.length / total,
      p50: median(times),
      p99: percentile(times, 0.99),
      rssAfter: r.pid ? readMemory(r.pid)?.rss ?? null : null,
      rssPeak: r.pid ? peak : null,
      notes: [
        `one at a time, ${speed}${r.pid ? `; RSS growth up to ${mib(growth)} MiB` : ""}`,
      ],
      growth: r.pid ? growth : undefined,
    };
  });
}

/** The comparisons the issue asks for, from whichever rows ran. */
function ratioLines(): string[] {
  const row = (name: string) => results.find((r) => r.name === name);
  const lines: string[] = [];
  const versus = (a: string, b: string) => {
    const [x, y] = [row(a), row(b)];
    if (x && y) {
      lines.push(`${a}/${b}: throughput ${ratio(x.rps, y.rps)}, p50 ${ratio(x.p50, y.p50)}`);
    }
  };
  for (const name of ["floor", "lean", "healthz", "public-api", "public-api-304", "public-page"]) {
    versus(name, "bare");
  }
  versus("healthz", "floor");
  versus("healthz", "lean");
  versus("healthz", "healthz-quiet");
  versus("public-page-304", "bare");
  for (const name of ["public-api", "public-api-304", "public-page", "public-page-304"]) {
    versus(`${name}-floor`, "bare");
    versus(name, `${name}-floor`);
  }
  versus("service", "direct");
  versus("service", "nginx");
  versus("naive", "nginx");
  versus("service", "naive");
  const [list, listDirect] = [row("list"), row("list-direct")];
  if (list && listDirect) {
    lines.push(
      `list latency added over Core: ${signedMs(list.p50Single! - listDirect.p50Single!)} ms ` +
        `at one connection, ${signedMs(list.p50 - listDirect.p50)} ms at ${listConnections} (p50)`,
    );
  }
  const [rel, relDirect] = [row("relations"), row("relations-direct")];
  if (rel && relDirect) {
    lines.push(
      `relations vs one Core call: ${ratio(rel.p50Single!, relDirect.p50Single!)} at one ` +
        `connection, ${ratio(rel.p50, relDirect.p50)} at ${connections} (p50)`,
    );
  }
  const [sse, sseDirect] = [row("sse"), row("sse-direct")];
  if (sse && sseDirect) {
    lines.push(
      `SSE: first event ${signedMs(sse.firstEvent! - sseDirect.firstEvent!)} ms, whole stream ` +
        `${ratio(sse.p50, sseDirect.p50)} (p50)`,
    );
  }
  const [upload, uploadDirect] = [row("upload"), row("upload-direct")];
  if (upload) {
    lines.push(
      `upload: RSS growth ${mib(upload.growth ?? null)} MiB` +
        (uploadDirect ? `, time ${ratio(upload.p50, uploadDirect.p50)} of Core's (p50)` : ""),
    );
  }
  return lines;
}
