/**
 * Production entry point: configuration from the environment, real backends, graceful shutdown
 * on SIGTERM/SIGINT. Refuses to start on invalid configuration.
 *
 * @module
 */
import { loadConfigOrExit } from "./src/config.ts";
import { routeTableMarkdown } from "./src/openapi.ts";
import { allRoutes } from "./src/routes/index.ts";
import { startServer } from "./src/server.ts";

if (import.meta.main && Deno.args.includes("--print-routes")) {
  // a quick look at the table; docs/api.md is the full reference (deno task docs)
  console.log(routeTableMarkdown(allRoutes));
} else if (import.meta.main) {
  const config = loadConfigOrExit(Deno.env.toObject());
  const server = await startServer({ config });
  server.app.log.log("info", "listening", { host: config.HOST, port: server.port });
  if (config.CORE_TOKEN) {
    server.app.log.log(
      "warn",
      "CORE_URL/CORE_TOKEN are set: every caller who can reach this service can use Core through it",
    );
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    server.app.log.log("info", "shutting down", { signal });
    let code = 0;
    try {
      await server.stop(); // flushes the buffered log last
    } catch (e) {
      server.app.log.log("error", "shutdown failed", { error: String(e) });
      code = 1;
    }
    await server.app.log.flush?.(); // the lines written since, or after a failed stop
    Deno.exit(code);
  };
  Deno.addSignalListener("SIGTERM", () => stop("SIGTERM"));
  Deno.addSignalListener("SIGINT", () => stop("SIGINT"));
}
