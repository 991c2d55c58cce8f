/**
 * The front end's contract for sharing: the Shared page, the share-root card of Settings and the
 * Sharing panel of a note, each call sent as the browser sends it from the UI's own origin and
 * the fields the page reads, and the links they build landing on our public site. The UI file
 * and function making each call are named beside each test.
 */
import assert from "node:assert/strict";
import { type Harness, withHarness } from "../helpers/harness.ts";
import { cookieJar, pageFetch } from "../helpers/cookie_jar.ts";
import { HARBOR_ALIAS, W } from "../../sims/world.ts";

/** One row of the Shared page (app/(portal)/shared/page.tsx ShareItem). */
interface ShareItem {
  noteId: string;
  title: string;
  loreType: string | null;
  isDraft: boolean;
  isGmOnly: boolean;
  shareAlias: string | null;
  isProtected: boolean;
  dateModified: string;
}

/** The share root as Settings' ShareConfigCard and the Shared page read it. */
interface ShareRoot {
  configured: boolean;
  noteId: string | null;
  title: string | null;
  alias: string | null;
  url: string | null;
}

/** The service as `deno task dev` runs it: zero-login, Core credentials from the Parser. */
const DEV_LIKE = { parser: true, env: { ZERO_LOGIN: "true" } } as const;

async function shareTree(h: Harness): Promise<ShareItem[]> {
  const r = await pageFetch<ShareItem[]>(h, cookieJar(), "/api/share/tree");
  assert.equal(r.status, 200);
  assert.ok(Array.isArray(r.body), `a bare array, got ${JSON.stringify(r.body).slice(0, 200)}`);
  return r.body;
}

async function shareRoot(h: Harness): Promise<ShareRoot> {
  const r = await pageFetch<ShareRoot>(h, cookieJar(), "/api/share");
  assert.equal(r.status, 200);
  return r.body;
}

/** A link the UI opens in a new tab (`target="_blank"`): followed like a browser would. */
async function open(url: string): Promise<{ status: number; url: string; text: string }> {
  const res = await fetch(url);
  return { status: res.status, url: res.url, text: await res.text() };
}

/** A title as the public site's HTML writes it. */
const inHtml = (title: string) =>
  title.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;").replaceAll("'", "&#39;");

/** A site page without what differs between two requests (its reference id). */
const page = (text: string) => text.replace(/<code>[^<]*<\/code>/g, "<code></code>");

Deno.test("Shared page: GET /api/share/tree is an array of rows with the fields the page reads", () =>
  withHarness(async (h) => {
    // app/(portal)/shared/page.tsx SharedPage, query "share-tree": the rows, their counts
    // (published = neither draft nor GM-only), the type under the title, the badges
    const items = await shareTree(h);
    for (const item of items) {
      assert.equal(typeof item.noteId, "string");
      assert.equal(typeof item.title, "string");
      assert.ok(item.loreType === null || typeof item.loreType === "string");
      for (const flag of [item.isDraft, item.isGmOnly, item.isProtected]) {
        assert.equal(typeof flag, "boolean");
      }
      assert.ok(item.shareAlias === null || typeof item.shareAlias === "string");
      assert.ok(!Number.isNaN(new Date(item.dateModified).getTime()), `${item.noteId} date`);
    }
    const byId = new Map(items.map((i) => [i.noteId, i]));
    assert.equal(byId.get(W.charMira)?.loreType, "character");
    assert.equal(byId.get(W.guideDraft)?.isDraft, true);
    assert.equal(byId.get(W.guideGmOnly)?.isGmOnly, true);
    assert.equal(byId.get(W.locHarbor)?.shareAlias, HARBOR_ALIAS);
    // the Protected badge: behind a share password
    assert.equal(byId.get(W.guideVault)?.isProtected, true);
    const published = items.filter((i) => !i.isDraft && !i.isGmOnly);
    assert.ok(published.length > 0 && published.length < items.length);
  }, DEV_LIKE));

Deno.test("Shared page: the View Share Site button opens the share root's page on our public site", () =>
  withHarness(async (h) => {
    // app/(portal)/shared/page.tsx SharedPage, query "share-root": `href={url}` when `url`
    const root = await shareRoot(h);
    assert.equal(root.configured, true);
    assert.equal(root.noteId, W.guide);
    assert.ok(root.url?.startsWith(`${h.url}/`), `${root.url} is on our origin`);
    const visit = await open(root.url!);
    assert.equal(visit.status, 200);
    assert.ok(visit.text.includes(`<h1 id="note-title">${inHtml("Player's Guide")}</h1>`));
  }, DEV_LIKE));

