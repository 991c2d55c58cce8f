/**
 * The portal config store: the lore root note id, with `LORE_ROOT_NOTE_ID` as the default. This
 * module keeps it in `DATA_DIR/portal.json` (`PORTAL_CONFIG_STORE=file`, written atomically, so
 * instances sharing the data dir never read half a file); portal_config_in_core.ts keeps it in Core
 * for several instances. A missing or damaged file never stops the service: it falls back to the
 * env default and logs why.
 *
 * @module
 */
import { join } from "node:path";
import { z } from "zod";
import type { Logger } from "../http/log.ts";
import { idSchema } from "../lore/ids.ts";
import { writeFileAtomic } from "../session/secret.ts";

/** File name of the portal config inside the data dir. */
export const PORTAL_CONFIG_FILE = "portal.json";

/**
 * What a store holds, as JSON: the file's content, or the Core note's.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(portalSettingsSchema.safeParse({ loreRootNoteId: "loreRoot123" }).success, true);
 * assert.equal(portalSettingsSchema.safeParse({ loreRootNoteId: "../x" }).success, false);
 * ```
 */
export const portalSettingsSchema = z.object({ loreRootNoteId: idSchema });

/** The effective portal config and where its value came from. */
export interface PortalSettings {
  loreRootNoteId: string;
  /**
   * `file`: stored through `PUT /api/config/portal` (in the file or in Core, whichever store is
   * configured: the name predates the Core store); `env`: `LORE_ROOT_NOTE_ID` (or its default).
   */
  source: "file" | "env";
}

/** Reads and writes the portal config of one app. */
export interface PortalConfig {
  /** The effective settings (the file store reads its file once, then serves from memory). */
  get(): Promise<PortalSettings>;
  /** Persists a new lore root note id; this instance's next `get()` answers it. */
  set(loreRootNoteId: string): Promise<PortalSettings>;
}

/** Options of {@linkcode createPortalConfig}. */
export interface PortalConfigOptions {
  dataDir: string;
  /** `LORE_ROOT_NOTE_ID`: used while no valid file exists. */
  defaultLoreRoot: string;
  log: Logger;
}

/**
 * Creates the file store. Nothing is read until the first `get()`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { jsonLogger } from "../http/log.ts";
 *
 * const dataDir = await Deno.makeTempDir();
 * const portal = createPortalConfig({
 *   dataDir,
 *   defaultLoreRoot: "root",
 *   log: jsonLogger("silent"),
 * });
 * assert.deepEqual(await portal.get(), { loreRootNoteId: "root", source: "env" });
 * await portal.set("loreRoot123"); // written to <dataDir>/portal.json
 * assert.deepEqual(await portal.get(), { loreRootNoteId: "loreRoot123", source: "file" });
 * await Deno.remove(dataDir, { recursive: true });
 * ```
 */
export function createPortalConfig(opts: PortalConfigOptions): PortalConfig {
  const path = join(opts.dataDir, PORTAL_CONFIG_FILE);
  const fallback: PortalSettings = { loreRootNoteId: opts.defaultLoreRoot, source: "env" };
  let current: Promise<PortalSettings> | undefined;

  const load = async (): Promise<PortalSettings> => {
    let text: string;
    try {
      text = await Deno.readTextFile(path);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) {
        opts.log.log("error", "cannot read the portal config; using LORE_ROOT_NOTE_ID", {
          file: path,
          error: (e as Error).name,
        });
      }
      return fallback;
    }
    const stored = storedPortalSettings(text);
    if (!stored) {
      opts.log.log("error", "the portal config file is corrupt; using LORE_ROOT_NOTE_ID", {
        file: path,
      });
      return fallback;
    }
    return stored;
  };

  return {
    get: () => current ??= load(),
    async set(loreRootNoteId) {
      const data = portalSettingsSchema.parse({ loreRootNoteId });
      await writeFileAtomic(path, JSON.stringify(data, null, 2) + "\n");
      const settings: PortalSettings = { loreRootNoteId: data.loreRootNoteId, source: "file" };
      current = Promise.resolve(settings);
      return settings;
    },
  };
}

/**
 * Stored portal settings (a file's or a Core note's JSON text), or undefined when the text is not
 * valid settings: a damaged store is reported by its reader, never half-used.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(storedPortalSettings('{"loreRootNoteId":"abc123"}'), {
 *   loreRootNoteId: "abc123",
 *   source: "file",
 * });
 * assert.equal(storedPortalSettings("{not json"), undefined);
 * ```
 */
export function storedPortalSettings(text: string): PortalSettings | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = portalSettingsSchema.safeParse(raw);
  return parsed.success
    ? { loreRootNoteId: parsed.data.loreRootNoteId, source: "file" }
    : undefined;
}
