/**
 * The portal config kept in Core (`PORTAL_CONFIG_STORE=core`), so that every instance behind a
 * load balancer sees one lore root: a JSON code note under `root`, found by its own
 * `#lorePortalConfig` label and written with the server's Core token. Each instance reuses what
 * it read for {@linkcode PORTAL_CONFIG_CACHE_MS}; the instance that wrote sees its write at once.
 * Concurrent writes: the last one wins.
 *
 * @module
 */
import { ApiError, nullOn404, upstreamCode } from "../http/errors.ts";
import type { Logger } from "../http/log.ts";
import { writeSteps } from "../lore/write_steps.ts";
import {
  type PortalConfig,
  type PortalSettings,
  portalSettingsSchema,
  storedPortalSettings,
} from "./portal_config.ts";
import type { CoreClient, CoreNote } from "../upstream/core.ts";
import type { SharedStore } from "../store/shared_store.ts";

/** The label that marks the config note (own, not inherited). */
export const PORTAL_CONFIG_LABEL = "lorePortalConfig";
/** How long an instance reuses the config it read: a change elsewhere shows within this time. */
export const PORTAL_CONFIG_CACHE_MS = 5_000;
/** Parent of a new config note: never a share root (system notes cannot be one). */
export const PORTAL_CONFIG_PARENT = "root";
/** Title of a new config note. */
export const PORTAL_CONFIG_TITLE = "Lore Portal configuration";
/**
 * Labels a new config note gets before its marker: `#gmOnly` keeps it off the public share even
 * if someone clones it into the shared tree; `#archived` keeps it out of Core's searches.
 */
export const PORTAL_CONFIG_HIDING_LABELS = ["gmOnly", "archived"] as const;

/** Options of {@linkcode createCorePortalConfig}. */
export interface CorePortalConfigOptions {
  /** Core with the server's own token, detached from any request (reads are shared). */
  core: CoreClient;
  /** `LORE_ROOT_NOTE_ID`: used while Core holds no valid config note. */
  defaultLoreRoot: string;
  log: Logger;
  /** Default {@linkcode PORTAL_CONFIG_CACHE_MS}. */
  ttlMs?: number;
  /** Clock in ms; default `Date.now`. */
  now?: () => number;
  /**
   * The store instances share (`STATE_URL`): a write is put there too, and reads look there
   * first, so every instance sees a new lore root at once (not after its cache time).
   */
  shared?: SharedStore;
}

/** How long the shared store holds a written config; then reads go to Core again. */
export const SHARED_PORTAL_CONFIG_MS = 60_000;

const SHARED_KEY = "portal-config";

/**
 * Creates the store. Nothing is read until the first `get()`.
 *
 * - No config note (or a damaged one, logged): `LORE_ROOT_NOTE_ID`, `source: "env"`.
 * - Several notes with the label (two instances' first writes raced): the oldest is used, both
 *   for reading and writing, and the others are named in a warning.
 * - Core failing: the last config read is served (logged) when there is one; otherwise the call
 *   fails with Core's 502/503/504. The server's token refused is 503 `NOT_CONFIGURED`, any other
 *   refusal 502 `UPSTREAM_ERROR`: the server's problem, never the caller's credentials.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { jsonLogger } from "../http/log.ts";
 * import type { CoreClient } from "../upstream/core.ts";
 *
 * // Declared, not run here: `core` reaches Core with the server's token.
 * async function moveLoreRoot(core: CoreClient): Promise<void> {
 *   const portal = createCorePortalConfig({
 *     core,
 *     defaultLoreRoot: "root",
 *     log: jsonLogger("silent"),
 *   });
 *   await portal.set("loreRoot123"); // creates or rewrites the #lorePortalConfig note
 *   assert.deepEqual(await portal.get(), { loreRootNoteId: "loreRoot123", source: "file" });
 * }
 * ```
 */
