/**
 * Share settings as visitors see them: a change made through this service reaches every public
 * route at once (the cached snapshot is dropped), a change made in Core directly within
 * `PUBLIC_CACHE_MS`, and several `#shareRoot` owners share nothing at all.
 */
import assert from "node:assert/strict";
import {
  assertNoSecrets,
  type Harness,
  type HarnessOptions,
  withHarness,
} from "../helpers/harness.ts";
import { escapeHtml } from "../../src/lore/preview.ts";
import { HARBOR_ALIAS, W } from "../../sims/world.ts";

/** Long enough that only invalidation can explain a change seen within one test. */
const CACHED: HarnessOptions = { env: { PUBLIC_CACHE_MS: "600000" } };

interface Got {
  status: number;
  text: string;
  // deno-lint-ignore no-explicit-any
  body: any;
}

async function get(h: Harness, path: string): Promise<Got> {
  const res = await h.request(path);
  const text = await res.text();
  assertNoSecrets(h, text);
  let body: unknown = undefined;
  try {
    body = JSON.parse(text);
  } catch { /* HTML pages and images */ }
  return { status: res.status, text, body };
}

const lore = (id: string) => `/api/public/lore/${encodeURIComponent(id)}`;
const search = (q: string) => `/api/public/search?q=${encodeURIComponent(q)}`;
const page = (id: string) => `/public/lore/${encodeURIComponent(id)}`;

/** Titles `q=#lore` lists, in order. */
async function publishedTitles(h: Harness): Promise<string[]> {
  const r = await get(h, search("#lore"));
  assert.equal(r.status, 200);
  return r.body.results.map((hit: { title: string }) => hit.title);
}

/** A public 404, checked by body: the same for missing, hidden and unshared notes. */
async function assertGone(h: Harness, id: string): Promise<void> {
  const api = await get(h, lore(id));
  assert.equal(api.status, 404, id);
  assert.deepEqual({ ...api.body, requestId: undefined }, {
    error: "NOT_FOUND",
    message: "Not found",
    requestId: undefined,
  });
  assert.equal((await get(h, page(id))).status, 404, id);
}

async function assertShown(h: Harness, id: string, title: string): Promise<void> {
  const api = await get(h, lore(id));
  assert.equal(api.status, 200, id);
  assert.equal(api.body.title, title);
  const html = await get(h, page(id));
  assert.equal(html.status, 200, id);
  assert.ok(html.text.includes(escapeHtml(title)), title);
}

/** Core searches for `#shareRoot` owners (two per snapshot load) and for a root's subtree. */
function loads(h: Harness): { roots: number; subtrees: number } {
  const searches = h.core.requests.filter((r) => r.path === "/etapi/notes")
    .map((r) => new URLSearchParams(r.search).get("search"));
  return {
    roots: searches.filter((q) => q === "#shareRoot").length,
    subtrees: searches.filter((q) => q === "note.noteId != ''").length,
  };
}

function putShare(h: Harness, noteId: string | null) {
  return h.requestJson<{ shareRoot: { noteId: string } | null }>("/api/share", {
    method: "PUT",
    json: { noteId },
  });
}

/** Makes the chart a second published `#shareRoot` owner, directly in Core. */
function addSecondRoot(h: Harness): void {
  h.core.store.createBranch({ noteId: W.locChart, parentNoteId: "_share" });
  h.core.store.createAttribute({ noteId: W.locChart, type: "label", name: "shareRoot", value: "" });
}

const GUIDE_LORE = ["Mira Tallowend", "Saltmarrow Harbor", "The Lantern Guild"];
const CHART_LORE = [
  "Chart of the Shattered Coast",
  "Greyfin Lighthouse",
  "Saltmarrow Harbor",
  "The Knucklebone Reef",
];

