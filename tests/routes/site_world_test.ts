/**
 * The public site as a world to move around in, over HTTP against the Core double: the world's
 * name, the navigation tree, breadcrumbs, children, previous/next, backlinks, the infobox, grouped
 * relations, preview metadata, lore type pages, the timeline, maps, the sitemap and the feed —
 * and none of them names a hidden note.
 */
import assert from "node:assert/strict";
import { assertNoSecrets, type Harness, withHarness } from "../helpers/harness.ts";
import { createLoreNote, HARBOR_ALIAS, SHARE_CREDENTIALS, W } from "../../sims/world.ts";

const BASIC = "Basic " + btoa(`${SHARE_CREDENTIALS.user}:${SHARE_CREDENTIALS.password}`);

/** Titles and text that exist in Core but are never public (the vault needs its password). */
const HIDDEN = [
  "Rumours on the Docks",
  "The Drowned Bell",
  "Work in Progress",
  "Unfinished Sea Charts",
  "Q2lwaGVyOnNlYWxlZC1ieS10aGUtZ3VpbGQ=",
  "harbourmaster is in Brannoch",
  "debt she cannot pay",
  W.guideDraft,
  W.guideGmOnly,
  W.guideWip,
  W.guideProtected,
];
const LOCKED = ["The Lantern Vault", "Ledger of the Vault", W.guideVault, W.guideVaultLedger];

async function get(h: Harness, path: string, headers?: HeadersInit) {
  const res = await h.request(path, { headers });
  const text = await res.text();
  assertNoSecrets(h, text);
  assert.ok(!text.includes("\\n"), `${path} shows an escaped newline`);
  // markup as a browser reads it: whitespace between tags and inside tags does not matter
  const body = text.replace(/\s+/g, " ").replace(/>\s+</g, "><").replace(/\s+>/g, ">")
    .replace(/<\s+/g, "<");
  return { status: res.status, headers: res.headers, body };
}

function assertNoneOf(texts: readonly string[], body: string, where: string) {
  for (const t of texts) assert.ok(!body.includes(t), `${where} shows ${JSON.stringify(t)}`);
}

/** The markup of one `<section>` by its heading id, or "" when the page has none. */
function section(body: string, headingId: string): string {
  const m = new RegExp(`<section aria-labelledby="${headingId}">([\\s\\S]*?)</section>`).exec(body);
  return m?.[1] ?? "";
}

function label(h: Harness, noteId: string, name: string, value = "") {
  h.core.store.createAttribute({ noteId, type: "label", name, value });
}

function relation(h: Harness, noteId: string, name: string, value: string) {
  h.core.store.createAttribute({ noteId, type: "relation", name, value });
}

