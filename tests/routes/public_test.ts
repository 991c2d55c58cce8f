import assert from "node:assert/strict";
import { loadConfig } from "../../src/config/service_config.ts";
import { createPublicCoreSource } from "../../src/credentials/public_core.ts";
import { jsonLogger } from "../../src/http/log.ts";
import { json } from "../../src/http/response.ts";
import { defineRoute } from "../../src/api/router.ts";
import { shareFor } from "../../src/pipeline/context.ts";
import { REDACTION_HTML } from "../../src/sanitize/redaction.ts";
import { startServer } from "../../src/server.ts";
import { basicCredentials } from "../../src/share/public_api.ts";
import type { PublicLoreNote, PublicSearchResult } from "../../src/share/public_types.ts";
import {
  assertNoSecrets,
  type Harness,
  type HarnessOptions,
  TEST_SESSION_SECRET,
  withHarness,
} from "../helpers/harness.ts";
import { countingListener, login } from "../helpers/session.ts";
import { DEFAULT_CORE_TOKEN, startCoreSim } from "../../sims/core.ts";
import {
  CHART_PNG,
  HARBOR_ALIAS,
  PORTRAIT_PNG,
  SHARE_CREDENTIALS,
  SIGIL_PNG,
  W,
} from "../../sims/world.ts";

// ---------------------------------------------------------------------------------------------
// Helpers

function basic(user: string, password: string): string {
  return "Basic " + btoa(`${user}:${password}`);
}

const GOOD = basic(SHARE_CREDENTIALS.user, SHARE_CREDENTIALS.password);
const WRONG = basic(SHARE_CREDENTIALS.user, "lanterns");

interface Got {
  status: number;
  headers: Headers;
  text: string;
  // deno-lint-ignore no-explicit-any
  body: any;
}

async function get(h: Harness, path: string, headers: HeadersInit = {}): Promise<Got> {
  const res = await h.request(path, { headers });
  const text = await res.text();
  let body: unknown = undefined;
  try {
    body = JSON.parse(text);
  } catch { /* images and 304s */ }
  return { status: res.status, headers: res.headers, text, body };
}

async function bytes(h: Harness, path: string, headers: HeadersInit = {}) {
  const res = await h.request(path, { headers });
  return {
    status: res.status,
    headers: res.headers,
    bytes: new Uint8Array(await res.arrayBuffer()),
  };
}

const lore = (id: string) => `/api/public/lore/${encodeURIComponent(id)}`;
const search = (q: string) => `/api/public/search?q=${encodeURIComponent(q)}`;
const image = (id: string, file = "x.png") => `/api/public/images/${id}/${file}`;

/** Subtree searches (`note.noteId != ''` below an ancestor) Core received. */
function subtreeSearches(h: Harness): number {
  return h.core.requests.filter((r) =>
    r.path === "/etapi/notes" &&
    new URLSearchParams(r.search).get("search") === "note.noteId != ''"
  ).length;
}

/** Every public note of the sample world (Vault and Ledger only with the share password). */
const PUBLIC_IDS = [
  W.guide,
  W.guideWelcome,
  W.locHarbor,
  W.charMira,
  W.faction,
  W.imgChart,
  W.imgPortrait,
];
const GUARDED_IDS = [W.guideVault, W.guideVaultLedger];
/** In the share tree but hidden: draft, GM-only (also cloned under Welcome), protected, WIP. */
const HIDDEN_IDS = [
  W.guideDraft,
  W.guideGmOnly,
  W.guideProtected,
  W.guideWip,
  W.guideWipChild,
];
/** Sentences that exist only inside `.gm-only` sections of published notes. */
const GM_ONLY_MARKERS = [
  "owes the",
  "debt she cannot pay",
  "mother still lives",
  "harbourmaster is in Brannoch",
];