Deno.test("switching the root: old root's notes 404 and new root's 200 at once, everywhere", () =>
  withHarness(async (h) => {
    await assertShown(h, W.guideWelcome, "Welcome, Travellers");
    await assertGone(h, W.locLighthouse);
    assert.deepEqual(await publishedTitles(h), GUIDE_LORE);
    assert.ok((await get(h, "/")).text.includes("Player&#39;s Guide"));
    assert.equal(loads(h).subtrees, 1);

    const r = await putShare(h, W.locChart);
    assert.equal(r.status, 200);
    assert.equal(r.body.shareRoot?.noteId, W.locChart);

    for (const id of [W.guide, W.guideWelcome, W.charMira, W.faction]) await assertGone(h, id);
    await assertShown(h, W.locChart, "Chart of the Shattered Coast");
    await assertShown(h, W.locLighthouse, "Greyfin Lighthouse");
    await assertShown(h, HARBOR_ALIAS, "Saltmarrow Harbor"); // in both trees: still public
    assert.deepEqual(await publishedTitles(h), CHART_LORE);
    const home = await get(h, "/");
    assert.equal(home.status, 200);
    assert.ok(home.text.includes("Chart of the Shattered Coast"));
    assert.ok(!home.text.includes("Player&#39;s Guide") && !home.text.includes("Welcome"));
    assert.equal(loads(h).subtrees, 2);
  }, CACHED));

Deno.test("removing the root: every public route answers as if nothing were shared, at once", () =>
  withHarness(async (h) => {
    await assertShown(h, W.charMira, "Mira Tallowend");
    assert.equal((await putShare(h, null)).status, 200);
    for (const id of [W.guide, W.charMira, HARBOR_ALIAS]) await assertGone(h, id);
    assert.deepEqual((await get(h, search("#lore"))).body, { results: [] });
    assert.deepEqual((await get(h, search("harbor"))).body, { results: [] });
    assert.equal((await get(h, "/")).status, 404);
    assert.equal((await get(h, `/api/public/images/${W.imgChart}/chart.png`)).status, 404);
  }, CACHED));

Deno.test("lore writes through the service are seen at once: #gmOnly, its removal, a delete", () =>
  withHarness(async (h) => {
    await assertShown(h, W.charMira, "Mira Tallowend");
    const created = await h.requestJson<{ attributeId: string }>(
      `/api/lore/${W.charMira}/attributes`,
      { method: "POST", json: { type: "label", name: "#gmOnly" } },
    );
    assert.equal(created.status, 201);
    await assertGone(h, W.charMira);
    assert.deepEqual(await publishedTitles(h), ["Saltmarrow Harbor", "The Lantern Guild"]);

    const removed = await h.request(
      `/api/lore/${W.charMira}/attributes?attrId=${created.body.attributeId}`,
      { method: "DELETE" },
    );
    assert.equal(removed.status, 204);
    await assertShown(h, W.charMira, "Mira Tallowend");

    assert.equal((await h.request(`/api/lore/${W.faction}`, { method: "DELETE" })).status, 204);
    await assertGone(h, W.faction);
    assert.deepEqual(await publishedTitles(h), ["Mira Tallowend", "Saltmarrow Harbor"]);
  }, CACHED));

Deno.test("private reads leave the snapshot alone", () =>
  withHarness(async (h) => {
    await get(h, lore(W.charMira));
    assert.equal((await h.request("/api/share")).status, 200);
    assert.equal((await h.request("/api/share/tree")).status, 200);
    // a POST that only reads Core
    const autolink = await h.requestJson<{ matches: { noteId: string }[] }>("/api/lore/autolink", {
      method: "POST",
      json: { text: "Mira Tallowend sails" },
    });
    assert.equal(autolink.body.matches[0].noteId, W.charMira);
    const before = loads(h); // the share tree read a subtree of its own
    assert.equal((await get(h, lore(W.charMira))).status, 200);
    assert.deepEqual(loads(h), before);
  }, CACHED));

