/**
 * `deno task bench`: what the service adds to `GET /api/lore/:id`, measured as ratios against
 * baselines run side by side under the same load in one run:
 *
 *  - direct: the same ETAPI call (`GET /etapi/notes/:id`) made straight to the Core double;
 *  - nginx (when installed): a plain reverse proxy in front of the same Core double;
 *  - service: `GET /api/lore/:id` through this service.
 *
 * Rounds alternate (direct, nginx, service, direct, …) so drift affects all equally. The load
 * generator is `wrk` when installed (`apt-get install wrk`), otherwise a built-in fetch loop.
 * Absolute numbers depend on the machine; the ratios are what later work must not worsen.
 *
 * Options (env): BENCH_SECONDS (per round, default 3), BENCH_ROUNDS (default 3),
 * BENCH_CONNECTIONS (default 16), BENCH_NOTE (note id, default a note without relations).
 *
 * @module
 */

import { median, spawnRole } from "./roles.ts";

interface Result {
  rps: number;
  p50: number;
  p99: number;
}

const seconds = Number(Deno.env.get("BENCH_SECONDS") ?? 3);
const rounds = Number(Deno.env.get("BENCH_ROUNDS") ?? 3);
const connections = Number(Deno.env.get("BENCH_CONNECTIONS") ?? 16);

const coreRole = await spawnRole(["core"]);
const serviceRole = await spawnRole(["service", coreRole.info.url, coreRole.info.token]);
const addr = { core: coreRole.info.url, token: coreRole.info.token, service: serviceRole.info.url };

const note = Deno.env.get("BENCH_NOTE") ?? "wLocReef0001";
const targets: { name: string; url: string; headers: Record<string, string> }[] = [
  {
    name: "direct",
    url: `${addr.core}/etapi/notes/${note}`,
    headers: { authorization: addr.token },
  },
  { name: "service", url: `${addr.service}/api/lore/${note}`, headers: {} },
];

const nginx = await startNginx(addr.core, addr.token);
if (nginx) {
  targets.splice(1, 0, { name: "nginx", url: `${nginx.url}/etapi/notes/${note}`, headers: {} });
}

const haveWrk = await commandExists("wrk");
console.log(
  `GET note ${note}: ${rounds} rounds × ${seconds}s, ${connections} connections, load by ${
    haveWrk ? "wrk" : "built-in fetch loop"
  }`,
);

const results = new Map<string, Result[]>(targets.map((t) => [t.name, []]));
try {
  for (const t of targets) await (haveWrk ? runWrk(t, 1) : runLoop(t, 1)); // warm-up
  for (let r = 0; r < rounds; r++) {
    for (const t of targets) {
      results.get(t.name)!.push(await (haveWrk ? runWrk(t, seconds) : runLoop(t, seconds)));
    }
  }
} finally {
  nginx?.stop();
  for (const { child } of [serviceRole, coreRole]) {
    child.kill("SIGTERM");
    await child.status;
  }
}

const summary = new Map([...results].map(([name, rs]) => [name, {
  rps: median(rs.map((r) => r.rps)),
  p50: median(rs.map((r) => r.p50)),
  p99: median(rs.map((r) => r.p99)),
}]));
console.log("\n| target | req/s | p50 ms | p99 ms |\n|---|---|---|---|");
for (const [name, s] of summary) {
  console.log(`| ${name} | ${s.rps.toFixed(0)} | ${s.p50.toFixed(2)} | ${s.p99.toFixed(2)} |`);
}
const d = summary.get("direct")!;
const s = summary.get("service")!;
console.log(
  `\nservice/direct: throughput ${(s.rps / d.rps).toFixed(2)}×, p50 latency ${
    (s.p50 / d.p50).toFixed(2)
  }×, p99 latency ${(s.p99 / d.p99).toFixed(2)}×`,
);
const n = summary.get("nginx");
if (n) {
  console.log(
    `nginx/direct:   throughput ${(n.rps / d.rps).toFixed(2)}×, p50 latency ${
      (n.p50 / d.p50).toFixed(2)
    }×; ` +
      `service/nginx throughput ${(s.rps / n.rps).toFixed(2)}×`,
  );
}

async function commandExists(cmd: string): Promise<boolean> {
  try {
    const out = await new Deno.Command("sh", {
      args: ["-c", `command -v ${cmd}`],
      stdout: "null",
      stderr: "null",
    }).output();
    return out.success;
  } catch {
    return false;
  }
}

async function runWrk(
  t: { url: string; headers: Record<string, string> },
  secs: number,
): Promise<Result> {
  const args = ["-t1", `-c${connections}`, `-d${secs}s`, "--latency", t.url];
  for (const [k, v] of Object.entries(t.headers)) args.push("-H", `${k}: ${v}`);
  const out = await new Deno.Command("wrk", { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout);
  const ms = (label: string) => {
    const m = text.match(new RegExp(`\\s${label}\\s+([\\d.]+)(us|ms|s)`));
    if (!m) return NaN;
    const v = Number(m[1]);
    return m[2] === "us" ? v / 1000 : m[2] === "s" ? v * 1000 : v;
  };
  const non2xx = text.match(/Non-2xx or 3xx responses: (\d+)/);
  if (non2xx) throw new Error(`${t.url}: ${non2xx[1]} failed responses`);
  return {
    rps: Number(text.match(/Requests\/sec:\s+([\d.]+)/)?.[1]),
    p50: ms("50%"),
    p99: ms("99%"),
  };
}

async function runLoop(
  t: { url: string; headers: Record<string, string> },
  secs: number,
): Promise<Result> {
  const latencies: number[] = [];
  const end = performance.now() + secs * 1000;
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < end) {
      const start = performance.now();
      const res = await fetch(t.url, { headers: t.headers });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`${t.url}: ${res.status}`);
      latencies.push(performance.now() - start);
    }
  }));
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { rps: latencies.length / secs, p50: at(0.5), p99: at(0.99) };
}

async function startNginx(
  coreUrl: string,
  token: string,
): Promise<{ url: string; stop(): void } | null> {
  if (!(await commandExists("nginx"))) return null;
  const dir = await Deno.makeTempDir({ prefix: "lpp-bench-nginx-" });
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  await Deno.writeTextFile(
    `${dir}/nginx.conf`,
    `worker_processes 1; daemon off; pid ${dir}/nginx.pid; error_log ${dir}/error.log;
events { worker_connections 1024; }
http { access_log off;
  upstream core { server ${new URL(coreUrl).host}; keepalive 32; }
  server { listen 127.0.0.1:${port};
    location / { proxy_pass http://core; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_set_header Authorization "${token}"; } } }
`,
  );
  const child = new Deno.Command("nginx", {
    args: ["-p", dir, "-c", `${dir}/nginx.conf`],
    stdout: "null",
    stderr: "null",
  })
    .spawn();
  for (let i = 0; i < 50; i++) {
    try {
      (await fetch(`http://127.0.0.1:${port}/`)).body?.cancel();
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill("SIGTERM") };
}