export function createCorePortalConfig(opts: CorePortalConfigOptions): PortalConfig {
  const store: Store = {
    core: opts.core,
    log: opts.log,
    ttlMs: opts.ttlMs ?? PORTAL_CONFIG_CACHE_MS,
    now: opts.now ?? (() => Date.now()),
    fallback: { loreRootNoteId: opts.defaultLoreRoot, source: "env" },
    version: 0,
    writing: Promise.resolve(),
  };
  const shared = opts.shared;
  if (!shared) {
    return {
      get: () => readSettings(store),
      set: (loreRootNoteId) => writeSettings(store, loreRootNoteId),
    };
  }
  return {
    get: async () => (await sharedSettings(shared)) ?? readSettings(store),
    async set(loreRootNoteId) {
      const settings = await writeSettings(store, loreRootNoteId);
      // Core holds it now; the store only spreads it faster (a failure leaves the cache time)
      const text = JSON.stringify({ loreRootNoteId: settings.loreRootNoteId });
      await shared.set(SHARED_KEY, text, SHARED_PORTAL_CONFIG_MS).catch(() => {
        store.log.log("warn", "the new portal config reaches other instances within 5 s");
      });
      return settings;
    },
  };
}

/** The config the last write put in the shared store, if it is there and readable. */
async function sharedSettings(shared: SharedStore): Promise<PortalSettings | undefined> {
  // the store not answering leaves Core, as without a store
  const text = await shared.get(SHARED_KEY).catch(() => null);
  if (text === null) return undefined;
  return storedPortalSettings(text);
}

/** One store's state, shared by its reads and writes. */
interface Store {
  core: CoreClient;
  log: Logger;
  ttlMs: number;
  now: () => number;
  /** What is served while Core holds no valid config note. */
  fallback: PortalSettings;
  /** The config note found last; looked up again when it has gone. */
  noteId?: string;
  cached?: { settings: PortalSettings; at: number };
  /** The read under way: concurrent `get()`s share it. */
  loading?: Promise<PortalSettings>;
  /** Bumped by every write, so a read that started before it cannot overwrite it. */
  version: number;
  /** Writes of this instance, one after another (two first writes would make two notes). */
  writing: Promise<unknown>;
}

/** The cached settings while fresh, else one shared read; Core failing serves the last read. */
function readSettings(s: Store): Promise<PortalSettings> {
  if (s.cached && s.now() - s.cached.at < s.ttlMs) return Promise.resolve(s.cached.settings);
  if (s.loading) return s.loading;
  const started = s.version;
  const attempt = loadSettings(s).then(
    (settings) => {
      if (s.version !== started) return s.cached!.settings; // a write landed meanwhile
      s.cached = { settings, at: s.now() };
      return settings;
    },
    (e) => {
      const error = storeError(e);
      if (!s.cached) throw error;
      s.log.log("warn", "cannot read the portal config from Core; using the last one read", {
        error: error.code,
      });
      return s.cached.settings;
    },
  ).finally(() => {
    if (s.loading === attempt) s.loading = undefined;
  });
  s.loading = attempt;
  return attempt;
}

/** Writes after this instance's earlier writes; the writer sees its own write at once. */
function writeSettings(s: Store, loreRootNoteId: string): Promise<PortalSettings> {
  const data = portalSettingsSchema.parse({ loreRootNoteId });
  const content = JSON.stringify(data, null, 2) + "\n";
  const done = s.writing.then(async () => {
    try {
      await writeNote(s, content);
    } catch (e) {
      throw storeError(e);
    }
    const settings: PortalSettings = { loreRootNoteId: data.loreRootNoteId, source: "file" };
    s.version++;
    s.cached = { settings, at: s.now() };
    return settings;
  });
  s.writing = done.catch(() => {});
  return done;
}

/** The settings in Core's config note, or the fallback when there is none. */
async function loadSettings(s: Store): Promise<PortalSettings> {
  // a remembered note may have been deleted since: then one more search
  for (let attempt = 0; attempt < 2; attempt++) {
    s.noteId ??= await findConfigNote(s);
    if (s.noteId === undefined) return s.fallback;
    const text = await s.core.contentText(s.noteId).catch(nullOn404);
    if (text !== null) return parseSettings(s, text, s.noteId);
    s.noteId = undefined;
  }
  return s.fallback;
}

