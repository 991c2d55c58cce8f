/**
 * The shared store on a real Redis: the same answers as the memory store, keys under the
 * service's prefix, claims that only one caller wins, and a server that goes away answering
 * the store's 503 at once (never a hang), logged without its URL, until it is back.
 */
import assert from "node:assert/strict";
import { createClient } from "@redis/client";
import { jsonLogger } from "../http/log.ts";
import { manualDeadlines } from "../../tests/helpers/manual_deadlines.ts";
import { type RedisServer, redisTestsRun, withRedis } from "../../tests/helpers/redis.ts";
import { KEY_PREFIX, redisStore } from "./redis_store.ts";
import { memoryStore, type SharedStore } from "./shared_store.ts";

const RUNS = redisTestsRun("shared store on Redis");
const DAY_MS = 24 * 3600_000;

async function withStore(
  fn: (
    store: SharedStore,
    server: RedisServer,
    lines: string[],
  ) => Promise<void>,
): Promise<void> {
  await withRedis(async (server) => {
    const lines: string[] = [];
    const store = redisStore({
      url: server.url,
      timeoutMs: 5000,
      log: jsonLogger("debug", (l) => lines.push(l)),
    });
    try {
      await untilReady(store);
      await fn(store, server, lines);
    } finally {
      await store.close();
    }
  });
}

/** The client connects in the background: waits for its first answer. */
async function untilReady(store: SharedStore): Promise<void> {
  for (let i = 0; i < 3000; i++) {
    try {
      await store.get("ready?");
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  throw new Error("the store never connected");
}

Deno.test({
  name: "redis store: get, set, claims and windows answer as the memory store does",
  ignore: !RUNS,
  fn: () =>
    withStore(async (redis) => {
      const memory = memoryStore({ maxKeys: 100 });
      for (const store of [redis, memory]) {
        assert.equal(await store.get("a"), null);
        assert.equal(await store.set("a", "1", 60_000), true);
        assert.equal(await store.get("a"), "1");
        assert.equal(await store.set("claim", "first", 60_000, true), true);
        assert.equal(await store.set("claim", "second", 60_000, true), false);
        assert.equal(await store.get("claim"), "first");
        // a window of a day: still open, however slowly these lines run
        const first = await store.hit("window", DAY_MS);
        const second = await store.hit("window", DAY_MS);
        assert.deepEqual([first.hits, second.hits], [1, 2]);
        assert.ok(second.msLeft > 0 && second.msLeft <= DAY_MS, String(second.msLeft));
        assert.deepEqual(await store.keys("cl"), ["claim"]);
        assert.deepEqual(await store.keys("nothing"), []);
        assert.equal(await store.take("claim"), "first");
        assert.equal(await store.take("claim"), null);
        await store.delete("a");
        assert.equal(await store.get("a"), null);
      }
    }),
});

Deno.test({
  name: "redis store: keys carry the service's prefix and expire on the server",
  ignore: !RUNS,
  fn: () =>
    withStore(async (store, server) => {
      await store.set("visible", "v", 60_000);
      const peek = createClient({ url: server.url });
      await peek.connect();
      try {
        assert.equal(await peek.get(`${KEY_PREFIX}visible`), "v");
        assert.equal(await peek.get("visible"), null);
        const ttl = await peek.pTTL(`${KEY_PREFIX}visible`);
        assert.ok(ttl > 0 && ttl <= 60_000, String(ttl));
      } finally {
        peek.destroy();
      }
    }),
});

Deno.test({
  name: "redis store: of many concurrent claims of one key, exactly one wins",
  ignore: !RUNS,
  fn: () =>
    withStore(async (store) => {
      const wins = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.set("work", `instance-${i}`, 60_000, true)),
      );
      assert.equal(wins.filter(Boolean).length, 1);
    }),
});

Deno.test({
  name: "redis store: a server gone answers 503 UNREACHABLE at once, logged without its URL",
  ignore: !RUNS,
  fn: () =>
    withStore(async (store, server, lines) => {
      await server.stop();
      await assert.rejects(
        store.get("a"),
        (e: { status?: number; code?: string; details?: unknown }) => {
          assert.deepEqual([e.status, e.code, e.details], [503, "UNREACHABLE", {
            service: "state",
          }]);
          return true;
        },
      );
      const log = lines.join("\n");
      assert.match(log, /shared state store lost/);
      assert.doesNotMatch(log, /state-test-password|127\.0\.0\.1|redis:/);
      await server.start();
      await untilReady(store);
      assert.equal(await store.set("back", "yes", 60_000), true);
      assert.match(lines.join("\n"), /shared state store back/);
    }),
});

Deno.test({
  name: "redis store: a command the server does not answer in time is the store's 503",
  ignore: !RUNS,
  fn: () =>
    withRedis(async (server) => {
      const deadlines = manualDeadlines();
      const log = jsonLogger("silent");
      const store = redisStore({ url: server.url, timeoutMs: 1000, log, deadlines });
      try {
        await untilReady(store);
        // the server is frozen: our command waits until its deadline, moved by hand
        server.pause();
        const held = store.get("held");
        deadlines.advance(999);
        assert.equal(deadlines.pendingOf(1000), 1, "still waiting before the deadline");
        deadlines.advance(1);
        await assert.rejects(held, { code: "UNREACHABLE" });
      } finally {
        server.resume();
        await store.close();
      }
    }),
});

Deno.test({
  name: "redis store: a frozen server is logged lost once, and back once it answers",
  ignore: !RUNS,
  fn: () =>
    withRedis(async (server) => {
      const deadlines = manualDeadlines();
      const lines: string[] = [];
      const log = jsonLogger("debug", (l) => lines.push(l));
      const store = redisStore({ url: server.url, timeoutMs: 1000, log, deadlines });
      const said = (what: RegExp) => lines.filter((l) => what.test(l)).length;
      try {
        await untilReady(store);
        server.pause();
        for (const key of ["one", "two"]) {
          const held = store.get(key);
          deadlines.advance(1000);
          await assert.rejects(held, { code: "UNREACHABLE" });
        }
        assert.equal(said(/shared state store lost/), 1);
        assert.match(lines.join("\n"), /"error":"TIMEOUT"/);
        server.resume();
        await untilReady(store);
        assert.deepEqual([said(/shared state store lost/), said(/shared state store back/)], [
          1,
          1,
        ]);
      } finally {
        server.resume();
        await store.close();
      }
    }),
});
