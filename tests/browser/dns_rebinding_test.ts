/// <reference lib="dom" />
/**
 * DNS rebinding in headless Chromium: the browser resolves `attacker.example` to 127.0.0.1
 * (`--host-resolver-rules`), as a rebinding attacker makes it do once the page has loaded, and
 * the page on `http://attacker.example:<port>/` — the service's own port, so its calls are
 * same-origin for the browser — tries to read a private note and create one. The service runs
 * as `deno task dev` does (zero-login on the doubles, Core credentials from the Parser) and, in a
 * second run, with `CORE_TOKEN` in its environment. The page reads nothing, writes nothing and
 * gets no session cookie, and neither double sees a request. The controls show the test can
 * fail: the same page on the service's own address reads and writes, and so does the page on
 * `attacker.example` once the operator allows that name (`ALLOWED_HOSTS`).
 */
import assert from "node:assert/strict";
import type { Browser } from "playwright-core";
import { browserTestsRun, withBrowser } from "../helpers/browser.ts";
import { type Harness, type HarnessOptions, withHarness } from "../helpers/harness.ts";
import { W } from "../../sims/world.ts";

const SUITE = "DNS rebinding in Chromium";
const ATTACKER = "attacker.example";
const RESOLVER = [
  `--host-resolver-rules=MAP ${ATTACKER} 127.0.0.1`,
  "--disable-features=LocalNetworkAccessChecks",
];
const PLANTED = "Planted by a rebinding page";

/** What the page's script got. */
interface Outcome {
  read: { status: number; body: string } | { error: string };
  write: { status: number; body: string } | { error: string };
}

/** The attacker's page: its script reads a private note and creates one, then reports. */
const ATTACK_PAGE = `<!doctype html><html><head><title>Free maps</title></head><body>
<script>
(async () => {
  const call = async (path, init) => {
    try {
      const r = await fetch(path, init);
      return { status: r.status, body: await r.text() };
    } catch (e) {
      return { error: String(e) };
    }
  };
  const read = await call(${JSON.stringify(`/api/lore/${W.charMira}`)});
  const write = await call("/api/lore", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ title: ${JSON.stringify(PLANTED)} }),
  });
  window.outcome = { read, write };
})();
</script></body></html>`;

/**
 * Opens the attacker's page at `origin` in a fresh browser context and answers what its script
 * got and the cookies the context holds afterwards. The page itself comes from the attacker
 * (fulfilled here, never from the service); every call its script makes goes to the network.
 */
async function attackFrom(
  browser: Browser,
  origin: string,
): Promise<{ outcome: Outcome; cookies: string[] }> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.route(
      `${origin}/`,
      (route) => route.fulfill({ contentType: "text/html; charset=utf-8", body: ATTACK_PAGE }),
    );
    await page.goto(`${origin}/`);
    const outcome = await (await page.waitForFunction(() =>
      (window as unknown as { outcome?: Outcome }).outcome
    )).jsonValue() as Outcome;
    const cookies = (await context.cookies()).map((c) => `${c.name}@${c.domain}`);
    return { outcome, cookies };
  } finally {
    await context.close();
  }
}

/** Every request either double received. */
function backendCalls(h: Harness): string[] {
  return [...h.core.requests, ...(h.parser?.requests ?? [])].map((r) => `${r.method} ${r.path}`);
}

function planted(h: Harness): boolean {
  return h.core.store.noteIds().some((id) => h.core.store.getNote(id)?.title === PLANTED);
}

/** How `deno task dev` runs: zero-login, Core credentials from the Parser per user. */
const DEV: HarnessOptions = { parser: true, noCoreCredentials: true, env: { ZERO_LOGIN: "true" } };
/** The other way a browser gets credentials without logging in: the server's own token. */
const CORE_TOKEN: HarnessOptions = {};

for (const [name, opts] of [["zero-login", DEV], ["CORE_TOKEN", CORE_TOKEN]] as const) {
  Deno.test({
    name: `DNS rebinding in Chromium (${name}): a page on a rebound name reads and writes nothing`,
    ignore: !browserTestsRun(SUITE),
    fn: () =>
      withHarness((h) =>
        withBrowser(async (browser) => {
          const port = new URL(h.url).port;
          h.core.clearRequests();
          h.parser?.clearRequests();
          const { outcome, cookies } = await attackFrom(browser, `http://${ATTACKER}:${port}`);
          for (const [what, answer] of Object.entries(outcome)) {
            // the request reached the service (the resolver rule works) and was refused
            assert.ok("status" in answer, `${what}: ${JSON.stringify(answer)}`);
            assert.equal(answer.status, 421, `${what}: ${answer.body.slice(0, 200)}`);
            assert.equal(JSON.parse(answer.body).error, "MISDIRECTED_REQUEST", what);
            assert.ok(!answer.body.includes("Mira"), `${what}: nothing of the note`);
          }
          assert.deepEqual(cookies, [], "no session cookie was minted");
          assert.deepEqual(backendCalls(h), [], "neither double saw a request");
          assert.ok(!planted(h), "no note was created");
          // the script's two calls (and the browser's own favicon request) were refused
          const refused = h.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "host refused");
          assert.ok(refused.length >= 2, `${refused.length} refused`);
          assert.ok(refused.every((l) => l.host === `${ATTACKER}:${port}`));

          // control: the same page on the service's own address reads and writes
          const own = await attackFrom(browser, `http://127.0.0.1:${port}`);
          assert.ok("status" in own.outcome.read && "status" in own.outcome.write);
          assert.equal(own.outcome.read.status, 200, own.outcome.read.body.slice(0, 200));
          assert.equal(JSON.parse(own.outcome.read.body).title, "Mira Tallowend");
          assert.equal(own.outcome.write.status, 201, own.outcome.write.body.slice(0, 200));
          assert.ok(planted(h), "the control created its note");
          if (name === "zero-login") {
            assert.ok(own.cookies.length > 0, "zero-login minted a session for 127.0.0.1");
            assert.ok(own.cookies.every((c) => c.endsWith("@127.0.0.1")), String(own.cookies));
          }
        }, RESOLVER), opts),
  });
}

Deno.test({
  name: "DNS rebinding in Chromium: the same page succeeds once the name is allowed (control)",
  ignore: !browserTestsRun(SUITE),
  fn: () =>
    withHarness((h) =>
      withBrowser(async (browser) => {
        const port = new URL(h.url).port;
        const { outcome, cookies } = await attackFrom(browser, `http://${ATTACKER}:${port}`);
        assert.ok("status" in outcome.read && "status" in outcome.write, JSON.stringify(outcome));
        assert.equal(outcome.read.status, 200, outcome.read.body.slice(0, 200));
        assert.equal(outcome.write.status, 201, outcome.write.body.slice(0, 200));
        assert.ok(cookies.some((c) => c.endsWith(`@${ATTACKER}`)), String(cookies));
        assert.ok(planted(h));
      }, RESOLVER), { ...DEV, env: { ...DEV.env, ALLOWED_HOSTS: ATTACKER } }),
});
