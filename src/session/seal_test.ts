import assert from "node:assert/strict";
import {
  deriveSealKey,
  MAX_SEAL_SECRETS,
  MAX_SEALED_LENGTH,
  seal,
  SEAL_INFO,
  type SealKey,
  unseal,
} from "./seal.ts";

const SECRET = "a".repeat(16) + "-test-secret-0123456789";
const OTHER = "b".repeat(16) + "-test-secret-0123456789";
const key = await deriveSealKey(SECRET);
const T0 = 1_700_000_000_000;
const at = (t: number) => () => t;

const b64 = (bytes: Uint8Array) => bytes.toBase64({ alphabet: "base64url", omitPadding: true });
const unb64 = (s: string) => Uint8Array.fromBase64(s, { alphabet: "base64url" });

Deno.test("seal: round trip, format and fresh IV per call", async () => {
  const s1 = await seal(key, "parser_token", "tok-123");
  const s2 = await seal(key, "parser_token", "tok-123");
  assert.match(s1, /^v1\.[A-Za-z0-9_-]+$/);
  assert.notEqual(s1, s2);
  // 12-byte IV + 8-byte expiry + 7-byte value + 16-byte tag
  assert.equal(unb64(s1.slice(3)).length, 12 + 8 + 7 + 16);
  assert.equal(await unseal(key, "parser_token", s1), "tok-123");
  assert.equal(await unseal(key, "parser_token", s2), "tok-123");
});

Deno.test("seal: empty, unicode and URL values survive", async () => {
  for (const v of ["", "héllo wörld ✓ 🗝", "https://parser.internal:8443/api?x=1&y=2", "a;b\r\n"]) {
    assert.equal(await unseal(key, "p", await seal(key, "p", v)), v);
  }
});

Deno.test("seal: the same secret on another instance unseals (deterministic derivation)", async () => {
  const elsewhere = await deriveSealKey(new TextEncoder().encode(SECRET));
  assert.equal(await unseal(elsewhere, "p", await seal(key, "p", "v")), "v");
});

Deno.test("seal: format is HKDF-SHA-256 + AES-256-GCM with the purpose as AAD", async () => {
  // Build a sealed value with nothing but WebCrypto, as another implementation would.
  const enc = new TextEncoder();
  const ikm = await crypto.subtle.importKey("raw", enc.encode(SECRET), "HKDF", false, [
    "deriveBits",
  ]);
  const raw = await crypto.subtle.deriveBits(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: enc.encode(SEAL_INFO) },
    ikm,
    256,
  );
  const aes = await crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt"]);
  const value = enc.encode("hand-made");
  const plain = new Uint8Array(8 + value.length);
  new DataView(plain.buffer).setFloat64(0, T0 + 60_000);
  plain.set(value, 8);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData: enc.encode("v1.parser_url") },
      aes,
      plain,
    ),
  );
  const sealed = "v1." + b64(new Uint8Array([...iv, ...ct]));
  assert.equal(await unseal(key, "parser_url", sealed, { now: at(T0) }), "hand-made");
  assert.equal(await unseal(key, "parser_token", sealed, { now: at(T0) }), null);
});

Deno.test("seal: changing any character of the string gives null", async () => {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  // three lengths so the last base64 character carries 0, 4 and 2 unused low bits
  for (const value of ["secret-token-value", "secret-token-value!", "secret-token-value!!"]) {
    const sealed = await seal(key, "parser_token", value);
    for (let i = 0; i < sealed.length; i++) {
      // every position, with its neighbour in the alphabet and with every other character of
      // the same upper bits (the edits a lenient decoder would not notice)
      const orig = alphabet.indexOf(sealed[i]);
      const subs = new Set([alphabet[(orig + 1) % 64], "A", "_", "."]);
      for (let low = 0; low < 4; low++) subs.add(alphabet[(orig & ~3) | low]);
      for (const c of subs) {
        if (c === sealed[i]) continue;
        const edited = sealed.slice(0, i) + c + sealed.slice(i + 1);
        assert.equal(await unseal(key, "parser_token", edited), null, `position ${i} → ${c}`);
      }
    }
  }
});

