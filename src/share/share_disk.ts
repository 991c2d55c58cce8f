/**
 * What the public share keeps in `DATA_DIR/public-share/<identity>/` so that a restart costs
 * little: the raw content of public notes under Core's content-addressed `blobId`
 * (`blobs/<blobId>`, checked against its id before it is written, so never stale), and the
 * readings made from them with the questions their renders asked (`readings.json`,
 * `texts.json`), reused only while the share still answers every question the same way. Nothing
 * here is ever served as it is: a snapshot read from Core decides what is public, and a kept
 * reading is used only when its note and its answers still hold. Files are written atomically,
 * readable by the service's user only; a missing or unreadable file is an empty store.
 *
 * @module
 */
import { join } from "node:path";
import { writeFileAtomic } from "../session/secret.ts";
import type { Kept } from "./policy_record.ts";

/** The share's kept files for one public Core identity; see {@linkcode shareDisk}. */
export interface ShareDisk {
  /** A kept blob's text, or null. */
  readBlob(identity: string, blobId: string): Promise<string | null>;
  /** Keeps a blob (already checked against its id); failures only cost a later Core call. */
  writeBlob(identity: string, blobId: string, text: string): Promise<void>;
  /** The kept entries of one kind (`readings`, `texts`) as read, unchecked; or none. */
  loadKept(identity: string, kind: KeptKind): Promise<[string, unknown][]>;
  /**
   * Removes the kept blobs no note holds any more: for each identity `keep` names the blobs of
   * its current share (undefined: that identity's share is not known now; its blobs stay).
   */
  pruneBlobs(keep: (identity: string) => ReadonlySet<string> | undefined): Promise<void>;
  /** Replaces the kept entries of one kind. */
  saveKept<T>(
    identity: string,
    kind: KeptKind,
    entries: Iterable<[string, Kept<T>]>,
  ): Promise<void>;
}

/** The kinds of kept readings (note_readings.ts); `html` is kept in memory only. */
export type KeptKind = "readings" | "texts" | "html";

const SAFE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The share's store under `dataDir`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const dir = await Deno.makeTempDir();
 * const disk = shareDisk(dir);
 * await disk.writeBlob("identity1", "blob1", "<p>Harbor</p>");
 * assert.equal(await disk.readBlob("identity1", "blob1"), "<p>Harbor</p>");
 * assert.equal(await disk.readBlob("identity2", "blob1"), null); // another identity's store
 * await disk.saveKept("identity1", "texts", [["k", { answers: [], value: "harbor" }]]);
 * assert.deepEqual(await disk.loadKept("identity1", "texts"), [["k", { answers: [], value: "harbor" }]]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function shareDisk(dataDir: string): ShareDisk {
  const dirOf = (identity: string) => join(dataDir, "public-share", identity);
  const made = new Map<string, Promise<void>>(); // blobs folders made by this process
  const named = (identity: string, name: string) =>
    SAFE_NAME.test(identity) && SAFE_NAME.test(name);
  return {
    async readBlob(identity, blobId) {
      if (!named(identity, blobId)) return null;
      try {
        return await Deno.readTextFile(join(dirOf(identity), "blobs", blobId));
      } catch {
        return null;
      }
    },
    async writeBlob(identity, blobId, text) {
      if (!named(identity, blobId)) return;
      const dir = join(dirOf(identity), "blobs");
      if (!made.has(dir)) made.set(dir, Deno.mkdir(dir, { recursive: true, mode: 0o700 }));
      await made.get(dir);
      // a cache, checked against its id when read: a rename keeps a half-written file out of
      // sight, and no sync is needed (a lost blob is only a Core call at the next start)
      const tmp = join(dir, `.${blobId}.${crypto.randomUUID()}`);
      await Deno.writeTextFile(tmp, text, { mode: 0o600 });
      await Deno.rename(tmp, join(dir, blobId)).catch(async (e) => {
        await Deno.remove(tmp).catch(() => {});
        throw e;
      });
    },
    async loadKept(identity, kind) {
      if (!named(identity, kind)) return [];
      try {
        const parsed = JSON.parse(await Deno.readTextFile(join(dirOf(identity), `${kind}.json`)));
        return Array.isArray(parsed)
          ? parsed.filter((e): e is [string, unknown] =>
            Array.isArray(e) && e.length === 2 && typeof e[0] === "string"
          )
          : [];
      } catch {
        return [];
      }
    },
    async pruneBlobs(keep) {
      const root = join(dataDir, "public-share");
      const identities: string[] = [];
      try {
        for await (const e of Deno.readDir(root)) if (e.isDirectory) identities.push(e.name);
      } catch {
        return; // nothing kept yet
      }
      for (const identity of identities) {
        const kept = keep(identity);
        if (kept === undefined) continue;
        const dir = join(root, identity, "blobs");
        try {
          for await (const e of Deno.readDir(dir)) {
            if (e.isFile && !kept.has(e.name)) await Deno.remove(join(dir, e.name)).catch(() => {});
          }
        } catch {
          // no blobs for this identity
        }
      }
    },
    async saveKept(identity, kind, entries) {
      if (!named(identity, kind)) return;
      await Deno.mkdir(dirOf(identity), { recursive: true, mode: 0o700 });
      await writeFileAtomic(join(dirOf(identity), `${kind}.json`), JSON.stringify([...entries]));
    },
  };
}
