/** Config routes: disconnect, portal config, status, models, wipe; zero-login end to end. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sessionCookies } from "../../src/session/browser_session.ts";
import { deriveSealKey } from "../../src/session/seal.ts";
import {
  assertNoSecrets,
  type Harness,
  TEST_SESSION_SECRET,
  withHarness,
} from "../helpers/harness.ts";
import { browse as browseAs, type CookieJar, cookieJar } from "../helpers/cookie_jar.ts";
import { W } from "../../sims/world.ts";

/** A browser signed in to the Parser double as its default owner. */
async function signedIn(h: Harness) {
  const key = await deriveSealKey(TEST_SESSION_SECRET);
  const session = { parserUrl: h.parser!.url, parserToken: h.parser!.ownerToken() };
  return cookieJar(await sessionCookies(key, session, false));
}

/** Sends a request as the browser and keeps the cookies it is given. */
const browse = (
  h: Harness,
  browser: CookieJar,
  path: string,
  init: RequestInit & { json?: unknown } = {},
) => browseAs<Record<string, unknown>>(h, browser, path, init);

/** Runs `fn` with a fresh data dir, removed afterwards. */
async function withDataDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "lpp-portal-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const isLore = (h: Harness, id: string) => h.core.store.hasLabel(id, "lore");

// ---- disconnect -------------------------------------------------------------------------------

Deno.test("disconnect: a bad or missing service is 400 and touches nothing", () =>
  withHarness(async (h) => {
    for (const q of ["", "?service=core", "?service=ALL"]) {
      const r = await h.requestJson(`/api/config/disconnect${q}`, { method: "DELETE" });
      assert.equal(r.status, 400, q);
      assert.equal(r.body.error, "INVALID_REQUEST");
      assert.deepEqual(r.headers.getSetCookie(), []);
    }
    assert.equal(h.core.requests.length, 0);
    assert.equal(h.parser!.requests.length, 0);
  }, { parser: true }));

Deno.test("disconnect codex: Core routes answer 503 disconnected from the next request on", () =>
  withHarness(async (h) => {
    const browser = cookieJar();
    assert.equal((await browse(h, browser, "/api/lore")).status, 200);
    const r = await browse(h, browser, "/api/config/disconnect?service=codex", {
      method: "DELETE",
    });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { disconnected: ["codex"] });
    assert.deepEqual(browser.names(), ["codex_off"]);
    h.core.clearRequests();
    const after = await browse(h, browser, "/api/lore");
    assert.equal(after.status, 503);
    assert.equal(after.body.error, "NOT_CONFIGURED");
    assert.deepEqual(after.body.details, { service: "core", reason: "disconnected" });
    assert.equal(h.core.requests.length, 0);
    // another browser is not affected
    assert.equal((await h.requestJson("/api/lore")).status, 200);
  }, { parser: true }));

Deno.test("disconnect parser: the session cookies are cleared; the next request has no session", () =>
  withHarness(async (h) => {
    const browser = await signedIn(h);
    const before = await browse(h, browser, "/api/config/status");
    assert.equal((before.body.session as { source: string }).source, "session");
    assert.equal((before.body.allknower as { ok: boolean }).ok, true);
    const r = await browse(h, browser, "/api/config/disconnect?service=parser", {
      method: "DELETE",
    });
    assert.deepEqual(r.body, { disconnected: ["parser"] });
    assert.deepEqual(browser.names(), []);
    const models = await browse(h, browser, "/api/config/models");
    assert.equal(models.status, 401);
    assert.deepEqual(models.body.details, { service: "parser" });
  }, { parser: true }));

Deno.test("disconnect all: both at once", () =>
  withHarness(async (h) => {
    const browser = await signedIn(h);
    const r = await browse(h, browser, "/api/config/disconnect?service=all", {
      method: "DELETE",
    });
    assert.deepEqual(r.body, { disconnected: ["codex", "parser"] });
    assert.deepEqual(browser.names(), ["codex_off"]);
    const status = await browse(h, browser, "/api/config/status");
    assert.deepEqual(status.body.session, { source: null });
    const core = status.body.allcodex as Record<string, unknown>;
    assert.equal(core.ok, false);
    assert.equal(core.configured, false);
    assert.equal(core.reason, "disconnected");
  }, { parser: true }));

Deno.test("disconnect: the front end's names allcodex and allknower mean codex and parser", () =>
  withHarness(async (h) => {
    const browser = await signedIn(h);
    const codex = await browse(h, browser, "/api/config/disconnect?service=allcodex", {
      method: "DELETE",
    });
    assert.deepEqual(codex.body, { disconnected: ["codex"] });
    const parser = await browse(h, browser, "/api/config/disconnect?service=allknower", {
      method: "DELETE",
    });
    assert.deepEqual(parser.body, { disconnected: ["parser"] });
    assert.deepEqual(browser.names(), ["codex_off"]);
  }, { parser: true }));

