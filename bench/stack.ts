/**
 * The backends of a benchmark, one role per process (as the backends run in production). Each
 * prints one JSON line with its address, then serves until killed:
 *
 *  - `core [extraNotes]`: the Core double with the sample world, plus `extraNotes` (default 0)
 *    lore notes and a note with four relations (bench/bench_notes.ts);
 *  - `parser <coreUrl> <token>`: the Parser double wired to that Core (its answer carries the
 *    owner's bearer token);
 *  - `bare`: a bare `Deno.serve` answering a constant, the runtime's own limit;
 *  - `floor`: a bare `Deno.serve` answering exactly what `/healthz` answers (its body, built by
 *    the same helper, and the headers every answer gets): what the answer itself costs, without
 *    the service's routing, checks and log line.
 *
 * The service itself starts from main.ts (bench/roles.ts).
 *
 * @module
 */
import { startCoreSim } from "../sims/core.ts";
import { startParserSim } from "../sims/parser.ts";
import { seedBenchNotes } from "./bench_notes.ts";
import { json } from "../src/http/response.ts";
import { VERSION } from "../src/version.ts";

const [role, coreUrl, token] = Deno.args;
if (role === "core") {
  const core = await startCoreSim();
  seedBenchNotes(core.store, Number(Deno.args[1] ?? 0));
  // the double records every request for tests; under load that record only grows
  setInterval(() => core.clearRequests(), 1000);
  console.log(JSON.stringify({ url: core.url, token: core.token }));
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
} else {
  console.error("usage: stack.ts core [extraNotes] | parser <coreUrl> <token> | bare | floor");
  Deno.exit(2);
}

Deno.addSignalListener("SIGTERM", () => Deno.exit(0));
