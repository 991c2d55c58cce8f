/**
 * The reverse-proxy snippets, loaded by a real nginx (and Caddy where installed) in front of the
 * real service on the doubles (see front_proxy.ts for the one transformation they get): event
 * streams reach the client event by event, the client address the proxy forwards is the one the
 * login rate limit counts with `TRUST_PROXY=true`, the forwarded origin passes the cross-site
 * check, uploads larger than nginx's default 1 MiB pass up to `MAX_UPLOAD_BYTES`, and with the
 * recipes' `PUBLIC_ORIGIN` the site's absolute URLs are on it while a host the service does not
 * answer to, forwarded by the proxy, is refused.
 */
import assert from "node:assert/strict";
import { type HarnessOptions, withHarness } from "../helpers/harness.ts";
import type { BrainDumpSimOptions } from "../../sims/parser_brain_dump.ts";
import { makePng, W } from "../../sims/world.ts";
import { loadConfig } from "../../src/config/service_config.ts";
import { rawExchange } from "../helpers/raw_http.ts";
import { envFile } from "./deploy_files.ts";
import {
  caddyTestsRun,
  type FrontProxy,
  NGINX_SOURCE_ADDRESS,
  nginxTestsRun,
  readDeployFile,
  startCaddy,
  startNginx,
} from "./front_proxy.ts";

/** The recipes' public origin (deploy/lore-portal-proxy.env), as the snippets serve it. */
const PUBLIC_ORIGIN = envFile(await readDeployFile("lore-portal-proxy.env")).PUBLIC_ORIGIN;

interface ProxyKind {
  name: string;
  start(serviceUrl: string): Promise<FrontProxy>;
  runs: boolean;
  /** The proxy reaches the service from another address than the client's (nginx's proxy_bind). */
  ownSourceAddress: boolean;
  /**
   * The proxy passes on a request for any host name: the snippet's only server block is nginx's
   * default; Caddy serves its site address alone (in the tests the proxy's own address).
   */
  forwardsAnyHost: boolean;
}

const PROXIES: ProxyKind[] = [
  {
    name: "nginx",
    start: startNginx,
    runs: nginxTestsRun("nginx in front"),
    ownSourceAddress: true,
    forwardsAnyHost: true,
  },
  {
    name: "Caddy",
    start: startCaddy,
    runs: caddyTestsRun("Caddy in front"),
    ownSourceAddress: false,
    forwardsAnyHost: false,
  },
];

/** Runs `fn` with the service on the doubles, `TRUST_PROXY=true`, and the proxy in front. */
function withFront(
  kind: ProxyKind,
  fn: (front: FrontProxy, serviceUrl: string) => Promise<void>,
  opts: HarnessOptions = {},
): Promise<void> {
  return withHarness(async (h) => {
    const front = await kind.start(h.url);
    try {
      await fn(front, h.url);
    } finally {
      await front.close();
    }
  }, { ...opts, env: { TRUST_PROXY: "true", ...opts.env } });
}

/** Complete SSE events (name only) in `text`, comments left out. */
const eventNames = (text: string) =>
  text.split("\n\n").slice(0, -1).filter((b) => b.startsWith("event: "))
    .map((b) => b.split("\n")[0].slice("event: ".length));

