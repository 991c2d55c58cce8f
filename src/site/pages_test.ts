import assert from "node:assert/strict";
import { ApiError } from "../http/errors.ts";
import type { PublicLoreNote } from "../share/public_types.ts";
import { answerEtag } from "../share/rendered_answer.ts";
import { errorPageResponse } from "./error_page.ts";
import { SITE_CSP } from "./headers.ts";
import { homePage } from "./home_page.ts";
import { layout } from "./layout.ts";
import { notePage } from "./note_page.ts";
import { pageResponse } from "./respond.ts";
import { searchPage } from "./search_page.ts";
import { THEME_JS_VERSION } from "./theme_script.ts";

const EVIL = `<img src=x onerror="alert(1)">`;

const note: PublicLoreNote = {
  noteId: "wCharMira001",
  title: `Mira ${EVIL}`,
  loreType: "character",
  contentHtml: `<p>Pilot of <a href="/public/lore/harbor-town">Saltmarrow Harbor</a>.</p>`,
  attributes: [{ name: "inWorldDate", value: `1187 ${EVIL}` }],
  resolvedRelations: [
    { name: "relAlly", targetNoteId: "wCharOskar01", targetTitle: "Oskar <Venn>", loreType: null },
    {
      name: "portraitImage",
      targetNoteId: "wImgPortrt01",
      targetTitle: "mira.png",
      loreType: null,
    },
  ],
  portraitImageNoteId: "wImgPortrt01",
  themeSongUrl: "https://music.example.org/tides-of-brass",
  dateModified: "2026-03-01T09:05:00.000Z",
};

const doc = (parts: Parameters<typeof layout>[0]) => layout(parts).html;