// ---- portal -----------------------------------------------------------------------------------

Deno.test("portal: env default, then PUT persists atomically and drives new lore's parent", () =>
  withDataDir((dataDir) =>
    withHarness(async (h) => {
      const first = await h.requestJson("/api/config/portal");
      assert.deepEqual(first.body, { loreRootNoteId: "root", source: "env" });

      const put = await h.requestJson("/api/config/portal", {
        method: "PUT",
        json: { loreRootNoteId: W.loreRoot },
      });
      assert.equal(put.status, 200);
      assert.deepEqual(put.body, { loreRootNoteId: W.loreRoot, source: "file" });
      const file = JSON.parse(await Deno.readTextFile(join(dataDir, "portal.json")));
      assert.deepEqual(file, { loreRootNoteId: W.loreRoot });
      const leftovers = [...Deno.readDirSync(dataDir)].filter((e) => e.name.endsWith(".tmp"));
      assert.deepEqual(leftovers, []);

      const get = await h.requestJson("/api/config/portal");
      assert.deepEqual(get.body, { loreRootNoteId: W.loreRoot, source: "file" });
      // sent as typed in the settings field: spaces around the id are not part of it
      const typed = await h.requestJson("/api/config/portal", {
        method: "PUT",
        json: { loreRootNoteId: ` ${W.loreRoot}\t` },
      });
      assert.deepEqual(typed.body, { loreRootNoteId: W.loreRoot, source: "file" });
      const created = await h.requestJson<{ branch: { parentNoteId: string } }>("/api/lore", {
        method: "POST",
        json: { title: "Under the new root" },
      });
      assert.equal(created.status, 201);
      assert.equal(created.body.branch.parentNoteId, W.loreRoot);
    }, { env: { DATA_DIR: dataDir } })
  ));

Deno.test("portal: PUT of a missing note is 404 and stores nothing; bad bodies are 400", () =>
  withDataDir((dataDir) =>
    withHarness(async (h) => {
      const missing = await h.requestJson("/api/config/portal", {
        method: "PUT",
        json: { loreRootNoteId: "noSuchNote123" },
      });
      assert.equal(missing.status, 404);
      assert.equal(missing.body.error, "NOT_FOUND");
      h.core.clearRequests();
      for (
        const json of [{}, { loreRootNoteId: "../etc" }, { loreRootNoteId: W.loreRoot, x: 1 }, []]
      ) {
        const r = await h.requestJson("/api/config/portal", { method: "PUT", json });
        assert.equal(r.status, 400, JSON.stringify(json));
        assert.equal(r.body.error, "INVALID_REQUEST");
      }
      assert.equal(h.core.requests.length, 0);
      const get = await h.requestJson("/api/config/portal");
      assert.deepEqual(get.body, { loreRootNoteId: "root", source: "env" });
      await assert.rejects(Deno.stat(join(dataDir, "portal.json")));
    }, { env: { DATA_DIR: dataDir } })
  ));

Deno.test("portal: PUT without Core credentials is 503 NOT_CONFIGURED", () =>
  withHarness(async (h) => {
    const r = await h.requestJson("/api/config/portal", {
      method: "PUT",
      json: { loreRootNoteId: W.loreRoot },
    });
    assert.equal(r.status, 503);
    assert.equal(r.body.error, "NOT_CONFIGURED");
    assert.deepEqual(r.body.details, { service: "core" });
  }, { noCoreCredentials: true }));

Deno.test("portal: the setting survives a restart on the same DATA_DIR", () =>
  withDataDir(async (dataDir) => {
    await withHarness(async (h) => {
      const put = await h.requestJson("/api/config/portal", {
        method: "PUT",
        json: { loreRootNoteId: W.loreRoot },
      });
      assert.equal(put.status, 200);
    }, { env: { DATA_DIR: dataDir } });
    await withHarness(async (h) => {
      const get = await h.requestJson("/api/config/portal");
      assert.deepEqual(get.body, { loreRootNoteId: W.loreRoot, source: "file" });
    }, { env: { DATA_DIR: dataDir, LORE_ROOT_NOTE_ID: "otherRoot" } });
  }));

Deno.test("portal: a corrupt file is logged and the env default is used", async () => {
  for (const content of ["{not json", '{"loreRootNoteId":"../../x"}', "[]"]) {
    await withDataDir(async (dataDir) => {
      await Deno.writeTextFile(join(dataDir, "portal.json"), content);
      await withHarness(async (h) => {
        const get = await h.requestJson("/api/config/portal");
        assert.equal(get.status, 200);
        assert.deepEqual(get.body, { loreRootNoteId: W.loreRoot, source: "env" });
        assert.ok(h.logs.some((l) => l.includes("portal config file is corrupt")), content);
      }, { env: { DATA_DIR: dataDir, LORE_ROOT_NOTE_ID: W.loreRoot } });
    });
  }
});

