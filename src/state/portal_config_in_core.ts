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
}

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
  const { core, log } = opts;
  const ttlMs = opts.ttlMs ?? PORTAL_CONFIG_CACHE_MS;
  const now = opts.now ?? (() => Date.now());
  const fallback: PortalSettings = { loreRootNoteId: opts.defaultLoreRoot, source: "env" };
  /** The config note found last; looked up again when it has gone. */
  let noteId: string | undefined;
  let cached: { settings: PortalSettings; at: number } | undefined;
  let loading: Promise<PortalSettings> | undefined;
  /** Bumped by every write, so a read that started before it cannot overwrite it. */
  let version = 0;
  /** Writes of this instance, one after another (two first writes would make two notes). */
  let writing: Promise<unknown> = Promise.resolve();

  const find = async (): Promise<string | undefined> => {
    const hits = await core.search(`#${PORTAL_CONFIG_LABEL}`, { includeArchivedNotes: true });
    const owners = hits.filter(ownsLabel).sort(byAge);
    if (owners.length > 1) {
      log.log("warn", "several portal config notes in Core; the oldest is used", {
        noteIds: owners.map((n) => n.noteId),
      });
    }
    return owners[0]?.noteId;
  };

  const parse = (text: string, id: string): PortalSettings => {
    const stored = storedPortalSettings(text);
    if (stored) return stored;
    log.log("error", "the portal config note in Core is damaged; using LORE_ROOT_NOTE_ID", {
      noteId: id,
    });
    return fallback;
  };

  const load = async (): Promise<PortalSettings> => {
    // a remembered note may have been deleted since: then one more search
    for (let attempt = 0; attempt < 2; attempt++) {
      noteId ??= await find();
      if (noteId === undefined) return fallback;
      const text = await core.contentText(noteId).catch(nullOn404);
      if (text !== null) return parse(text, noteId);
      noteId = undefined;
    }
    return fallback;
  };

  const create = async (content: string): Promise<string> => {
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
  };

  const write = async (content: string): Promise<void> => {
    noteId ??= await find();
    if (noteId !== undefined) {
      const done = await core.putContent(noteId, content, "text/plain").then(
        () => true,
        nullOn404,
      );
      if (done) return;
    }
    noteId = await create(content);
  };

  return {
    get() {
      if (cached && now() - cached.at < ttlMs) return Promise.resolve(cached.settings);
      if (loading) return loading;
      const started = version;
      const attempt = load().then(
        (settings) => {
          if (version !== started) return cached!.settings; // a write landed meanwhile
          cached = { settings, at: now() };
          return settings;
        },
        (e) => {
          const error = storeError(e);
          if (!cached) throw error;
          log.log("warn", "cannot read the portal config from Core; using the last one read", {
            error: error.code,
          });
          return cached.settings;
        },
      ).finally(() => {
        if (loading === attempt) loading = undefined;
      });
      loading = attempt;
      return attempt;
    },
    set(loreRootNoteId) {
      const data = portalSettingsSchema.parse({ loreRootNoteId });
      const content = JSON.stringify(data, null, 2) + "\n";
      const done = writing.then(async () => {
        try {
          await write(content);
        } catch (e) {
          throw storeError(e);
        }
        const settings: PortalSettings = { loreRootNoteId: data.loreRootNoteId, source: "file" };
        version++;
        cached = { settings, at: now() };
        return settings;
      });
      writing = done.catch(() => {});
      return done;
    },
  };
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
