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
        // (the one script left is the site's own theme script)
        const dom = await page.evaluate(() => ({
          scripts: document.querySelectorAll(
            'script:not([src^="/public/theme.js?v="]), iframe, svg, [onerror], [onload]',
          ).length,
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
        assert.equal(
          await page.locator("script:not([src])").count(),
          1,
          "the planted script is in the page",
        );
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

        // a password-protected note: the site's own form (no Basic dialog), which opens the
        // branch with the share's credentials, and "Lock again" closes it
        const player = await browser.newContext();
        const vault = await player.newPage();
        const vaultUrl = `${h.url}/public/lore/${W.guideVault}`;
        assert.equal((await vault.goto(vaultUrl))?.status(), 401);
        assert.equal(await vault.locator("h1").textContent(), "Password required");
        await vault.getByLabel("Name").fill(SHARE_CREDENTIALS.user);
        await vault.getByLabel("Password").fill("candle");
        await vault.getByRole("button", { name: "Unlock" }).click();
        await vault.getByRole("alert").waitFor();
        assert.match(await vault.getByRole("alert").textContent() ?? "", /not right/);
        assert.equal(await vault.getByLabel("Name").inputValue(), SHARE_CREDENTIALS.user);
        await vault.getByLabel("Password").fill(SHARE_CREDENTIALS.password);
        await vault.getByRole("button", { name: "Unlock" }).click();
        await vault.waitForURL(vaultUrl);
        assert.equal(await vault.locator("h1").textContent(), "The Lantern Vault");
        await vault.getByRole("button", { name: "Lock again" }).click();
        await vault.waitForURL(`${h.url}/public`);
        assert.equal((await vault.goto(vaultUrl))?.status(), 401);
        await player.close();
      })
    ),
});

/** The page's background colour as the browser computed it. */
const background = (page: Page) =>
  page.evaluate(() => getComputedStyle(document.body).backgroundColor);

const LIGHT_BG = "rgb(251, 250, 247)";
const DARK_BG = "rgb(22, 24, 28)";

Deno.test({
  name: "public site in Chromium: the theme button switches the colours and the choice stays",
  ignore: !browserTestsRun(SUITE),
  fn: () =>
    withHarness((h) =>
      withBrowser(async (browser) => {
        // without script: no button, the system's scheme
        const bare = await browser.newContext({ javaScriptEnabled: false, colorScheme: "dark" });
        const still = await bare.newPage();
        await still.goto(h.url + "/");
        assert.equal(await still.locator(".theme-toggle").count(), 0);
        assert.equal(await background(still), DARK_BG);
        await bare.close();

        const context = await browser.newContext({ colorScheme: "light" });
        const page = await context.newPage();
        const w = await watch(page);
        // the theme each page had when its <body> began: what its first paint can show
        await page.addInitScript(() => {
          new MutationObserver((_, observer) => {
            if (!document.body) return;
            Object.assign(globalThis, {
              __themeAtBody: document.documentElement.getAttribute("data-theme"),
            });
            observer.disconnect();
          }).observe(document, { childList: true, subtree: true });
        });
        const themeAtBody = () =>
          page.evaluate(() => (globalThis as { __themeAtBody?: string | null }).__themeAtBody);
        await page.goto(h.url + "/");
        const toggle = page.locator("header").getByRole("button", { name: /^Theme: / });
        assert.equal(await toggle.textContent(), "Theme: System");
        assert.equal(await background(page), LIGHT_BG);
        // from a light system the first click shows the other scheme
        await toggle.click();
        assert.equal(await toggle.textContent(), "Theme: Dark");
        assert.equal(await background(page), DARK_BG);
        // the choice holds on the next page, from its first paint
        await page.locator("main").getByRole("link", { name: "Mira Tallowend" }).click();
        await page.waitForURL(/\/public\/lore\//);
        assert.equal(await themeAtBody(), "dark");
        assert.equal(await background(page), DARK_BG);
        assert.equal(await toggle.textContent(), "Theme: Dark");
        await toggle.click();
        assert.equal(await toggle.textContent(), "Theme: Light");
        assert.equal(await background(page), LIGHT_BG);
        await toggle.click();
        assert.equal(await toggle.textContent(), "Theme: System");
        await page.reload();
        assert.equal(await toggle.textContent(), "Theme: System");
        assert.equal(await background(page), LIGHT_BG);
        // the script ran under the page's CSP, which refused nothing
        const violations = await page.evaluate(() =>
          (globalThis as unknown as { __violations: string[] }).__violations
        );
        assert.deepEqual(violations, []);
        assert.deepEqual(w.cspConsole, []);
        await context.close();
      })
    ),
});
