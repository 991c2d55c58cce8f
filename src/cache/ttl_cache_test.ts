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
