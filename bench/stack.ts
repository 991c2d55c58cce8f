/**
 * The backends of a benchmark, one role per process (as the backends run in production). Each
 * prints one JSON line with its address, then serves until killed:
 *
 *  - `core-world [notes]`: the Core double with a generated world of `notes` public notes
 *    (sims/world_gen.ts); prints two of its pages and a URL that answers how many requests Core
 *    has had;
 *  - `core [extraNotes]`: the Core double with the sample world, plus `extraNotes` (default 0)
 *    lore notes and a note with four relations (bench/bench_notes.ts);
 *  - `parser <coreUrl> <token>`: the Parser double wired to that Core (its answer carries the
 *    owner's bearer token);
 *  - `bare`: a bare `Deno.serve` answering a constant, the runtime's own limit;
 *  - `floor`: a bare `Deno.serve` answering exactly what `/healthz` answers (its body, built by
 *    the same helper, and the headers every answer gets): what the answer itself costs, without
 *    the service's routing, checks and log line;
 *  - `lean`: `floor` plus what any service that logs its requests must do: read the request's
 *    method, URL and request id, parse the URL, and write one request line through the service's
 *    own logger (`LOG_LEVEL=info` to stdout). The least a logged request costs in this runtime,
 *    without the service's routing, checks and contexts;
 *  - `replay <url> [etag]`: a bare `Deno.serve` giving the answer `url` gave once (with
 *    `If-None-Match: etag` when given): its status, headers and body, with a fresh request id each
 *    time. The floor of a public answer: what sending those bytes costs the runtime;
 *  - `naive <coreUrl> <token>`: a bare `Deno.serve` that forwards `GET /api/lore/:id` to Core's
 *    `/etapi/notes/:id` with `fetch` and streams the answer back: the runtime's own pass-through.
 *
 * The service itself starts from main.ts (bench/roles.ts).
 *
 * @module
 */
import { startCoreSim } from "../sims/core.ts";
import { startParserSim } from "../sims/parser.ts";
import { seedBenchNotes } from "./bench_notes.ts";
import { seedGeneratedWorld } from "../sims/world_gen.ts";
import { json } from "../src/http/response.ts";
import { createLogger } from "../src/http/access_log.ts";
import { requestIdFor } from "../src/http/request_id.ts";
import { VERSION } from "../src/config/version.ts";

/** Headers a replay does not copy: the server sets its own, the request id is made anew. */
const REPLAY_SKIPS = new Set(["content-length", "date", "x-request-id"]);

const [role, coreUrl, token] = Deno.args;
if (role === "core") {
  const core = await startCoreSim();
  seedBenchNotes(core.store, Number(Deno.args[1] ?? 0));
  // the double records every request for tests; under load that record only grows
  setInterval(() => core.clearRequests(), 1000);
  console.log(JSON.stringify({ url: core.url, token: core.token }));
} else if (role === "core-world") {
  const core = await startCoreSim();
  const world = seedGeneratedWorld(core.store, { notes: Number(Deno.args[1] ?? 300) });
  // counts what the service asks (the bench reads it back), then forgets the requests
  let calls = 0;
  setInterval(() => (calls += core.requests.length, core.clearRequests()), 200);
  const counter = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => {
    calls += core.requests.length;
    core.clearRequests();
    return new Response(String(calls));
  });
  const pages = world.publicIds.filter((id) => !world.imageIds.includes(id));
  console.log(JSON.stringify({
    url: core.url,
    token: core.token,
    counter: `http://127.0.0.1:${counter.addr.port}`,
    // two pages to read again and again, then pages nobody reads before the bench asks
    pages: [
      pages[Math.floor(pages.length / 2)],
      pages[Math.floor(pages.length / 3)],
      ...pages.slice(-20),
    ],
  }));
} else if (role === "parser") {
  const parser = await startParserSim({
    core: { url: coreUrl, token },
    brainDump: { paceMs: Number(Deno.env.get("BENCH_PACE_MS") ?? 0) },
    rateLimits: { "brain-dump": { max: 1_000_000, windowMs: 60_000 } },
  });
  setInterval(() => parser.clearRequests(), 1000);
  console.log(JSON.stringify({ url: parser.url, token: parser.ownerToken() }));
} else if (role === "bare") {
  const body = JSON.stringify({ status: "ok" });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response(body, { headers: { "content-type": "application/json" } }),
  );
  console.log(JSON.stringify({ url: `http://127.0.0.1:${server.addr.port}` }));
} else if (role === "floor") {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => {
    const res = json({ status: "ok", version: VERSION });
    res.headers.set("x-request-id", crypto.randomUUID());
    res.headers.set("x-content-type-options", "nosniff");
    res.headers.set("referrer-policy", "no-referrer");
    return res;
  });
  console.log(JSON.stringify({ url: `http://127.0.0.1:${server.addr.port}` }));
} else if (role === "lean") {
  const log = createLogger({ level: "info", format: "json" }, []);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req, info) => {
    const started = performance.now();
    const requestId = requestIdFor(req);
    const url = new URL(req.url);
    const res = json({ status: "ok", version: VERSION });
    res.headers.set("x-request-id", requestId);
    res.headers.set("x-content-type-options", "nosniff");
    res.headers.set("referrer-policy", "no-referrer");
    log.log("info", "request", {
      requestId,
      method: req.method,
      route: url.pathname,
      status: res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
      upstreamMs: 0,
      upstreamCalls: 0,
      client: info.remoteAddr.hostname,
    });
    return res;
  });
  console.log(JSON.stringify({ url: `http://127.0.0.1:${server.addr.port}` }));
} else if (role === "replay") {
  const etag = Deno.args[2];
  const once = await fetch(Deno.args[1], { headers: etag ? { "if-none-match": etag } : {} });
  const status = once.status;
  const body = status === 304 ? null : await once.text();
  const headers = [...once.headers].filter(([name]) => !REPLAY_SKIPS.has(name));
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => {
    const res = new Response(body, { status });
    for (const [name, value] of headers) res.headers.set(name, value);
    res.headers.set("x-request-id", crypto.randomUUID());
    return res;
  });
  console.log(JSON.stringify({ url: `http://127.0.0.1:${server.addr.port}` }));
} else if (role === "naive") {
  const prefix = "/api/lore/";
  // wrk closes its connections mid-request when a round ends: the forwarded call is then aborted,
  // which is expected here and not worth a stack trace per connection
  const onError = (e: unknown) => {
    if (!(e instanceof DOMException && e.name === "AbortError")) console.error(e);
    return new Response(null, { status: 502 });
  };
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {}, onError },
    async (req) => {
      const path = new URL(req.url).pathname;
      if (!path.startsWith(prefix)) return new Response(null, { status: 404 });
      const up = await fetch(`${coreUrl}/etapi/notes/${path.slice(prefix.length)}`, {
        headers: { authorization: token, "accept-encoding": "identity" },
        signal: req.signal,
      });
      return new Response(up.body, {
        status: up.status,
        headers: { "content-type": up.headers.get("content-type") ?? "application/json" },
      });
    },
  );
  console.log(JSON.stringify({ url: `http://127.0.0.1:${server.addr.port}` }));
} else {
  console.error(
    "usage: stack.ts core [extraNotes] | core-world [notes] | parser <coreUrl> <token> | bare | " +
      "floor | lean | " +
      "replay <url> [etag] | naive <coreUrl> <token>",
  );
  Deno.exit(2);
}

Deno.addSignalListener("SIGTERM", () => Deno.exit(0));