Deno.test("seal: flipping any bit of any decoded byte gives null", async () => {
  const sealed = await seal(key, "parser_url", "https://parser.internal");
  const bytes = unb64(sealed.slice(3));
  for (let i = 0; i < bytes.length; i++) {
    for (let bit = 0; bit < 8; bit++) {
      const copy = new Uint8Array(bytes);
      copy[i] ^= 1 << bit;
      assert.equal(
        await unseal(key, "parser_url", "v1." + b64(copy)),
        null,
        `byte ${i} bit ${bit}`,
      );
    }
  }
});

Deno.test("seal: truncated, extended, re-versioned or padded values give null", async () => {
  const sealed = await seal(key, "p", "value");
  const body = sealed.slice(3);
  for (
    const s of [
      sealed.slice(0, -1),
      sealed.slice(0, -4),
      sealed + "A",
      sealed + "AAAA",
      sealed + "=",
      sealed + "==",
      "v2." + body,
      "V1." + body,
      "v1" + body,
      body,
      "v1." + body.slice(0, 20) + " " + body.slice(20),
      "v1." + body.slice(0, 20) + "\n" + body.slice(20),
      // standard-alphabet base64 is not accepted (only meaningful when the body has - or _)
      ...(/[-_]/.test(body) ? ["v1." + body.replaceAll("-", "+").replaceAll("_", "/")] : []),
      "v1.",
      "",
      "v1." + b64(new Uint8Array(35)), // one byte short of IV + expiry + tag
      "v1." + b64(new Uint8Array(36)), // right length, all zero
    ]
  ) {
    assert.equal(await unseal(key, "p", s), null, JSON.stringify(s));
  }
});

Deno.test("seal: purpose is bound (a parser_url value is not a parser_token)", async () => {
  const sealed = await seal(key, "parser_url", "https://parser.internal");
  assert.equal(await unseal(key, "parser_token", sealed), null);
  assert.equal(await unseal(key, "parser_url ", sealed), null);
  assert.equal(await unseal(key, "", sealed), null);
  assert.equal(await unseal(key, "parser_url", sealed), "https://parser.internal");
});

Deno.test("seal: another key gives null", async () => {
  const other = await deriveSealKey(OTHER);
  assert.equal(await unseal(other, "p", await seal(key, "p", "v")), null);
});

Deno.test("seal: expiry follows the injected clock", async () => {
  const sealed = await seal(key, "p", "v", { maxAgeSeconds: 60, now: at(T0) });
  assert.equal(await unseal(key, "p", sealed, { now: at(T0) }), "v");
  assert.equal(await unseal(key, "p", sealed, { now: at(T0 + 59_999) }), "v");
  assert.equal(await unseal(key, "p", sealed, { now: at(T0 + 60_000) }), null);
  assert.equal(await unseal(key, "p", sealed, { now: at(T0 + 86_400_000) }), null);
  // the default lifetime is long but finite
  const def = await seal(key, "p", "v", { now: at(T0) });
  assert.equal(await unseal(key, "p", def, { now: at(T0 + 399 * 86_400_000) }), "v");
  assert.equal(await unseal(key, "p", def, { now: at(T0 + 400 * 86_400_000) }), null);
  // with the real clock
  assert.equal(await unseal(key, "p", await seal(key, "p", "v", { maxAgeSeconds: 5 })), "v");
});

Deno.test("seal: bad maxAgeSeconds is refused", async () => {
  for (const maxAgeSeconds of [0, -1, NaN, Infinity]) {
    await assert.rejects(seal(key, "p", "v", { maxAgeSeconds }), RangeError);
  }
});

Deno.test("seal: rotation — the first secret seals, every secret unseals", async () => {
  const oldKey = await deriveSealKey(OTHER);
  const rotating = await deriveSealKey([SECRET, OTHER]);
  assert.equal(rotating.keyCount, 2);
  const fromOld = await seal(oldKey, "p", "old-cookie");
  assert.equal(await unseal(rotating, "p", fromOld), "old-cookie");
  const fromNew = await seal(rotating, "p", "new-cookie");
  assert.equal(await unseal(key, "p", fromNew), "new-cookie"); // sealed with SECRET
  assert.equal(await unseal(oldKey, "p", fromNew), null);
  // after the old secret is dropped, its cookies stop working
  assert.equal(await unseal(key, "p", fromOld), null);
  // rotation does not weaken purpose binding or expiry
  assert.equal(await unseal(rotating, "q", fromOld), null);
  const short = await seal(oldKey, "p", "v", { maxAgeSeconds: 1, now: at(T0) });
  assert.equal(await unseal(rotating, "p", short, { now: at(T0 + 1000) }), null);
});

