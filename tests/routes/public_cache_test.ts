/**
 * Public answers from memory: a rendered answer is kept per snapshot version and answered again
 * byte for byte without Core; a conditional visit is a 304 from the kept ETag; a write through
 * the service drops what was rendered; an aging snapshot is reloaded in the background while
 * visitors keep getting the last good one.
 */
import assert from "node:assert/strict";
import { type Harness, type HarnessOptions, withHarness } from "../helpers/harness.ts";
import { eventually, manualDeadlines } from "../helpers/manual_deadlines.ts";
import { SHARE_CREDENTIALS, W } from "../../sims/world.ts";

/** Long enough that only invalidation can explain a change seen within one test. */
const CACHED: HarnessOptions = { env: { PUBLIC_CACHE_MS: "600000" } };

const lore = (id: string) => `/api/public/lore/${encodeURIComponent(id)}`;
const page = (id: string) => `/public/lore/${encodeURIComponent(id)}`;
const search = (q: string) => `/api/public/search?q=${encodeURIComponent(q)}`;

/**
 * Every public answer the cache keeps: API note, search, note page, home and search pages. The
 * faction's content shows an image attachment, so rendering it reads the attachment list from
 * Core: only a kept answer explains a repeat visit without Core.
 */
const CACHED_PATHS = [
  lore(W.faction),
  page(W.faction),
  lore(W.charMira),
  search("harbor"),
  search("#lore"),
  page(W.charMira),
  "/",
  "/?q=harbor",
];

function basic(user: string, password: string): string {
  return "Basic " + btoa(`${user}:${password}`);
}

interface Got {
  status: number;
  headers: Headers;
  text: string;
}