Deno.test("notePage: every field rendered; only the sanitized content is markup", () => {
  const out = doc(notePage(note, false));
  assert.match(out, /^<!doctype html>\s*<html lang="en">/);
  assert.match(out, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
  assert.match(out, /<title>Mira &lt;img src=x onerror=&quot;alert\(1\)&quot;&gt; · /);
  assert.match(out, /<h1 id="note-title">Mira &lt;img/);
  assert.match(out, /<p class="kicker">Character<\/p>/);
  assert.match(out, /<time datetime="2026-03-01T09:05:00.000Z">1 March 2026<\/time>/);
  assert.match(
    out,
    /<img class="portrait" src="\/api\/public\/images\/wImgPortrt01\/portrait" alt="Portrait of Mira &lt;img/,
  );
  assert.ok(out.includes(note.contentHtml));
  assert.match(out, /<dt>In world date<\/dt>\s*<dd>1187 &lt;img src=x/);
  assert.match(
    out,
    /<li>Ally: <a href="\/public\/lore\/wCharOskar01">Oskar &lt;Venn&gt;<\/a>\s*<\/li>/,
  );
  assert.match(
    out,
    /<a href="https:\/\/music.example.org\/tides-of-brass" rel="noopener noreferrer external">Theme song<\/a>/,
  );
  assert.ok(!out.includes("mira.png"), "the portrait is not listed again as a relation");
  assert.ok(!out.includes('onerror="'), "no live attribute from data");
  // the one script is the site's own theme script
  assert.deepEqual(out.match(/<script[^>]*>/g), [
    `<script src="/public/theme.js?v=${THEME_JS_VERSION}">`,
  ]);
  assert.ok(!out.includes('name="robots"'));
  // landmarks and labels
  for (const part of ['<main id="main">', "<header", "<footer", 'role="search"', "<label"]) {
    assert.ok(out.includes(part), part);
  }
});

Deno.test("notePage: optional parts are left out; a javascript: theme song is not linked", () => {
  const bare: PublicLoreNote = {
    ...note,
    title: "Bare",
    loreType: null,
    attributes: [],
    resolvedRelations: [],
    portraitImageNoteId: null,
    themeSongUrl: "javascript:alert(1)",
    dateModified: null,
  };
  const out = doc(notePage(bare, true));
  for (
    const absent of [
      "kicker",
      "portrait",
      "Details",
      "Related",
      "Theme song",
      "<time",
      "javascript",
    ]
  ) {
    assert.ok(!out.includes(absent), absent);
  }
  assert.match(out, /<meta name="robots" content="noindex">/);
});

Deno.test("notePage: the meta line tells the reading time of a note of 150 words or more", () => {
  const words = (n: number) => `<p>${"tide ".repeat(n)}</p>`;
  const meta = (contentHtml: string, dateModified: string | null = note.dateModified) =>
    /<p class="meta">([\s\S]*?)<\/p>/.exec(
      doc(notePage({ ...note, contentHtml, dateModified }, false)),
    )
      ?.[1] ?? null;
  assert.equal(
    meta(words(880)),
    'Last modified <time datetime="2026-03-01T09:05:00.000Z">1 March 2026</time>' +
      " · 4 min read",
  );
  assert.equal(meta(words(150), null), "1 min read");
  assert.equal(
    meta(words(149)),
    'Last modified <time datetime="2026-03-01T09:05:00.000Z">1 March 2026</time>',
  );
  assert.equal(meta(words(149), null), null);
});

Deno.test("homePage: root content, groups by lore type with links, empty groups skipped", () => {
  const out = doc(homePage(
    { ...note, title: "Player's Guide", contentHtml: "<p>Welcome.</p>" },
    [
      { loreType: "character", notes: [{ id: "wCharMira001", title: "Mira & co" }] },
      { loreType: "location", notes: [] },
      { loreType: "", notes: [{ id: "wGuideWelc01", title: "Welcome" }] },
    ],
    false,
  ));
  assert.match(out, /<h1>Player&#39;s Guide<\/h1>/);
  assert.ok(out.includes("<p>Welcome.</p>"));
  assert.match(out, /<h3 id="group-0">Characters<\/h3>/); // plural, as in the navigation
  assert.match(out, /<a href="\/public\/lore\/wCharMira001">Mira &amp; co<\/a>/);
  assert.ok(!out.includes("Location"));
  assert.match(out, /<h3 id="group-1">Other<\/h3>/);
  assert.ok(!out.includes("noindex"));
  const empty = doc(homePage(note, [], true));
  assert.match(empty, /Nothing has been published yet/);
  assert.match(empty, /<meta name="robots" content="noindex">/);
});

Deno.test("searchPage: hits with paths, the query kept in the box, never indexed", () => {
  const parts = searchPage(`"harbor"<b>`, {
    results: [{ id: "wLocHarbor01", title: "Saltmarrow Harbor", score: 2, path: "Player's Guide" }],
  });
  const out = doc(parts);
  assert.match(out, /1 result for “&quot;harbor&quot;&lt;b&gt;”/);
  assert.match(out, /value="&quot;harbor&quot;&lt;b&gt;"/);
  assert.match(
    out,
    /<a href="\/public\/lore\/wLocHarbor01">Saltmarrow Harbor<\/a>\s*<p class="path">Player&#39;s Guide<\/p>/,
  );
  assert.equal(parts.noIndex, true);
  assert.match(doc(searchPage("x", { results: [] })), /0 results for “x”[\s\S]*No published lore/);
});

Deno.test("pageResponse: headers, ETag from the page itself, 304 on a match", async () => {
  const parts = notePage(note, true);
  const res = pageResponse(new Request("http://site/public/lore/x"), parts);
  const body = await res.text();
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
  assert.equal(res.headers.get("content-security-policy"), SITE_CSP);
  assert.equal(res.headers.get("x-robots-tag"), "noindex");
  assert.equal(res.headers.get("cache-control"), "no-cache");
  assert.equal(res.headers.get("vary"), "Authorization");
  const etag = res.headers.get("etag")!;
  assert.equal(etag, answerEtag(body, [...res.headers].filter(([name]) => name !== "etag")));

  const again = pageResponse(
    new Request("http://site/public/lore/x", {
      headers: { "if-none-match": `"other", ${etag}`, authorization: "Basic eDp5" },
    }),
    parts,
  );
  assert.equal(again.status, 304);
  assert.equal(again.body, null);
  assert.equal(again.headers.get("etag"), etag);
  assert.equal(again.headers.get("cache-control"), "private, no-cache");
});

Deno.test("errorPageResponse: HTML with status; a 401 asks no password dialog; no upstream text", async () => {
  const res = errorPageResponse(
    new ApiError(401, "UNAUTHORIZED", "internal detail http://core:8080", undefined, {
      "www-authenticate": 'Basic realm="Shared lore", charset="UTF-8"',
      "x-upstream": "leak",
    }),
    "req-1",
  );
  const body = await res.text();
  assert.equal(res.status, 401);
  // the site never makes the browser ask: its pages show their own password form
  assert.equal(res.headers.get("www-authenticate"), null);
  assert.equal(res.headers.has("x-upstream"), false);
  assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
  assert.equal(res.headers.get("x-robots-tag"), "noindex");
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.match(body, /<h1>Password required<\/h1>/);
  assert.match(body, /req-1/);
  assert.ok(!body.includes("core:8080"));

  const notFound = errorPageResponse(new ApiError(404, "NOT_FOUND", "Note x is a #draft"), "r");
  assert.equal(notFound.status, 404);
  const text = await notFound.text();
  assert.match(text, /does not exist or is not public/);
  assert.ok(!text.includes("draft"));

  const bad = errorPageResponse(new ApiError(400, "INVALID_REQUEST", "q is too <long>"), "r");
  assert.match(await bad.text(), /q is too &lt;long&gt;/);

  const crash = errorPageResponse(new TypeError("secret stack"), "r");
  assert.equal(crash.status, 500);
  assert.ok(!(await crash.text()).includes("secret"));
});
