/**
 * What the live proxy tests (reverse_proxy_test.ts) cannot show over plain HTTP on one machine:
 * the snippets' sizes and timeouts agree with the service's defaults, nginx's event-stream
 * location covers every server-sent-events route of the route table, and the TLS-only headers are
 * set. Caddy is not installed by CI: without it the Caddyfile is checked here by its directives
 * only (with it, also by `caddy adapt --validate`), and Caddy flushes event streams by itself, so
 * `flush_interval -1` is documented intent that no test here can tell from its absence.
 */
import assert from "node:assert/strict";
import { loadConfig } from "../../src/config/service_config.ts";
import { allRoutes } from "../../src/routes/index.ts";
import { envFile } from "./deploy_files.ts";
import { CADDY_PATH, caddyTestsRun, readDeployFile, SERVICE_ADDRESS } from "./front_proxy.ts";

const defaults = loadConfig({});
const nginx = await readDeployFile("nginx.conf");
const caddyfile = await readDeployFile("Caddyfile");

/** nginx sizes: `20m`, `512k`, bytes. */
function nginxBytes(size: string): number {
  const [, n, unit] = /^(\d+)([kKmMgG]?)$/.exec(size)!;
  return Number(n) * { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[unit.toLowerCase()]!;
}

/** Every route answering with server-sent events, its path parameters filled in. */
const sseRoutes = allRoutes.filter((r) =>
  Object.values(r.responses).some((spec) =>
    typeof spec === "object" && [spec.mediaType ?? []].flat().includes("text/event-stream")
  )
).map((r) => ({ method: r.method, path: r.path.replace(/:\w+/g, "Ab3_note") }));

Deno.test("nginx.conf: upload size, timeouts and forwarded headers agree with the service", () => {
  const size = /^\s*client_max_body_size (\S+);/m.exec(nginx)![1];
  assert.equal(
    nginxBytes(size),
    defaults.MAX_UPLOAD_BYTES,
    "client_max_body_size = MAX_UPLOAD_BYTES",
  );
  const read = Number(/^\s*proxy_read_timeout (\d+)s;/m.exec(nginx)![1]) * 1000;
  assert.ok(
    read > defaults.AI_TIMEOUT_MS,
    "nginx waits longer than the service waits for the Parser",
  );
  assert.ok(read > defaults.STREAM_IDLE_TIMEOUT_MS, "and longer than a quiet event stream lasts");
  assert.match(nginx, /^\s*server (\S+);/m);
  assert.equal(/^\s*server (\S+);/m.exec(nginx)![1], SERVICE_ADDRESS);
  // over TLS only, so not seen by the plain-HTTP test: Secure cookies follow X-Forwarded-Proto
  assert.match(nginx, /^\s*proxy_set_header X-Forwarded-Proto \$scheme;$/m);
  assert.match(nginx, /^\s*listen 443 ssl\b/m);
  assert.match(nginx, /^\s*ssl_certificate \S+;$/m);
  assert.match(nginx, /^\s*ssl_certificate_key \S+;$/m);
});

Deno.test("snippets: they serve the name the service answers to (PUBLIC_ORIGIN) and pass it on", async () => {
  const env = envFile(await readDeployFile("lore-portal-proxy.env"));
  const name = new URL(loadConfig(env).PUBLIC_ORIGIN!).hostname;
  assert.equal(/^\s*server_name (\S+);$/m.exec(nginx)![1], name);
  // the visitor's host, not the upstream's name: the service refuses hosts it does not know
  assert.match(nginx, /^\s*proxy_set_header Host \$host;$/m);
  assert.match(nginx, /^\s*proxy_set_header X-Forwarded-Host \$http_host;$/m);
  // Caddy passes the visitor's Host on by itself
  assert.equal(/^(\S+) \{$/m.exec(caddyfile)![1], name);
  assert.doesNotMatch(caddyfile, /header_up Host /);
});

Deno.test("nginx.conf: the unbuffered location covers every server-sent-events route", () => {
  assert.ok(sseRoutes.length >= 2, `event-stream routes found: ${JSON.stringify(sseRoutes)}`);
  const [, pattern] = /^\s*location ~ (\S+) \{$/m.exec(nginx)!;
  const block = nginx.slice(nginx.indexOf(`location ~ ${pattern}`)).split("}")[0];
  assert.match(block, /proxy_buffering off;/);
  assert.match(block, /gzip off;/);
  for (const route of sseRoutes) {
    assert.match(route.path, new RegExp(pattern), `${route.method} ${route.path}`);
  }
  assert.doesNotMatch("/api/brain-dump", new RegExp(pattern), "plain routes keep nginx's buffers");
});

Deno.test("Caddyfile: streaming, upload size and address agree with the service", () => {
  const body = /reverse_proxy (\S+) \{([^}]*)\}/.exec(caddyfile)!;
  assert.equal(body[1], SERVICE_ADDRESS);
  assert.match(body[2], /^\s*flush_interval -1$/m);
  const [, size] = /^\s*max_size (\d+)MiB$/m.exec(caddyfile)!;
  assert.equal(Number(size) * 1024 ** 2, defaults.MAX_UPLOAD_BYTES, "max_size = MAX_UPLOAD_BYTES");
  // a CDN in front needs its addresses trusted, or every visitor shares its rate-limit key
  assert.match(caddyfile, /trusted_proxies static /);
  assert.match(caddyfile, /header_up X-Forwarded-For \{client_ip\}/);
});

Deno.test({
  name: "Caddyfile: caddy adapt --validate accepts it as shipped",
  ignore: !caddyTestsRun("Caddyfile validation"),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "lpp-caddy-" });
    try {
      await Deno.writeTextFile(`${dir}/Caddyfile`, caddyfile);
      const out = await new Deno.Command(CADDY_PATH, {
        args: ["adapt", "--adapter", "caddyfile", "--config", `${dir}/Caddyfile`, "--validate"],
        env: { XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
      }).output();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      const json = JSON.parse(new TextDecoder().decode(out.stdout));
      const server = Object.values(json.apps.http.servers)[0] as { listen: string[] };
      assert.deepEqual(server.listen, [":443"], "served over TLS");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