Deno.test("site: the world's name and description, no product name", () =>
  withHarness(async (h) => {
    const home = await get(h, "/");
    assert.match(home.body, /<title>Player&#39;s Guide<\/title>/);
    assert.ok(!home.body.includes("Shared lore"));
    // no #shareDescription: the root's first paragraph
    assert.match(
      home.body,
      /<meta name="description" content="Welcome to the Shattered Coast. Start with Welcome, Travellers.">/,
    );
    label(h, W.guide, "shareDescription", "Charts, rumours and lamps of a salt coast.");
    const described = await get(h, `/public/lore/${W.charMira}`);
    assert.match(described.body, /<meta property="og:site_name" content="Player&#39;s Guide">/);
    assert.match(described.body, /<title>Mira Tallowend · Player&#39;s Guide<\/title>/);
    // a note's own description: its first paragraph
    assert.match(
      described.body,
      /<meta property="og:description" content="Mira Tallowend pilots ships through the reefs off Saltmarrow Harbor for a copper a fathom.">/,
    );
    const typePage = await get(h, "/public/types/character");
    assert.match(
      typePage.body,
      /<meta name="description" content="Characters of Player&#39;s Guide">/,
    );
    const again = await get(h, "/");
    assert.match(
      again.body,
      /<meta name="description" content="Charts, rumours and lamps of a salt coast.">/,
    );
  }, { env: { PUBLIC_CACHE_MS: "0" } }));

Deno.test("site: a navigation tree of what the visitor may see; the vault with its password", () =>
  withHarness(async (h) => {
    const page = await get(h, `/public/lore/${W.guideWelcome}`);
    const nav = /<nav class="site-nav"[\s\S]*?<\/nav>/.exec(page.body)?.[0] ?? "";
    for (const href of [`/public/lore/${HARBOR_ALIAS}`, `/public/lore/${W.charMira}`]) {
      assert.ok(nav.includes(`href="${href}"`), href);
    }
    assert.match(
      nav,
      /<a href="\/public\/lore\/wGuideWelc01" aria-current="page">Welcome, Travellers/,
    );
    assert.match(nav, /href="\/public\/types\/character">Characters</);
    assertNoneOf([...HIDDEN, ...LOCKED], page.body, "anonymous tree");
    // the header's Contents link leads to it (on a phone the navigation waits behind it)
    assert.match(
      page.body,
      /<a class="brand" href="\/">Player&#39;s Guide<\/a><a class="menu-link" href="#site-nav">Contents<\/a>/,
    );
    assert.match(nav, /^<nav class="site-nav" id="site-nav"/);
    const missing = await get(h, "/public/lore/no-such-note");
    assert.equal(missing.status, 404);
    assert.ok(!missing.body.includes("menu-link"), "no Contents link without a navigation");

    const player = await get(h, `/public/lore/${W.guideVaultLedger}`, { authorization: BASIC });
    assert.equal(player.status, 200);
    // the ledger's branch is open; the vault holds it (its link beside the disclosure)
    assert.match(
      player.body,
      /<li class="branch"><a href="\/public\/lore\/wGuideVault1">The Lantern Vault<\/a><details open><summary><span class="visually-hidden">Notes in The Lantern Vault<\/span><\/summary><ul><li><a href="\/public\/lore\/wGuideVltLdg" aria-current="page">/,
    );
    assertNoneOf(HIDDEN, player.body, "player tree");
  }));

Deno.test("site: breadcrumbs, children and previous/next among siblings", () =>
  withHarness(async (h) => {
    const ledger = await get(h, `/public/lore/${W.guideVaultLedger}`, { authorization: BASIC });
    assert.match(
      ledger.body,
      /<nav class="breadcrumbs" aria-label="Breadcrumbs"><ol><li><a href="\/">Player&#39;s Guide<\/a><\/li><li><a href="\/public\/lore\/wGuideVault1">The Lantern Vault<\/a><\/li><li aria-current="page">Ledger of the Vault<\/li><\/ol><\/nav>/,
    );
    const vault = await get(h, `/public/lore/${W.guideVault}`, { authorization: BASIC });
    assert.match(section(vault.body, "children-title"), /href="\/public\/lore\/wGuideVltLdg"/);

    const root = await get(h, `/public/lore/${W.guide}`);
    const children = section(root.body, "children-title");
    for (const id of [W.guideWelcome, HARBOR_ALIAS, W.charMira, W.faction]) {
      assert.ok(children.includes(`/public/lore/${id}"`), id);
    }
    assertNoneOf([...HIDDEN, ...LOCKED], root.body, "root's children");

    // siblings in Core's order, skipping what the visitor may not see
    const order = h.core.store.notePojo(W.guide).childNoteIds.filter((id) =>
      ([W.guideWelcome, W.locHarbor, W.charMira, W.faction] as string[]).includes(id)
    );
    const urlId = (id: string) => id === W.locHarbor ? HARBOR_ALIAS : id;
    for (const [i, id] of order.entries()) {
      const page = await get(h, `/public/lore/${urlId(id)}`);
      const pager = /<nav class="pager"[\s\S]*?<\/nav>/.exec(page.body)?.[0] ?? "";
      if (i > 0) assert.ok(pager.includes(`/public/lore/${urlId(order[i - 1])}" rel="prev"`), id);
      else assert.ok(!pager.includes('rel="prev"'), id);
      if (i < order.length - 1) {
        assert.ok(pager.includes(`/public/lore/${urlId(order[i + 1])}" rel="next"`), id);
      } else assert.ok(!pager.includes('rel="next"'), id);
      assertNoneOf([...HIDDEN, ...LOCKED], pager, `pager of ${id}`);
    }
  }));

Deno.test("site: backlinks come only from links a visitor can read", () =>
  withHarness(async (h) => {
    const harbor = await get(h, `/public/lore/${HARBOR_ALIAS}`);
    const mentions = section(harbor.body, "backlinks-title");
    assert.match(mentions, /<h2 id="backlinks-title">Mentioned in<\/h2>/);
    assert.ok(mentions.includes(`/public/lore/${W.guideWelcome}"`), "Welcome links the harbor");
    assert.ok(mentions.includes(`/public/lore/${W.charMira}"`), "Mira links the harbor");
    // Mira names the Guild only in a GM-only section: no backlink may reveal it
    const guild = await get(h, `/public/lore/${W.faction}`);
    assert.ok(!section(guild.body, "backlinks-title").includes(W.charMira));
    // a hidden note linking the harbor is no backlink
    h.core.store.setNoteContent(
      W.guideDraft,
      `<p><a class="reference-link" href="#root/${W.guide}/${W.locHarbor}">Harbor</a></p>`,
      { scanLinks: true },
    );
    const after = await get(h, `/public/lore/${HARBOR_ALIAS}`);
    assertNoneOf(HIDDEN, after.body, "harbor backlinks");
  }, { env: { PUBLIC_CACHE_MS: "0" } }));

Deno.test("site: an infobox with the portrait at its size and public attributes; relations grouped", () =>
  withHarness(async (h) => {
    label(h, W.charMira, "race", "Human");
    label(h, W.charMira, "secretMotive", "revenge"); // a GM's own label: never shown
    relation(h, W.charMira, "relAlly", W.faction);
    relation(h, W.charMira, "relAlly", W.locHarbor);
    relation(h, W.charMira, "relRival", W.guideDraft); // hidden target
    const page = await get(h, `/public/lore/${W.charMira}`);
    const infobox = /<aside class="infobox"[\s\S]*?<\/aside>/.exec(page.body)?.[0] ?? "";
    assert.match(
      infobox,
      /<a class="portrait-link" href="\/api\/public\/images\/wImgPortrt01\/mira-portrait.png"><img class="portrait" src="\/api\/public\/images\/wImgPortrt01\/mira-portrait.png" alt="Portrait of Mira Tallowend" width="16" height="16"><\/a>/,
    );
    assert.match(infobox, /<dt>Race<\/dt>\s*<dd>Human<\/dd>/);
    assert.ok(!page.body.includes("revenge"));
    const related = section(page.body, "relations-title");
    assert.match(
      related,
      /<li>Ally: <a href="\/public\/lore\/wFactLantern">The Lantern Guild<\/a>[\s\S]*?, <a href="\/public\/lore\/wLocHarbor01">Saltmarrow Harbor<\/a>[\s\S]*?<\/li>/,
    );
    assert.equal(related.match(/Ally:/g)?.length, 1, "one line per kind");
    assertNoneOf(HIDDEN, page.body, "Mira");
  }));

Deno.test("site: content images get their size, lazy loading and alt text", () =>
  withHarness(async (h) => {
    const page = await get(h, `/public/lore/${W.guideWelcome}`);
    assert.equal(page.status, 200);
    const { note } = h.core.store.createNote({
      parentNoteId: W.guide,
      title: "Chart room",
      type: "text",
      content: `<p><img src="api/images/${W.imgChart}/coast-chart.png"></p>`,
    });
    const room = await get(h, `/public/lore/${note.noteId}`);
    assert.match(
      room.body,
      /<img src="\/api\/public\/images\/wImgChart001\/coast-chart.png" alt="coast chart" width="64" height="48" loading="lazy">/,
    );
  }, { env: { PUBLIC_CACHE_MS: "0" } }));

Deno.test("site: preview metadata with absolute URLs on the visitor's origin", async () => {
  await withHarness(async (h) => {
    const page = await get(h, `/public/lore/${W.charMira}`);
    const origin = h.url;
    assert.match(
      page.body,
      new RegExp(`<link rel="canonical" href="${origin}/public/lore/wCharMira001">`),
    );
    assert.match(page.body, /<meta property="og:type" content="article">/);
    assert.match(page.body, /<meta property="og:title" content="Mira Tallowend">/);
    assert.match(
      page.body,
      new RegExp(
        `<meta property="og:image" content="${origin}/api/public/images/wImgPortrt01/mira-portrait.png">`,
      ),
    );
    // a 16 px portrait is no large picture
    assert.match(page.body, /<meta name="twitter:card" content="summary">/);
    assert.match(
      page.body,
      /<link rel="alternate" type="application\/atom\+xml" href="\/public\/feed.atom"/,
    );
    // without TRUST_PROXY, forwarded headers are the client's word: ignored
    const forged = await get(h, `/public/lore/${W.charMira}`, {
      "x-forwarded-host": "evil.example",
      "x-forwarded-proto": "https",
    });
    assert.ok(!forged.body.includes("evil.example"));
  });
  await withHarness(async (h) => {
    const page = await get(h, `/public/lore/${HARBOR_ALIAS}`, {
      "x-forwarded-host": "lore.example.org",
      "x-forwarded-proto": "https",
    });
    assert.match(
      page.body,
      /<link rel="canonical" href="https:\/\/lore.example.org\/public\/lore\/harbor-town">/,
    );
    assert.match(
      page.body,
      /<meta property="og:url" content="https:\/\/lore.example.org\/public\/lore\/harbor-town">/,
    );
    // no picture of its own: the world's card, large
    assert.match(
      page.body,
      /<meta property="og:image" content="https:\/\/lore.example.org\/public\/card\/[\w-]+\.png">/,
    );
    assert.match(page.body, /<meta name="twitter:card" content="summary_large_image">/);
    // the same page for another origin is its own answer
    const direct = await get(h, `/public/lore/${HARBOR_ALIAS}`);
    assert.ok(!direct.body.includes("lore.example.org"));
  }, { env: { TRUST_PROXY: "true", ALLOWED_HOSTS: "lore.example.org" } });
});

Deno.test("site: lore type pages list what the visitor may see", () =>
  withHarness(async (h) => {
    const page = await get(h, "/public/types/character");
    assert.equal(page.status, 200);
    assert.match(page.body, /<h1>Characters<\/h1>/);
    assert.match(
      page.body,
      /<a href="\/public\/lore\/wCharMira001">Mira Tallowend<\/a>\s*<p class="meta">Mira Tallowend pilots ships/,
    );
    assert.ok(!page.body.includes("Oskar Venn"), "outside the share");
    for (const missing of ["statblock", "nope", "%3Cb%3E"]) {
      const none = await get(h, `/public/types/${missing}`);
      assert.equal(none.status, 404, missing);
    }
  }));

Deno.test("site: the timeline and a map page come only from public notes", () =>
  withHarness(async (h) => {
    const early = createLoreNote(h.core.store, W.guide, "The First Lamp", "event");
    label(h, early, "inWorldDate", "1187-03-14");
    const late = createLoreNote(h.core.store, W.guide, "The Lantern Pact", "event");
    label(h, late, "inWorldDate", "1190-09-02");
    const secret = createLoreNote(h.core.store, W.guide, "The Sunken Vote", "event");
    label(h, secret, "inWorldDate", "1188-01-01");
    label(h, secret, "draft");
    const timeline = await get(h, "/public/timeline");
    assert.equal(timeline.status, 200);
    assert.match(
      timeline.body,
      /<time>1187-03-14<\/time>\s*<a href="[^"]+">The First Lamp<\/a>[\s\S]*<time>1190-09-02<\/time>\s*<a href="[^"]+">The Lantern Pact<\/a>/,
    );
    assert.ok(!timeline.body.includes("The Sunken Vote"));

    const chart = createLoreNote(h.core.store, W.guide, "Pilot's Chart", "location");
    relation(h, chart, "mapImage", W.imgChart);
    const cove = createLoreNote(h.core.store, chart, "Gull Cove", "location");
    label(h, cove, "geolocation", "12, 30");
    const wreck = createLoreNote(h.core.store, chart, "Wreck of the Heron", "location");
    label(h, wreck, "geolocation", "40, 8");
    label(h, wreck, "gmOnly");
    const map = await get(h, `/public/maps/${chart}`);
    assert.equal(map.status, 200);
    assert.match(
      map.body,
      /<img src="\/api\/public\/images\/wImgChart001\/[^"]+" width="64" height="48"/,
    );
    assert.match(
      map.body,
      new RegExp(
        `<a href="/public/lore/${cove}" class="pin" aria-label="Gull Cove"><circle class="pin-target" cx="18.75%" cy="62.5%"`,
      ),
    );
    assert.ok(!map.body.includes("Wreck of the Heron"));
    const note = await get(h, `/public/lore/${chart}`);
    assert.match(note.body, new RegExp(`<a class="map-link" href="/public/maps/${chart}">`));
    const home = await get(h, "/");
    assert.match(home.body, new RegExp(`href="/public/maps/${chart}">Map: Pilot&#39;s Chart<`));
    assert.match(home.body, /href="\/public\/timeline">Timeline</);
    for (const path of [`/public/maps/${W.charMira}`, `/public/maps/${W.guideDraft}`]) {
      assert.equal((await get(h, path)).status, 404, path);
    }
  }, { env: { PUBLIC_CACHE_MS: "0" } }));

Deno.test("site: search results show the matching passage and the path", () =>
  withHarness(async (h) => {
    const page = await get(h, "/?q=ships");
    assert.match(
      page.body,
      // the link to a hidden note went with its text, and left its mark in the sentence
      /<p class="excerpt">Most <mark>ships<\/mark> put in at Saltmarrow Harbor. Beware —. See the coast chart.<\/p>/,
    );
    assert.match(page.body, /<p class="path">Player&#39;s Guide<\/p>/);
    assertNoneOf(HIDDEN, page.body, "search");
  }));

Deno.test("site: sitemap.xml and the Atom feed list public pages only; gone when robots are refused", () =>
  withHarness(async (h) => {
    for (const authorization of [undefined, BASIC]) {
      const headers: HeadersInit = authorization ? { authorization } : {};
      const sitemap = await get(h, "/sitemap.xml", headers);
      assert.equal(sitemap.status, 200);
      assert.equal(sitemap.headers.get("content-type"), "application/xml; charset=utf-8");
      assert.match(sitemap.body, /^<\?xml version="1.0" encoding="UTF-8"\?><urlset /);
      for (const path of ["/", `/public/lore/${HARBOR_ALIAS}`, `/public/lore/${W.charMira}`]) {
        assert.ok(sitemap.body.includes(`<loc>${h.url}${path}</loc>`), path);
      }
      assertNoneOf([...HIDDEN, ...LOCKED], sitemap.body, "sitemap");

      const feed = await get(h, "/public/feed.atom", headers);
      assert.equal(feed.status, 200);
      assert.equal(feed.headers.get("content-type"), "application/atom+xml; charset=utf-8");
      assert.match(
        feed.body,
        /<feed xmlns="http:\/\/www.w3.org\/2005\/Atom"><title>Player&#39;s Guide<\/title>/,
      );
      assert.match(feed.body, new RegExp(`<link href="${h.url}/public/lore/wCharMira001"/>`));
      assertNoneOf([...HIDDEN, ...LOCKED], feed.body, "feed");
    }
    label(h, W.charMira, "shareDisallowRobotIndexing");
    const without = await get(h, "/sitemap.xml");
    assert.ok(!without.body.includes(W.charMira), "a note that refuses robots is left out");
    label(h, W.guide, "shareDisallowRobotIndexing");
    for (const path of ["/sitemap.xml", "/public/feed.atom"]) {
      assert.equal((await get(h, path)).status, 404, path);
    }
    const home = await get(h, "/");
    assert.ok(!home.body.includes("application/atom+xml"), "no feed announced");
  }, { env: { PUBLIC_CACHE_MS: "0" } }));