/** The oldest note owning the marker label; several are named in a warning. */
async function findConfigNote(s: Store): Promise<string | undefined> {
  const hits = await s.core.search(`#${PORTAL_CONFIG_LABEL}`, { includeArchivedNotes: true });
  const owners = hits.filter(ownsLabel).sort(byAge);
  if (owners.length > 1) {
    s.log.log("warn", "several portal config notes in Core; the oldest is used", {
      noteIds: owners.map((n) => n.noteId),
    });
  }
  return owners[0]?.noteId;
}

/** A damaged note is logged and served as the fallback, not an error. */
function parseSettings(s: Store, text: string, id: string): PortalSettings {
  const stored = storedPortalSettings(text);
  if (stored) return stored;
  s.log.log("error", "the portal config note in Core is damaged; using LORE_ROOT_NOTE_ID", {
    noteId: id,
  });
  return s.fallback;
}

/** Rewrites the config note, or creates one when there is none (or it has gone). */
async function writeNote(s: Store, content: string): Promise<void> {
  s.noteId ??= await findConfigNote(s);
  if (s.noteId !== undefined) {
    const done = await s.core.putContent(s.noteId, content, "text/plain").then(
      () => true,
      nullOn404,
    );
    if (done) return;
  }
  s.noteId = await createConfigNote(s.core, content);
}

/** A new hidden config note; a failed step undoes the earlier ones. */
async function createConfigNote(core: CoreClient, content: string): Promise<string> {
  const w = writeSteps();
  const { note } = await w.step(
    "create the portal config note",
    () =>
      core.createNote({
        parentNoteId: PORTAL_CONFIG_PARENT,
        title: PORTAL_CONFIG_TITLE,
        type: "code",
        mime: "application/json",
        content,
      }),
    (r) => core.deleteNote(r.note.noteId),
  );
  // the marker goes last: no instance ever finds a note that is not hidden yet
  for (const name of [...PORTAL_CONFIG_HIDING_LABELS, PORTAL_CONFIG_LABEL]) {
    await w.step(
      `add #${name}`,
      () => core.createAttribute({ noteId: note.noteId, type: "label", name, value: "" }),
      "covered",
    );
  }
  return note.noteId;
}

/** Whether the note owns the marker label (a note that merely inherits it is not the config). */
function ownsLabel(note: CoreNote): boolean {
  return note.attributes.some((a) =>
    a.type === "label" && a.name === PORTAL_CONFIG_LABEL && a.noteId === note.noteId
  );
}

/** Oldest first; the id breaks ties, so every instance picks the same note. */
function byAge(a: CoreNote, b: CoreNote): number {
  const ca = a.utcDateCreated ?? "";
  const cb = b.utcDateCreated ?? "";
  if (ca !== cb) return ca < cb ? -1 : 1;
  return a.noteId < b.noteId ? -1 : a.noteId > b.noteId ? 1 : 0;
}

/**
 * What a caller sees when the store fails: Core's own 502/503/504 as they are. A refusal concerns
 * the server, never the caller's credentials: the server's token refused is a configuration
 * problem (503 `NOT_CONFIGURED`, as on the public share), anything else a 502.
 */
function storeError(e: unknown): ApiError {
  if (!(e instanceof ApiError)) throw e;
  if (e.status >= 500) return e;
  if (e.code === "UNAUTHORIZED" || e.code === "UPSTREAM_FORBIDDEN") {
    return new ApiError(503, "NOT_CONFIGURED", "Core refused the server's token", {
      service: "core",
    });
  }
  return new ApiError(502, "UPSTREAM_ERROR", "Core refused the portal config request", {
    service: "core",
    upstreamCode: upstreamCode(e) ?? e.code,
  });
}