function decodeEntities(text: string): string {
  return text.replace(/&#(\d+);/g, (_, d) => String.fromCodePoint(Number(d)))
    .replace(/&#x([0-9a-f]+);/gi, (_, x) => String.fromCodePoint(parseInt(x, 16)))
    .replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

/** Every way a hidden note could show: id, title, alias, and its content (tags stripped). */
function hiddenMarkers(h: Harness, ids: readonly string[]): string[] {
  const out: string[] = [...GM_ONLY_MARKERS, "gm-only", "player:lantern", "player%3Alantern"];
  for (const id of ids) {
    out.push(id);
    const note = h.core.store.getNote(id);
    if (!note) continue;
    out.push(decodeEntities(note.title));
    for (const a of h.core.store.ownAttributes(id)) {
      if (a.name === "shareAlias") out.push(a.value);
    }
    const content = h.core.store.getContent(id);
    if (typeof content === "string") {
      const text = decodeEntities(content.replace(/<[^>]*>/g, " ")).replace(/\s+/g, " ").trim();
      if (text.length > 0) out.push(text);
    }
  }
  return out;
}

function assertNoneOf(markers: readonly string[], text: string, where: string): void {
  const decoded = decodeEntities(text.replace(/\\"/g, '"').replace(/\\n/g, "\n"));
  for (const m of markers) {
    assert.ok(!text.includes(m) && !decoded.includes(m), `${where} reveals ${JSON.stringify(m)}`);
  }
}

/** Adds an image note under `parent` with raw bytes and a declared mime. */
function addImage(
  h: Harness,
  noteId: string,
  parent: string,
  content: Uint8Array | string,
  mime = "image/png",
) {
  h.core.store.createNote({
    noteId,
    parentNoteId: parent,
    title: `${noteId}.png`,
    type: "image",
    mime,
    content,
  }, { rawTitle: true });
}

function label(h: Harness, noteId: string, name: string, value = "", isInheritable = false) {
  return h.core.store.createAttribute({ noteId, type: "label", name, value, isInheritable });
}

function relation(h: Harness, noteId: string, name: string, value: string) {
  return h.core.store.createAttribute({ noteId, type: "relation", name, value });
}

const FRESH: HarnessOptions = { env: { PUBLIC_CACHE_MS: "0" } };

// ---------------------------------------------------------------------------------------------
// GET /api/public/lore/:id

Deno.test("lore: a published note by id and by alias, player view with public links only", () =>
  withHarness(async (h) => {
    const mira = await get(h, lore(W.charMira));
    assert.equal(mira.status, 200);
    const note = mira.body as PublicLoreNote;
    assert.deepEqual(Object.keys(note), [
      "noteId",
      "title",
      "loreType",
      "contentHtml",
      "attributes",
      "resolvedRelations",
      "portraitImageNoteId",
      "themeSongUrl",
      "dateModified",
    ]);
    assert.equal(note.noteId, W.charMira);
    assert.equal(note.title, "Mira Tallowend");
    assert.equal(note.loreType, "character");
    // .gm-only sections are gone at every depth; the public rest stays.
    assert.ok(note.contentHtml.includes("Raised by lighthouse keepers"));
    assertNoneOf(GM_ONLY_MARKERS, note.contentHtml, "Mira");
    assert.ok(!note.contentHtml.includes("gm-only"));
    // A link to a public note goes to its page (alias when it has one); a reference link to a
    // note outside the share goes with its text (Core wrote the target's title there); the
    // portrait (shared) is served publicly.
    assert.ok(note.contentHtml.includes('<a href="/public/lore/harbor-town"'));
    assert.ok(!note.contentHtml.includes("Oskar"));
    assert.ok(
      note.contentHtml.includes(`src="/api/public/images/${W.imgPortrait}/mira-portrait.png"`),
    );
    assert.ok(!note.contentHtml.includes(W.charOskar) && !note.contentHtml.includes(W.loreRoot));
    // Relations to public notes only (relAlly → Oskar is not shared).
    assert.deepEqual(note.resolvedRelations, [
      {
        name: "portraitImage",
        targetNoteId: W.imgPortrait,
        targetTitle: "mira-portrait.png",
        loreType: null,
      },
      {
        name: "relInhabits",
        targetNoteId: W.locHarbor,
        targetTitle: "Saltmarrow Harbor",
        loreType: "location",
      },
    ]);
    assert.equal(note.portraitImageNoteId, W.imgPortrait);
    assert.equal(note.themeSongUrl, "https://music.example.org/tides-of-brass");
    assert.equal(note.dateModified, "2026-03-01T09:01:00.000Z");
    assert.equal(mira.headers.get("content-type"), "application/json; charset=utf-8");
    assert.equal(mira.headers.get("cache-control"), "public, no-cache");
    assert.equal(mira.headers.get("vary"), "Authorization");
    assert.match(mira.headers.get("etag")!, /^W\/"[A-Za-z0-9_-]{22}"$/);
    assert.equal(mira.headers.get("x-robots-tag"), null);
    assert.deepEqual(mira.headers.getSetCookie(), []);

    const harbor = await get(h, lore(HARBOR_ALIAS));
    assert.equal(harbor.status, 200);
    assert.equal(harbor.body.noteId, W.locHarbor);
    // Promoted template attributes are shown under their alias; the alias label itself is not.
    assert.deepEqual(harbor.body.attributes, [{ name: "Map Coords", value: "12.5, 30.25" }]);
    assert.equal((await get(h, lore(W.locHarbor))).body.noteId, W.locHarbor, "id works too");
    assert.equal(
      (await get(h, lore(W.locHarbor))).headers.get("etag"),
      harbor.headers.get("etag"),
      "one note, one ETag, whichever name it was asked by",
    );

    // Image attachments the note owns are served publicly; the root is a page like any other.
    const faction = await get(h, lore(W.faction));
    assert.ok(
      faction.body.contentHtml.includes(`src="/api/public/images/${W.attSigil}/lantern-sigil.png"`),
    );
    assert.equal((await get(h, lore(W.guide))).body.title, "Player's Guide");
    // An image note's page shows the image, described for players rather than by its file name.
    const chart = await get(h, lore(W.imgChart));
    assert.equal(
      chart.body.contentHtml,
      `<p><img src="/api/public/images/${W.imgChart}/coast-chart.png" alt="Coast chart"></p>`,
    );
  }));

Deno.test("lore: hidden notes answer exactly like missing ones (body, size, headers, Core calls)", () =>
  withHarness(async (h) => {
    label(h, W.guideGmOnly, "shareAlias", "drowned-bell"); // a hidden note's alias
    const missing = await get(h, lore("noSuchNote01"));
    assert.equal(missing.status, 404);
    const shape = (g: Got) => ({
      status: g.status,
      body: { ...g.body, requestId: "-" },
      length: g.text.length,
      headers: [...g.headers].filter(([k]) => k !== "x-request-id" && k !== "date"),
    });
    assert.deepEqual(shape(missing).body, {
      error: "NOT_FOUND",
      message: "Not found",
      requestId: "-",
    });
    for (
      const id of [
        ...HIDDEN_IDS,
        "drowned-bell",
        W.charOskar, // lore outside the share tree
        W.loreRoot,
        "_share",
        "root",
        "nope",
      ]
    ) {
      h.core.clearRequests();
      const hidden = await get(h, lore(id));
      assert.deepEqual(shape(hidden), shape(missing), id);
      // Decided from the cached snapshot alone: no extra Core call tells them apart.
      assert.deepEqual(h.core.requests, [], id);
    }
    // Credentials do not open hidden notes.
    const withAuth = await get(h, lore(W.guideGmOnly), { authorization: GOOD });
    assert.deepEqual(shape(withAuth), shape(missing));
  }));

Deno.test("lore: #shareCredentials → 401 + WWW-Authenticate; right Basic → 200 private", () =>
  withHarness(async (h) => {
    for (const id of GUARDED_IDS) {
      for (const authorization of [null, WRONG, "Bearer x", basic("player", "")]) {
        const r = await get(h, lore(id), authorization ? { authorization } : {});
        assert.equal(r.status, 401, `${id} ${authorization}`);
        assert.equal(
          r.headers.get("www-authenticate"),
          'Basic realm="Shared lore", charset="UTF-8"',
        );
        assert.equal(r.body.error, "UNAUTHORIZED");
        assert.equal(r.headers.get("cache-control"), "no-store");
        assertNoneOf(["Vault", "Ledger", "oil, rope"], r.text, id);
      }
      const ok = await get(h, lore(id), { authorization: GOOD });
      assert.equal(ok.status, 200, id);
      assert.equal(ok.body.noteId, id);
      assert.equal(ok.headers.get("cache-control"), "private, no-cache");
      assert.equal(ok.headers.get("vary"), "Authorization");
    }
    const ledger = await get(h, lore(W.guideVaultLedger), { authorization: GOOD });
    assert.ok(ledger.body.contentHtml.includes("Entries for oil, rope and silence."));
  }));

Deno.test("lore: links and images to non-public notes lose their href / are removed", () =>
  withHarness(async (h) => {
    addImage(h, "wipImage0001", W.guideWip, CHART_PNG); // inherits the WIP #draft
    h.core.store.setNoteContent(
      W.guideWelcome,
      [
        `<p><a class="reference-link" href="#root/${W.guide}/${W.guideDraft}">Docks talk</a></p>`,
        `<p><a href="#root/${W.loreRoot}/${W.locChart}/${W.locHarbor}">the harbor</a></p>`,
        `<p><a href="${h.core.url}/#root/${W.guide}/${W.guideWip}">absolute core link</a></p>`,
        `<p><a href="${h.core.url}/share/${W.guideDraft}">core share link</a></p>`,
        `<p><a href="/api/lore/${W.guideDraft}">relative</a></p>`,
        `<p><a href="https://example.org/map" target="_blank">map</a></p>`,
        `<p><img src="api/images/${W.imgChart}/whatever.png">`,
        `<img src="api/images/wipImage0001/w.png">`,
        `<img src="/api/lore/${W.guideProtected}/image">`,
        `<img src="https://tracker.example/p.gif">`,
        `<img src="api/attachments/${W.attSigil}/image/sigil.png"></p>`,
        `<section class="include-note" data-note-id="${W.guideGmOnly}"><p>included</p></section>`,
        `<div class="Note GM-ONLY"><p>shouted secret</p></div>`,
      ].join("\n"),
    );
    const r = await get(h, lore(W.guideWelcome));
    assert.equal(r.status, 200);
    const html: string = r.body.contentHtml;
    assert.equal(
      html,
      [
        // a reference link's text is its target's title: it goes with the link, leaving the mark
        `<p>${REDACTION_HTML}</p>`,
        `<p><a href="/public/lore/harbor-town">the harbor</a></p>`,
        `<p><a>absolute core link</a></p>`,
        `<p><a>core share link</a></p>`,
        `<p><a>relative</a></p>`,
        `<p><a href="https://example.org/map" target="_blank" rel="noopener noreferrer">map</a></p>`,
        `<p><img src="/api/public/images/${W.imgChart}/coast-chart.png">`,
        "",
        "",
        "",
        // Another note's attachment is not this note's to show.
        `</p>`,
        // an included hidden note's section goes whole
        "",
        "",
      ].join("\n"),
    );
    assertNoneOf([...hiddenMarkers(h, [...HIDDEN_IDS, "wipImage0001"]), "shouted"], r.text, "html");
    assertNoSecrets(h, r.text);
  }));

Deno.test("lore: relations, portrait and display attributes only show what the visitor may see", () =>
  withHarness(async (h) => {
    relation(h, W.charMira, "relEnemy", W.guideDraft); // hidden target
    relation(h, W.charMira, "relRelatedTo", W.guideVault); // behind the share password
    label(h, W.charMira, "race", "Human"); // promoted by the character template
    label(h, W.charMira, "secretMotive", "revenge"); // a GM's own label: never shown
    label(h, W.charMira, "status", ""); // promoted but empty
    addImage(h, "draftPortrt1", W.guideDraft, PORTRAIT_PNG);
    relation(h, W.locHarbor, "portraitImage", "draftPortrt1");

    const anon = await get(h, lore(W.charMira));
    assert.deepEqual(anon.body.resolvedRelations.map((r: { name: string }) => r.name), [
      "portraitImage",
      "relInhabits",
    ]);
    assert.deepEqual(anon.body.attributes, [{ name: "Race", value: "Human" }]);
    assertNoneOf(["revenge", "The Lantern Vault", W.guideVault, W.guideDraft], anon.text, "anon");

    const player = await get(h, lore(W.charMira), { authorization: GOOD });
    assert.deepEqual(player.body.resolvedRelations.at(-1), {
      name: "relRelatedTo",
      targetNoteId: W.guideVault,
      targetTitle: "The Lantern Vault",
      loreType: null,
    });
    assert.notEqual(player.headers.get("etag"), anon.headers.get("etag"));
    // Wrong credentials see what anonymous visitors see.
    const wrong = await get(h, lore(W.charMira), { authorization: WRONG });
    assert.deepEqual(wrong.body, anon.body);
    assert.equal(wrong.headers.get("etag"), anon.headers.get("etag"));

    const harbor = await get(h, lore(W.locHarbor));
    assert.equal(harbor.body.portraitImageNoteId, null, "portrait of a hidden image");
    assert.deepEqual(harbor.body.resolvedRelations, []);
  }));

Deno.test("lore: #shareDisallowRobotIndexing on the root or the note → X-Robots-Tag", () =>
  withHarness(async (h) => {
    label(h, W.charMira, "shareDisallowRobotIndexing");
    assert.equal((await get(h, lore(W.charMira))).headers.get("x-robots-tag"), "noindex");
    assert.equal((await get(h, lore(W.locHarbor))).headers.get("x-robots-tag"), null);
    label(h, W.guide, "shareDisallowRobotIndexing", "true");
    h.core.clearRequests();
    assert.equal((await get(h, lore(W.locHarbor))).headers.get("x-robots-tag"), "noindex");
  }, FRESH));

Deno.test("lore: nothing is public without a published #shareRoot", () =>
  withHarness(async (h) => {
    h.core.store.deleteBranch(`_share_${W.guide}`); // labelled, but Core does not serve it
    assert.equal((await get(h, lore(W.charMira))).status, 404);
    assert.equal((await get(h, lore(W.guide))).status, 404);
    assert.deepEqual((await get(h, search("#lore"))).body, { results: [] });
    assert.equal((await bytes(h, image(W.imgChart))).status, 404);
    const labelId = h.core.store.ownAttributes(W.guide).find((a) => a.name === "shareRoot")!;
    h.core.store.deleteAttribute(labelId.attributeId);
    assert.equal((await get(h, lore(W.charMira))).status, 404);
  }, FRESH));

Deno.test("lore: bad ids are 400 and never reach Core", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    for (const id of ["a".repeat(257), "%41".repeat(90)]) {
      const r = await get(h, `/api/public/lore/${id}`);
      assert.equal(r.status, 400, id);
      assert.equal(r.body.error, "INVALID_REQUEST");
    }
    assert.deepEqual(h.core.requests, []);
  }));

// ---------------------------------------------------------------------------------------------
// GET /api/public/search

Deno.test("search: #lore lists published lore with public paths; text matches visible words", () =>
  withHarness(async (h) => {
    const all = await get(h, search("#lore"));
    assert.equal(all.status, 200);
    assert.deepEqual(all.body, {
      results: [
        { id: W.charMira, title: "Mira Tallowend", score: 1, path: "Player's Guide" },
        { id: HARBOR_ALIAS, title: "Saltmarrow Harbor", score: 1, path: "Player's Guide" },
        { id: W.faction, title: "The Lantern Guild", score: 1, path: "Player's Guide" },
      ],
    });
    assert.equal((await get(h, search("  #LORE "))).text, all.text);
    assert.equal(all.headers.get("cache-control"), "public, no-cache");
    assert.equal(all.headers.get("x-robots-tag"), "noindex");

    const harbor = (await get(h, search("Harbor"))).body as PublicSearchResult;
    assert.deepEqual(harbor.results.map((r) => r.id), [HARBOR_ALIAS, W.charMira, W.guideWelcome]);
    assert.ok(harbor.results[0].score > harbor.results[1].score, "title before text");
    // Every word must match; accents and case do not matter.
    assert.deepEqual(
      (await get(h, search("COPPER fáthom"))).body.results.map((r: { id: string }) => r.id),
      [W.charMira],
    );
    assert.deepEqual((await get(h, search("copper harbourmaster"))).body.results, []);
    // Words that exist only in .gm-only sections, hidden notes or unshared notes find nothing.
    for (
      const q of [
        "mother",
        "debt",
        "harbourmaster",
        "rumour",
        "Rumours on the Docks",
        "low tide",
        "heart",
        "sketches",
        "soundings",
        "smuggler",
        "player:lantern",
      ]
    ) {
      assert.deepEqual((await get(h, search(q))).body, { results: [] }, q);
    }
  }));

Deno.test("search: notes behind #shareCredentials only with the password, path shows them", () =>
  withHarness(async (h) => {
    const anon = await get(h, search("ledger"));
    assert.deepEqual(anon.body, { results: [] });
    const player = await get(h, search("ledger"), { authorization: GOOD });
    assert.deepEqual(player.body.results, [{
      id: W.guideVaultLedger,
      title: "Ledger of the Vault",
      score: 3,
      path: "Player's Guide / The Lantern Vault",
    }]);
    assert.equal(player.headers.get("cache-control"), "private, no-cache");
    assert.notEqual(player.headers.get("etag"), anon.headers.get("etag"));
    assert.deepEqual((await get(h, search("ledger"), { authorization: WRONG })).body, anon.body);
  }));

Deno.test("search: hidden notes never appear, even when only hidden notes match", () =>
  withHarness(async (h) => {
    label(h, W.guideDraft, "lore");
    label(h, W.guideDraft, "loreType", "event");
    label(h, W.guideWipChild, "lore");
    label(h, W.guideGmOnly, "shareAlias", "drowned-bell");
    for (const q of ["#lore", "bell", "drowned", "charts", "Unfinished", "drowned-bell"]) {
      for (const authorization of [null, GOOD]) {
        const r = await get(h, search(q), authorization ? { authorization } : {});
        assert.equal(r.status, 200);
        assertNoneOf(hiddenMarkers(h, HIDDEN_IDS), r.text, `search ${q}`);
      }
    }
  }));

Deno.test("search: q is required, at most 200 characters; bad input never reaches Core", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    for (const path of ["/api/public/search", search(""), search("   "), search("x".repeat(201))]) {
      const r = await get(h, path);
      assert.equal(r.status, 400, path);
      assert.equal(r.body.error, "INVALID_REQUEST");
    }
    assert.deepEqual(h.core.requests, []);
  }));

Deno.test("search: content is read once per blob and reused until it changes", () =>
  withHarness(async (h) => {
    await get(h, search("fathom"));
    const contentCalls = () =>
      h.core.requests.filter((r) => r.path.endsWith("/content")).map((r) => r.path).sort();
    const first = contentCalls();
    // Text notes the visitor can see: Guide, Welcome, Harbor, Mira, Guild (not images).
    assert.equal(first.length, 5);
    h.core.clearRequests();
    await get(h, search("gulls"));
    await get(h, lore(W.charMira));
    assert.deepEqual(contentCalls(), [], "cached by blobId");
    h.core.store.setNoteContent(W.locHarbor, "<p>Gulls and herring.</p>");
    h.core.clearRequests();
    assert.deepEqual(
      (await get(h, search("herring"))).body.results.map((r: { id: string }) => r.id),
      [HARBOR_ALIAS],
    );
    assert.deepEqual(contentCalls(), [`/etapi/notes/${W.locHarbor}/content`]);
  }, FRESH));

// ---------------------------------------------------------------------------------------------
// GET /api/public/images/:id/:filename

Deno.test("images: public image notes and attachments, streamed and cached for a day", () =>
  withHarness(async (h) => {
    for (
      const [id, png] of [[W.imgChart, CHART_PNG], [W.imgPortrait, PORTRAIT_PNG], [
        W.attSigil,
        SIGIL_PNG,
      ]] as const
    ) {
      const r = await bytes(h, image(id, "any-name.png"));
      assert.equal(r.status, 200, id);
      assert.deepEqual(r.bytes, png);
      assert.equal(r.headers.get("content-type"), "image/png");
      assert.equal(r.headers.get("cache-control"), "public, max-age=86400");
      assert.equal(r.headers.get("x-content-type-options"), "nosniff");
      assert.equal(r.headers.get("content-security-policy"), "default-src 'none'; sandbox");
      assert.match(r.headers.get("etag")!, /^W\/"[A-Za-z0-9_-]{22}"$/);
      assert.deepEqual(r.headers.getSetCookie(), []);
    }
  }));

Deno.test("images: hidden, unshared and non-image ids are the same 404 as missing ones", () =>
  withHarness(async (h) => {
    addImage(h, "wipImage0001", W.guideWip, CHART_PNG);
    addImage(h, "draftImage01", W.guideDraft, CHART_PNG);
    addImage(
      h,
      "svgImage0001",
      W.guide,
      '<svg xmlns="http://www.w3.org/2000/svg"/>',
      "image/svg+xml",
    );
    addImage(h, "fakePng00001", W.guide, "<html><script>alert(1)</script></html>");
    h.core.store.createAttachment({
      attachmentId: "draftAttach1",
      ownerId: W.guideDraft,
      role: "image",
      mime: "image/png",
      title: "secret.png",
      content: SIGIL_PNG,
    });
    h.core.store.createAttachment({
      attachmentId: "fileAttach01",
      ownerId: W.faction,
      role: "file",
      mime: "image/png",
      title: "notes.png",
      content: SIGIL_PNG,
    });
    const missing = await get(h, image("noSuchImage1"));
    const shape = (g: Got) => ({ status: g.status, body: { ...g.body, requestId: "-" } });
    assert.deepEqual(shape(missing), {
      status: 404,
      body: { error: "NOT_FOUND", message: "Not found", requestId: "-" },
    });
    for (
      const id of [
        "wipImage0001",
        "draftImage01",
        "draftAttach1",
        "svgImage0001",
        "fakePng00001",
        "fileAttach01",
        W.charMira, // public, not an image
        W.imgChart + "x",
        ...HIDDEN_IDS,
      ]
    ) {
      assert.deepEqual(shape(await get(h, image(id))), shape(missing), id);
    }
    // Hidden ids take the same Core path as unknown ones: one attachment lookup.
    h.core.clearRequests();
    await get(h, image("draftImage01"));
    await get(h, image("noSuchImage1"));
    assert.deepEqual(h.core.requests.map((r) => r.path), [
      "/etapi/attachments/draftImage01",
      "/etapi/attachments/noSuchImage1",
    ]);
  }));

Deno.test("images: behind #shareCredentials → 401 without, private with the password", () =>
  withHarness(async (h) => {
    addImage(h, "vaultMap0001", W.guideVault, CHART_PNG);
    for (const authorization of [null, WRONG]) {
      const r = await get(h, image("vaultMap0001"), authorization ? { authorization } : {});
      assert.equal(r.status, 401);
      assert.equal(r.headers.get("www-authenticate"), 'Basic realm="Shared lore", charset="UTF-8"');
    }
    const ok = await bytes(h, image("vaultMap0001"), { authorization: GOOD });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.bytes, CHART_PNG);
    assert.equal(ok.headers.get("cache-control"), "private, max-age=86400");
    assert.equal(ok.headers.get("vary"), "Authorization");
  }));

