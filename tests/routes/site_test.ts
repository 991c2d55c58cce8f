/** The public site (`/`, `/public/lore/:id`, `/public/site.css`) over HTTP against the Core double. */
import assert from "node:assert/strict";
import { SITE_CSP } from "../../src/site/headers.ts";
import { SITE_CSS } from "../../src/site/stylesheet.ts";
import { THEME_JS, THEME_JS_VERSION } from "../../src/site/theme_script.ts";
import { assertNoSecrets, type Harness, withHarness } from "../helpers/harness.ts";
import { answerMovingTime, manualDeadlines } from "../helpers/manual_deadlines.ts";
import { HARBOR_ALIAS, SHARE_CREDENTIALS, W } from "../../sims/world.ts";

/** Titles and sections that exist in Core but are never public. */
const HIDDEN_TEXT = [
  "Rumours on the Docks",
  "Rumour has it the bell rings",
  "The Drowned Bell",
  "Brannoch's heart",
  "Work in Progress",
  "Unfinished Sea Charts",
  "Half-drawn soundings",
  "Q2lwaGVyOnNlYWxlZC1ieS10aGUtZ3VpbGQ=",
  "yK1c9mPqZ2bV8sLw4tRx0nHe3uJf6aDg",
  "harbourmaster is in Brannoch",
  "Her mother still lives",
  "debt she cannot pay",
  "gm-only",
];

/** The one script a page may hold: the site's theme script, at its current version. */
const THEME_SCRIPT = `<script src="/public/theme.js?v=${THEME_JS_VERSION}"></script>`;

const BASIC = "Basic " + btoa(`${SHARE_CREDENTIALS.user}:${SHARE_CREDENTIALS.password}`);

interface Page {
  status: number;
  headers: Headers;
  body: string;
}

async function get(h: Harness, path: string, headers?: HeadersInit): Promise<Page> {
  const res = await h.request(path, { headers });
  const body = await res.text();
  assertNoSecrets(h, body);
  return { status: res.status, headers: res.headers, body };
}

function assertNothingHidden(page: Page, where: string) {
  for (const text of HIDDEN_TEXT) assert.ok(!page.body.includes(text), `${where} shows "${text}"`);
}

function assertSiteHeaders(page: Page) {
  assert.equal(page.headers.get("content-security-policy"), SITE_CSP);
  assert.equal(page.headers.get("x-content-type-options"), "nosniff");
  assert.equal(page.headers.get("referrer-policy"), "no-referrer");
  assert.equal(page.headers.get("x-frame-options"), "DENY");
  assert.ok(page.headers.get("x-request-id"));
}

function assertHtml(page: Page) {
  assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
  assert.match(page.body, /^<!doctype html>/);
  // attribute values are escaped text; only tags and attribute names can carry script
  assert.equal(page.body.split(THEME_SCRIPT).length, 2, "the site's own script, once");
  const markup = page.body.replace(THEME_SCRIPT, "").replace(/"[^"]*"/g, '""');
  assert.ok(
    !/<script|<style|<[^>]*\s(on[a-z]+|style)\s*=/i.test(markup),
    "no other script, no inline style",
  );
}

/** The hrefs of `<a>` elements, in order. */
const links = (body: string) => [...body.matchAll(/<a [^>]*href="([^"]*)"/g)].map((m) => m[1]);

// --- GET / ----------------------------------------------------------------------------------

