import assert from "node:assert/strict";
import { memoryStore, type SharedStore, storeUnavailable } from "../store/shared_store.ts";
import {
  SHARE_VERSION_CHECK_MS,
  type ShareVersions,
  shareVersions,
  type Versioned,
} from "./share_version.ts";

const INTERVAL_MS = 2_500;
const ID = "identity";

/** Instances on one store with one clock, and a Core whose share the test changes. */
function cluster(store: SharedStore = memoryStore({ maxKeys: 100 })) {
  const clock = { now: 1_000_000 };
  const core = { share: "v1", reads: 0 };
  const instance = (name: string): ShareVersions<Versioned> =>
    shareVersions({ store, intervalMs: INTERVAL_MS, now: () => clock.now, instanceId: name });
  const read = () => {
    core.reads++;
    return Promise.resolve({ version: core.share });
  };
  return { store, clock, core, instance, read };
}

/** A memory store that does not answer while `up` is false. */
function flakyStore(): SharedStore & { up: boolean } {
  const inner = memoryStore({ maxKeys: 100 });
  const flaky = { up: true } as SharedStore & { up: boolean };
  for (const [name, value] of Object.entries(inner)) {
    Object.assign(flaky, {
      [name]: typeof value !== "function"
        ? value
        : (...args: unknown[]) => flaky.up ? value(...args) : Promise.reject(storeUnavailable()),
    });
  }
  return flaky;
}

Deno.test("share version: of the instances due in one interval, one reads Core", async () => {
  const { clock, core, instance, read } = cluster();
  const [a, b, c] = ["a", "b", "c"].map(instance);
  const first = await a.load(ID, undefined, read);
  const snapshots = [first, await b.load(ID, undefined, read), await c.load(ID, undefined, read)];
  assert.equal(core.reads, 3); // a first load always reads Core
  clock.now += INTERVAL_MS;
  const reloaded = await Promise.all([a, b, c].map((i, n) => i.load(ID, snapshots[n], read)));
  assert.equal(core.reads, 4, "one check for all three");
  assert.equal(reloaded[1], snapshots[1], "the same share: the snapshot is kept");
  assert.equal(reloaded[2], snapshots[2]);
  // the next interval: one check again, wherever it is claimed
  clock.now += INTERVAL_MS;
  for (const [n, i] of [c, b, a].entries()) await i.load(ID, reloaded[2 - n], read);
  assert.equal(core.reads, 5);
});

Deno.test("share version: an instance whose snapshot the store does not name reads Core", async () => {
  const { clock, core, instance, read } = cluster();
  const [a, b] = [instance("a"), instance("b")];
  await a.load(ID, undefined, read);
  const old = { version: "v0" };
  clock.now += INTERVAL_MS;
  await a.load(ID, { version: "v1" }, read); // a claims this interval's check
  assert.equal(core.reads, 2);
  assert.deepEqual(await b.load(ID, old, read), { version: "v1" }, "b's v0 is stale: Core");
  assert.equal(core.reads, 3);
});

Deno.test("share version: a write through one shows on another once its check is due", async () => {
  const { clock, core, instance, read } = cluster();
  const [writer, other] = [instance("writer"), instance("other")];
  const v1 = await writer.load(ID, undefined, read);
  const seen = await other.load(ID, undefined, read);
  assert.equal(await other.current(ID, seen, read), seen);
  core.share = "v2"; // the write, then its answer waits for this:
  assert.deepEqual(await writer.written(ID, read), { version: "v2" });
  assert.equal(other.due(ID, seen), false, "compared less than the check time ago");
  clock.now += SHARE_VERSION_CHECK_MS;
  assert.equal(other.due(ID, seen), true);
  const reads = core.reads;
  assert.deepEqual(await other.current(ID, seen, read), { version: "v2" });
  assert.equal(core.reads, reads + 1);
  assert.equal(other.due(ID, { version: "v2" }), false);
  // the writer's own v1 is no longer named either
  assert.equal(writer.due(ID, v1), true);
});

Deno.test("share version: comparisons due at once share one store call and one Core read", async () => {
  const { core, instance, read } = cluster();
  const [writer, other] = [instance("writer"), instance("other")];
  const seen = await other.load(ID, undefined, read);
  core.share = "v2";
  await writer.written(ID, read);
  const reads = core.reads;
  const all = await Promise.all(Array.from({ length: 5 }, () => other.current(ID, seen, read)));
  assert.deepEqual(new Set(all.map((s) => s?.version)), new Set(["v2"]));
  assert.equal(core.reads, reads + 1);
});

Deno.test("share version: a write where nothing was read yet makes every instance read Core", async () => {
  const { core, instance, read } = cluster();
  const [writer, other] = [instance("writer"), instance("other")];
  const seen = await other.load(ID, undefined, read);
  core.share = "v2";
  assert.equal(await writer.written(ID), undefined);
  assert.deepEqual(await other.current(ID, seen, read), { version: "v2" });
});

Deno.test("share version: a write whose read fails makes every instance read Core", async () => {
  const { core, instance, read } = cluster();
  const [writer, other] = [instance("writer"), instance("other")];
  const seen = await other.load(ID, undefined, read);
  core.share = "v2";
  await assert.rejects(writer.written(ID, () => Promise.reject(new Error("Core is down"))));
  assert.deepEqual(await other.current(ID, seen, read), { version: "v2" });
});

Deno.test("share version: a read that raced another publication publishes nothing", async () => {
  const { store, core, instance, read } = cluster();
  const [slow, writer, other] = ["slow", "writer", "other"].map(instance);
  const seen = await other.load(ID, undefined, read); // publishes v1
  // slow's read began before the write; the writer publishes v2 before slow is done
  let release = () => {};
  let started = () => {};
  const held = new Promise<void>((r) => release = r);
  const reading = new Promise<void>((r) => started = r);
  const slowRead = slow.load(ID, undefined, async () => {
    const before = core.share;
    started();
    await held;
    return { version: before };
  });
  await reading;
  core.share = "v2";
  await writer.written(ID, read);
  release();
  assert.deepEqual(await slowRead, { version: "v1" });
  // v1 never replaced v2: nobody can take v1 for current; every instance reads Core again
  assert.equal(await store.get(`share-version:${ID}`), null);
  assert.deepEqual(await other.current(ID, seen, read), { version: "v2" });
  assert.equal(slow.due(ID, { version: "v1" }), true);
});

Deno.test("share version: without a store answering, Core is read as without one", async () => {
  const store = flakyStore();
  const { clock, core, instance, read } = cluster(store);
  const [a, b] = [instance("a"), instance("b")];
  const snap = await a.load(ID, undefined, read);
  await b.load(ID, undefined, read);
  store.up = false;
  clock.now += INTERVAL_MS;
  const reads = core.reads;
  await a.load(ID, snap, read);
  await b.load(ID, snap, read);
  assert.equal(core.reads, reads + 2, "each due reload reads Core");
  // visitors no longer wait for the store: nothing is due until a reload finds it back
  clock.now += SHARE_VERSION_CHECK_MS;
  assert.equal(a.due(ID, snap), false);
  assert.equal(await a.current(ID, snap, read), snap);
  assert.equal(core.reads, reads + 2);
  store.up = true;
  clock.now += INTERVAL_MS;
  await a.load(ID, snap, read);
  clock.now += SHARE_VERSION_CHECK_MS;
  assert.equal(a.due(ID, snap), true, "the store answers again: comparisons resume");
});
