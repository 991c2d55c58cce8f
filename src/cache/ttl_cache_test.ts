import assert from "node:assert/strict";
import { createTtlCache } from "./ttl_cache.ts";

Deno.test("ttl cache: entries expire, LRU evicts, failed loads are not kept", async () => {
  let t = 0;
  const c = createTtlCache<number>({ ttlMs: 100, maxEntries: 2, now: () => t });
  c.set("a", 1);
  c.set("b", 2);
  c.get("a"); // a is now most recent
  c.set("c", 3);
  assert.equal(c.get("b"), undefined);
  assert.equal(c.get("a"), 1);
  t = 150;
  assert.equal(c.get("a"), undefined);
  await assert.rejects(c.getOrLoad("x", () => Promise.reject(new Error("boom"))));
  assert.equal(await c.getOrLoad("x", () => Promise.resolve(9)), 9);
});

Deno.test("ttl cache: concurrent misses share one load (single flight)", async () => {
  const c = createTtlCache<string>({ ttlMs: 1000, maxEntries: 10 });
  let loads = 0;
  const load = async () => {
    loads++;
    await new Promise((r) => setTimeout(r, 10));
    return "v";
  };
  const all = await Promise.all(Array.from({ length: 20 }, () => c.getOrLoad("k", load)));
  assert.equal(loads, 1);
  assert.deepEqual(new Set(all), new Set(["v"]));
});

Deno.test("ttl cache: an invalidation during a load is not overwritten by the stale result", async () => {
  const c = createTtlCache<string>({ ttlMs: 1000, maxEntries: 10 });
  let release!: () => void;
  const p = c.getOrLoad("k", () => new Promise<string>((r) => release = () => r("stale")));
  c.delete("k");
  release();
  assert.equal(await p, "stale");
  assert.equal(c.get("k"), undefined);
});

Deno.test("ttl cache: invalidating one key does not stop other keys' loads from being kept", async () => {
  const c = createTtlCache<string>({ ttlMs: 1000, maxEntries: 10 });
  let release!: () => void;
  const p = c.getOrLoad("a", () => new Promise<string>((r) => release = () => r("A")));
  c.delete("b");
  release();
  await p;
  assert.equal(c.get("a"), "A");
});

Deno.test("ttl cache: the byte bound evicts the least recently used, never keeps an oversize entry", () => {
  const c = createTtlCache<string>({
    ttlMs: 1000,
    maxEntries: 100,
    maxBytes: 10,
    sizeOf: (v) => v.length,
  });
  c.set("a", "aaaa");
  c.set("b", "bbbb");
  c.get("a"); // a is now most recent
  c.set("c", "cccc"); // 12 bytes: b goes
  assert.deepEqual([c.get("a"), c.get("b"), c.get("c"), c.bytes], ["aaaa", undefined, "cccc", 8]);
  c.set("big", "x".repeat(11));
  assert.deepEqual([c.get("big"), c.size, c.bytes], [undefined, 2, 8]);
  c.delete("a");
  assert.equal(c.bytes, 4);
  c.clear();
  assert.equal(c.bytes, 0);
});

/** A cache of 100 ms entries reloaded from 50 ms on, on the clock `now`. */
function refreshingCache(now: () => number) {
  return createTtlCache<string>({ ttlMs: 100, maxEntries: 10, refreshAfterMs: 50, now });
}

Deno.test("ttl cache: past refreshAfterMs the entry answers at once while one reload runs", async () => {
  let t = 0;
  const c = refreshingCache(() => t);
  let loads = 0;
  let release!: () => void;
  const slowLoad = () => {
    loads++;
    return new Promise<string>((r) => release = () => r(`v${loads}`));
  };
  c.set("k", "v0");
  t = 60;
  assert.equal(await c.getOrLoad("k", slowLoad), "v0"); // stale, not waiting for the reload
  assert.equal(await c.getOrLoad("k", slowLoad), "v0");
  assert.equal(loads, 1); // one reload for both
  release();
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(await c.getOrLoad("k", slowLoad), "v1");
  assert.equal(loads, 1);
  // A failed reload keeps the entry until it expires.
  t = 120;
  assert.equal(await c.getOrLoad("k", () => Promise.reject(new Error("down"))), "v1");
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(c.get("k"), "v1");
  t = 161;
  assert.equal(c.get("k"), undefined);
});

Deno.test("ttl cache: settled answers only until a reload is due, and never starts one", () => {
  let t = 0;
  const c = refreshingCache(() => t);
  c.set("k", "v0");
  assert.equal(c.settled("k"), "v0");
  t = 49;
  assert.equal(c.settled("k"), "v0");
  t = 50;
  assert.equal(c.settled("k"), undefined); // due for a reload: the caller goes to getOrLoad
  assert.equal(c.get("k"), "v0"); // still served from there until it expires
  c.set("k", "v1");
  assert.equal(c.settled("k"), "v1");
  assert.equal(c.settled("other"), undefined);
  const plain = createTtlCache<string>({ ttlMs: 100, maxEntries: 10, now: () => t });
  plain.set("k", "v");
  t += 99;
  assert.equal(plain.settled("k"), "v"); // without refreshAfterMs, settled until it expires
  t += 1;
  assert.equal(plain.settled("k"), undefined);
});

Deno.test("ttl cache: serving answers as getOrLoad would at once, and never starts a load", async () => {
  let t = 0;
  const c = refreshingCache(() => t);
  c.set("k", "v0");
  assert.equal(c.serving("k"), "v0");
  t = 50;
  assert.equal(c.serving("k"), undefined); // due, and nobody reloads it: a caller must start one
  let release!: (v: string) => void;
  const reloaded = c.getOrLoad("k", () => new Promise((r) => release = r));
  assert.equal(await reloaded, "v0");
  assert.equal(c.serving("k"), "v0", "its reload is running: getOrLoad answers the entry");
  release("v1");
  await new Promise((r) => setTimeout(r, 0)); // the reload's value is kept
  assert.equal(c.serving("k"), "v1");
  t = 200;
  assert.equal(c.serving("k"), undefined); // expired
  assert.equal(c.serving("other"), undefined);
});

Deno.test("ttl cache: reload keeps serving the entry until the new value is in; a load it overtakes is not kept", async () => {
  const c = createTtlCache<string>({ ttlMs: 60_000, maxEntries: 10 });
  c.set("k", "old");
  let releaseNew = () => {};
  const reloaded = c.reload("k", () => new Promise<string>((r) => releaseNew = () => r("new")));
  assert.equal(await c.getOrLoad("k", () => Promise.resolve("unused")), "old"); // no waiting
  releaseNew();
  assert.equal(await reloaded, "new");
  assert.equal(c.get("k"), "new");

  // an older load still running when a reload starts may have read out-of-date data
  c.delete("k");
  let releaseOld = () => {};
  const older = c.getOrLoad("k", () => new Promise<string>((r) => releaseOld = () => r("older")));
  const newer = c.reload("k", () => Promise.resolve("newer"));
  assert.equal(await newer, "newer");
  releaseOld();
  assert.equal(await older, "older"); // its own callers get it…
  assert.equal(c.get("k"), "newer"); // …but it is not kept

  await assert.rejects(c.reload("k", () => Promise.reject(new Error("core down"))));
  assert.equal(c.get("k"), "newer"); // a failed reload leaves the entry as it was
});
