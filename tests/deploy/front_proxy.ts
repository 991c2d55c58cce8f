/**
 * A real reverse proxy (nginx, or Caddy where installed) loaded with the repository's own deploy
 * snippet and put in front of a running service, for the deploy tests. The snippet is changed only
 * by a small, named transformation so that it runs unprivileged on this machine: TLS on port 443
 * becomes plain HTTP on a free local port, and the service's documented address `127.0.0.1:8080`
 * becomes the test service's. Everything else is the file a self-hoster installs.
 *
 * Without nginx a test using it is skipped with a console line, except under CI (`CI` set), where
 * it fails instead, as the browser tests do with Chromium. Caddy is not installed by CI, so its
 * tests are skipped wherever it is missing.
 *
 * @module
 */

/** Where Debian installs nginx (`apt-get install nginx`). */
export const NGINX_PATH = "/usr/sbin/nginx";
/** Where Debian installs Caddy (`apt-get install caddy`). */
export const CADDY_PATH = "/usr/bin/caddy";
/** The address the deploy files give the service (its `HOST` and default `PORT`). */
export const SERVICE_ADDRESS = "127.0.0.1:8080";
/**
 * The source address nginx uses towards the service in these tests (`proxy_bind`), so that the
 * service's TCP peer is never the client's own address.
 */
export const NGINX_SOURCE_ADDRESS = "127.0.0.2";

const DEPLOY = new URL("../../deploy/", import.meta.url);

/** A running reverse proxy in front of the service. */
export interface FrontProxy {
  /** Base URL browsers would use, e.g. `http://127.0.0.1:41235`. */
  url: string;
  /** Stops the proxy and removes its files. */
  close(): Promise<void>;
}

/**
 * Reads a file of `deploy/`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.match(await readDeployFile("nginx.conf"), /proxy_pass http:\/\/lore_portal_proxy;/);
 * ```
 */
export function readDeployFile(name: string): Promise<string> {
  return Deno.readTextFile(new URL(name, DEPLOY));
}

