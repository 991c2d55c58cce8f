/**
 * Sealed cookie values: AES-256-GCM with a key derived from the session secret, so a browser can
 * hold a backend credential it can neither read nor change. Format:
 * `v1.` + base64url(12-byte random IV ‖ ciphertext ‖ 16-byte tag), where the plaintext is an
 * 8-byte expiry (ms since the epoch, float64 big-endian) followed by the UTF-8 value, and the
 * purpose (cookie name) is authenticated as additional data.
 *
 * @module
 */

/** HKDF `info`: changing it (or the format) means a new version prefix. */
export const SEAL_INFO = "lore-portal-proxy cookie seal v1";
/** Shortest accepted secret, in bytes (UTF-8 for strings). */
export const MIN_SECRET_BYTES = 32;
/** Most secrets one {@linkcode SealKey} may hold: each is tried in turn when unsealing. */
export const MAX_SEAL_SECRETS = 8;
/** Longest sealed string {@linkcode unseal} looks at, and so the longest {@linkcode seal} makes. */
export const MAX_SEALED_LENGTH = 4096;
/** Lifetime when `maxAgeSeconds` is not given: the longest cookie lifetime browsers honour. */
export const DEFAULT_SEAL_MAX_AGE_SECONDS = 400 * 24 * 60 * 60;

const PREFIX = "v1.";
const IV_BYTES = 12;
const EXPIRY_BYTES = 8;
const TAG_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const encoder = new TextEncoder();

/**
 * Opaque key material from {@linkcode deriveSealKey}: non-extractable `CryptoKey`s held in a
 * module-private map, so neither logging nor inspecting this object reveals them.
 */
export interface SealKey {
  /** How many secrets can unseal (the first one also seals). */
  readonly keyCount: number;
}

const keyrings = new WeakMap<SealKey, readonly CryptoKey[]>();

/** A secret as configured: a string (its UTF-8 bytes are used) or raw bytes. */
export type SealSecret = string | Uint8Array;

/**
 * Derives the sealing key with HKDF-SHA-256 (empty salt, info {@linkcode SEAL_INFO}). For key
 * rotation pass a list, newest first: the first secret seals, every secret unseals, so cookies
 * sealed under the previous secret keep working until they expire. Throws `RangeError` for a
 * secret shorter than {@linkcode MIN_SECRET_BYTES}, an empty list or more than
 * {@linkcode MAX_SEAL_SECRETS} secrets.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const oldSecret = "the secret sealing cookies until today";
 * const newSecret = "the secret sealing cookies from today on";
 * const sealed = await seal(await deriveSealKey(oldSecret), "parser_token", "tok");
 * // rotation: seal with the new secret, still accept cookies sealed with the old one
 * const rotating = await deriveSealKey([newSecret, oldSecret]);
 * assert.equal(await unseal(rotating, "parser_token", sealed), "tok");
 * await assert.rejects(deriveSealKey("too short"), RangeError);
 * ```
 */
export async function deriveSealKey(
  secret: SealSecret | readonly SealSecret[],
): Promise<SealKey> {
  const secrets = Array.isArray(secret) ? secret : [secret as SealSecret];
  if (secrets.length === 0 || secrets.length > MAX_SEAL_SECRETS) {
    throw new RangeError(`deriveSealKey: expected 1 to ${MAX_SEAL_SECRETS} secrets`);
  }
  const keys: CryptoKey[] = [];
  for (const [i, s] of secrets.entries()) {
    let bytes: Uint8Array<ArrayBuffer>;
    if (typeof s === "string") bytes = encoder.encode(s);
    else if (s instanceof Uint8Array) bytes = new Uint8Array(s); // a copy the caller cannot mutate
    else throw new TypeError("deriveSealKey: a secret must be a string or a Uint8Array");
    if (bytes.length < MIN_SECRET_BYTES) {
      // Never echo the secret, not even its beginning.
      throw new RangeError(
        `deriveSealKey: secret #${
          i + 1
        } is ${bytes.length} bytes; at least ${MIN_SECRET_BYTES} are required`,
      );
    }
    const base = await crypto.subtle.importKey("raw", bytes, "HKDF", false, ["deriveKey"]);
    keys.push(
      await crypto.subtle.deriveKey(
        { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: encoder.encode(SEAL_INFO) },
        base,
        { name: "AES-GCM", length: 256 },
        false,
        ["encrypt", "decrypt"],
      ),
    );
  }
  const key: SealKey = Object.freeze({ keyCount: keys.length });
  keyrings.set(key, Object.freeze(keys));
  return key;
}

/** Options of {@linkcode seal}. */
export interface SealOptions {
  /** Lifetime of the sealed value; default {@linkcode DEFAULT_SEAL_MAX_AGE_SECONDS}. */
  maxAgeSeconds?: number;
  /** Clock in ms since the epoch; default `Date.now`. */
  now?: () => number;
}

