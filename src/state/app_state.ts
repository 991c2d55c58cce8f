/**
 * Per-instance state: the small caches the service keeps. Created by `createApp`, never global,
 * so two apps in one process (tests) never share entries.
 *
 * @module
 */
import { createTtlCache, stringBytes, type TtlCache } from "../cache/ttl_cache.ts";
import type { Config } from "../config/service_config.ts";
import type { Logger } from "../http/log.ts";
import { type KeptAnswer, keptAnswerBytes, keptAnswerCodec } from "../pipeline/ai_route.ts";
import { sharedAiCalls } from "../upstream/shared_ai_calls.ts";
import { createWriteJournal, type WriteJournal } from "./write_journal.ts";
import { type AiCalls, createAiCalls } from "../upstream/ai_calls.ts";
import { createPortalConfig, type PortalConfig } from "./portal_config.ts";
import { createCorePortalConfig } from "./portal_config_in_core.ts";
import { createCoreClient } from "../upstream/core.ts";
import { type AttemptLimiter, createRateLimiter, storeRateLimiter } from "../session/rate_limit.ts";
import { memoryStore, type SharedStore } from "../store/shared_store.ts";
import { type BodySlots, bodySlots } from "../http/body_slots.ts";
import { redisStore } from "../store/redis_store.ts";
import type { Deadlines } from "../util/deadlines.ts";
import type { AutolinkMatcher } from "../lore/autolink.ts";
import { createReadinessProbe, type ReadinessProbe } from "./readiness.ts";
import { createPublicCaches, type PublicCaches } from "../share/public_snapshot.ts";

/** Everything an app instance keeps between requests. */
export interface AppState {
  /**
   * Compiled autolink title index, keyed by credential identity (60 s by default), at most
   * {@linkcode AUTOLINK_MAX_BYTES} together.
   */
  autolink: TtlCache<AutolinkMatcher>;
  /**
   * Sanitized previews keyed by `${mode}:${blobId}` (content-addressed, so never stale), at most
   * {@linkcode PREVIEW_MAX_BYTES} together.
   */
  preview: TtlCache<string>;
  /**
   * Login, register and connect attempts per client (`AUTH_RATE_LIMIT` per window), counted in
   * the shared store when there is one.
   */
  authLimiter: AttemptLimiter;
  /** What instances share (`STATE_URL`), else this instance's memory. */
  store: SharedStore;
  /** Request bodies being received (`MAX_BODIES_IN_FLIGHT`, `MAX_BODIES_PER_CLIENT`). */
  bodies: BodySlots;
  /** The notes requests create while their writes are under way (state/write_journal.ts). */
  journal: WriteJournal;
  /**
   * Aborted when the instance stops and its grace period is over: open event streams end with
   * an `error` event naming a retry instead of being cut off.
   */
  closing: AbortController;
  /**
   * The public share's snapshots, note contents and search texts; with a shared `store`, checked
   * against the share's version there.
   */
  publicShare: PublicCaches;
  /** The portal config (lore root note id): `DATA_DIR/portal.json`, or in Core (shared). */
  portal: PortalConfig;
  /** AI calls running past their client's deadline, and answers kept for a retry. */
  aiCalls: AiCalls<KeptAnswer>;
  /** Readiness of the configured backends, on the server's own configuration (`/readyz`). */
  readiness: ReadinessProbe;
  /** Parser reads kept per caller (routes/kept_reads.ts), at most {@linkcode PARSER_READS_MAX_BYTES}. */
  parserReads: TtlCache<unknown>;
}

/** Most AI calls and kept answers one instance holds (the Parser's rate limits keep it far lower). */
const MAX_AI_CALLS = 500;

/** Byte bound of the sanitized previews: a few thousand typical notes. */
export const PREVIEW_MAX_BYTES = 16 * 1024 * 1024;
/**
 * Byte bound of the compiled title indexes: a lore of about 20,000 titles fits (an index is
 * rebuilt per request beyond that, so the bound sits well above a large homelab lore).
 */
