/** The portal config kept in Core, against the Core double over ETAPI. */
import assert from "node:assert/strict";
import { type CoreSim, startCoreSim } from "../../sims/core.ts";
import { W } from "../../sims/world.ts";
import { ConfigError, loadConfig } from "../config/service_config.ts";
import { jsonLogger } from "../http/log.ts";
import type { PortalConfig } from "./portal_config.ts";
import {
  createCorePortalConfig,
  PORTAL_CONFIG_CACHE_MS,
  PORTAL_CONFIG_LABEL,
  PORTAL_CONFIG_PARENT,
} from "./portal_config_in_core.ts";
import { createCoreClient } from "../upstream/core.ts";
import { memoryStore, type SharedStore } from "../store/shared_store.ts";

/** One instance's store on the double, with its own clock and log. */
interface Instance {
  portal: PortalConfig;
  logs: string[];
  /** Moves this instance's clock on. */
  advance(ms: number): void;
}

function instance(core: CoreSim, token = core.token, shared?: SharedStore): Instance {
  let now = 1_000_000;
  const logs: string[] = [];
  const portal = createCorePortalConfig({
    core: createCoreClient({ baseUrl: core.url, token }, { fetch, timeoutMs: 2_000 }),
    defaultLoreRoot: "root",
    log: jsonLogger("debug", (l) => logs.push(l)),
    now: () => now,
    shared,
  });
  return { portal, logs, advance: (ms) => now += ms };
}

async function withCore(fn: (core: CoreSim) => Promise<void>): Promise<void> {
  const core = await startCoreSim();
  try {
    await fn(core);
  } finally {
    await core.close();
  }
}

/** Notes owning the marker label, in creation order. */
const configNotes = (core: CoreSim) =>
  core.store.noteIds().filter((id) =>
    core.store.ownAttributes(id).some((a) => a.name === PORTAL_CONFIG_LABEL)
  );

const env = { loreRootNoteId: "root", source: "env" } as const;
const stored = (loreRootNoteId: string) => ({ loreRootNoteId, source: "file" }) as const;

Deno.test("core store: nothing stored is LORE_ROOT_NOTE_ID; the first write creates a hidden JSON note", () =>
  withCore(async (core) => {
    const a = instance(core);
    assert.deepEqual(await a.portal.get(), env);
    assert.deepEqual(configNotes(core), []);

    assert.deepEqual(await a.portal.set(W.loreRoot), stored(W.loreRoot));
    const [id] = configNotes(core);
    const note = core.store.getNote(id)!;
    assert.equal(note.type, "code");
    assert.equal(note.mime, "application/json");
    assert.deepEqual(core.store.branchesOf(id).map((b) => b.parentNoteId), [PORTAL_CONFIG_PARENT]);
    assert.deepEqual(JSON.parse(String(core.store.getContent(id))), { loreRootNoteId: W.loreRoot });
    for (const label of ["gmOnly", "archived", PORTAL_CONFIG_LABEL]) {
      assert.equal(core.store.hasLabel(id, label), true, label);
    }

    // another instance finds it; a second write rewrites the same note
    assert.deepEqual(await instance(core).portal.get(), stored(W.loreRoot));
    await a.portal.set(W.charMira);
    assert.deepEqual(configNotes(core), [id]);
    assert.deepEqual(JSON.parse(String(core.store.getContent(id))), { loreRootNoteId: W.charMira });
  }));

Deno.test("core store: a read is reused for the cache time; the writer sees its write at once", () =>
  withCore(async (core) => {
    const a = instance(core);
    const b = instance(core);
    await a.portal.set(W.loreRoot);
    assert.deepEqual(await b.portal.get(), stored(W.loreRoot));

    await a.portal.set(W.charMira);
    assert.deepEqual(await a.portal.get(), stored(W.charMira));
    core.clearRequests();
    b.advance(PORTAL_CONFIG_CACHE_MS - 1);
    assert.deepEqual(await b.portal.get(), stored(W.loreRoot)); // still the read it made
    assert.equal(core.requests.length, 0);
    b.advance(1);
    assert.deepEqual(await b.portal.get(), stored(W.charMira));
    // the note found before is read again by id, without a search
    assert.deepEqual(core.requests.map((r) => `${r.method} ${r.path}`), [
      `GET /etapi/notes/${configNotes(core)[0]}/content`,
    ]);
  }));

Deno.test("core store: concurrent reads share one load", () =>
  withCore(async (core) => {
    await instance(core).portal.set(W.loreRoot);
    const b = instance(core);
    core.clearRequests();
    const all = await Promise.all([b.portal.get(), b.portal.get(), b.portal.get()]);
    assert.deepEqual(all, [stored(W.loreRoot), stored(W.loreRoot), stored(W.loreRoot)]);
    assert.equal(core.requests.length, 2); // one search, one content read
  }));

