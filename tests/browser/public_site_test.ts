/// <reference lib="dom" />
/**
 * The public site in headless Chromium against the real app and the Core double: a visitor opens
 * the home page, searches, follows a result, sees the note's content and its image, never sees
 * GM-only text, and no script planted in lore content ever runs.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { browserTestsRun, withBrowser } from "../helpers/browser.ts";
import { type Harness, withHarness } from "../helpers/harness.ts";
import { SHARE_CREDENTIALS, W } from "../../sims/world.ts";

const SUITE = "public site in Chromium";

/** Text that exists in Core but must never reach a visitor. */
const HIDDEN_TEXT = [
  "Rumours on the Docks", // #draft
  "The Drowned Bell", // #gmOnly
  "Work in Progress", // inheritable #draft
  "Unfinished Sea Charts", // below it
  "harbourmaster is in Brannoch", // .gm-only in Welcome, Travellers
  "Her mother still lives", // nested .gm-only in Mira
  "debt she cannot pay", // .gm-only in Mira
  "the bell ringer is a ghost", // .gm-only in the planted note
];

/** Every way lore content could try to run script; each one would set the flag or open a dialog. */
const PAYLOAD = `<p>Tidewatch notice: the harbour bell rings at dusk.</p>
<p><img src="api/images/${W.imgChart}/coast-chart.png" alt="The coast chart"></p>
<script>window.__pwned = "script"; alert("script")</script>
<p><img src="x" onerror="window.__pwned = 'onerror'; alert('onerror')" alt="broken"></p>
<p><a href="javascript:window.__pwned='href';alert('href')">Open the tide table</a></p>
<svg onload="window.__pwned='svg'"><circle r="4"></circle></svg>
<iframe src="javascript:parent.__pwned='iframe'"></iframe>
<div class="gm-only"><p>GM: the bell ringer is a ghost.</p></div>`;

function plantNote(h: Harness): string {
  const { note } = h.core.store.createNote({
    parentNoteId: W.guide,
    title: "Tidewatch Notice",
    type: "text",
    content: PAYLOAD,
  });
  return note.noteId;
}

/** What the page did that script in content could have caused; recorded from outside the page. */
interface Watch {
  dialogs: string[];
  cspConsole: string[];
}

async function watch(page: Page): Promise<Watch> {
  const w: Watch = { dialogs: [], cspConsole: [] };
  page.on("dialog", (d) => {
    w.dialogs.push(d.message());
    void d.dismiss();
  });
  page.on("console", (m) => {
    if (m.text().includes("Content Security Policy")) w.cspConsole.push(m.text());
  });
  // init scripts come from the automation protocol, not the page, so the CSP does not stop them
  await page.addInitScript(() => {
    const seen: string[] = [];
    Object.defineProperty(globalThis, "__violations", { value: seen });
    document.addEventListener("securitypolicyviolation", (e) => seen.push(e.violatedDirective));
  });
  return w;
}

async function assertNothingHidden(page: Page, where: string) {
  const markup = await page.content();
  for (const text of HIDDEN_TEXT) assert.ok(!markup.includes(text), `${where} shows "${text}"`);
}

async function assertNoScriptRan(page: Page, w: Watch) {
  assert.equal(await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned), undefined);
  assert.deepEqual(w.dialogs, []);
}

