/**
 * Serving an app over HTTP with graceful shutdown: on stop, new connections are refused and
 * in-flight requests get `SHUTDOWN_GRACE_MS` to finish.
 *
 * @module
 */
import { type App, type AppDeps, createApp } from "./app.ts";

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
 * Starts the app on `HOST:PORT` from the config (port 0 picks a free port).
 *
 * @example
 * ```ts
 * const server = await startServer({ config });
 * console.log(server.url);
 * await server.stop();
 * ```
 */
export function startServer(deps: AppDeps): Promise<RunningServer> {
  const app = createApp(deps);
  const { config } = deps;
  const server = Deno.serve({
    hostname: config.HOST,
    port: config.PORT,
    onListen: () => {}, // the caller logs the address (as JSON)
  }, (req, info) => app.handle(req, { remoteAddr: (info.remoteAddr as Deno.NetAddr).hostname }));
  const { hostname, port } = server.addr;
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  return Promise.resolve({
    app,
    url: `http://${host}:${port}`,
    port,
    finished: server.finished,
    stop: async () => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const grace = new Promise<void>((r) => timer = setTimeout(r, config.SHUTDOWN_GRACE_MS));
      await Promise.race([server.shutdown(), grace]);
      clearTimeout(timer);
    },
  });
}
