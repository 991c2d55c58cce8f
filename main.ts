/**
 * Production entry point: `--help`, `--version` and `--print-routes` print and exit; otherwise
 * configuration from the environment, real backends, a start-up summary (the host names it
 * answers to, each backend), and graceful shutdown on SIGTERM/SIGINT. Refuses to start on
 * invalid configuration or an unknown argument (exit status 2).
 *
 * @module
 */
import { cliAction } from "./src/cli.ts";
import { configNotes, loadConfigOrExit } from "./src/config/service_config.ts";
import { startServer } from "./src/server.ts";
import { logStartupReport } from "./src/state/startup_report.ts";
import { VERSION } from "./src/config/version.ts";

/** Starts the service and keeps it running until a signal stops it. */
async function serve(): Promise<void> {
  const env = Deno.env.toObject();
  const config = loadConfigOrExit(env);
  const server = await startServer({ config });
  const { log } = server.app;
  log.log("info", "listening", { host: config.HOST, port: server.port, version: VERSION });
  for (const note of configNotes(env)) log.log("info", "configuration", { note });
  if (config.CORE_TOKEN) {
    log.log(
      "warn",
      "CORE_URL/CORE_TOKEN are set: every caller who can reach this service can use Core through it",
    );
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.log("info", "shutting down", { signal });
    let code = 0;
    try {
      await server.stop(); // flushes the buffered log last
    } catch (e) {
      log.log("error", "shutdown failed", { error: String(e) });
      code = 1;
    }
    await log.flush?.(); // the lines written since, or after a failed stop
    Deno.exit(code);
  };
  Deno.addSignalListener("SIGTERM", () => stop("SIGTERM"));
  Deno.addSignalListener("SIGINT", () => stop("SIGINT"));
  // after listening and never awaited: the host lines come at once, a slow backend delays
  // only its own line
  void logStartupReport(log, config, server.app.fetch); // the client the app uses
}

if (import.meta.main) {
  const action = cliAction(Deno.args);
  if (action.kind === "print") console.log(action.text);
  else if (action.kind === "refuse") {
    console.error(action.message);
    Deno.exit(2);
  } else await serve();
}
