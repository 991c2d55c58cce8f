/**
 * `deno task bench:slow-bodies`: what floods of slow request bodies and bursts of large backend
 * answers do to the service's memory, and whether it comes back. The service runs from main.ts
 * in its production configuration (`deno task start`'s flags, default limits and deadlines, the
 * slow-client relay on as on a public address) against the Core and Parser doubles, each in its
 * own process.
 *
 * Slow bodies, `BENCH_ROUNDS` rounds on one service: open `BENCH_SLOW_CONNECTIONS` raw TCP
 * connections, each sending a request head and the start of its body, then one more byte every
 * `BENCH_TRICKLE_MS` (never enough to finish); hold them for `BENCH_HOLD_SECONDS` while timing
 * `GET /healthz`; close whatever is still open; wait `BENCH_SETTLE_SECONDS`. `BENCH_SLOW_KIND`
 * picks the bodies: `upload` (`POST /api/lore/upload-image`, a complete PNG header first, so each
 * one gets as far as Core), `json` (`POST /api/lore`), `content` (`PUT /api/lore/:id/content`)
 * or `mixed` (the three in turn).
 *
 * Large answers, on a second service whose Core calls pass through a fault proxy: `BENCH_ANSWERS`
 * concurrent requests for answers of `BENCH_ANSWER_MIB` each, `BENCH_ROUNDS` rounds per kind:
 * `content` (a note's content, streamed), `image` (an image note, streamed), `json` (a note's
 * JSON padded to that size by the proxy, which the service reads whole).
 *
 * Memory is the service process's `VmRSS` (`/proc/<pid>/status`): before a round, its peak
 * during the round, right after every connection closed (2 s), and after the settle period.
 * `BENCH_SERVICE_FLAGS` adds Deno flags to the service (e.g. `--v8-flags=...`), and
 * `BENCH_SERVICE_ENV` variables (`NAME=value,NAME=value`, e.g. to lift a limit).
 *
 * Defaults: 4000 connections, a byte every 5000 ms, held 60 s, settled 30 s, 2 rounds, 13
 * answers of 10 MiB; `BENCH_SLOW_CONNECTIONS=0` or `BENCH_ANSWERS=0` skips that part.
 *
 * @module
 */
import { startFaultProxy } from "../sims/fault_proxy.ts";
import { W } from "../sims/world.ts";
import { largePng } from "./large_png.ts";
import { mib, peakBytes, readMemory, sampleMemory } from "./memory.ts";
import { numberOption, serviceFlagsOption } from "./options.ts";
import { ms } from "./report.ts";
import { backendEnv, coreEtapi, processGroup, spawnRole, spawnService } from "./roles.ts";
import { median, percentile } from "./stats.ts";

const connections = numberOption("BENCH_SLOW_CONNECTIONS", 4000);
const trickleMs = numberOption("BENCH_TRICKLE_MS", 5000);
const holdSeconds = numberOption("BENCH_HOLD_SECONDS", 60);
const settleSeconds = numberOption("BENCH_SETTLE_SECONDS", 30);
const rounds = numberOption("BENCH_ROUNDS", 2);
const answers = numberOption("BENCH_ANSWERS", 13);
const answerBytes = numberOption("BENCH_ANSWER_MIB", 10) * 1024 * 1024;
const slowKind = Deno.env.get("BENCH_SLOW_KIND") ?? "upload";
const KINDS = ["upload", "json", "content"] as const;
type SlowKind = typeof KINDS[number];
if (![...KINDS, "mixed"].includes(slowKind)) {
  console.error(`BENCH_SLOW_KIND: one of ${[...KINDS, "mixed"].join(", ")}`);
  Deno.exit(2);
}
const serviceFlags = serviceFlagsOption();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const latin1 = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0) & 0xff);

