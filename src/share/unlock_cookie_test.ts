import assert from "node:assert/strict";
import { deriveSealKey, MAX_SEALED_LENGTH, seal } from "../session/seal.ts";
import {
  MAX_UNLOCKED,
  opensGuard,
  readUnlocked,
  UNLOCK_COOKIE,
  unlockCookie,
  unlockDigest,
} from "./unlock_cookie.ts";

const key = await deriveSealKey("a unit test's session secret, 32+ bytes long");

/** The request a browser sends back after `setCookie`. */
function sentBack(setCookie: string): Request {
  return new Request("http://x/public", { headers: { cookie: setCookie.split(";")[0] } });
}

Deno.test("unlock cookie: round trip; the digest, not the password, is what it holds", async () => {
  const unlocked = new Map([["vault", unlockDigest("vault", "player:lantern")]]);
  const set = await unlockCookie(key, unlocked, false);
  assert.deepEqual(await readUnlocked(sentBack(set), key), unlocked);
  assert.ok(!set.includes("lantern"));
  const guard = { owner: "vault", values: ["gm:other", "player:lantern"] };
  assert.equal(opensGuard(unlocked, guard), true);
  assert.equal(opensGuard(unlocked, { owner: "crypt", values: ["player:lantern"] }), false);
  assert.equal(opensGuard(unlocked, { owner: "vault", values: ["player:candle"] }), false);
});

Deno.test("unlock cookie: the latest branches are kept, and it always fits a cookie", async () => {
  const unlocked = new Map<string, string>();
  for (let i = 0; i < MAX_UNLOCKED + 4; i++) {
    const owner = `n${i}`.padEnd(128, "x"); // the longest id a branch may have
    unlocked.set(owner, unlockDigest(owner, "u:p"));
  }
  const set = await unlockCookie(key, unlocked, true);
  assert.ok(set.split(";")[0].length < MAX_SEALED_LENGTH + UNLOCK_COOKIE.length + 1);
  const read = await readUnlocked(sentBack(set), key);
  assert.deepEqual([...read!.keys()], [...unlocked.keys()].slice(-MAX_UNLOCKED));
});

Deno.test("unlock cookie: anything not written by it reads as no cookie", async () => {
  const forged = async (value: string) =>
    await readUnlocked(sentBack(`${UNLOCK_COOKIE}=${value}`), key);
  const digest = unlockDigest("vault", "u:p");
  assert.equal(
    await forged(await seal(key, "parser_token", JSON.stringify([["vault", digest]]))),
    null,
  );
  for (
    const payload of [
      "not json",
      JSON.stringify({ vault: digest }),
      JSON.stringify([["vault"]]),
      JSON.stringify([["../etc", digest]]),
      JSON.stringify([["vault", "short"]]),
      JSON.stringify(Array.from({ length: MAX_UNLOCKED + 1 }, (_, i) => [`n${i}`, digest])),
    ]
  ) {
    assert.equal(await forged(await seal(key, UNLOCK_COOKIE, payload)), null, payload);
  }
  assert.equal(await readUnlocked(new Request("http://x/"), key), null);
});