Deno.test("a #shareRoot added in Core directly is seen once PUBLIC_CACHE_MS has passed", () => {
  const clock = { now: 1_000_000 }; // the service's clock: it moves when the test says
  return withHarness(async (h) => {
    await assertShown(h, W.guideWelcome, "Welcome, Travellers");
    addSecondRoot(h); // not through the service: nothing tells it
    assert.equal((await get(h, lore(W.guideWelcome))).status, 200);
    clock.now += 2_200;
    await assertGone(h, W.guideWelcome);
  }, { env: { PUBLIC_CACHE_MS: "2000" }, now: () => clock.now });
});

Deno.test("several #shareRoot owners: every public route fails closed, no note of either tree leaks", () =>
  withHarness(async (h) => {
    addSecondRoot(h);
    const trees = [
      W.guide,
      W.guideWelcome,
      W.charMira,
      W.faction,
      W.imgChart,
      W.locChart,
      W.locHarbor,
      W.locLighthouse,
      W.locReef,
    ];
    const titles = [...GUIDE_LORE, ...CHART_LORE, "Player's Guide", "Welcome, Travellers"];
    const bodies: string[] = [];
    for (const id of [...trees, HARBOR_ALIAS]) {
      await assertGone(h, id);
      bodies.push((await get(h, lore(id))).text, (await get(h, page(id))).text);
    }
    for (const q of ["#lore", "harbor", "lighthouse", "welcome"]) {
      const r = await get(h, search(q));
      assert.deepEqual(r.body, { results: [] }, q);
      bodies.push(r.text, (await get(h, `/?q=${encodeURIComponent(q)}`)).text);
    }
    const home = await get(h, "/");
    assert.equal(home.status, 404);
    bodies.push(home.text);
    const image = await get(h, `/api/public/images/${W.imgChart}/chart.png`);
    assert.equal(image.status, 404);
    bodies.push(image.text);
    for (const body of bodies) {
      for (const leak of [...trees, HARBOR_ALIAS, ...titles]) {
        assert.ok(!body.includes(leak), `a public answer names ${leak}`);
      }
    }

    // the GM sees why
    const share = await h.requestJson<
      { configured: boolean; noteId: string | null; conflict: { noteId: string }[] }
    >("/api/share");
    assert.deepEqual([share.body.configured, share.body.noteId], [false, null]);
    assert.deepEqual(share.body.conflict.map((c) => c.noteId), [W.locChart, W.guide]);
    const tree = await h.requestJson<{ noteId: string; isShared: boolean }[]>("/api/share/tree");
    assert.ok(tree.body.some((n) => n.noteId === W.charMira), "the tree still lists the lore");
    assert.ok(tree.body.every((n) => !n.isShared));

    // naming one resolves it, and visitors see that one at once
    assert.equal((await putShare(h, W.guide)).status, 200);
    await assertShown(h, W.guideWelcome, "Welcome, Travellers");
    await assertGone(h, W.locLighthouse);
    assert.deepEqual(await publishedTitles(h), GUIDE_LORE);
  }, CACHED));

Deno.test("a burst of visitors right after a switch finds the share read once, by the switch", () =>
  withHarness(async (h) => {
    await get(h, lore(W.guide));
    const beforeSwitch = loads(h);
    assert.equal((await putShare(h, W.locChart)).status, 200);
    const before = loads(h);
    // the switch answered after reading the new share: one subtree search, its root searches
    assert.equal(before.subtrees - beforeSwitch.subtrees, 1);
    h.core.fault({ path: "/etapi/notes", delayMs: 150 }); // a load now would keep them waiting
    const paths = [
      lore(W.locChart),
      lore(W.locLighthouse),
      lore(W.locReef),
      lore(HARBOR_ALIAS),
      lore(W.guide),
      search("#lore"),
      "/",
      page(W.locReef),
    ];
    const statuses = await Promise.all(paths.map(async (p) => {
      const r = await h.request(p);
      await r.body?.cancel();
      return r.status;
    }));
    assert.deepEqual(statuses, [200, 200, 200, 200, 404, 200, 200, 200]);
    const after = loads(h);
    assert.deepEqual(
      { roots: after.roots - before.roots, subtrees: after.subtrees - before.subtrees },
      { roots: 0, subtrees: 0 },
    );
  }, CACHED));