Deno.test("deriveSealKey: secrets shorter than 32 bytes and bad lists are refused", async () => {
  await assert.rejects(deriveSealKey("x".repeat(31)), RangeError);
  await assert.rejects(deriveSealKey(new Uint8Array(31)), RangeError);
  await assert.rejects(deriveSealKey([SECRET, "short"]), RangeError);
  await assert.rejects(deriveSealKey([]), RangeError);
  await assert.rejects(
    deriveSealKey(Array.from({ length: MAX_SEAL_SECRETS + 1 }, () => SECRET)),
    RangeError,
  );
  await assert.rejects(deriveSealKey(42 as unknown as string), TypeError);
  // 32 bytes is enough, and multi-byte characters count by their UTF-8 bytes
  await deriveSealKey("x".repeat(32));
  await deriveSealKey("é".repeat(16));
  await assert.rejects(deriveSealKey("é".repeat(15)), RangeError);
});

Deno.test("deriveSealKey: the error never contains the secret", async () => {
  const secret = "tooShortSecret!";
  await assert.rejects(deriveSealKey(secret), (e: unknown) => {
    assert.ok(e instanceof RangeError);
    assert.ok(!e.message.includes(secret));
    return true;
  });
});

Deno.test("SealKey is opaque and cannot be forged", async () => {
  assert.equal(JSON.stringify(key), '{"keyCount":1}');
  assert.ok(Object.isFrozen(key));
  const forged = { keyCount: 1 } as SealKey;
  await assert.rejects(seal(forged, "p", "v"), TypeError);
  assert.equal(await unseal(forged, "p", await seal(key, "p", "v")), null);
});

Deno.test("seal: bad inputs to seal throw; oversized values are refused", async () => {
  await assert.rejects(seal(key, "", "v"), TypeError);
  await assert.rejects(seal(key, "p", "lone \ud800 surrogate"), TypeError);
  await assert.rejects(seal(key, "p", "x".repeat(MAX_SEALED_LENGTH)), RangeError);
  // the largest value that fits still round-trips
  const max = Math.floor(((MAX_SEALED_LENGTH - 3) * 3) / 4) - 36;
  const sealed = await seal(key, "p", "y".repeat(max));
  assert.ok(sealed.length <= MAX_SEALED_LENGTH);
  assert.equal(await unseal(key, "p", sealed), "y".repeat(max));
});

Deno.test("unseal: oversized input is null without work", async () => {
  assert.equal(await unseal(key, "p", "v1." + "A".repeat(MAX_SEALED_LENGTH)), null);
  assert.equal(await unseal(key, "p", "v1." + "A".repeat(1_000_000)), null);
});

Deno.test("unseal: never throws on garbage (fuzz)", async () => {
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ \n\0é🗝";
  const pick = (n: number) => Math.floor(Math.random() * n);
  const inputs: unknown[] = [null, undefined, 42, {}, [], "v1", "v1.=", "v1.\u0000"];
  for (let i = 0; i < 3000; i++) {
    const len = pick(120);
    let s = "";
    for (let j = 0; j < len; j++) s += chars[pick(chars.length)];
    // half look like a sealed value so they reach base64 decoding and AES-GCM
    if (i % 2 === 0) {
      s = "v1." + b64(crypto.getRandomValues(new Uint8Array(30 + pick(60))));
    }
    inputs.push(s);
  }
  for (const input of inputs) {
    assert.equal(await unseal(key, "p", input as string), null);
  }
  // also with a non-key and a non-string purpose
  assert.equal(await unseal(null as unknown as SealKey, "p", "v1.AAAA"), null);
  assert.equal(await unseal(key, 7 as unknown as string, "v1.AAAA"), null);
  assert.equal(
    await unseal(key, "p", await seal(key, "p", "v"), {
      now: () => {
        throw new Error("clock broke");
      },
    }),
    null,
  );
});