const { start, stopAll } = processGroup();
const core = await start(spawnRole(["core"]));
const parser = await start(spawnRole(["parser", core.info.url, core.info.token]));
const serviceEnv = {
  ...backendEnv(core, parser),
  // the service listens on loopback here; on a public address `auto` turns the relay on
  CLIENT_DEADLINES: "on",
  ...Object.fromEntries(
    (Deno.env.get("BENCH_SERVICE_ENV") ?? "").split(",").filter(Boolean).map((pair) => {
      const at = pair.indexOf("=");
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  ),
};

const slowRows: string[] = [];
const answerRows: string[] = [];
try {
  if (connections > 0) slowRows.push(...await slowBodies());
  if (answers > 0) answerRows.push(...await largeAnswers());
} finally {
  await stopAll();
}

if (slowRows.length) {
  console.log(
    `\n## Slow bodies: ${connections} × \`${slowKind}\`, one byte every ${trickleMs} ms, held ` +
      `${holdSeconds} s, settled ${settleSeconds} s\n`,
  );
  console.log(
    "| Round | RSS before | Peak | All closed | Settled | `/healthz` p50 | p99 | Answers | " +
      "Closed by the service | Open at the end |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|");
  for (const row of slowRows) console.log(row);
}
if (answerRows.length) {
  console.log(
    `\n## Large answers: ${answers} × ${mib(answerBytes)} MiB at once, settled ` +
      `${settleSeconds} s\n`,
  );
  console.log("| Kind | Round | RSS before | Peak | All done | Settled | Answers |");
  console.log("|---|---|---|---|---|---|---|");
  for (const row of answerRows) console.log(row);
}
console.log("\nRSS in MiB (`VmRSS` of the service process), `/healthz` in ms.");

/** The slow-body rounds, on a service of their own. */
async function slowBodies(): Promise<string[]> {
  const service = await spawnService(serviceEnv, serviceFlags);
  try {
    const port = Number(new URL(service.url).port);
    await warmUp(service.url);
    const rows: string[] = [];
    for (let round = 1; round <= rounds; round++) {
      rows.push(await slowRound(service.url, port, service.child.pid, round));
    }
    return rows;
  } finally {
    await service.stop();
  }
}

/** The large-answer rounds, on a service whose Core calls pass through a fault proxy. */
async function largeAnswers(): Promise<string[]> {
  const proxy = await startFaultProxy({ target: core.info.url, padBytes: answerBytes });
  try {
    const service = await spawnService({ ...serviceEnv, CORE_URL: proxy.url }, serviceFlags);
    try {
      const notes = await largeNotes();
      await warmUp(service.url);
      const rows: string[] = [];
      for (const kind of ["content", "image", "json"] as const) {
        await proxy.setMode(kind === "json" ? "oversize" : "pass");
        for (let round = 1; round <= rounds; round++) {
          rows.push(await answerRound(service.url, service.child.pid, kind, notes, round));
        }
      }
      return rows;
    } finally {
      await service.stop();
    }
  } finally {
    await proxy.close();
  }
}

/** A few ordinary requests, so the baseline includes what any first request loads. */
async function warmUp(url: string): Promise<void> {
  for (const path of ["/healthz", `/api/lore/${W.charMira}`, `/api/lore/${W.charMira}/content`]) {
    const res = await fetch(`${url}${path}`);
    await res.body?.cancel();
  }
  await sleep(1000);
}

/** One slow connection: its request, then a byte every `trickleMs` until closed. */
interface SlowConnection {
  /** The status the service answered, if any. */
  status: number | null;
  closedByServer: boolean;
  /** Closes it from the client side (if the service has not). */
  close(): void;
  ended: Promise<void>;
}

/** The head and the first body bytes of a slow request of `kind`. */
function slowRequest(kind: SlowKind): Uint8Array {
  const head = (method: string, target: string, type: string, length: number) =>
    `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\n` +
    `X-Host-Filename: slow.png\r\nContent-Length: ${length}\r\n\r\n`;
  switch (kind) {
    case "upload": {
      const png = largePng(64); // signature and IHDR: the service knows it is an image
      return latin1(
        head("POST", `/api/lore/upload-image?parentNoteId=${W.media}`, "image/png", 10 << 20) +
          String.fromCharCode(...png.subarray(0, 40)),
      );
    }
    case "json":
      return latin1(head("POST", "/api/lore", "application/json", 100_000) + '{"title":"');
    case "content":
      return latin1(
        head("PUT", `/api/lore/${W.charMira}/content`, "text/plain", 100_000) + "<p>",
      );
  }
}

async function openSlow(port: number, request: Uint8Array): Promise<SlowConnection> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  let closed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const state: SlowConnection = {
    status: null,
    closedByServer: false,
    close() {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      try {
        conn.close();
      } catch { /* already closed */ }
    },
    ended: Promise.resolve(),
  };
  state.ended = (async () => {
    const buf = new Uint8Array(4096);
    let text = "";
    try {
      for (;;) {
        const n = await conn.read(buf);
        if (n === null) break;
        if (text.length < 64) text += String.fromCharCode(...buf.subarray(0, n));
        const m = text.match(/^HTTP\/1\.1 (\d{3})/);
        if (m) state.status = Number(m[1]);
      }
      if (!closed) state.closedByServer = true;
    } catch {
      if (!closed) state.closedByServer = true; // a reset
    }
    clearTimeout(timer);
    state.close();
  })();
  const one = new Uint8Array([0x61]);
  const trickle = async () => {
    if (closed) return;
    try {
      await conn.write(one);
      timer = setTimeout(trickle, trickleMs);
    } catch { /* the service closed it: the reader sees that */ }
  };
  await conn.write(request);
  // spread the trickles over the period, as independent clients would be
  timer = setTimeout(trickle, Math.random() * trickleMs);
  return state;
}

async function slowRound(url: string, port: number, pid: number, round: number): Promise<string> {
  const before = readMemory(pid)?.rss ?? null;
  const sampler = sampleMemory(pid, 200);
  const open: SlowConnection[] = [];
  const requests = KINDS.map(slowRequest);
  // in batches: a listen backlog takes only so many connections at once
  for (let i = 0; i < connections; i += 100) {
    const batch = Array.from(
      { length: Math.min(100, connections - i) },
      (_, j) => {
        const kind = slowKind === "mixed"
          ? (i + j) % KINDS.length
          : KINDS.indexOf(slowKind as SlowKind);
        return openSlow(port, requests[kind]);
      },
    );
    open.push(...await Promise.all(batch));
  }
  const latencies: number[] = [];
  const until = performance.now() + holdSeconds * 1000;
  while (performance.now() < until) {
    const t0 = performance.now();
    const res = await fetch(`${url}/healthz`);
    await res.body?.cancel();
    latencies.push(performance.now() - t0);
    await sleep(100);
  }
  const stillOpen = open.filter((c) => !c.closedByServer).length;
  for (const c of open) c.close();
  await Promise.all(open.map((c) => c.ended));
  await sleep(2000);
  const peak = peakBytes(sampler.stop());
  const closedAll = readMemory(pid)?.rss ?? null;
  await sleep(settleSeconds * 1000);
  const settled = readMemory(pid)?.rss ?? null;
  const closedByServer = open.length - stillOpen;
  return `| ${round} | ${mib(before)} | ${mib(peak)} | ${mib(closedAll)} | ${mib(settled)} | ` +
    `${ms(median(latencies))} | ${ms(percentile(latencies, 0.99))} | ` +
    `${tally(open.map((c) => String(c.status ?? "none")))} | ${closedByServer} | ${stillOpen} |`;
}

/** The large notes, created in the Core double directly. */
async function largeNotes(): Promise<{ content: string; image: string; json: string }> {
  const create = async (title: string, type: string, mime: string) =>
    (await coreEtapi(core, "/etapi/create-note", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ parentNoteId: W.media, title, type, mime, content: "" }),
    })).note.noteId as string;
  const content = await create("Large", "text", "text/html");
  const text = `<p>${"Salt and smoke. ".repeat(Math.ceil(answerBytes / 16))}</p>`;
  await coreEtapi(core, `/etapi/notes/${content}/content`, {
    method: "PUT",
    headers: { "content-type": "text/plain" },
    body: text.slice(0, answerBytes - 4) + "</p>",
  });
  const image = await create("large.png", "image", "image/png");
  await coreEtapi(core, `/etapi/notes/${image}/content`, {
    method: "PUT",
    headers: { "content-type": "application/octet-stream" },
    body: largePng(answerBytes),
  });
  return { content, image, json: W.charMira };
}

