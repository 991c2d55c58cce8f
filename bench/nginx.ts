/**
 * A plain nginx reverse proxy in front of the Core double, the baseline for what a proxy costs:
 * one worker (the service is one JavaScript thread too), kept-alive upstream connections, no
 * access log, the ETAPI token added to every request.
 *
 * @module
 */
import { commandExists } from "./load.ts";
import { freePort, waitForHttp } from "./roles.ts";

/**
 * The nginx.conf of the baseline proxy: `listen` on 127.0.0.1:`port`, pass everything to
 * `upstream` (`host:port`) with `Authorization: <authorization>`; state files under `dir`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const conf = nginxConfig({
 *   dir: "/tmp/nginx-bench",
 *   port: 8081,
 *   upstream: "127.0.0.1:8080",
 *   authorization: "token",
 * });
 * assert.equal(conf.includes("proxy_pass http://core;"), true);
 * ```
 */
export function nginxConfig(
  opts: { dir: string; port: number; upstream: string; authorization: string },
): string {
  return `worker_processes 1;
daemon off;
pid ${opts.dir}/nginx.pid;
error_log ${opts.dir}/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  upstream core { server ${opts.upstream}; keepalive 32; }
  server {
    listen 127.0.0.1:${opts.port};
    location / {
      proxy_pass http://core;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Authorization "${opts.authorization}";
    }
  }
}
`;
}

/**
 * Starts nginx in front of `coreUrl` when nginx is installed (null otherwise) and waits until it
 * answers.
 */
export async function startNginx(
  coreUrl: string,
  authorization: string,
): Promise<{ url: string; stop(): Promise<void> } | null> {
  if (!(await commandExists("nginx"))) return null;
  const dir = await Deno.makeTempDir({ prefix: "lpp-bench-nginx-" });
  const port = freePort();
  const conf = `${dir}/nginx.conf`;
  await Deno.writeTextFile(
    conf,
    nginxConfig({ dir, port, upstream: new URL(coreUrl).host, authorization }),
  );
  const child = new Deno.Command("nginx", {
    args: ["-p", dir, "-c", conf],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/etapi/app-info`, child.status);
  return {
    url,
    stop: async () => {
      child.kill("SIGTERM");
      await child.status;
      await Deno.remove(dir, { recursive: true });
    },
  };
}
