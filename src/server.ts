/**
 * Serving an app over HTTP. With client deadlines on (`CLIENT_DEADLINES`, see
 * {@linkcode clientDeadlinesOn}), `Deno.serve` listens on a private loopback port behind the
 * slow-client relay (http/connection_deadlines.ts), which owns the public address; off, it owns
 * the address itself. On stop, new connections are refused (behind the relay), request bodies
 * still arriving are received, in-flight requests and AI calls running in the background finish,
 * all within `SHUTDOWN_GRACE_MS`; then event streams still open end with an `error` event naming
 * a retry and AI calls still running are stopped, what the public share read is written to
 * `DATA_DIR` for the next start, and the log is flushed.
 *
 * @module
 */
import { type App, type AppDeps, createApp } from "./app.ts";
import { removeFromCore } from "./state/write_journal.ts";

/** How long streams ended at shutdown get to send their last event before connections close. */
const STREAMS_END_MS = 1_000;
import { type ConnectionGuard, guardConnections } from "./http/connection_deadlines.ts";
import { ApiError, errorResponse } from "./http/errors.ts";
import type { Config } from "./config/service_config.ts";
import { loopbackAddress } from "./util/host_name.ts";

/** A running server. */
export interface RunningServer {
  app: App;
  /** e.g. `http://127.0.0.1:8080` */
  url: string;
  port: number;
  /** Drains in-flight requests (bounded by the grace period), then closes. */
  stop(): Promise<void>;
  finished: Promise<void>;
}

/**
 * Whether connections pass through the slow-client relay: `CLIENT_DEADLINES`, where `auto` is
 * on unless `HOST` is a loopback address (only a local reverse proxy, with client deadlines of
 * its own, can connect there, and the relay costs most of a small request's time).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "./config/service_config.ts";
 * assert.equal(clientDeadlinesOn(loadConfig({ HOST: "127.0.0.1" })), false);
 * assert.equal(clientDeadlinesOn(loadConfig({ HOST: "0.0.0.0" })), true);
 * assert.equal(clientDeadlinesOn(loadConfig({ HOST: "::1", CLIENT_DEADLINES: "on" })), true);
 * ```
 */
export function clientDeadlinesOn(
  config: Pick<Config, "HOST" | "CLIENT_DEADLINES">,
): boolean {
  if (config.CLIENT_DEADLINES !== "auto") return config.CLIENT_DEADLINES === "on";
  return !loopbackAddress(config.HOST);
}

/**
 * Starts the app on `HOST:PORT` from the config (port 0 picks a free port).
 *
 * @example
 * ```ts
 * import { loadConfig } from "./config/service_config.ts";
 * // Declared, not run here: it listens on a port.
 * async function serveBriefly(): Promise<void> {
 *   const server = await startServer({ config: loadConfig({ HOST: "127.0.0.1", PORT: "0" }) });
 *   console.log(server.url); // e.g. "http://127.0.0.1:41234"
 *   await server.stop();
 * }
 * ```
 */
export function startServer(deps: AppDeps): Promise<RunningServer> {
  const app = createApp(deps);
  const { config } = deps;
  const relayed = clientDeadlinesOn(config);
  let guard: ConnectionGuard | undefined;
  let inner: Deno.HttpServer<Deno.NetAddr>;
  try {
    inner = Deno.serve(
      {
        hostname: relayed ? "127.0.0.1" : config.HOST,
        port: relayed ? 0 : config.PORT,
        onListen: () => {}, // the caller logs the public address (as JSON)
        // app.handle answers every error itself, so what lands here is a response body that failed
        // while streaming: a guarded stream cut off by a deadline (already logged as `stream end`)
        // or a client that left. Anything else is logged; Deno's default would print a stack trace.
        onError: (e) => {
          if (!(e instanceof ApiError) && !(e instanceof DOMException && e.name === "AbortError")) {
            app.log.log("error", "response failed", {
              error: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
            });
          }
          return new Response(null, { status: 500 });
        },
      },
      relayed
        ? relayedHandler
        : (req, info) => app.handle(req, { remoteAddr: info.remoteAddr.hostname, served: true }),
    );
  } catch (e) {
    return Promise.reject(e); // e.g. the port is taken
  }

  async function relayedHandler(req: Request, info: Deno.ServeHandlerInfo<Deno.NetAddr>) {
    const conn = guard?.track(info.remoteAddr, info.completed);
    if (!conn) {
      // someone on this machine connected to the private port, past the deadlines
      await req.body?.cancel();
      return errorResponse(
        new ApiError(403, "FORBIDDEN", "Connect to the service's own address"),
        crypto.randomUUID(),
      );
    }
    const res = await app.handle(req, { remoteAddr: conn.remoteAddr.hostname, served: true });
    // A stalled body will not be read any further, nor one refused unread (`Connection: close`,
    // which the runtime sends but does not act on): the connection must end. (After a 413 the
    // server drains the rest so the client can read the answer; the deadlines bound that.)
    if (res.status === 408 || res.headers.get("connection") === "close") {
      conn.closeAfterResponse();
    }
    return res;
  }

  if (relayed) {
    try {
      guard = guardConnections({
        hostname: config.HOST,
        port: config.PORT,
        target: inner.addr,
        limits: {
          headerMs: config.CLIENT_HEADER_TIMEOUT_MS,
          idleMs: config.CLIENT_IDLE_TIMEOUT_MS,
        },
        deadlines: deps.deadlines,
        onDeadline: (kind) =>
          app.log.log(kind === "header" ? "info" : "debug", "connection closed", {
            reason: kind === "header" ? "request head not complete in time" : "idle",
          }),
      });
    } catch (e) {
      return inner.shutdown().then(() => Promise.reject(e));
    }
  }
  const relay = guard;
  // what an earlier run, or an instance that went away, left half written
  app.state.journal.start(removeFromCore(config, app.fetch, deps.deadlines));
  const { hostname, port } = relay?.addr ?? inner.addr;
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  return Promise.resolve({
    app,
    url: `http://${host}:${port}`,
    port,
    finished: inner.finished,
    stop: async () => {
      relay?.stopAccepting();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const grace = new Promise<void>((r) => timer = setTimeout(r, config.SHUTDOWN_GRACE_MS));
      // the runtime's shutdown cuts off request bodies still arriving (an upload): they get the
      // grace period first; then requests in flight, and AI calls running on past their
      // clients' deadlines (their answers kept for a retry), get what is left of it
      const bodiesIn = await Promise.race([app.state.bodies.drained().then(() => true), grace]);
      const served = inner.shutdown();
      if (bodiesIn) {
        await Promise.race([Promise.all([served, app.state.aiCalls.drained()]), grace]);
      }
      clearTimeout(timer);
      // what is still open now ends: streams with an error event naming a retry, AI calls
      app.state.closing.abort();
      app.state.aiCalls.close();
      await Promise.race([served, new Promise((r) => timer = setTimeout(r, STREAMS_END_MS))]);
      clearTimeout(timer);
      await relay?.closeAll();
      // what the public share read stays in DATA_DIR for the next start
      await app.state.publicShare.flush();
      app.state.journal.close();
      await app.state.store.close();
      // the log is buffered: every line written so far must be out before the process exits
      await app.log.flush?.();
    },
  });
}