Deno.test({
  name: "public site in Chromium: home → search → note with image; nothing hidden, no script runs",
  ignore: !browserTestsRun(SUITE),
  fn: () =>
    withHarness((h) =>
      withBrowser(async (browser) => {
        const planted = plantNote(h);
        const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
        const page = await context.newPage();
        const w = await watch(page);

        // home: the share root's content and the published lore, readable on a phone
        const home = await page.goto(h.url + "/");
        assert.equal(home?.status(), 200);
        assert.equal(await page.locator("h1").textContent(), "Player's Guide");
        assert.match(await page.locator("main").innerText(), /Welcome to the Shattered Coast/);
        assert.ok(
          await page.locator("main").getByRole("link", { name: "Mira Tallowend" }).isVisible(),
        );
        await assertNothingHidden(page, "home");
        assert.ok(
          await page.evaluate(() => document.documentElement.scrollWidth <= globalThis.innerWidth),
          "no horizontal scrolling at phone width",
        );

        // search through the form, as a person would
        await page.getByRole("searchbox", { name: "Search the lore" }).fill("Tidewatch");
        await page.getByRole("button", { name: "Search" }).click();
        await page.waitForURL(/\/\?q=Tidewatch$/);
        assert.match(await page.getByRole("status").innerText(), /1 result for “Tidewatch”/);
        await assertNothingHidden(page, "search results");

        // follow the hit to the note page
        await page.locator("main").getByRole("link", { name: "Tidewatch Notice" }).click();
        await page.waitForURL(new RegExp(`/public/lore/${planted}$`));
        assert.equal(await page.locator("h1").textContent(), "Tidewatch Notice");
        assert.match(await page.locator(".content").innerText(), /the harbour bell rings at dusk/);
        const chart = page.getByRole("img", { name: "The coast chart" });
        await chart.waitFor();
        await page.waitForFunction(() => {
          const img = document.querySelector<HTMLImageElement>('img[alt="The coast chart"]');
          return img !== null && img.complete;
        });
        assert.equal(await chart.evaluate((img: HTMLImageElement) => img.naturalWidth), 64);
        await assertNothingHidden(page, "note page");

        // the planted script is gone: removed by the sanitizer, nothing ran, nothing to click
        const dom = await page.evaluate(() => ({
          scripts: document.querySelectorAll("script, iframe, svg, [onerror], [onload]").length,
          jsLinks: [...document.querySelectorAll("a")].filter((a) =>
            /^\s*javascript:/i.test(a.getAttribute("href") ?? "")
          ).length,
        }));
        assert.deepEqual(dom, { scripts: 0, jsLinks: 0 });
        await page.getByText("Open the tide table").click();
        await assertNoScriptRan(page, w);

        // a GM-only section of a published note stays hidden (Mira is linked from home)
        await page.goto(h.url + "/");
        await page.locator("main").getByRole("link", { name: "Mira Tallowend" }).click();
        assert.match(await page.locator(".content").innerText(), /Raised by lighthouse keepers/);
        await assertNothingHidden(page, "Mira's page");

        // had the sanitizer missed one, the CSP still blocks it: plant an inline script in the
        // served page itself (headers kept) and watch the browser refuse it
        await page.route(`**/public/lore/${planted}`, async (route) => {
          const res = await route.fetch();
          const body = (await res.text()).replace(
            "</main>",
            `<script>window.__pwned = "inline"; alert("inline")</script></main>`,
          );
          await route.fulfill({ response: res, body });
        });
        await page.goto(`${h.url}/public/lore/${planted}`);
        assert.equal(await page.locator("script").count(), 1, "the planted script is in the page");
        await assertNoScriptRan(page, w);
        const violations = await page.evaluate(() =>
          (globalThis as unknown as { __violations: string[] }).__violations
        );
        assert.deepEqual(violations, ["script-src-elem"]);
        assert.ok(
          w.cspConsole.some((m) =>
            /inline script/i.test(m)
          ),
          "the browser reports the block",
        );
        await context.close();

        // a password-protected note: the browser is challenged (401 + WWW-Authenticate; headless
        // Chromium with no password to give ends the navigation) and, with the share's
        // credentials, shows it
        const locked = await browser.newContext();
        await assert.rejects(
          (await locked.newPage()).goto(`${h.url}/public/lore/${W.guideVault}`),
          /ERR_INVALID_AUTH_CREDENTIALS/,
        );
        await locked.close();
        const open = await browser.newContext({
          httpCredentials: {
            username: SHARE_CREDENTIALS.user,
            password: SHARE_CREDENTIALS.password,
          },
        });
        const vault = await open.newPage();
        assert.equal((await vault.goto(`${h.url}/public/lore/${W.guideVault}`))?.status(), 200);
        assert.equal(await vault.locator("h1").textContent(), "The Lantern Vault");
        await open.close();
      })
    ),
});
