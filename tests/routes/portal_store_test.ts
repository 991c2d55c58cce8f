/**
 * `PORTAL_CONFIG_STORE=core` through the routes: the portal config lives in a Core note that the
 * public share never shows, and Core's failures reach the caller as declared.
 */
import assert from "node:assert/strict";
import { type Harness, withHarness } from "../helpers/harness.ts";
import { W } from "../../sims/world.ts";
import { PORTAL_CONFIG_LABEL, PORTAL_CONFIG_TITLE } from "../../src/state/portal_config_in_core.ts";

const CORE_STORE = { env: { PORTAL_CONFIG_STORE: "core" } };

/** The config note's id, failing the test unless there is exactly one. */
function configNote(h: Harness): string {
  const ids = h.core.store.noteIds().filter((id) =>
    h.core.store.ownAttributes(id).some((a) => a.name === PORTAL_CONFIG_LABEL)
  );
  assert.equal(ids.length, 1, `config notes: ${ids.join(", ")}`);
  return ids[0];
}

Deno.test("portal in Core: PUT stores it in Core, GET reads it, new lore goes under it", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "lpp-portal-core-" });
  await withHarness(async (h) => {
    assert.deepEqual((await h.requestJson("/api/config/portal")).body, {
      loreRootNoteId: "root",
      source: "env",
    });
    const put = await h.requestJson("/api/config/portal", {
      method: "PUT",
      json: { loreRootNoteId: W.loreRoot },
    });
    assert.equal(put.status, 200);
    assert.deepEqual(put.body, { loreRootNoteId: W.loreRoot, source: "file" });
    const id = configNote(h);
    assert.deepEqual(JSON.parse(String(h.core.store.getContent(id))), {
      loreRootNoteId: W.loreRoot,
    });

    assert.deepEqual((await h.requestJson("/api/config/portal")).body, put.body);
    const created = await h.requestJson<{ branch: { parentNoteId: string } }>("/api/lore", {
      method: "POST",
      json: { title: "Under the stored root" },
    });
    assert.equal(created.status, 201);
    assert.equal(created.body.branch.parentNoteId, W.loreRoot);
    // the start-up log says the login rate limit and logouts stay per instance without STATE_URL
    assert.ok(
      h.logs.some((l) =>
        l.includes("portal config kept in Core") && l.includes("N × 10 attempts per 60000 ms") &&
        l.includes("accept a copy of the cookie for up to CREDENTIALS_CACHE_MS")
      ),
    );
  }, { env: { ...CORE_STORE.env, DATA_DIR: dataDir } });
  // nothing on local disk
  assert.deepEqual([...Deno.readDirSync(dataDir)].map((e) => e.name), []);
  await Deno.remove(dataDir, { recursive: true });
});

Deno.test("portal in Core: the config note never shows on the public share, even cloned into it", () =>
  withHarness(async (h) => {
    await h.requestJson("/api/config/portal", {
      method: "PUT",
      json: { loreRootNoteId: W.loreRoot },
    });
    const id = configNote(h);
    // a GM drags it into the shared tree by mistake
    await h.etapi("/branches", { method: "POST", json: { noteId: id, parentNoteId: W.guide } });
    assert.ok(h.core.store.branchesOf(id).some((b) => b.parentNoteId === W.guide));

    for (const path of [`/api/public/lore/${id}`, `/public/lore/${id}`]) {
      const res = await h.request(path);
      await res.body?.cancel();
      assert.equal(res.status, 404, path);
    }
    const found = await h.requestJson<{ results: { id: string }[] }>(
      `/api/public/search?q=${encodeURIComponent(PORTAL_CONFIG_TITLE)}`,
    );
    assert.equal(found.status, 200);
    assert.deepEqual(found.body.results.filter((r) => r.id === id), []);
    for (const path of ["/", "/sitemap.xml", "/public/feed.atom"]) {
      const text = await (await h.request(path)).text();
      assert.ok(!text.includes(id), path);
    }
    // the guide itself is public: the share works, it just leaves the note out
    assert.equal((await h.requestJson(`/api/public/lore/${W.guide}`)).status, 200);
  }, CORE_STORE));

Deno.test("portal in Core: Core failing is a declared 502 on GET, and PUT stores nothing", () =>
  withHarness(async (h) => {
    h.core.fault({ method: "GET", path: "/etapi/notes", status: 500 });
    const get = await h.requestJson("/api/config/portal");
    assert.equal(get.status, 502);
    assert.equal(get.body.error, "UPSTREAM_ERROR");
    h.core.clearFaults();

    h.core.fault({ method: "POST", path: "/etapi/create-note", status: 500 });
    const put = await h.requestJson("/api/config/portal", {
      method: "PUT",
      json: { loreRootNoteId: W.loreRoot },
    });
    assert.equal(put.status, 502);
    h.core.clearFaults();
    assert.deepEqual((await h.requestJson("/api/config/portal")).body, {
      loreRootNoteId: "root",
      source: "env",
    });
  }, CORE_STORE));