function installed(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/**
 * Whether tests needing nginx run here: skipped (with a console line saying why) only when nginx
 * is missing and `CI` is not set. Use as `ignore: !nginxTestsRun("…")`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const runs = nginxTestsRun("nginx in front"); // false, with a console line, if skipped
 * if (Deno.env.get("CI")) assert.equal(runs, true); // under CI a missing nginx fails instead
 * ```
 */
export function nginxTestsRun(suite: string): boolean {
  if (installed(NGINX_PATH) || Deno.env.get("CI")) return true;
  console.log(
    `${suite}: skipped — ${NGINX_PATH} is missing (install it with: apt-get install nginx)`,
  );
  return false;
}

/**
 * Whether tests needing Caddy run here: only where it is installed (CI does not install it); a
 * console line says so otherwise.
 */
export function caddyTestsRun(suite: string): boolean {
  if (installed(CADDY_PATH)) return true;
  console.log(
    `${suite}: skipped — ${CADDY_PATH} is missing (install it with: apt-get install caddy)`,
  );
  return false;
}

/**
 * The nginx snippet as the tests load it: every `listen` line (TLS on 443, IPv4 and IPv6) becomes
 * one plain `listen 127.0.0.1:<port>;`, the `ssl_*` lines (certificate paths) go, and the
 * service's upstream lines, `server 127.0.0.1:8080;` or those of the several-instances recipe
 * (`server 10.0.0.11:8080;` …, see {@linkcode nginxWithInstances}), name `service`, one address
 * each, in order. Throws when a line it changes is not there, or the recipe's servers are not as
 * many as `service` names, so the snippet cannot drift away from what is tested.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const snippet = await readDeployFile("nginx.conf");
 * const conf = nginxForTest(snippet, 41235, "127.0.0.1:41234");
 * assert.match(conf, /^\s*listen 127\.0\.0\.1:41235;$/m);
 * assert.doesNotMatch(conf, /ssl/);
 * assert.match(conf, /server 127\.0\.0\.1:41234;/);
 * ```
 */
export function nginxForTest(
  snippet: string,
  port: number,
  service: string | readonly string[],
): string {
  const services = typeof service === "string" ? [service] : service;
  const out: string[] = [];
  let listens = 0;
  let certificates = 0;
  let upstreams = 0;
  for (const line of snippet.split("\n")) {
    const indent = /^\s*/.exec(line)![0];
    if (/^\s*listen\s+\S*443 ssl\b[^;]*;/.test(line)) {
      if (listens++ === 0) out.push(`${indent}listen 127.0.0.1:${port};`);
    } else if (/^\s*ssl_/.test(line)) {
      certificates++;
    } else if (
      line.trim() === `server ${SERVICE_ADDRESS};` || INSTANCE_SERVER.test(line.trim())
    ) {
      out.push(`${indent}server ${services[upstreams++]};`);
    } else out.push(line);
  }
  if (listens === 0 || certificates === 0 || upstreams !== services.length) {
    throw new Error(
      `nginx.conf no longer has the TLS listen, ssl_ and upstream lines the test rewrites ` +
        `(${listens} listen, ${certificates} ssl_, ${upstreams} upstream servers for ` +
        `${services.length} services)`,
    );
  }
  return out.join("\n");
}

/** An instance's line in `deploy/nginx-instances.conf` (its documented private addresses). */
const INSTANCE_SERVER = /^server 10\.0\.0\.\d+:8080;$/;
/** The one-instance upstream block of `deploy/nginx.conf` and `nginx-with-portal.conf`. */
const SERVICE_UPSTREAM = /^upstream lore_portal_proxy \{\n[^{}]*\n\}$/m;
/** The recipe's optional sticky routing, commented out as shipped. */
const STICKY = "# hash $remote_addr consistent;";

/**
 * An nginx site file with its upstream block replaced by `deploy/nginx-instances.conf`, as that
 * file's header tells a self-hoster to do; `sticky` uncomments the recipe's
 * `hash $remote_addr consistent;`. Throws when either block is not where the recipe says.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const site = nginxWithInstances(
 *   await readDeployFile("nginx.conf"),
 *   await readDeployFile("nginx-instances.conf"),
 * );
 * assert.match(site, /^\s*server 10\.0\.0\.12:8080;$/m);
 * assert.doesNotMatch(site, /^\s*server 127\.0\.0\.1:8080;$/m);
 * assert.match(site, /^\s*proxy_next_upstream error timeout;$/m);
 * ```
 */
export function nginxWithInstances(site: string, instances: string, sticky = false): string {
  const block = SERVICE_UPSTREAM.exec(instances)?.[0];
  if (!block || !SERVICE_UPSTREAM.test(site) || !block.includes(STICKY)) {
    throw new Error(
      "nginx-instances.conf or the site file no longer has the upstream block the test swaps",
    );
  }
  const upstream = sticky ? block.replace(STICKY, STICKY.slice(2)) : block;
  return site.replace(SERVICE_UPSTREAM, () => upstream);
}

/**
 * The Caddyfile as the tests load it: the site address `lore.example.com` becomes
 * `http://127.0.0.1:<port>` (plain HTTP, no certificate), the upstream `127.0.0.1:8080` names
 * `service`, and global options turn off Caddy's admin endpoint (so tests can run side by side).
 * Given several services, the file's commented several-instances block
 * (`reverse_proxy 10.0.0.11:8080 …`) replaces the one-instance block, its addresses naming
 * `service` in order. Throws when what it changes is not there, or the example's instances are
 * not as many as `service` names.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const caddyfile = await readDeployFile("Caddyfile");
 * const conf = caddyForTest(caddyfile, 41235, "127.0.0.1:41234");
 * assert.match(conf, /^http:\/\/127\.0\.0\.1:41235 \{$/m);
 * assert.match(conf, /reverse_proxy 127\.0\.0\.1:41234 \{/);
 * const three = caddyForTest(caddyfile, 41235, ["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"]);
 * assert.match(three, /^\treverse_proxy 127\.0\.0\.1:1 127\.0\.0\.1:2 127\.0\.0\.1:3 \{$/m);
 * assert.match(three, /^\t\tlb_retries \d+$/m);
 * ```
 */
export function caddyForTest(
  caddyfile: string,
  port: number,
  service: string | readonly string[],
): string {
  const site = /^lore\.example\.com \{$/m;
  const upstream = `reverse_proxy ${SERVICE_ADDRESS} {`;
  if (!site.test(caddyfile) || !caddyfile.includes(upstream)) {
    throw new Error("Caddyfile no longer has the site address and upstream the test rewrites");
  }
  const proxied = typeof service === "string"
    ? caddyfile.replace(upstream, `reverse_proxy ${service} {`)
    : caddyInstances(caddyfile, service);
  return "{\n\tadmin off\n}\n\n" + proxied.replace(site, `http://127.0.0.1:${port} {`);
}

/** The Caddyfile with its commented several-instances block in place of the live one. */
function caddyInstances(caddyfile: string, services: readonly string[]): string {
  const live = /^\treverse_proxy 127\.0\.0\.1:8080 \{\n(?:\t\t.*\n)*\t\}$/m;
  const example = /^\t#\treverse_proxy ((?:10\.0\.0\.\d+:8080 )+)\{\n(?:\t#\t\t.*\n)*\t#\t\}$/m
    .exec(caddyfile);
  const instances = example?.[1].trim().split(" ") ?? [];
  if (!live.test(caddyfile) || instances.length !== services.length) {
    throw new Error(
      `Caddyfile no longer has the upstream block and the several-instances example the test ` +
        `swaps (${instances.length} instances for ${services.length} services)`,
    );
  }
  const block = example![0].replace(/^\t#/gm, "")
    .replace(example![1], `${services.join(" ")} `);
  return caddyfile.replace(live, () => block);
}

/**
 * A free TCP port on 127.0.0.1 (free when asked; the proxy binds it right after).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.ok(freePort() > 0);
 * ```
 */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = l.addr as Deno.NetAddr;
  l.close();
  return port;
}

/**
 * nginx's main configuration around one site file: everything under `dir`, no root paths.
 * `hostile` adds what the snippet test runs against (below); other tests leave it out.
 */
function nginxMain(dir: string, hostile: boolean): string {
  const tests = hostile
    ? `
    # test only: the service's TCP peer is nginx at this address, never the client's
    proxy_bind ${NGINX_SOURCE_ADDRESS};
    # test only: compression of every type, as some servers have it, and the service's own
    # X-Accel-Buffering ignored: the snippet alone must keep event streams flowing
    gzip on;
    gzip_types *;
    gzip_min_length 0;
    proxy_ignore_headers X-Accel-Buffering;`
    : "";
  return `worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path ${dir}/client_body;
    proxy_temp_path ${dir}/proxy;
    fastcgi_temp_path ${dir}/fastcgi;
    uwsgi_temp_path ${dir}/uwsgi;
    scgi_temp_path ${dir}/scgi;${tests}
    include ${dir}/site.conf;
}
`;
}

/** Waits until `port` accepts connections, or throws with what the process said. */
async function untilListening(
  port: number,
  child: Deno.ChildProcess,
  output: () => Promise<string>,
): Promise<void> {
  let exited = false;
  child.status.then(() => exited = true);
  for (let i = 0; i < 200; i++) {
    if (exited) throw new Error(`the proxy exited at start:\n${await output()}`);
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`the proxy did not listen within 10 s:\n${await output()}`);
}

async function startProxy(
  kind: "nginx" | "caddy",
  binary: string,
  files: (dir: string, port: number) => Record<string, string>,
  args: (dir: string) => string[],
  stopSignal: Deno.Signal,
  env: (dir: string) => Record<string, string> = () => ({}),
  port = freePort(),
): Promise<FrontProxy> {
  if (!installed(binary)) {
    throw new Error(`${binary} is missing; CI needs it (apt-get install ${kind})`);
  }
  const dir = await Deno.makeTempDir({ prefix: `lpp-${kind}-` });
  await Deno.chmod(dir, 0o755); // nginx's workers drop root and must reach their temp paths
  for (const [name, text] of Object.entries(files(dir, port))) {
    await Deno.writeTextFile(`${dir}/${name}`, text);
  }
  const child = new Deno.Command(binary, {
    args: args(dir),
    env: env(dir),
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const output = async () =>
    (await Deno.readTextFile(`${dir}/error.log`).catch(() => "")) +
    (await Promise.race([stderr, new Promise<string>((r) => setTimeout(() => r(""), 500))]));
  const close = async () => {
    try {
      child.kill(stopSignal);
    } catch { /* already exited */ }
    await child.status;
    await stderr.catch(() => "");
    await Deno.remove(dir, { recursive: true });
  };
  try {
    await untilListening(port, child, output);
  } catch (e) {
    await close();
    throw e;
  }
  return { url: `http://127.0.0.1:${port}`, close };
}

/**
 * Starts nginx with `deploy/nginx.conf` (see {@linkcode nginxForTest}) in front of the service at
 * `serviceUrl`, connecting to it from {@linkcode NGINX_SOURCE_ADDRESS}. Given several URLs, the
 * upstream block is `deploy/nginx-instances.conf`'s ({@linkcode nginxWithInstances}; `sticky`
 * turns its hashing on), naming them in order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Harness } from "../helpers/harness.ts";
 * // Declared, not run here: it needs a running harness and nginx.
 * async function healthThroughNginx(h: Harness): Promise<void> {
 *   const nginx = await startNginx(h.url);
 *   try {
 *     assert.equal((await fetch(`${nginx.url}/healthz`)).status, 200);
 *   } finally {
 *     await nginx.close();
 *   }
 * }
 * ```
 */
export async function startNginx(
  serviceUrl: string | readonly string[],
  { sticky = false } = {},
): Promise<FrontProxy> {
  const site = await readDeployFile("nginx.conf");
  const snippet = typeof serviceUrl === "string"
    ? site
    : nginxWithInstances(site, await readDeployFile("nginx-instances.conf"), sticky);
  const hosts = [serviceUrl].flat().map((u) => new URL(u).host);
  return startNginxSite((_, port) => nginxForTest(snippet, port, hosts), true);
}

/**
 * A real nginx serving `site(dir, port)` (its `server`/`upstream` blocks) on `port` (default a free one);
 * `hostile` adds the snippet test's settings (see `nginxMain`).
 *
 * @example
 * ```ts
 * async function balancer(servers: string[]): Promise<FrontProxy> {
 *   return await startNginxSite((_, port) => `upstream app { server ${servers[0]}; }
 * server { listen 127.0.0.1:${port}; location / { proxy_pass http://app; } }`);
 * }
 * ```
 */
export function startNginxSite(
  site: (dir: string, port: number) => string,
  hostile = false,
  port = freePort(),
): Promise<FrontProxy> {
  return startProxy(
    "nginx",
    NGINX_PATH,
    (dir, port) => ({
      "site.conf": site(dir, port),
      "nginx.conf": nginxMain(dir, hostile),
    }),
    (dir) => [
      "-p",
      dir,
      "-e",
      `${dir}/error.log`,
      "-c",
      `${dir}/nginx.conf`,
      "-g",
      "daemon off;",
    ],
    "SIGTERM",
    undefined,
    port,
  ); // SIGTERM: nginx's fast shutdown, every connection closed
}

/**
 * Starts Caddy with `deploy/Caddyfile` (see {@linkcode caddyForTest}) in front of the service at
 * `serviceUrl`, or of several with the file's several-instances block.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Harness } from "../helpers/harness.ts";
 * // Declared, not run here: it needs a running harness and Caddy.
 * async function healthThroughCaddy(h: Harness): Promise<void> {
 *   const caddy = await startCaddy(h.url);
 *   try {
 *     assert.equal((await fetch(`${caddy.url}/healthz`)).status, 200);
 *   } finally {
 *     await caddy.close();
 *   }
 * }
 * ```
 */
export async function startCaddy(serviceUrl: string | readonly string[]): Promise<FrontProxy> {
  const caddyfile = await readDeployFile("Caddyfile");
  const hosts = typeof serviceUrl === "string"
    ? new URL(serviceUrl).host
    : serviceUrl.map((u) => new URL(u).host);
  return startProxy(
    "caddy",
    CADDY_PATH,
    (_dir, port) => ({
      "Caddyfile": caddyForTest(caddyfile, port, hosts),
    }),
    (dir) => ["run", "--adapter", "caddyfile", "--config", `${dir}/Caddyfile`],
    // Caddy's SIGTERM waits for open streams to end; killed, it leaves nothing behind
    "SIGKILL",
    (dir) => ({
      // its certificate and state folders, unused over plain HTTP, stay in the test's directory
      XDG_DATA_HOME: dir,
      XDG_CONFIG_HOME: dir,
    }),
  );
}
