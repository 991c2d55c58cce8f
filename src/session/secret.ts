/**
 * The session secret that seals cookies: from `SESSION_SECRET`, else generated once and kept in
 * the data dir. Losing or changing it logs every browser out, so a damaged file stops start-up
 * instead of being replaced.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";

/** Shortest accepted secret, in characters. */
export const MIN_SESSION_SECRET_LENGTH = 32;
/** File name of the generated secret inside the data dir. */
export const SESSION_SECRET_FILE = "session-secret";

/** Options of {@linkcode loadOrCreateSessionSecret}. */
export interface SessionSecretOptions {
  /** `SESSION_SECRET` from the environment; empty or blank counts as unset. */
  fromEnv?: string;
  /** Directory of `session-secret`; created (mode 0700) when missing. */
  dataDir: string;
  /** Receives one line when a secret is created or the file is readable by others. */
  log?: (msg: string) => void;
}

/**
 * Returns the session secret: `fromEnv` when set (trimmed; at least
 * {@linkcode MIN_SESSION_SECRET_LENGTH} characters), else the content of
 * `<dataDir>/session-secret`, else a new secret (48 random bytes, base64url) written there
 * atomically with mode 0600. Concurrent first starts on a shared data dir agree on one secret:
 * the file is published without overwriting, and the loser reads the winner's. A short, empty,
 * non-UTF-8 or control-character-bearing file throws instead of being replaced.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const dataDir = await Deno.makeTempDir();
 * const created = await loadOrCreateSessionSecret({ dataDir }); // writes <dataDir>/session-secret
 * assert.equal(await loadOrCreateSessionSecret({ dataDir }), created); // later starts read it
 * await Deno.remove(dataDir, { recursive: true });
 * ```
 */
export async function loadOrCreateSessionSecret(opts: SessionSecretOptions): Promise<string> {
  const env = opts.fromEnv?.trim();
  if (env) {
    if (env.length < MIN_SESSION_SECRET_LENGTH) {
      throw new Error(
        `SESSION_SECRET is ${env.length} characters; at least ${MIN_SESSION_SECRET_LENGTH} are required (e.g. the output of \`openssl rand -base64 48\`)`,
      );
    }
    return env;
  }
  const path = join(opts.dataDir, SESSION_SECRET_FILE);
  const existing = await readSecretFile(path, opts.log);
  if (existing !== null) return existing;

  const secret = crypto.getRandomValues(new Uint8Array(48)).toBase64({
    alphabet: "base64url",
    omitPadding: true,
  });
  if (await publishNew(path, secret)) {
    opts.log?.(
      `created a new session secret at ${path}; keep this file (or set SESSION_SECRET on every instance) or all sessions end`,
    );
    return secret;
  }
  // Another instance created it between our read and our publish: use theirs.
  const theirs = await readSecretFile(path, opts.log);
  if (theirs === null) throw new Error(`session secret file ${path} vanished while starting`);
  return theirs;
}

/**
 * Replaces `path` with `data` so readers see the old or the new content, never a mix: writes a
 * temporary file beside it (same directory, so same file system), sets `mode` (default 0600),
 * flushes it, renames it over `path` and flushes the directory. Missing parent directories are
 * created with mode 0700. The temporary file is removed on failure.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { join } from "node:path";
 * const dir = await Deno.makeTempDir();
 * const path = join(dir, "portal.json");
 * await writeFileAtomic(path, JSON.stringify({ loreRootNoteId: "root" }));
 * assert.equal(await Deno.readTextFile(path), '{"loreRootNoteId":"root"}');
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  mode = 0o600,
): Promise<void> {
  const tmp = await writeTemp(path, data, mode);
  try {
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
  await syncDir(dirname(path));
}

/**
 * Like {@linkcode writeFileAtomic} but never overwrites: publishes with a hard link, which fails
 * if `path` exists. Returns false when it does. The temporary name is removed either way.
 */
async function publishNew(path: string, data: string): Promise<boolean> {
  const tmp = await writeTemp(path, data, 0o600);
  try {
    await Deno.link(tmp, path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.AlreadyExists) return false;
    // A file system without hard links: rename, accepting a narrow race between first starts.
    if (await Deno.lstat(path).then(() => true, () => false)) return false;
    await Deno.rename(tmp, path);
    return true;
  } finally {
    await Deno.remove(tmp).catch(() => {});
    await syncDir(dirname(path));
  }
}

/** Writes a fully flushed temporary file next to `path` and returns its name. */
async function writeTemp(path: string, data: string | Uint8Array, mode: number): Promise<string> {
  const dir = dirname(path);
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const suffix = crypto.getRandomValues(new Uint8Array(6)).toHex();
  const tmp = join(dir, `.${basename(path)}.${suffix}.tmp`);
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  // createNew refuses a pre-planted file or symlink at the temporary name.
  const file = await Deno.open(tmp, { write: true, createNew: true, mode });
  try {
    // The creation mode is filtered by the umask; set it exactly.
    if (Deno.build.os !== "windows") await Deno.chmod(tmp, mode);
    let written = 0;
    while (written < bytes.length) written += await file.write(bytes.subarray(written));
    await file.sync();
  } catch (e) {
    file.close();
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
  file.close();
  return tmp;
}

/** Makes a rename or link durable; best effort, as not every platform can open a directory. */
async function syncDir(dir: string): Promise<void> {
  if (Deno.build.os === "windows") return;
  try {
    const d = await Deno.open(dir, { read: true });
    try {
      await d.sync();
    } finally {
      d.close();
    }
  } catch {
    // durability only; the content is already consistent
  }
}

/** The validated secret in `path`, `null` if there is no file, or an error naming the problem. */
async function readSecretFile(
  path: string,
  log: ((msg: string) => void) | undefined,
): Promise<string | null> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw new Error(`cannot read session secret file ${path}: ${(e as Error).message}`);
  }
  const corrupt = (why: string) =>
    new Error(
      `session secret file ${path} is corrupt (${why}). It was not replaced, because a new secret logs every user out: restore it, set SESSION_SECRET, or delete the file to start over.`,
    );
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw corrupt("not UTF-8 text");
  }
  const secret = text.trim();
  if (secret.length < MIN_SESSION_SECRET_LENGTH) {
    throw corrupt(`${secret.length} characters, at least ${MIN_SESSION_SECRET_LENGTH} expected`);
  }
  // deno-lint-ignore no-control-regex
  if (/[\x00-\x1F\x7F]/.test(secret)) throw corrupt("control characters inside");
  if (Deno.build.os !== "windows") {
    const { mode } = await Deno.stat(path);
    if (mode !== null && (mode & 0o077) !== 0) {
      log?.(`session secret file ${path} is readable by other users; chmod 600 it`);
    }
  }
  return secret;
}