export const AUTOLINK_MAX_BYTES = 64 * 1024 * 1024;
/** Byte bound of the Parser reads kept per caller: history pages are a few KiB. */
export const PARSER_READS_MAX_BYTES = 8 * 1024 * 1024;
/** Byte bound of the AI answers kept for a retry. */
export const AI_KEPT_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Creates the state for one app; its deadlines (AI calls, readiness, the portal config in Core)
 * are counted by `deadlines`, default the process-wide scheduler.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadConfig } from "../config/service_config.ts";
 * import { jsonLogger } from "../http/log.ts";
 *
 * const config = loadConfig({ AUTH_RATE_LIMIT: "1" });
 * const state = createAppState(config, Date.now, jsonLogger("silent"), fetch);
 * assert.equal((await state.authLimiter.check("203.0.113.7")).allowed, true);
 * assert.equal((await state.authLimiter.check("203.0.113.7")).allowed, false);
 * ```
 */
export function createAppState(
  config: Config,
  now: (() => number) | undefined,
  log: Logger,
  fetchFn: typeof fetch,
  deadlines?: Deadlines,
): AppState {
  const store = sharedStore(config, now, log, deadlines);
  // this instance, as its AI call claims and its write records name it
  const instanceId = crypto.randomUUID();
  const limits = { limit: config.AUTH_RATE_LIMIT, windowMs: config.AUTH_RATE_WINDOW_MS };
  return {
    store,
    closing: new AbortController(),
    bodies: bodySlots({
      total: config.MAX_BODIES_IN_FLIGHT,
      perClient: config.MAX_BODIES_PER_CLIENT,
    }),
    journal: createWriteJournal({
      store: store.shared ? store : undefined,
      dataDir: config.DATA_DIR,
      instanceId,
      log,
      deadlines,
    }),
    publicShare: createPublicCaches(config, undefined, now, store),
    readiness: createReadinessProbe(config, fetchFn, deadlines, store.shared ? store : undefined),
    portal: portalConfig(config, now, log, fetchFn, deadlines, store.shared ? store : undefined),
    authLimiter: store.shared
      ? storeRateLimiter(store, limits)
      : createRateLimiter({ ...limits, maxKeys: 10_000, now }),
    autolink: createTtlCache({
      ttlMs: config.AUTOLINK_CACHE_MS,
      maxEntries: 256,
      maxBytes: AUTOLINK_MAX_BYTES,
      sizeOf: (m) => m.bytes,
      now,
    }),
    parserReads: createTtlCache({
      ttlMs: config.PARSER_READ_CACHE_MS,
      maxEntries: 1000,
      maxBytes: PARSER_READS_MAX_BYTES,
      sizeOf: (v) => stringBytes(JSON.stringify(v) ?? ""),
      now,
    }),
    preview: createTtlCache({
      ttlMs: 24 * 3600_000,
      maxEntries: 1000,
      maxBytes: PREVIEW_MAX_BYTES,
      sizeOf: stringBytes,
      now,
    }),
    aiCalls: createAiCalls({
      totalMs: config.AI_TOTAL_TIMEOUT_MS,
      ttlMs: config.AI_RESULT_TTL_MS,
      maxEntries: MAX_AI_CALLS,
      maxKeptBytes: AI_KEPT_MAX_BYTES,
      sizeOf: keptAnswerBytes,
      now,
      deadlines,
      onKept: (resultKey, ok) => log.log("info", "ai answer kept for a retry", { resultKey, ok }),
      shared: store.shared
        ? sharedAiCalls({
          store,
          codec: keptAnswerCodec,
          instanceId,
          pollMs: AI_SHARED_POLL_MS,
        })
        : undefined,
    }),
  };
}

/**
 * The store `PORTAL_CONFIG_STORE` names. The Core store means several instances: the start-up log
 * says what stays per instance.
 */
/**
 * How often an instance renews its claim on an AI call it runs, and looks at one another instance
 * runs, when they share a store.
 */
export const AI_SHARED_POLL_MS = 500;

/** Most keys the memory store holds (ended sessions, mostly). */
const MEMORY_STORE_KEYS = 10_000;

/** Redis when `STATE_URL` names one, else this instance's memory. */
function sharedStore(
  config: Config,
  now: (() => number) | undefined,
  log: Logger,
  deadlines: Deadlines | undefined,
): SharedStore {
  if (!config.STATE_URL) {
    log.log(
      "info",
      "no shared state store: logouts, login rate limits, AI answers kept for a retry and the " +
        "public share's checks stay in this instance (several instances need STATE_URL)",
    );
    return memoryStore({ maxKeys: MEMORY_STORE_KEYS, now });
  }
  log.log(
    "info",
    "shared state store: logouts, login rate limits, AI calls and the public share's version " +
      "count on every instance",
  );
  return redisStore({ url: config.STATE_URL, timeoutMs: config.STATE_TIMEOUT_MS, log, deadlines });
}

function portalConfig(
  config: Config,
  now: (() => number) | undefined,
  log: Logger,
  fetchFn: typeof fetch,
  deadlines: Deadlines | undefined,
  shared: SharedStore | undefined,
): PortalConfig {
  const defaultLoreRoot = config.LORE_ROOT_NOTE_ID;
  const token = config.CORE_TOKEN ?? config.PUBLIC_CORE_TOKEN;
  if (config.PORTAL_CONFIG_STORE === "file") {
    return createPortalConfig({ dataDir: config.DATA_DIR, defaultLoreRoot, log });
  }
  // loadConfig refuses the Core store without them
  if (!config.CORE_URL || !token) throw new Error("PORTAL_CONFIG_STORE=core needs CORE_URL");
  // several instances are meant: say what each keeps to itself
  log.log(
    "info",
    "portal config kept in Core, shared by every instance",
    config.STATE_URL ? {} : {
      authRateLimit:
        `per instance: a balancer spreading a client over N instances gives it up to N × ` +
        `${config.AUTH_RATE_LIMIT} attempts per ${config.AUTH_RATE_WINDOW_MS} ms (set STATE_URL)`,
      logout: `per instance: the others accept a copy of the cookie for up to ` +
        `CREDENTIALS_CACHE_MS (${config.CREDENTIALS_CACHE_MS} ms) (set STATE_URL)`,
    },
  );
  const core = createCoreClient({ baseUrl: config.CORE_URL, token }, {
    fetch: fetchFn,
    timeoutMs: config.UPSTREAM_TIMEOUT_MS,
    maxBodyBytes: config.MAX_UPSTREAM_BODY_BYTES,
    deadlines,
  });
  return createCorePortalConfig({ core, defaultLoreRoot, log, now, shared });
}