for (const kind of PROXIES) {
  Deno.test({
    name: `${kind.name} in front: events stream through one by one; the forwarded origin is ours`,
    ignore: !kind.runs,
    fn() {
      // The Parser double sends two events, then holds the rest while the stream stays open, and
      // no keepalive comes meanwhile: held back by a buffer, the two events would come only with
      // our terminal error event, after STREAM_IDLE_TIMEOUT_MS.
      const brainDump: BrainDumpSimOptions = { stallAfterEvents: 2, keepaliveMs: 600_000 };
      return withFront(kind, async (front, serviceUrl) => {
        const post = {
          method: "POST",
          headers: { "content-type": "application/json", origin: front.url },
          body: JSON.stringify({ rawText: "Ada Quill met Bo Reed at the harbour." }),
        };
        // the browser's origin is the proxy's, not the service's own address
        const direct = await fetch(`${serviceUrl}/api/brain-dump/stream`, post);
        assert.equal(direct.status, 403, "without the proxy's X-Forwarded-Host: another origin");
        await direct.body?.cancel();

        const res = await fetch(`${front.url}/api/brain-dump/stream`, post);
        assert.equal(res.status, 200);
        assert.match(res.headers.get("content-type")!, /^text\/event-stream/);
        const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
        let text = "";
        while (eventNames(text).length < 2) {
          const { done, value } = await reader.read();
          assert.ok(!done, `the stream ended early: ${text}`);
          text += value;
        }
        assert.deepEqual(eventNames(text), ["status", "status"]);
        await reader.cancel();
      }, {
        parser: { brainDump },
        parserSession: true,
        env: { STREAM_IDLE_TIMEOUT_MS: "20000" },
      });
    },
  });

  Deno.test({
    name: `${kind.name} in front: the login rate limit counts the client address it forwards`,
    ignore: !kind.runs,
    fn: () =>
      withFront(kind, async (front, serviceUrl) => {
        const attempt = async (base: string, forwardedFor?: string) => {
          const headers: Record<string, string> = { "content-type": "application/json" };
          if (forwardedFor) headers["x-forwarded-for"] = forwardedFor;
          const res = await fetch(`${base}/api/auth/login`, {
            method: "POST",
            headers,
            body: JSON.stringify({ email: "nobody@example.com", password: "wrong-password" }),
          });
          await res.body?.cancel();
          return res.status;
        };
        // AUTH_RATE_LIMIT=1: a client's second attempt in the window is refused
        assert.equal(await attempt(front.url, "203.0.113.9"), 401, "first attempt, through it");
        assert.equal(
          await attempt(front.url, "198.51.100.4"),
          429,
          "a forged entry changes nothing",
        );
        // the key was 127.0.0.1, the test's own address as the proxy saw it
        assert.equal(await attempt(serviceUrl), 429, "the same client, directly");
        assert.equal(await attempt(serviceUrl, "203.0.113.9"), 401, "the forged value was not it");
        if (kind.ownSourceAddress) {
          assert.equal(await attempt(serviceUrl, NGINX_SOURCE_ADDRESS), 401, "nor nginx's address");
        }
      }, { parser: true, env: { AUTH_RATE_LIMIT: "1" } }),
  });

  Deno.test({
    name: `${kind.name} in front: uploads beyond 1 MiB pass, up to MAX_UPLOAD_BYTES`,
    ignore: !kind.runs,
    fn: () =>
      withFront(kind, async (front) => {
        const limit = loadConfig({}).MAX_UPLOAD_BYTES; // the default the snippet is sized for
        const png = makePng(4, 4, () => [0, 0, 0]);
        const upload = async (size: number) => {
          const body = new Uint8Array(size);
          body.set(png); // a real image header; the padding is the "large image"
          const res = await fetch(`${front.url}/api/lore/upload-image`, {
            method: "POST",
            headers: { "content-type": "image/png", "x-host-filename": "chart.png" },
            body,
          });
          await res.body?.cancel();
          return res.status;
        };
        assert.equal(await upload(limit), 201, `an upload of exactly ${limit} bytes`);
        assert.equal(await upload(limit + 1), 413, "one byte more");
      }),
  });

  Deno.test({
    name:
      `${kind.name} in front: absolute URLs on PUBLIC_ORIGIN; a foreign host it passes on is refused`,
    ignore: !kind.runs,
    fn: () =>
      withFront(kind, async (front) => {
        const publicHost = new URL(PUBLIC_ORIGIN).host;
        const get = (path: string, host: string) =>
          rawExchange(
            front.url,
            `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
          );
        const own = new URL(front.url).host;
        const hosts = kind.forwardsAnyHost ? [own, publicHost] : [own];
        for (const host of hosts) {
          const robots = await get("/robots.txt", host);
          assert.equal(robots.status, 200, `${host}: ${robots.text.slice(0, 200)}`);
          assert.match(robots.body, new RegExp(`^Sitemap: ${PUBLIC_ORIGIN}/sitemap\\.xml$`, "m"));
          const page = await get(`/public/lore/${W.charMira}`, host);
          assert.equal(page.status, 200, host);
          assert.ok(
            page.body.includes(`<link rel="canonical" href="${PUBLIC_ORIGIN}/public/lore/`),
            host,
          );
        }
        if (kind.forwardsAnyHost) {
          // the proxy passes a rebound name on as Host and X-Forwarded-Host: the service refuses
          const foreign = await get(`/api/lore/${W.charMira}`, "attacker.example");
          assert.equal(foreign.status, 421, foreign.text.slice(0, 300));
          assert.equal(JSON.parse(foreign.body).error, "MISDIRECTED_REQUEST");
        }
      }, { env: { PUBLIC_ORIGIN } }),
  });
}