Deno.test("GET /: the share root's content and published lore grouped by type", () =>
  withHarness(async (h) => {
    const page = await get(h, "/");
    assert.equal(page.status, 200);
    assertHtml(page);
    assertSiteHeaders(page);
    assert.equal(page.headers.get("cache-control"), "no-cache");
    assert.match(page.headers.get("etag") ?? "", /^W\/"[A-Za-z0-9_-]+"$/);
    assert.match(page.body, /<title>Player&#39;s Guide<\/title>/, "the world's name, no product");
    assert.match(page.body, /<a class="brand" href="\/">Player&#39;s Guide<\/a>/);
    assert.match(page.body, /<h1>Player&#39;s Guide<\/h1>/);
    assert.match(page.body, /Welcome to the Shattered Coast/);
    assert.match(
      page.body,
      /<h3 id="group-\d+"><a href="\/public\/types\/character">Characters<\/a><\/h3>/,
    );
    assert.match(
      page.body,
      /<h3 id="group-\d+"><a href="\/public\/types\/location">Locations<\/a><\/h3>/,
    );
    const hrefs = links(page.body);
    for (const id of [W.charMira, W.faction]) {
      assert.ok(hrefs.some((href) => href.endsWith(`/public/lore/${id}`)), id);
    }
    assert.match(page.body, />Saltmarrow Harbor</);
    assert.ok(!page.body.includes('name="robots"'));
    assert.equal(page.headers.get("x-robots-tag"), null);
    assertNothingHidden(page, "home");
    // the stylesheet and the theme script are the only subresources besides images
    assert.match(page.body, /<link rel="stylesheet" href="\/public\/site.css\?v=[\w-]+">/);
    assert.ok(page.body.includes(THEME_SCRIPT));
  }));

Deno.test("GET /: 304 for the page's own ETag, a new one once the published lore changes", () =>
  withHarness(async (h) => {
    const first = await get(h, "/");
    const etag = first.headers.get("etag")!;
    const again = await h.request("/", { headers: { "if-none-match": etag } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), "");
    assert.equal(again.headers.get("etag"), etag);
    assert.equal(again.headers.get("content-security-policy"), SITE_CSP);

    const { note } = h.core.store.createNote({
      parentNoteId: W.guide,
      title: "Harbour Tides",
      type: "text",
      content: "<p>High water at noon.</p>",
    });
    h.core.store.createAttribute({ noteId: note.noteId, type: "label", name: "lore", value: "" });
    h.core.store.createAttribute({
      noteId: note.noteId,
      type: "label",
      name: "loreType",
      value: "event",
    });
    const changed = await get(h, "/", { "if-none-match": etag });
    assert.equal(changed.status, 200);
    assert.notEqual(changed.headers.get("etag"), etag);
    assert.match(changed.body, /Harbour Tides/);
  }, { env: { PUBLIC_CACHE_MS: "0" } }));

Deno.test("GET /?q=: search results link to public notes, never hidden ones", () =>
  withHarness(async (h) => {
    const page = await get(h, "/?q=harbor");
    assert.equal(page.status, 200);
    assertHtml(page);
    assertSiteHeaders(page);
    assert.equal(page.headers.get("x-robots-tag"), "noindex");
    assert.match(page.body, /<meta name="robots" content="noindex">/);
    assert.match(page.body, /<title>Search: harbor · Player&#39;s Guide<\/title>/);
    assert.match(page.body, /value="harbor"/);
    assert.match(page.body, /\d+ results? for “harbor”/);
    assert.ok(links(page.body).includes(`/public/lore/${HARBOR_ALIAS}`), "linked by its alias");
    assertNothingHidden(page, "search");

    const bell = await get(h, "/?q=bell");
    assertNothingHidden(bell, "search for bell");
  }));

Deno.test("GET /?q=: the query is escaped; blank shows home; too long is an HTML 400", () =>
  withHarness(async (h) => {
    const evil = await get(h, `/?q=${encodeURIComponent('"><script>alert(1)</script>')}`);
    assert.equal(evil.status, 200);
    assertHtml(evil);
    assert.match(evil.body, /value="&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;"/);

    const blank = await get(h, "/?q=%20%20");
    assert.equal(blank.status, 200);
    assert.match(blank.body, /<h1>Player&#39;s Guide<\/h1>/);

    h.core.clearRequests();
    const long = await get(h, `/?q=${"a".repeat(201)}`);
    assert.equal(long.status, 400);
    assertHtml(long);
    assertSiteHeaders(long);
    assert.match(long.body, /<h1>Bad request<\/h1>/);
    assert.match(long.body, /at most 200 characters/);
    assert.deepEqual(h.core.requests, [], "nothing sent to Core");
  }));

// --- GET /public/lore/:id -------------------------------------------------------------------

Deno.test("GET /public/lore/:id: a published note with its details, links and content", () =>
  withHarness(async (h) => {
    const page = await get(h, `/public/lore/${W.charMira}`);
    assert.equal(page.status, 200);
    assertHtml(page);
    assertSiteHeaders(page);
    assert.match(page.body, /<title>Mira Tallowend · Player&#39;s Guide<\/title>/);
    assert.match(
      page.body,
      /<p class="kicker"><a href="\/public\/types\/character">Character<\/a><\/p>/,
    );
    assert.match(page.body, /<h1 id="note-title">Mira Tallowend<\/h1>/);
    assert.match(page.body, /Mira Tallowend pilots ships through the reefs/);
    assert.match(page.body, /Raised by lighthouse keepers/);
    assert.match(page.body, /Last modified <time datetime="2026-03-\d\dT[\d:.]+Z">\d+ March 2026/);
    assert.match(
      page.body,
      /<a href="https:\/\/music.example.org\/tides-of-brass" rel="noopener noreferrer external">Theme song<\/a>/,
    );
    // links inside content go to public pages (the harbor by its alias or id)
    assert.ok(
      links(page.body).some((href) =>
        href === `/public/lore/${HARBOR_ALIAS}` || href === `/public/lore/${W.locHarbor}`
      ),
    );
    assertNothingHidden(page, "Mira");
  }));

Deno.test("GET /public/lore/:alias: resolves #shareAlias", () =>
  withHarness(async (h) => {
    const page = await get(h, `/public/lore/${HARBOR_ALIAS}`);
    assert.equal(page.status, 200);
    assert.match(page.body, /<h1 id="note-title">Saltmarrow Harbor<\/h1>/);
    assert.match(
      page.body,
      /tar, gulls and the Guild&#39;s lamps|tar, gulls and the Guild's lamps/,
    );
  }));

Deno.test("GET /public/lore/:id: missing and hidden notes are the same HTML 404", () =>
  withHarness(async (h) => {
    const ids = [
      W.guideDraft,
      W.guideGmOnly,
      W.guideProtected,
      W.guideWip,
      W.guideWipChild,
      W.charOskar, // exists, but outside the share
      "nope000000001",
      "bad%20id",
    ];
    const bodies = new Set<string>();
    for (const id of ids) {
      const page = await get(h, `/public/lore/${id}`);
      assert.equal(page.status, 404, id);
      assertHtml(page);
      assertSiteHeaders(page);
      assert.equal(page.headers.get("x-robots-tag"), "noindex");
      assert.equal(page.headers.get("cache-control"), "no-store");
      assert.match(page.body, /<h1>Not found<\/h1>/);
      assertNothingHidden(page, id);
      bodies.add(page.body.replace(/<code>[^<]*<\/code>/, ""));
    }
    assert.equal(bodies.size, 1, "no existence oracle");
  }));

Deno.test("GET /public/lore/:id: a password-protected note shows the password page (HTML 401)", () =>
  withHarness(async (h) => {
    for (const id of [W.guideVault, W.guideVaultLedger]) {
      const page = await get(h, `/public/lore/${id}`);
      assert.equal(page.status, 401, id);
      assertHtml(page);
      assertSiteHeaders(page);
      // the site's own form, never the browser's Basic dialog
      assert.equal(page.headers.get("www-authenticate"), null);
      assert.match(page.body, /<h1>Password required<\/h1>/);
      assert.match(page.body, /<form class="unlock" method="post" action="\/public\/unlock">/);
      assert.ok(!page.body.includes("Entries for oil"));
      const wrong = await get(h, `/public/lore/${id}`, { authorization: "Basic " + btoa("x:y") });
      assert.equal(wrong.status, 401);
    }
    const open = await get(h, `/public/lore/${W.guideVaultLedger}`, { authorization: BASIC });
    assert.equal(open.status, 200);
    assert.match(open.body, /Entries for oil, rope and silence/);
    assert.equal(open.headers.get("cache-control"), "private, no-cache");
    assert.equal(open.headers.get("vary"), "Authorization");
  }));

Deno.test("GET /public/lore/:id: script in lore content never reaches the page", () =>
  withHarness(async (h) => {
    const { note } = h.core.store.createNote({
      parentNoteId: W.guide,
      title: `<img src=x onerror=alert(1)>Tide <b>log</b>`,
      type: "text",
      content: `<p>Safe words.</p><script>alert(1)</script><img src="x" onerror="alert(2)">` +
        `<a href="javascript:alert(3)">tide table</a><p class="gm-only">GM whisper</p>`,
    }, { rawTitle: true }); // a title stored with markup (imports, Core's sanitizer can do that)
    const page = await get(h, `/public/lore/${note.noteId}`);
    assert.equal(page.status, 200);
    assertHtml(page);
    assert.match(page.body, /Safe words/);
    assert.match(page.body, /<h1 id="note-title">Tide log<\/h1>/, "the text a browser shows");
    assert.ok(!/javascript:/i.test(page.body));
    assert.ok(!page.body.includes("GM whisper"));
  }));

Deno.test("GET /public/lore/:id: 304 on the page's ETag; HEAD answers headers only", () =>
  withHarness(async (h) => {
    const page = await get(h, `/public/lore/${W.faction}`);
    const etag = page.headers.get("etag")!;
    const again = await h.request(`/public/lore/${W.faction}`, {
      headers: { "if-none-match": etag },
    });
    assert.equal(again.status, 304);
    await again.body?.cancel();
    const head = await h.request(`/public/lore/${W.faction}`, { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get("etag"), etag);
    assert.equal(await head.text(), "");
  }));

Deno.test("site: a share that opts out of indexing says noindex on every page", () =>
  withHarness(async (h) => {
    h.core.store.createAttribute({
      noteId: W.guide,
      type: "label",
      name: "shareDisallowRobotIndexing",
      value: "",
    });
    for (const path of ["/", `/public/lore/${W.charMira}`]) {
      const page = await get(h, path);
      assert.equal(page.status, 200, path);
      assert.equal(page.headers.get("x-robots-tag"), "noindex", path);
      assert.match(page.body, /<meta name="robots" content="noindex">/, path);
    }
  }));

// --- failures of Core ------------------------------------------------------------------------

Deno.test("site: Core not configured or unreachable → HTML 503, no internals", async () => {
  await withHarness(async (h) => {
    for (const path of ["/", `/public/lore/${W.charMira}`, "/?q=harbor", "/"]) {
      const page = await get(h, path);
      assert.equal(page.status, 503, path);
      assertHtml(page);
      assert.match(page.body, /<h1>Temporarily unavailable<\/h1>/);
      assert.doesNotMatch(page.body, /configur|CORE_|PARSER_|TOKEN/i, "no hint for visitors");
    }
    const api = await h.requestJson("/api/public/search?q=harbor");
    assert.equal(api.status, 503);
    assert.equal(api.body.message, "The public share is not available");
    // the operator is told, once, not once per visit
    const told = h.logs.map((l) => JSON.parse(l)).filter((l) =>
      l.level === "warn" && /^public share: Core is not configured; set CORE_URL/.test(l.msg)
    );
    assert.equal(told.length, 1, "one line for five visits");
  }, { noCoreCredentials: true });
  await withHarness(async (h) => {
    const page = await get(h, "/");
    assert.equal(page.status, 503);
    assertHtml(page);
  }, { coreUrlOverride: "http://127.0.0.1:9" });
});

Deno.test("site: Core failing → HTML error pages; Core refusing our token never prompts", () => {
  // the deadline passes only while a hanging Core holds the request
  const time = manualDeadlines();
  return withHarness(async (h) => {
    const cases = [
      { status: 500, expect: 502, h1: "Something went wrong" },
      { status: 401, expect: 503, h1: "Temporarily unavailable" },
      { hang: true, expect: 504, h1: "Temporarily unavailable" },
    ];
    for (const c of cases) {
      h.core.fault({
        path: /^\/etapi\//,
        ...(c.hang ? { hang: true } : { status: c.status }),
        body: '{"status":500,"code":"GENERIC","message":"SQLITE secret path /var/lib/core"}',
      });
      const page = await answerMovingTime(time, get(h, "/"), () => h.core.held() > 0);
      assert.equal(page.status, c.expect, JSON.stringify(c));
      assertHtml(page);
      assert.equal(page.headers.get("www-authenticate"), null);
      assert.match(page.body, new RegExp(`<h1>${c.h1}</h1>`));
      assert.ok(!page.body.includes("SQLITE"));
      h.core.clearFaults();
    }
  }, { env: { PUBLIC_CACHE_MS: "0", UPSTREAM_TIMEOUT_MS: "150" }, deadlines: time });
});

// --- GET /public/site.css -------------------------------------------------------------------

Deno.test("GET /public/site.css: the module's stylesheet, cacheable, with 304", () =>
  withHarness(async (h) => {
    const res = await h.request("/public/site.css");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/css; charset=utf-8");
    assert.equal(res.headers.get("cache-control"), "public, max-age=86400");
    assert.equal(await res.text(), SITE_CSS);
    const etag = res.headers.get("etag")!;
    const again = await h.request("/public/site.css", { headers: { "if-none-match": etag } });
    assert.equal(again.status, 304);
    await again.body?.cancel();
    assert.deepEqual(h.core.requests, [], "no backend involved");
  }));

// --- GET /public/theme.js -------------------------------------------------------------------

Deno.test("GET /public/theme.js: the module's script, cacheable, allowed by the pages' CSP", () =>
  withHarness(async (h) => {
    const res = await h.request(`/public/theme.js?v=${THEME_JS_VERSION}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/javascript; charset=utf-8");
    assert.equal(res.headers.get("cache-control"), "public, max-age=86400");
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    assert.equal(await res.text(), THEME_JS);
    const etag = res.headers.get("etag")!;
    assert.ok(etag.includes(THEME_JS_VERSION), "the ETag is the content's version");
    const again = await h.request("/public/theme.js", { headers: { "if-none-match": etag } });
    assert.equal(again.status, 304);
    await again.body?.cancel();
    // the page that loads it allows scripts from its own origin, and nothing inline
    const page = await get(h, "/");
    const scripts = page.headers.get("content-security-policy")!.split(";")
      .map((d) => d.trim()).find((d) => d.startsWith("script-src"));
    assert.equal(scripts, "script-src 'self'");
    assert.deepEqual(h.core.requests.filter((r) => r.path.includes("theme")), []);
  }));