// ---- status -----------------------------------------------------------------------------------

Deno.test("status: both backends reachable with versions; our origin as url, no backend URL or token", () =>
  withHarness(async (h) => {
    const browser = await signedIn(h);
    const res = await h.request("/api/config/status", { headers: browser.header() });
    assert.equal(res.status, 200);
    const text = await res.text();
    assertNoSecrets(h, text);
    for (const backend of [h.core.url, h.parser!.url]) {
      assert.ok(!text.includes(new URL(backend).host), `${backend} leaked`);
    }
    assert.ok(!text.includes(h.parser!.internalSecret!), "internal secret leaked");
    const body = JSON.parse(text);
    assert.equal(body.allcodex.ok, true);
    assert.equal(body.allcodex.configured, true);
    assert.equal(body.allcodex.url, h.url);
    assert.equal(typeof body.allcodex.version, "string");
    assert.equal(typeof body.allcodex.latencyMs, "number");
    assert.deepEqual({ ...body.allknower, latencyMs: 0 }, {
      ok: true,
      configured: true,
      url: h.url,
      latencyMs: 0,
      version: "0.1.0",
    });
    assert.deepEqual(body.session, { source: "session" });
    for (const token of [...browser.header().cookie.split(/[=;]/)]) {
      if (token.length > 20) assert.ok(!text.includes(token));
    }
  }, { parser: true }));

Deno.test("status: url is PUBLIC_ORIGIN when set, else the origin the browser used", () =>
  withHarness(async (h) => {
    const own = await h.requestJson<Record<string, Record<string, unknown>>>(
      "/api/config/status",
    );
    assert.equal(own.body.allcodex.url, "https://lore.example.org");
    assert.equal(own.body.allknower.url, "https://lore.example.org");
  }, { env: { PUBLIC_ORIGIN: "https://lore.example.org" } }));

Deno.test("status: behind a trusted proxy, url is the forwarded origin", () =>
  withHarness(async (h) => {
    const r = await h.requestJson<Record<string, Record<string, unknown>>>(
      "/api/config/status",
      { headers: { "x-forwarded-host": "portal.localhost:3100", "x-forwarded-proto": "https" } },
    );
    assert.equal(r.body.allcodex.url, "https://portal.localhost:3100");
  }, { env: { TRUST_PROXY: "true" } }));

Deno.test("status: a down backend is a fact, not a failure; missing ones are not configured", () =>
  withHarness(async (h) => {
    h.core.fault({ path: "/etapi/app-info", status: 500 });
    const r = await h.requestJson<Record<string, Record<string, unknown>>>("/api/config/status");
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.allcodex, {
      ok: false,
      configured: true,
      url: h.url,
      error: "UPSTREAM_ERROR",
      message: "Core failed to handle the request",
    });
    assert.equal(r.body.allknower.configured, false);
    assert.equal(r.body.allknower.ok, false);
    assert.equal(r.body.allknower.error, "UNAUTHORIZED");
    assert.deepEqual(r.body.session, { source: null });
  }, { parser: true }));

Deno.test("status: nothing configured at all still answers 200", () =>
  withHarness(async (h) => {
    const r = await h.requestJson<Record<string, Record<string, unknown>>>("/api/config/status");
    assert.equal(r.status, 200);
    assert.equal(r.body.allcodex.configured, false);
    assert.equal(r.body.allcodex.error, "NOT_CONFIGURED");
    assert.equal(r.body.allknower.configured, false);
    assert.equal(h.core.requests.length, 0);
  }, { noCoreCredentials: true }));

// ---- models -----------------------------------------------------------------------------------

Deno.test("models: the Parser's list passes through; 401 without a Parser session", () =>
  withHarness(async (h) => {
    const none = await h.requestJson("/api/config/models");
    assert.equal(none.status, 401);
    assert.equal(none.body.error, "UNAUTHORIZED");
    assert.equal(h.parser!.requests.length, 0);

    const browser = await signedIn(h);
    const r = await browse(h, browser, "/api/config/models");
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      "brain-dump": { models: ["m/primary", "m/fallback"], autoMode: false },
    });
  }, {
    parser: { models: { "brain-dump": { models: ["m/primary", "m/fallback"], autoMode: false } } },
  }));

