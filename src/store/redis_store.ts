/**
 * The shared store on Redis (or a server speaking its protocol, such as Valkey), through the
 * official client. Commands never queue while the server is away: they fail at once with
 * {@linkcode storeUnavailable}, and each is bounded by `timeoutMs`, so a request never hangs on
 * the store. The client reconnects on its own; the log says when the store is lost (gone, or
 * frozen past a command's deadline) and back, once an outage, naming the error's code only (the
 * URL may carry a password).
 *
 * @module
 */
import { createClient } from "@redis/client";
import type { Logger } from "../http/log.ts";
import { type Deadlines, sharedDeadlines } from "../util/deadlines.ts";
import { type SharedStore, storeUnavailable } from "./shared_store.ts";

/** Every key this service writes starts with it, so the server can be shared with others. */
export const KEY_PREFIX = "lore-portal-proxy:";

/** Options of {@linkcode redisStore}. */
export interface RedisStoreOptions {
  /** `redis://` or `rediss://` URL (`STATE_URL`). */
  url: string;
  /** Longest wait for one command. */
  timeoutMs: number;
  log: Logger;
  deadlines?: Deadlines;
}

/** Connects (in the background: the first commands may fail until it is up). */
export function redisStore(opts: RedisStoreOptions): SharedStore {
  const deadlines = opts.deadlines ?? sharedDeadlines;
  const client = createClient({
    url: opts.url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: opts.timeoutMs,
      reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2000),
    },
  });
  // logged once an outage: a server gone (the client's error) or frozen (a command's deadline)
  let lost = false;
  const lose = (error: string) => {
    if (lost) return;
    lost = true;
    opts.log.log("error", "shared state store lost; requests that need it answer 503", { error });
  };
  const back = () => {
    if (lost) opts.log.log("info", "shared state store back");
    lost = false;
  };
  client.on(
    "error",
    (e: { code?: string }) => lose(typeof e?.code === "string" ? e.code : "ERROR"),
  );
  client.on("ready", back);
  const connected = client.connect().catch(() => {});
  const k = (key: string) => KEY_PREFIX + key;

  /** Runs one command, bounded by `timeoutMs`; any failure is the store's 503. */
  const run = <T>(command: () => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const cancel = deadlines.start(opts.timeoutMs, () => {
        lose("TIMEOUT");
        reject(storeUnavailable());
      });
      command().then((answer) => {
        back();
        resolve(answer);
      }, () => reject(storeUnavailable())).finally(cancel);
    });

  return {
    shared: true,
    get: (key) => run(() => client.get(k(key))),
    take: (key) => run(() => client.getDel(k(key))),
    set: (key, value, ttlMs, ifAbsent = false) =>
      run(async () => {
        const px = Math.max(1, Math.ceil(ttlMs));
        const done = await client.set(k(key), value, ifAbsent ? { PX: px, NX: true } : { PX: px });
        return done === "OK";
      }),
    delete: (key) => run(async () => void await client.del(k(key))),
    keys: (prefix) =>
      run(async () => {
        const found: string[] = [];
        // SCAN walks the keyspace in steps, never blocking the server as KEYS would
        for await (const batch of client.scanIterator({ MATCH: `${k(prefix)}*`, COUNT: 500 })) {
          for (const key of batch) found.push(key.slice(KEY_PREFIX.length));
        }
        return found;
      }),
    hit: (key, windowMs) =>
      run(async () => {
        // one transaction: the first hit opens the window, later ones only count
        const [, hits, msLeft] = await client.multi()
          .set(k(key), "0", { PX: Math.max(1, Math.ceil(windowMs)), NX: true })
          .incr(k(key))
          .pTTL(k(key))
          .exec();
        return { hits: Number(hits), msLeft: Math.max(0, Number(msLeft)) };
      }),
    async close() {
      await connected;
      client.destroy();
    },
  };
}
