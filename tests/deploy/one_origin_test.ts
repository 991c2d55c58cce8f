/**
 * `deploy/nginx-with-portal.conf` in a real nginx: the front end and the service on one origin.
 * The UI is stood in for by a server that names the path it got; the service runs on the doubles
 * with the recipe's settings (`TRUST_PROXY=true`, `PUBLIC_ORIGIN` the proxy's origin).
 */
import assert from "node:assert/strict";
import { HARBOR_ALIAS } from "../../sims/world.ts";
import { withHarness } from "../helpers/harness.ts";
import {
  freePort,
  nginxForTest,
  nginxTestsRun,
  readDeployFile,
  startNginxSite,
} from "./front_proxy.ts";

/** The UI's address in the recipe. */
const UI_ADDRESS = "127.0.0.1:3000";

Deno.test({
  name: "one origin: the UI's pages to the UI; /api, the public pages and share links to us",
  ignore: !nginxTestsRun("one origin behind nginx"),
  async fn() {
    const ui = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      (req) => new Response(`ui ${req.method} ${new URL(req.url).pathname}`),
    );
    const port = freePort();
    const origin = `http://127.0.0.1:${port}`;
    const snippet = await readDeployFile("nginx-with-portal.conf");
    assert.ok(snippet.includes(`server ${UI_ADDRESS};`), "the recipe's UI upstream moved");
    try {
      await withHarness(async (h) => {
        const site = (_: string, p: number) =>
          nginxForTest(snippet, p, new URL(h.url).host)
            .replace(`server ${UI_ADDRESS};`, `server 127.0.0.1:${ui.addr.port};`);
        const nginx = await startNginxSite(site, false, port);
        try {
          const get = async (path: string, init?: RequestInit) => {
            const r = await fetch(origin + path, { redirect: "manual", ...init });
            return { status: r.status, headers: r.headers, text: await r.text() };
          };
          // the UI's pages, at / too
          for (const path of ["/", "/lore/wCharMira001", "/settings", "/shared", "/publications"]) {
            assert.equal((await get(path)).text, `ui GET ${path}`);
          }
          // the API, a write included: the browser's origin is the proxy's, and it passes
          assert.match((await get("/api/openapi.json")).text, /"openapi"/);
          const write = await get("/api/lore", {
            method: "POST",
            headers: { "content-type": "application/json", origin },
            body: JSON.stringify({ title: "One Origin Note" }),
          });
          assert.equal(write.status, 201, write.text);
          // the public site: home at /public, pages, and the UI's share links
          const home = await get("/public");
          assert.equal(home.status, 200);
          assert.match(home.text, /Saltmarrow Harbor/);
          const link = await get(`/share/${HARBOR_ALIAS}`);
          assert.equal(link.status, 302);
          assert.equal(link.headers.get("location"), `${origin}/public/lore/${HARBOR_ALIAS}`);
          const page = await get(`/public/lore/${HARBOR_ALIAS}`);
          assert.equal(page.status, 200);
          assert.match(page.text, /<h1[^>]*>Saltmarrow Harbor<\/h1>/);
          assert.equal((await get("/share")).headers.get("location"), `${origin}/public`);
          // what the service answers to settings: its own origin, the proxy's
          const share = JSON.parse((await get("/api/share")).text);
          assert.ok(share.url.startsWith(`${origin}/public/lore/`), share.url);
        } finally {
          await nginx.close();
        }
      }, { env: { TRUST_PROXY: "true", PUBLIC_ORIGIN: origin } });
    } finally {
      await ui.shutdown();
    }
  },
});