async function answerRound(
  url: string,
  pid: number,
  kind: "content" | "image" | "json",
  notes: { content: string; image: string; json: string },
  round: number,
): Promise<string> {
  const path = kind === "json"
    ? `/api/lore/${notes.json}`
    : `/api/lore/${kind === "content" ? notes.content : notes.image}/${kind}`;
  const before = readMemory(pid)?.rss ?? null;
  const sampler = sampleMemory(pid, 50);
  const outcomes = await Promise.all(Array.from({ length: answers }, async () => {
    const res = await fetch(`${url}${path}`);
    const bytes = (await res.bytes()).byteLength;
    return `${res.status}:${bytes >= answerBytes * 0.9 || kind === "json" ? "ok" : "short"}`;
  }));
  await sleep(2000);
  const peak = peakBytes(sampler.stop());
  const done = readMemory(pid)?.rss ?? null;
  await sleep(settleSeconds * 1000);
  const settled = readMemory(pid)?.rss ?? null;
  return `| ${kind} | ${round} | ${mib(before)} | ${mib(peak)} | ${mib(done)} | ${
    mib(settled)
  } | ` +
    `${tally(outcomes)} |`;
}

/** `3× 408, 1× 429`: how often each outcome occurred, the most frequent first. */
function tally(outcomes: string[]): string {
  const counts = new Map<string, number>();
  for (const o of outcomes) counts.set(o, (counts.get(o) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1]).map(([o, n]) => `${n}× ${o}`).join(", ");
}