Deno.test("core store: a deleted note means LORE_ROOT_NOTE_ID again, and the next write recreates it", () =>
  withCore(async (core) => {
    const a = instance(core);
    await a.portal.set(W.loreRoot);
    const [first] = configNotes(core);
    core.store.deleteNote(first);
    a.advance(PORTAL_CONFIG_CACHE_MS);
    assert.deepEqual(await a.portal.get(), env);
    const b = instance(core);
    await b.portal.get(); // remembers nothing: there is no note
    await a.portal.set(W.charMira);
    const [second] = configNotes(core);
    assert.notEqual(second, first);
    assert.deepEqual(await b.portal.get(), env); // "nothing stored" is reused like any read
    b.advance(PORTAL_CONFIG_CACHE_MS);
    assert.deepEqual(await b.portal.get(), stored(W.charMira));
  }));

Deno.test("core store: a write to a note deleted meanwhile creates a new one", () =>
  withCore(async (core) => {
    const a = instance(core);
    await a.portal.set(W.loreRoot);
    core.store.deleteNote(configNotes(core)[0]);
    assert.deepEqual(await a.portal.set(W.charMira), stored(W.charMira));
    assert.equal(configNotes(core).length, 1);
    assert.deepEqual(await instance(core).portal.get(), stored(W.charMira));
  }));

Deno.test("core store: damaged content falls back to LORE_ROOT_NOTE_ID and says so", () =>
  withCore(async (core) => {
    await instance(core).portal.set(W.loreRoot);
    for (const text of ["{not json", '{"loreRootNoteId":"../etc"}', "[]"]) {
      core.store.setNoteContent(configNotes(core)[0], text);
      const b = instance(core);
      assert.deepEqual(await b.portal.get(), env, text);
      assert.ok(b.logs.some((l) => l.includes("portal config note in Core is damaged")), text);
    }
  }));

Deno.test("core store: of several config notes the oldest wins, for reads and writes alike", () =>
  withCore(async (core) => {
    const make = (at: string, root: string) => {
      const { note } = core.store.withTime(new Date(at), () =>
        core.store.createNote({
          parentNoteId: "root",
          title: "Lore Portal configuration",
          type: "code",
          mime: "application/json",
          content: JSON.stringify({ loreRootNoteId: root }),
        }));
      core.store.createAttribute({ noteId: note.noteId, type: "label", name: PORTAL_CONFIG_LABEL });
      return note.noteId;
    };
    const newer = make("2024-05-02T00:00:00Z", W.charMira);
    const older = make("2024-05-01T00:00:00Z", W.loreRoot);
    const a = instance(core);
    assert.deepEqual(await a.portal.get(), stored(W.loreRoot));
    assert.ok(a.logs.some((l) => l.includes("several portal config notes") && l.includes(newer)));
    await a.portal.set(W.charOskar);
    assert.deepEqual(JSON.parse(String(core.store.getContent(older))), {
      loreRootNoteId: W.charOskar,
    });
    assert.deepEqual(JSON.parse(String(core.store.getContent(newer))), {
      loreRootNoteId: W.charMira,
    });
  }));

Deno.test("core store: a note that only inherits the label is not the config", () =>
  withCore(async (core) => {
    core.store.createAttribute({
      noteId: W.loreRoot,
      type: "label",
      name: PORTAL_CONFIG_LABEL,
      isInheritable: true,
    });
    const a = instance(core);
    assert.deepEqual(await a.portal.get(), env);
    await a.portal.set(W.charMira);
    assert.deepEqual(await instance(core).portal.get(), stored(W.charMira));
  }));

Deno.test("core store: Core failing with nothing read yet fails as Core's failures do", () =>
  withCore(async (core) => {
    core.fault({ path: "/etapi/notes", status: 500, times: 1 });
    await assert.rejects(instance(core).portal.get(), { status: 502, code: "UPSTREAM_ERROR" });
    core.fault({ path: "/etapi/notes", hang: true, times: 1 });
    const slow = createCorePortalConfig({
      core: createCoreClient({ baseUrl: core.url, token: core.token }, { fetch, timeoutMs: 100 }),
      defaultLoreRoot: "root",
      log: jsonLogger("silent"),
    });
    await assert.rejects(slow.get(), { status: 504, code: "UPSTREAM_TIMEOUT" });
  }));

Deno.test("core store: unreachable Core is 503", async () => {
  const core = await startCoreSim();
  const a = instance(core);
  await core.close();
  await assert.rejects(a.portal.get(), { status: 503, code: "UNREACHABLE" });
  await assert.rejects(a.portal.set(W.loreRoot), { status: 503, code: "UNREACHABLE" });
});