/**
 * Encrypts and authenticates `value` for one `purpose` (use the cookie name). The result only
 * unseals with the same purpose, before `maxAgeSeconds` have passed. A fresh random IV per call
 * means sealing the same value twice gives different strings. Throws `TypeError` for a key not
 * made by {@linkcode deriveSealKey}, an empty purpose or a string with lone surrogates (it would
 * not survive UTF-8), and `RangeError` for a bad `maxAgeSeconds` or a result longer than
 * {@linkcode MAX_SEALED_LENGTH}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const key = await deriveSealKey("an example session secret of 32+ bytes");
 * const cookieValue = await seal(key, "parser_token", "tok", { maxAgeSeconds: 30 * 86400 });
 * assert.equal(cookieValue.startsWith("v1."), true);
 * assert.notEqual(await seal(key, "parser_token", "tok"), cookieValue); // a fresh IV each time
 * ```
 */
export async function seal(
  key: SealKey,
  purpose: string,
  value: string,
  opts: SealOptions = {},
): Promise<string> {
  const keys = keyrings.get(key);
  if (!keys) throw new TypeError("seal: key was not made by deriveSealKey");
  if (typeof purpose !== "string" || purpose === "") {
    throw new TypeError("seal: purpose must be a non-empty string");
  }
  if (typeof value !== "string" || !value.isWellFormed()) {
    throw new TypeError("seal: value must be a well-formed string");
  }
  const maxAge = opts.maxAgeSeconds ?? DEFAULT_SEAL_MAX_AGE_SECONDS;
  const expires = (opts.now ?? Date.now)() + maxAge * 1000;
  if (!(maxAge > 0) || !Number.isFinite(expires)) {
    throw new RangeError("seal: maxAgeSeconds must be a positive finite number");
  }
  const body = encoder.encode(value);
  const plain = new Uint8Array(EXPIRY_BYTES + body.length);
  new DataView(plain.buffer).setFloat64(0, expires);
  plain.set(body, EXPIRY_BYTES);
  // Random 96-bit IVs are safe for far more than 2^32 seals per key (NIST SP 800-38D) and need no
  // counter shared between instances.
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const ct = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: aad(purpose), tagLength: TAG_BYTES * 8 },
    keys[0],
    plain,
  );
  const packed = new Uint8Array(IV_BYTES + ct.byteLength);
  packed.set(iv);
  packed.set(new Uint8Array(ct), IV_BYTES);
  const sealed = PREFIX + packed.toBase64({ alphabet: "base64url", omitPadding: true });
  if (sealed.length > MAX_SEALED_LENGTH) {
    throw new RangeError(`seal: sealed value would exceed ${MAX_SEALED_LENGTH} characters`);
  }
  return sealed;
}

/** Options of {@linkcode unseal}. */
export interface UnsealOptions {
  /** Clock in ms since the epoch; default `Date.now`. */
  now?: () => number;
}

/**
 * The value sealed by {@linkcode seal} under this key (or any rotated-out secret it holds) and
 * this purpose, or `null` for anything else: another version, malformed or non-canonical
 * base64url, wrong length, any changed bit, another key or purpose, an expired value, input
 * longer than {@linkcode MAX_SEALED_LENGTH}, or non-string input. Never throws, so a forged
 * cookie is simply absent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const key = await deriveSealKey("an example session secret of 32+ bytes");
 * const sealed = await seal(key, "parser_token", "tok", { maxAgeSeconds: 60 });
 * assert.equal(await unseal(key, "parser_token", sealed), "tok");
 * assert.equal(await unseal(key, "parser_url", sealed), null); // sealed for another cookie
 * assert.equal(
 *   await unseal(key, "parser_token", sealed, { now: () => Date.now() + 61_000 }),
 *   null,
 * );
 * ```
 */
export async function unseal(
  key: SealKey,
  purpose: string,
  sealed: string,
  opts: UnsealOptions = {},
): Promise<string | null> {
  try {
    const keys = keyrings.get(key);
    if (!keys || typeof purpose !== "string" || purpose === "") return null;
    if (typeof sealed !== "string" || sealed.length > MAX_SEALED_LENGTH) return null;
    if (!sealed.startsWith(PREFIX)) return null;
    const text = sealed.slice(PREFIX.length);
    if (!BASE64URL.test(text)) return null;
    const packed = Uint8Array.fromBase64(text, { alphabet: "base64url" });
    if (packed.length < IV_BYTES + EXPIRY_BYTES + TAG_BYTES) return null;
    // The decoder ignores unused low bits of the last character; demanding the canonical
    // encoding makes every edit of the string, not just most, a rejection.
    if (packed.toBase64({ alphabet: "base64url", omitPadding: true }) !== text) return null;
    const iv = packed.subarray(0, IV_BYTES);
    const ct = packed.subarray(IV_BYTES);
    const additionalData = aad(purpose);
    for (const k of keys) {
      let plain: ArrayBuffer;
      try {
        plain = await crypto.subtle.decrypt(
          { name: "AES-GCM", iv, additionalData, tagLength: TAG_BYTES * 8 },
          k,
          ct,
        );
      } catch {
        continue; // not this key (or tampered): try the next one
      }
      const expires = new DataView(plain).getFloat64(0);
      if (!Number.isFinite(expires) || (opts.now ?? Date.now)() >= expires) return null;
      return new TextDecoder("utf-8", { fatal: true }).decode(
        new Uint8Array(plain, EXPIRY_BYTES),
      );
    }
    return null;
  } catch {
    return null;
  }
}

/** Binds the format version and the purpose: a `parser_url` value is no `parser_token`. */
function aad(purpose: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(PREFIX + purpose);
}