async function get(h: Harness, path: string, headers: HeadersInit = {}): Promise<Got> {
  const res = await h.request(path, { headers });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Response headers but those that differ per request (date, request id, timings). */
function answerHeaders(got: Got): [string, string][] {
  return [...got.headers].filter(([n]) => !["date", "x-request-id", "server-timing"].includes(n));
}

function subtreeSearches(h: Harness): number {
  return h.core.requests.filter((r) =>
    r.path === "/etapi/notes" &&
    new URLSearchParams(r.search).get("search") === "note.noteId != ''"
  ).length;
}

Deno.test("public cache: a repeat visit gets the same bytes without Core; If-None-Match is a 304", () =>
  withHarness(async (h) => {
    const first = new Map<string, Got>();
    for (const path of CACHED_PATHS) {
      const got = await get(h, path);
      assert.equal(got.status, 200, path);
      first.set(path, got);
    }
    h.core.clearRequests();
    for (const path of CACHED_PATHS) {
      const was = first.get(path)!;
      const again = await get(h, path);
      assert.equal(again.status, 200, path);
      assert.equal(again.text, was.text, path);
      assert.deepEqual(answerHeaders(again), answerHeaders(was), path);
      const revisit = await get(h, path, { "if-none-match": was.headers.get("etag")! });
      assert.equal(revisit.status, 304, path);
      assert.equal(revisit.text, "");
      assert.equal(revisit.headers.get("etag"), was.headers.get("etag"));
      assert.equal(revisit.headers.get("content-type"), null);
      assert.equal(revisit.headers.get("vary"), "Authorization");
    }
    assert.deepEqual(h.core.requests.map((r) => r.path), []); // all from memory
  }, CACHED));

Deno.test("public cache: answers kept for credentialed visitors never reach others", () =>
  withHarness(async (h) => {
    const good = { authorization: basic(SHARE_CREDENTIALS.user, SHARE_CREDENTIALS.password) };
    const wrong = { authorization: basic(SHARE_CREDENTIALS.user, "lanterns") };
    for (const path of [lore(W.guideVault), page(W.guideVault)]) {
      const player = await get(h, path, good);
      assert.equal(player.status, 200, path);
      assert.equal(player.headers.get("cache-control"), "private, no-cache");
      assert.equal((await get(h, path)).status, 401, path);
      assert.equal((await get(h, path, wrong)).status, 401, path);
      assert.equal((await get(h, path, good)).text, player.text, path);
    }
    // The same public page: the credentialed answer is private, the anonymous one is not.
    assert.equal((await get(h, "/", good)).headers.get("cache-control"), "private, no-cache");
    assert.equal((await get(h, "/")).headers.get("cache-control"), "no-cache");
    assert.equal((await get(h, "/", good)).headers.get("cache-control"), "private, no-cache");
  }, CACHED));

Deno.test("public cache: an anonymous visit's kept answer never answers a credentialed one", () =>
  withHarness(async (h) => {
    const good = { authorization: basic(SHARE_CREDENTIALS.user, SHARE_CREDENTIALS.password) };
    const anonymousPolicy = [[lore(W.charMira), "public, no-cache"], [
      page(W.charMira),
      "no-cache",
    ]];
    for (const [path, policy] of anonymousPolicy) {
      for (let visit = 0; visit < 2; visit++) { // the second visit comes from memory
        assert.equal((await get(h, path)).headers.get("cache-control"), policy, path);
      }
      const credentialed = await get(h, path, good);
      assert.equal(credentialed.status, 200, path);
      assert.equal(credentialed.headers.get("cache-control"), "private, no-cache", path);
    }
    for (const path of [lore(W.guideVault), page(W.guideVault)]) {
      assert.equal((await get(h, path, good)).status, 200, path);
      assert.equal((await get(h, path)).status, 401, path); // nothing kept from the above
    }
  }, CACHED));

Deno.test("public cache: a content write through the service is seen at once, API and page", () =>
  withHarness(async (h) => {
    const before = await get(h, lore(W.charMira));
    const beforePage = await get(h, page(W.charMira));
    assert.equal(before.status, 200);
    assert.ok(!before.text.includes("Freshly charted"));
    const put = await h.request(`/api/lore/${W.charMira}/content`, {
      method: "PUT",
      headers: { "content-type": "text/plain" },
      body: "<p>Freshly charted waters.</p>",
    });
    assert.equal(put.status, 204);
    const after = await get(h, lore(W.charMira));
    assert.equal(JSON.parse(after.text).contentHtml, "<p>Freshly charted waters.</p>");
    assert.notEqual(after.headers.get("etag"), before.headers.get("etag"));
    const afterPage = await get(h, page(W.charMira));
    assert.ok(afterPage.text.includes("Freshly charted waters."));
    // The old ETag no longer matches: the visitor gets the new page, not a 304.
    const revisit = await get(h, page(W.charMira), {
      "if-none-match": beforePage.headers.get("etag")!,
    });
    assert.equal(revisit.status, 200);
  }, CACHED));

Deno.test("public cache: an aging snapshot is reloaded in the background, stale meanwhile", () => {
  // the cache ages on `clock`; Core's slow answer takes as long as the test says (`time`)
  const clock = { now: 1_000_000 };
  const time = manualDeadlines();
  return withHarness(async (h) => {
    assert.equal((await get(h, lore(W.charMira))).status, 200);
    assert.equal(subtreeSearches(h), 1);
    // Changed in Core directly: only the snapshot's reload can tell the service.
    h.core.store.createAttribute({
      noteId: W.charMira,
      type: "label",
      name: "gmOnly",
      value: "",
      isInheritable: false,
    });
    // Past half the cache time (a reload starts) and well before it expires.
    clock.now += 1_600;
    // Core answers slowly, so the reload is still running while these visitors are answered.
    h.core.fault({ path: "/etapi/notes", delayMs: 300 });
    const during = await Promise.all([1, 2, 3].map(() => get(h, lore(W.charMira))));
    assert.deepEqual(during.map((g) => g.status), [200, 200, 200]); // the last good snapshot
    // The reload runs on its own: no visitor has to ask again for it to reach Core.
    await eventually("the reload waits for Core", () => time.pendingOf(300) > 0);
    h.core.clearFaults();
    time.advance(300); // Core answers it
    await eventually(
      "the new version is served",
      async () => (await get(h, lore(W.charMira))).status === 404,
    );
    assert.equal(subtreeSearches(h), 2); // one reload for every visitor
  }, { env: { PUBLIC_CACHE_MS: "3000" }, now: () => clock.now, deadlines: time });
});