Deno.test("core store: a refused server token is 503 NOT_CONFIGURED, never the caller's 401", () =>
  withCore(async (core) => {
    const a = instance(core, "not-the-token");
    const refused = { status: 503, code: "NOT_CONFIGURED", details: { service: "core" } };
    await assert.rejects(a.portal.get(), refused);
    await assert.rejects(a.portal.set(W.loreRoot), refused);
    assert.deepEqual(configNotes(core), []);
  }));

Deno.test("core store: any other refusal by Core is a 502", () =>
  withCore(async (core) => {
    core.fault({ path: "/etapi/notes", status: 400, times: 1 });
    await assert.rejects(instance(core).portal.get(), { status: 502, code: "UPSTREAM_ERROR" });
  }));

Deno.test("core store: after one good read, a failing Core serves that read (logged)", () =>
  withCore(async (core) => {
    await instance(core).portal.set(W.loreRoot);
    const b = instance(core);
    assert.deepEqual(await b.portal.get(), stored(W.loreRoot));
    b.advance(PORTAL_CONFIG_CACHE_MS);
    core.fault({ path: /^\/etapi\/notes/, status: 503 });
    assert.deepEqual(await b.portal.get(), stored(W.loreRoot));
    assert.ok(b.logs.some((l) => l.includes("cannot read the portal config from Core")));
    // a failed write changes nothing, here or in Core
    await assert.rejects(b.portal.set(W.charMira), { status: 502 });
    core.clearFaults();
    assert.deepEqual(await b.portal.get(), stored(W.loreRoot));
  }));

Deno.test("core store: a create that fails half way leaves no note behind", () =>
  withCore(async (core) => {
    core.fault({ method: "POST", path: "/etapi/attributes", status: 500, times: 3 });
    const a = instance(core);
    await assert.rejects(a.portal.set(W.loreRoot), { status: 502 });
    assert.equal(
      core.store.childBranchesOf(PORTAL_CONFIG_PARENT).some((b) =>
        core.store.getNote(b.noteId)?.title === "Lore Portal configuration"
      ),
      false,
    );
    core.clearFaults();
    await a.portal.set(W.loreRoot);
    assert.equal(configNotes(core).length, 1);
  }));

Deno.test("core store: two first writes of one instance make one note", () =>
  withCore(async (core) => {
    const a = instance(core);
    await Promise.all([a.portal.set(W.loreRoot), a.portal.set(W.charMira)]);
    assert.equal(configNotes(core).length, 1);
    assert.deepEqual(await instance(core).portal.get(), stored(W.charMira));
  }));

Deno.test("PORTAL_CONFIG_STORE=core needs CORE_URL and SESSION_SECRET", () => {
  const secret = "s".repeat(32);
  const core = { CORE_URL: "http://core:8080", CORE_TOKEN: "t" };
  assert.equal(
    loadConfig({ PORTAL_CONFIG_STORE: "core", SESSION_SECRET: secret, ...core })
      .PORTAL_CONFIG_STORE,
    "core",
  );
  assert.equal(loadConfig({}).PORTAL_CONFIG_STORE, "file");
  for (const env of [{ SESSION_SECRET: secret }, core]) {
    assert.throws(() => loadConfig({ PORTAL_CONFIG_STORE: "core", ...env }), (e: ConfigError) => {
      assert.match(e.problems.join("\n"), /^PORTAL_CONFIG_STORE: core needs CORE_URL/m);
      return true;
    });
  }
  assert.throws(() => loadConfig({ PORTAL_CONFIG_STORE: "redis" }), ConfigError);
});

Deno.test("portal in Core, shared store: a write is read by another instance at once", () =>
  withCore(async (core) => {
    const store = memoryStore({ maxKeys: 10 });
    const [a, b] = [instance(core, core.token, store), instance(core, core.token, store)];
    assert.deepEqual(await b.portal.get(), { loreRootNoteId: "root", source: "env" });
    await a.portal.set(W.loreRoot);
    // b's own cache still holds "root" for PORTAL_CONFIG_CACHE_MS; the store says otherwise
    assert.deepEqual(await b.portal.get(), { loreRootNoteId: W.loreRoot, source: "file" });
  }));

Deno.test("portal in Core, shared store: a store that does not answer leaves Core", () =>
  withCore(async (core) => {
    const down: SharedStore = {
      ...memoryStore({ maxKeys: 10 }),
      get: () => Promise.reject(new Error("down")),
      set: () => Promise.reject(new Error("down")),
    };
    const a = instance(core, core.token, down);
    assert.deepEqual(await a.portal.set(W.loreRoot), {
      loreRootNoteId: W.loreRoot,
      source: "file",
    });
    assert.deepEqual(await a.portal.get(), { loreRootNoteId: W.loreRoot, source: "file" });
    assert.equal(configNotes(core).length, 1, "written to Core all the same");
    assert.ok(a.logs.some((l) => l.includes("reaches other instances within 5 s")));
  }));