Deno.test("models: a malformed Parser answer is 502 and not passed on", () =>
  withHarness(async (h) => {
    h.parser!.fault({ path: "/config/models", status: 200, body: '{"x":{"models":"all"}}' });
    const r = await browse(h, await signedIn(h), "/api/config/models");
    assert.equal(r.status, 502);
    assert.equal(r.body.error, "UPSTREAM_ERROR");
    assert.ok(!JSON.stringify(r.body).includes("all"));
  }, { parser: true }));

// ---- wipe -------------------------------------------------------------------------------------

const CONFIRM = { confirm: "DELETE ALL LORE" };

Deno.test("wipe: refused with 403 unless ENABLE_WIPE; nothing reaches the Parser", () =>
  withHarness(async (h) => {
    const r = await browse(h, await signedIn(h), "/api/config/wipe", {
      method: "POST",
      json: CONFIRM,
    });
    assert.equal(r.status, 403);
    assert.equal(r.body.error, "FORBIDDEN");
    assert.equal(h.parser!.requests.filter((q) => q.path === "/config/wipe").length, 0);
    assert.ok(isLore(h, W.charMira));
  }, { parser: { wipeEnabled: true } }));

Deno.test("wipe: anything but the exact confirmation is 400", () =>
  withHarness(async (h) => {
    const browser = await signedIn(h);
    for (const json of [{}, { confirm: "delete all lore" }, { ...CONFIRM, extra: true }, "x"]) {
      const r = await browse(h, browser, "/api/config/wipe", { method: "POST", json });
      assert.equal(r.status, 400, JSON.stringify(json));
      assert.equal(r.body.error, "INVALID_REQUEST");
    }
    assert.equal(h.parser!.requests.length, 0);
    assert.ok(isLore(h, W.charMira));
  }, { parser: { wipeEnabled: true }, env: { ENABLE_WIPE: "true" } }));

Deno.test("wipe: enabled and confirmed, the Parser deletes every #lore note", () =>
  withHarness(async (h) => {
    const loreBefore = h.core.store.noteIds().filter((id) => isLore(h, id)).length;
    assert.ok(loreBefore > 0);
    const r = await browse(h, await signedIn(h), "/api/config/wipe", {
      method: "POST",
      json: CONFIRM,
    });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { ok: true, coreDeleted: loreBefore });
    assert.deepEqual(h.core.store.noteIds().filter((id) => isLore(h, id)), []);
    const list = await h.requestJson<unknown[]>("/api/lore");
    assert.deepEqual(list.body, []);
  }, { parser: { wipeEnabled: true }, env: { ENABLE_WIPE: "true" } }));

Deno.test("wipe: a Parser that refuses (production) is 403; without a session 401", () =>
  withHarness(async (h) => {
    const none = await h.requestJson("/api/config/wipe", { method: "POST", json: CONFIRM });
    assert.equal(none.status, 401);
    assert.deepEqual(none.body.details, { service: "parser" });
    const r = await browse(h, await signedIn(h), "/api/config/wipe", {
      method: "POST",
      json: CONFIRM,
    });
    assert.equal(r.status, 403);
    assert.equal(r.body.error, "FORBIDDEN");
    assert.ok(isLore(h, W.charMira));
  }, { parser: true, env: { ENABLE_WIPE: "true" } }));

// ---- zero-login -------------------------------------------------------------------------------

Deno.test("zero-login: a cookieless request gets Core data through the Parser and both cookies", () =>
  withHarness(async (h) => {
    const res = await h.request("/api/lore");
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.ok(body.length > 0);
    const names = res.headers.getSetCookie().filter((c) => !/max-age=0/i.test(c))
      .map((c) => c.split("=")[0]).sort();
    assert.deepEqual(names, ["parser_token", "parser_url"]);
    const provisions = h.parser!.requests.filter((r) => r.path === "/internal/auto-provision");
    assert.equal(provisions.length, 1);
  }, { parser: true, noCoreCredentials: true, env: { ZERO_LOGIN: "true" } }));

Deno.test("zero-login: a failing provision is NOT_CONFIGURED and not retried during the cooldown", () =>
  withHarness(async (h) => {
    h.parser!.fault({ path: "/internal/auto-provision", status: 503 });
    for (let i = 0; i < 3; i++) {
      const r = await h.requestJson("/api/lore");
      assert.equal(r.status, 503);
      assert.equal(r.body.error, "NOT_CONFIGURED");
      assert.deepEqual(r.headers.getSetCookie(), []);
    }
    const provisions = h.parser!.requests.filter((r) => r.path === "/internal/auto-provision");
    assert.equal(provisions.length, 1);
    assert.equal(h.core.requests.length, 0);
  }, {
    parser: true,
    noCoreCredentials: true,
    env: { ZERO_LOGIN: "true", PROVISION_COOLDOWN_MS: "60000" },
    now: () => 1_000_000, // the cooldown cannot run out between the requests, however slow
  }));