Deno.test("images: bad ids are 400 and never reach Core", () =>
  withHarness(async (h) => {
    h.core.clearRequests();
    for (
      const path of [image("a.b"), image("..%2F..%2Fetapi%2Fapp-info"), image("x".repeat(129))]
    ) {
      assert.equal((await get(h, path)).status, 400, path);
    }
    assert.deepEqual(h.core.requests, []);
  }));

// ---------------------------------------------------------------------------------------------
// ETags, 304, the snapshot cache

Deno.test("etag: If-None-Match → 304 on every public route; a change gives a new ETag", () =>
  withHarness(async (h) => {
    const paths: [string, HeadersInit][] = [
      [lore(W.charMira), {}],
      [lore(HARBOR_ALIAS), {}],
      [lore(W.guideVault), { authorization: GOOD }],
      [search("#lore"), {}],
      [search("harbor"), { authorization: GOOD }],
      [image(W.imgChart), {}],
      [image(W.attSigil), {}],
    ];
    for (const [path, headers] of paths) {
      const first = await h.request(path, { headers });
      await first.body?.cancel();
      const etag = first.headers.get("etag")!;
      assert.ok(etag, path);
      for (const inm of [etag, `"other", ${etag}`, etag.replace(/^W\//, ""), "*"]) {
        const again = await h.request(path, { headers: { ...headers, "if-none-match": inm } });
        assert.equal(again.status, 304, `${path} ${inm}`);
        assert.equal(await again.text(), "");
        assert.equal(again.headers.get("etag"), etag);
        assert.equal(again.headers.get("cache-control"), first.headers.get("cache-control"));
      }
      const stale = await h.request(path, { headers: { ...headers, "if-none-match": 'W/"x"' } });
      await stale.body?.cancel();
      assert.equal(stale.status, 200);
    }
    // 304 only after the visibility checks: a hidden note is still a 404.
    assert.equal((await get(h, lore(W.guideDraft), { "if-none-match": "*" })).status, 404);
    assert.equal((await get(h, lore(W.guideVault), { "if-none-match": "*" })).status, 401);

    const before = (await get(h, lore(W.charMira))).headers.get("etag");
    const imageBefore = (await bytes(h, image(W.imgChart))).headers.get("etag");
    h.core.store.setNoteContent(W.charMira, "<p>Mira retired.</p>");
    const after = await get(h, lore(W.charMira), { "if-none-match": before! });
    assert.equal(after.status, 200);
    assert.equal(after.body.contentHtml, "<p>Mira retired.</p>");
    assert.notEqual(after.headers.get("etag"), before);
    // Image ETags are content-addressed: another snapshot does not change them.
    assert.equal((await bytes(h, image(W.imgChart))).headers.get("etag"), imageBefore);
  }, FRESH));

Deno.test("snapshot: concurrent visitors share one subtree search (single-flight)", () =>
  withHarness(async (h) => {
    // (the snapshot outlives the test: one search whether a visitor joins the load or finds it)
    h.core.fault({ path: "/etapi/notes", delayMs: 150 }); // keep the first load in flight
    const paths = [
      ...PUBLIC_IDS.map(lore),
      lore(HARBOR_ALIAS),
      lore(W.guideDraft),
      search("#lore"),
      search("harbor"),
      image(W.imgChart),
    ];
    const statuses = await Promise.all(paths.map(async (p) => {
      const r = await h.request(p);
      await r.body?.cancel();
      return r.status;
    }));
    assert.deepEqual(statuses, [...PUBLIC_IDS.map(() => 200), 200, 404, 200, 200, 200]);
    assert.equal(subtreeSearches(h), 1);
  }, { env: { PUBLIC_CACHE_MS: "600000" } }));

Deno.test("snapshot: reused for PUBLIC_CACHE_MS, then loaded again", () => {
  const clock = { now: 1_000_000 }; // the service's clock: it moves when the test says
  return withHarness(async (h) => {
    await get(h, lore(W.charMira));
    await get(h, search("#lore"));
    assert.equal(subtreeSearches(h), 1);
    // An unpublished note stays visible until the snapshot expires, then disappears.
    label(h, W.charMira, "gmOnly");
    clock.now += 700; // not yet half the cache time: no reload either
    assert.equal((await get(h, lore(W.charMira))).status, 200);
    assert.equal(subtreeSearches(h), 1);
    clock.now += 1_000;
    assert.equal((await get(h, lore(W.charMira))).status, 404);
    assert.equal(subtreeSearches(h), 2);
  }, { env: { PUBLIC_CACHE_MS: "1500" }, now: () => clock.now });
});

// ---------------------------------------------------------------------------------------------
// Nothing hidden anywhere

Deno.test("leaks: no public answer names or shows anything hidden, secret or internal", () =>
  withHarness(async (h) => {
    label(h, W.guideGmOnly, "shareAlias", "drowned-bell");
    addImage(h, "wipImage0001", W.guideWip, CHART_PNG);
    const hidden = [...HIDDEN_IDS, "wipImage0001"];
    // Everything in the sample world that the share does not publish, by id.
    const unpublished = Object.values(W).filter((id) =>
      !([...PUBLIC_IDS, ...GUARDED_IDS, W.attSigil] as string[]).includes(id)
    );
    const paths = [
      ...Object.values(W).flatMap((id) => [lore(id), image(id)]),
      lore(HARBOR_ALIAS),
      lore("drowned-bell"),
      image("wipImage0001"),
      ...[
        "#lore",
        "harbor",
        "bell",
        "drowned",
        "rumour",
        "mother",
        "lantern",
        "oil",
        "vault",
        "the",
        "a",
        "guide",
        "Q2lwaGVy",
      ].map(search),
    ];
    const markers = hiddenMarkers(h, hidden);
    for (const authorization of [null, GOOD, WRONG]) {
      for (const path of paths) {
        const res = await h.request(path, authorization ? { headers: { authorization } } : {});
        const isImage = res.headers.get("content-type")?.startsWith("image/");
        const text = isImage ? "" : await res.text();
        if (isImage) await res.body?.cancel();
        const where = `${path} (${authorization ? "auth" : "anon"})`;
        assert.ok([200, 401, 404].includes(res.status), `${where}: ${res.status}`);
        const headerText = [...res.headers].map(([k, v]) => `${k}: ${v}`).join("\n");
        assertNoneOf(markers, text + headerText, where);
        for (const id of unpublished) {
          assert.ok(!text.includes(id) && !headerText.includes(id), `${where} names ${id}`);
        }
        if (authorization !== GOOD) {
          assertNoneOf(["Lantern Vault", "Ledger of the Vault", "oil, rope"], text, where);
        }
        assertNoSecrets(h, text + headerText);
        assert.deepEqual(res.headers.getSetCookie(), [], where);
      }
    }
    assertNoSecrets(h, h.logs.join("\n"));
  }));

// ---------------------------------------------------------------------------------------------
// Core credentials of the public routes

Deno.test("credentials: zero-login works server-side, once; visitors get no cookies", () =>
  withHarness(async (h) => {
    const provisions = () =>
      h.parser!.requests.filter((r) => r.path === "/internal/auto-provision").length;
    for (const path of [lore(W.charMira), search("harbor"), image(W.imgChart), lore(W.guide)]) {
      const res = await h.request(path);
      await res.body?.cancel();
      assert.equal(res.status, 200, path);
      assert.deepEqual(res.headers.getSetCookie(), [], path);
    }
    assert.equal(provisions(), 1, "credentials are kept on the server, not minted per visitor");
    assertNoSecrets(h, h.logs.join("\n"));
  }, { parser: true, noCoreCredentials: true, env: { ZERO_LOGIN: "true" } }));

Deno.test("credentials: a visitor's own session is never used; no server credentials → 503", () =>
  withHarness(async (h) => {
    const cookie = await login(h);
    const own = await get(h, `/api/lore/${W.charMira}`, { cookie });
    assert.equal(own.status, 200, "the session itself works on private routes");
    const parserCalls = h.parser!.requests.length;
    h.core.clearRequests();
    for (const path of [lore(W.charMira), search("#lore"), image(W.imgChart)]) {
      const r = await get(h, path, { cookie });
      assert.equal(r.status, 503, path);
      assert.equal(r.body.error, "NOT_CONFIGURED");
      assert.deepEqual(r.body.details, { service: "core" });
      assert.deepEqual(r.headers.getSetCookie(), [], "the visitor's cookies stay as they are");
    }
    assert.equal(h.parser!.requests.length, parserCalls);
    assert.deepEqual(h.core.requests, []);
  }, { parser: true, noCoreCredentials: true }));

Deno.test("credentials: PUBLIC_CORE_TOKEN opens the public share and nothing else", async () => {
  const free = countingListener();
  const port = Number(new URL(free.url).port);
  await free.close();
  await withHarness(async (h) => {
    assert.equal((await get(h, lore(W.charMira))).status, 200);
    const priv = await get(h, `/api/lore/${W.charMira}`);
    assert.equal(priv.status, 503);
    assert.equal(priv.body.error, "NOT_CONFIGURED");
    assert.ok(h.core.requests.every((r) => r.headers.get("authorization") === DEFAULT_CORE_TOKEN));
    // The harness only redacts CORE_TOKEN, so this really checks that the token is never logged.
    assertNoSecrets(h, h.logs.join("\n"));
  }, {
    core: { port },
    noCoreCredentials: true,
    env: { CORE_URL: `http://127.0.0.1:${port}`, PUBLIC_CORE_TOKEN: DEFAULT_CORE_TOKEN },
  });
});

Deno.test("credentials: source order PUBLIC_CORE_TOKEN, CORE_TOKEN, zero-login, none", async () => {
  const log = jsonLogger("silent", () => {});
  const upstream = { fetch: () => Promise.reject(new Error("no network")), timeoutMs: 100 };
  const source = (env: Record<string, string>) =>
    createPublicCoreSource({ config: loadConfig(env), fetch: upstream.fetch, log });
  const both = await source({ CORE_URL: "http://core", CORE_TOKEN: "a", PUBLIC_CORE_TOKEN: "b" })
    .credentials(upstream);
  assert.deepEqual([both.baseUrl, both.token], ["http://core", "b"]);
  assert.match(both.identity, /^[0-9a-f]{16}$/);
  const core = await source({ CORE_URL: "http://core", CORE_TOKEN: "a" }).credentials(upstream);
  assert.equal(core.token, "a");
  await assert.rejects(source({}).credentials(upstream), { status: 503, code: "NOT_CONFIGURED" });
  // Zero-login whose Parser cannot be reached: 503 for Core, never a Parser error.
  const zero = source({
    ZERO_LOGIN: "true",
    PARSER_URL: "http://parser",
    PARSER_INTERNAL_SECRET: "secret-0123456789",
  });
  await assert.rejects(zero.credentials(upstream), (e: { status: number; details: unknown }) => {
    assert.equal(e.status, 503);
    assert.deepEqual(e.details, { service: "core" });
    return true;
  });
});

// ---------------------------------------------------------------------------------------------
// Core failures, as visitors see them

/** One valid request per public route, for the Core error matrix. */
const SAMPLES = [lore(W.charMira), search("harbor"), image(W.imgChart)];

Deno.test("core errors: each public route maps Core failures for visitors, leaking nothing", async () => {
  const faults: [string, HarnessOptions, ((h: Harness) => void) | null, number, string][] = [
    [
      "timeout",
      { env: { UPSTREAM_TIMEOUT_MS: "150" } },
      (h) => h.core.fault({ path: /^\/etapi\//, hang: true }),
      504,
      "UPSTREAM_TIMEOUT",
    ],
    // The server's own token refused: a configuration problem, never a password prompt.
    ["401", {}, (h) => h.core.fault({ path: /^\/etapi\//, status: 401 }), 503, "NOT_CONFIGURED"],
    ["403", {}, (h) => h.core.fault({ path: /^\/etapi\//, status: 403 }), 503, "NOT_CONFIGURED"],
    [
      "500",
      {},
      (h) =>
        h.core.fault({
          path: /^\/etapi\//,
          status: 500,
          body: '{"status":500,"code":"GENERIC","message":"SQLITE secret path /var/lib/core"}',
        }),
      502,
      "UPSTREAM_ERROR",
    ],
    [
      "429",
      {},
      (h) =>
        h.core.fault({
          path: /^\/etapi\//,
          status: 429,
          body: "Too many requests",
          contentType: "text/plain",
        }),
      429,
      "RATE_LIMITED",
    ],
    ["404", {}, (h) => h.core.fault({ path: /^\/etapi\//, status: 404 }), 404, "NOT_FOUND"],
    ["unreachable", { coreUrlOverride: "http://127.0.0.1:9" }, null, 503, "UNREACHABLE"],
  ];
  for (const [name, opts, setup, status, code] of faults) {
    await withHarness(async (h) => {
      for (const path of SAMPLES) {
        setup?.(h);
        const r = await get(h, path);
        assert.equal(r.status, status, `${name} ${path}`);
        assert.equal(r.body.error, code, `${name} ${path}`);
        assert.equal(r.headers.get("www-authenticate"), null);
        if (status === 429) assert.equal(r.headers.get("retry-after"), "60");
        if (status === 404) assert.equal(r.body.message, "Not found");
        assert.ok(!r.text.includes("SQLITE"));
        assertNoSecrets(h, r.text);
        h.core.clearFaults();
      }
      assertNoSecrets(h, h.logs.join("\n"));
    }, opts);
  }
});

Deno.test("core errors: a note deleted after the snapshot is the same 404 as a missing one", () =>
  withHarness(async (h) => {
    await get(h, lore(W.guide)); // snapshot cached
    h.core.fault({ path: `/etapi/notes/${W.locHarbor}/content`, status: 404 });
    const gone = await get(h, lore(HARBOR_ALIAS));
    const missing = await get(h, lore("noSuchNote01"));
    assert.deepEqual({ ...gone.body, requestId: "-" }, { ...missing.body, requestId: "-" });
    assert.equal(gone.status, 404);
  }));

// ---------------------------------------------------------------------------------------------
// home(): the public site's entry point, through a probe route on the real app

Deno.test("home: the root note and published lore by type, only what the visitor may see", async () => {
  const core = await startCoreSim();
  const probe = defineRoute({
    method: "GET",
    path: "/probe/home",
    summary: "test probe",
    backend: "Core",
    access: "public",
    tag: "test",
    responses: {},
    handler: async (ctx) =>
      json(await shareFor(ctx).home(basicCredentials(ctx.req.headers.get("authorization")))),
  });
  const server = await startServer({
    config: loadConfig({
      PORT: "0",
      CORE_URL: core.url,
      CORE_TOKEN: core.token,
      SESSION_SECRET: TEST_SESSION_SECRET,
      DATA_DIR: await Deno.makeTempDir({ prefix: "lpp-test-" }),
      PUBLIC_CACHE_MS: "0",
      LOG_LEVEL: "silent",
    }),
    routes: [probe],
  });
  const home = async (authorization?: string) => {
    const res = await fetch(`${server.url}/probe/home`, {
      headers: authorization ? { authorization } : {},
    });
    return { status: res.status, body: await res.json() };
  };
  try {
    core.store.createAttribute({ noteId: W.guideDraft, type: "label", name: "lore", value: "" });
    for (const [name, value] of [["lore", ""], ["loreType", "item"]]) {
      core.store.createAttribute({ noteId: W.guideVaultLedger, type: "label", name, value });
    }
    const anon = await home();
    assert.equal(anon.status, 200);
    assert.equal(anon.body.root.noteId, W.guide);
    assert.ok(anon.body.root.contentHtml.includes('href="/public/lore/wGuideWelc01"'));
    assert.deepEqual(anon.body.groups, [
      { loreType: "character", notes: [{ id: W.charMira, title: "Mira Tallowend" }] },
      { loreType: "faction", notes: [{ id: W.faction, title: "The Lantern Guild" }] },
      { loreType: "location", notes: [{ id: HARBOR_ALIAS, title: "Saltmarrow Harbor" }] },
    ]);
    assert.equal(anon.body.noIndex, false);
    const player = await home(GOOD);
    assert.deepEqual(player.body.groups.map((g: { loreType: string }) => g.loreType), [
      "character",
      "faction",
      "item",
      "location",
    ]);
    assert.deepEqual(player.body.groups[2], {
      loreType: "item",
      notes: [{ id: W.guideVaultLedger, title: "Ledger of the Vault" }],
    });
    core.store.createAttribute({
      noteId: W.guide,
      type: "label",
      name: "shareDisallowRobotIndexing",
      value: "",
    });
    assert.equal((await home()).body.noIndex, true);
    core.store.createAttribute({ noteId: W.guide, type: "label", name: "gmOnly", value: "" });
    assert.equal((await home()).status, 404, "a hidden root hides everything");
  } finally {
    await server.stop();
    await core.close();
  }
});
