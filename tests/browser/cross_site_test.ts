/// <reference lib="dom" />
/**
 * Cross-site isolation in headless Chromium: a page on another origin — another site
 * (127.0.0.2) and a sibling on the same site (another port of 127.0.0.1) — loads our costly
 * private routes as `<img>`, `<script>` and `<link rel=stylesheet>`, submits a GET form and
 * follows a link to them. The service has environment credentials, so no cookie is needed: only
 * fetch metadata can stop it. Neither backend double records a single request, while a fetch from
 * the service's own origin still works.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { browserTestsRun, withBrowser } from "../helpers/browser.ts";
import { type Harness, withHarness } from "../helpers/harness.ts";

const SUITE = "cross-site isolation in Chromium";

/** The costly routes: an AI gap analysis, a semantic search, a Core search. */
const COSTLY = ["/api/ai/gaps", "/api/rag?text=harbour", "/api/lore"];

function attackPage(target: string): string {
  const t = (path: string) => `${target}${path}`.replaceAll("&", "&amp;");
  return `<!doctype html><html><head><title>Free maps</title>
${COSTLY.map((p) => `<link rel="stylesheet" href="${t(p)}">`).join("\n")}
</head><body>
${COSTLY.map((p) => `<img src="${t(p)}" alt="">`).join("\n")}
${COSTLY.map((p) => `<script src="${t(p)}"></script>`).join("\n")}
<form id="f" action="${t("/api/rag")}" method="get"><input name="text" value="harbour">
<button id="go">Search</button></form>
<a id="nav" href="${t("/api/ai/gaps")}">Gaps</a>
</body></html>`;
}

/** Serves the attacker's page on `hostname`, runs `fn` with its URL, always stops it. */
async function withAttacker(
  hostname: string,
  target: string,
  fn: (pageUrl: string) => Promise<void>,
): Promise<void> {
  const server = Deno.serve(
    { hostname, port: 0, onListen: () => {} },
    () =>
      new Response(attackPage(target), { headers: { "content-type": "text/html; charset=utf-8" } }),
  );
  try {
    await fn(`http://${hostname}:${server.addr.port}/`);
  } finally {
    await server.shutdown();
  }
}

function backendCalls(h: Harness): string[] {
  return [...h.core.requests, ...h.parser!.requests].map((r) => `${r.method} ${r.path}`);
}

/**
 * Loads the attacker's page, then submits its form and follows its link (each a navigation);
 * answers the statuses the service logged meanwhile for the costly routes. (The service's log,
 * not the page: Chromium's opaque-response blocking hides the answers to `<img>` and `<script>`
 * from the page, after the requests were sent.)
 */
async function attack(h: Harness, page: Page, pageUrl: string): Promise<number[]> {
  const from = h.logs.length;
  await page.goto(pageUrl, { waitUntil: "load" });
  await Promise.all([page.waitForURL((u) => u.href.startsWith(h.url)), page.click("#go")]);
  await page.goto(pageUrl, { waitUntil: "load" });
  await Promise.all([page.waitForURL((u) => u.href.startsWith(h.url)), page.click("#nav")]);
  const routes = new Set(COSTLY.map((p) => p.split("?")[0]));
  return h.logs.slice(from).map((l) => JSON.parse(l))
    .filter((l) => l.msg === "request" && routes.has(l.route)).map((l) => l.status);
}

Deno.test({
  name: "cross-site in Chromium: another site's page cannot make us do backend work",
  ignore: !browserTestsRun(SUITE),
  fn: () =>
    withHarness((h) =>
      withBrowser(async (browser) => {
        for (const hostname of ["127.0.0.2", "127.0.0.1"]) {
          await withAttacker(hostname, h.url, async (pageUrl) => {
            h.core.clearRequests();
            h.parser!.clearRequests();
            const page = await browser.newPage();
            try {
              const statuses = await attack(h, page, pageUrl);
              // every subresource and both navigations reached the service and were refused
              assert.ok(statuses.length >= COSTLY.length * 3 + 2, `${hostname}: ${statuses}`);
              assert.deepEqual([...new Set(statuses)], [403], hostname);
              assert.deepEqual(backendCalls(h), [], hostname);
            } finally {
              await page.close();
            }
          });
        }
        // the service's own origin still works
        const page = await browser.newPage();
        try {
          await page.goto(`${h.url}/healthz`);
          const statuses = await page.evaluate(async (paths) => {
            const out: number[] = [];
            for (const p of paths) out.push((await fetch(p)).status);
            return out;
          }, COSTLY);
          assert.deepEqual(statuses, COSTLY.map(() => 200));
          assert.ok(h.parser!.requests.some((r) => r.path === "/suggest/gaps"));
        } finally {
          await page.close();
        }
      }), { parser: true, parserSession: true }),
});