Deno.test("Shared page: a row's /share/<alias|id> link opens the note's public page", () =>
  withHarness(async (h) => {
    // app/(portal)/shared/page.tsx, each row: `href={`/share/${shareAlias ?? noteId}`}`
    const items = await shareTree(h);
    const harbor = items.find((i) => i.noteId === W.locHarbor)!;
    const byAlias = await open(`${h.url}/share/${harbor.shareAlias ?? harbor.noteId}`);
    assert.equal(byAlias.status, 200);
    assert.equal(new URL(byAlias.url).pathname, `/public/lore/${HARBOR_ALIAS}`);
    assert.ok(byAlias.text.includes(`<h1 id="note-title">${inHtml(harbor.title)}</h1>`));
    const mira = items.find((i) => i.noteId === W.charMira)!;
    assert.equal((await open(`${h.url}/share/${mira.shareAlias ?? mira.noteId}`)).status, 200);
    // a draft, a GM-only note and a missing one: the public site's own 404, all alike
    const missing = await open(`${h.url}/public/lore/noSuchNote12`);
    assert.equal(missing.status, 404);
    for (const id of [W.guideDraft, W.guideGmOnly, "noSuchNote12"]) {
      const hidden = await open(`${h.url}/share/${id}`);
      assert.equal(hidden.status, 404, id);
      assert.equal(page(hidden.text), page(missing.text), id);
    }
  }, DEV_LIKE));

Deno.test("Sharing panel: the share URL built on the status url opens the note's public page", () =>
  withHarness(async (h) => {
    // components/portal/ShareSettings.tsx: `${allcodex.url}/share/${currentAlias || noteId}`
    const status = await pageFetch<{ allcodex: { url: string | null } }>(
      h,
      cookieJar(),
      "/api/config/status",
    );
    const coreUrl = status.body.allcodex.url;
    assert.equal(coreUrl, h.url);
    const visit = await open(`${coreUrl}/share/${HARBOR_ALIAS}`);
    assert.equal(visit.status, 200);
    assert.equal(new URL(visit.url).origin, h.url);
  }, DEV_LIKE));

Deno.test("Settings share card: PUT /api/share { noteId } moves the root; GET shows it with its page", () =>
  withHarness(async (h) => {
    // app/(portal)/settings/page.tsx ShareConfigCard.handleSave: PUT { noteId } (reads `error`
    // on failure), then GET /api/share; shown while `configured`: title, noteId, a link to `url`
    const jar = cookieJar();
    const put = await pageFetch(h, jar, "/api/share", {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ noteId: W.locChart }),
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const root = await shareRoot(h);
    assert.equal(root.configured, true);
    assert.equal(root.noteId, W.locChart);
    assert.equal(typeof root.title, "string");
    const visit = await open(root.url!);
    assert.equal(visit.status, 200);
    assert.ok(visit.text.includes(`<h1 id="note-title">${inHtml(root.title!)}</h1>`));
    const missing = await pageFetch(h, jar, "/api/share", {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ noteId: "noSuchNote12" }),
    });
    assert.equal(missing.status, 404);
    assert.equal(typeof missing.body.error, "string");
  }, DEV_LIKE));

Deno.test("Settings share card: no share root → not configured, nothing to link", () =>
  withHarness(async (h) => {
    // app/(portal)/settings/page.tsx ShareConfigCard: `if (d.configured) setCurrent(d)`;
    // app/(portal)/shared/page.tsx hides View Share Site without `url`
    const put = await pageFetch(h, cookieJar(), "/api/share", {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ noteId: null }),
    });
    assert.equal(put.status, 200);
    const root = await shareRoot(h);
    assert.deepEqual([root.configured, root.noteId, root.url], [false, null, null]);
  }, DEV_LIKE));

Deno.test("Shared page toggles: a draft label added and removed shows in the next share tree", () =>
  withHarness(async (h) => {
    // app/(portal)/shared/page.tsx QuickToggle.handleToggle: GET /api/lore/:id (its
    // `attributes[].attributeId/name/type`), then POST /api/lore/:id/attributes
    // { type, name, value } or DELETE /api/lore/:id/attributes?attrId=…, then the tree again
    const jar = cookieJar();
    const add = await pageFetch(h, jar, `/api/lore/${W.charMira}/attributes`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ type: "label", name: "draft", value: "" }),
    });
    assert.ok(add.status < 300, JSON.stringify(add.body));
    assert.equal((await shareTree(h)).find((i) => i.noteId === W.charMira)?.isDraft, true);
    const note = await pageFetch<
      { attributes: { attributeId: string; name: string; type: string }[] }
    >(
      h,
      jar,
      `/api/lore/${W.charMira}`,
    );
    const draft = note.body.attributes.find((a) => a.name === "draft" && a.type === "label");
    assert.ok(draft, "the draft label is among the note's attributes");
    const remove = await pageFetch(
      h,
      jar,
      `/api/lore/${W.charMira}/attributes?attrId=${draft.attributeId}`,
      { method: "DELETE" },
    );
    assert.ok(remove.status < 300);
    assert.equal((await shareTree(h)).find((i) => i.noteId === W.charMira)?.isDraft, false);
  }, DEV_LIKE));
