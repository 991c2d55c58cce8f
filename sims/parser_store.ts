/**
 * Parser test double, data layer: the rows the real Parser keeps in Postgres (better-auth users,
 * credential accounts and sessions, `app_config`, `user_integrations`) as plain maps that tests
 * may read and change directly. Later features (brain-dump history, copilot sessions, usage…)
 * add their own maps here, keyed by `userId` like the real tables.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const store = createParserStore();
 * const user = store.createUser({ email: "a@b.c", password: "password123", name: "A" });
 * store.ensureOwner(user.id);
 * const session = store.createSession(user.id);
 * assert.equal(store.findSession(session.token)?.userId, user.id);
 * ```
 * @module
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** better-auth `user` row; this is also its JSON shape (dates become ISO strings). */
export interface ParserUser {
  id: string;
  email: string;
  emailVerified: boolean;
  name: string;
  image: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** better-auth `session` row; `token` is the raw (unsigned) session token. */
export interface ParserSession {
  id: string;
  token: string;
  userId: string;
  expiresAt: Date;
  createdAt: Date;
  updatedAt: Date;
  ipAddress: string | null;
  userAgent: string | null;
}

/** A `user_integrations` row for provider `allcodex` (the token is kept in plaintext here). */
export interface AllCodexIntegration {
  userId: string;
  provider: "allcodex";
  baseUrl: string;
  token: string;
  tokenLast4: string;
  createdAt: Date;
  updatedAt: Date;
}

/** `/health.checks.bootstrap` minus `ok` (§4.4). */
export interface BootstrapStatus {
  ran: boolean;
  userReady: boolean;
  etapiReady: boolean;
  lastError?: string;
}

/**
 * Session lifetime (better-auth `session.expiresIn`): 30 days.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const now = new Date("2026-01-01T00:00:00Z");
 * const store = createParserStore({ now: () => now });
 * const user = store.createUser({ email: "a@b.c", password: "password123", name: "A" });
 * assert.equal(
 *   store.createSession(user.id).expiresAt.getTime(),
 *   now.getTime() + SESSION_EXPIRES_IN_MS,
 * );
 * ```
 */
export const SESSION_EXPIRES_IN_MS = 30 * 24 * 3600 * 1000;
/** Sessions slide forward once older than this (better-auth `session.updateAge`): 1 day. */
const SESSION_UPDATE_AGE_MS = 24 * 3600 * 1000;

/** An `llm_call_log` row: one model call, for the usage routes (§2.11). */
export interface LlmCall {
  userId: string | null;
  /** `brain-dump`, `article-copilot`, `consistency`, `suggest`, `gap-detect`, `autocomplete`… */
  task: string;
  model: string;
  tokens: number;
  costUsd: number;
  latencyMs: number;
  createdAt: Date;
}

/**
 * One note's chunks in the LanceDB `lore_embeddings` table for one `userId` (contract §2.3). The
 * real table is keyed by (noteId, userId): the same note can be indexed for several users.
 */
export interface RagChunkSet {
  noteId: string;
  noteTitle: string;
  /** The indexing user's id, or `"default"` (brain-dump reindex, the indexer's default). */
  userId: string;
  loreType: string;
  /** Label names of the note when indexed. */
  labels: string[];
  chunks: string[];
  /**
   * The double's stand-in for what the model "knows" about the note: its attributes when
   * indexed (used by the double's deterministic consistency and suggestion "AI").
   */
  attributes: { type: "label" | "relation"; name: string; value: string }[];
}

/** A `rag_index_meta` row: global, one per note, whichever user indexed it. */
export interface RagIndexMeta {
  noteId: string;
  noteTitle: string;
  chunkCount: number;
  embeddedAt: Date;
  model: string;
  /** Core's `utcDateModified` when indexed (the double's staleness check). */
  utcDateModified?: string;
}

/** The Parser's RAG index: LanceDB chunks plus the `rag_index_meta` title table. */
export interface RagIndex {
  /** Chunk sets by `${noteId}::${userId}`. */
  chunks: Map<string, RagChunkSet>;
  /** `rag_index_meta` rows by noteId: the global title index autocomplete reads. */
  meta: Map<string, RagIndexMeta>;
}

/** Options of {@link createParserStore}. */
export interface ParserStoreOptions {
  /** Injected clock; default the system clock. */
  now?: () => Date;
}

/** In-memory Parser database. */
export interface ParserStore {
  now(): Date;
  /** better-auth users by id, in insertion order (`users.findFirst()` is the first). */
  users: Map<string, ParserUser>;
  /** Credential-account password hashes by user id. */
  passwords: Map<string, string>;
  /** Sessions by raw token. */
  sessions: Map<string, ParserSession>;
  /** `app_config` key/value rows: `ownerUserId`, `allcodexUrl`, `allcodexToken`. */
  appConfig: Map<string, string>;
  /** AllCodex integrations by user id. */
  integrations: Map<string, AllCodexIntegration>;
  /** Progress of the startup bootstrap. */
  bootstrap: BootstrapStatus;
  /** Simulates Postgres being unreachable: session lookups throw (guards answer 503/500). */
  databaseDown: boolean;
  /** `llm_call_log`, oldest first: every feature's "model" calls land here. */
  llmCalls: LlmCall[];
  /** Appends an `llm_call_log` row stamped with {@link now}. */
  recordLlmCall(call: Omit<LlmCall, "createdAt">): LlmCall;
  /** The RAG index (empty on a fresh Parser; see parser_rag.ts for how it is filled). */
  rag: RagIndex;
  /** Work left running after a response (the stream's reindex); `close()` waits for it. */
  background: Set<Promise<unknown>>;
  /** Per-user rows a feature keeps elsewhere, dropped by `/config/wipe` (register one per feature). */
  wipeHooks: ((userId: string) => void)[];
  /** Inserts a user with a credential account; the email is lower-cased like better-auth. */
  createUser(
    input: { email: string; password: string; name: string; image?: string | null },
  ): ParserUser;
  findUserByEmail(email: string): ParserUser | undefined;
  verifyPassword(userId: string, password: string): boolean;
  /** Inserts a session (a fresh 32-char id and token unless given). */
  createSession(
    userId: string,
    opts?: {
      id?: string;
      token?: string;
      expiresInMs?: number;
      ipAddress?: string | null;
      userAgent?: string | null;
    },
  ): ParserSession;
  /** The unexpired session for a raw token; throws when {@link databaseDown}. */
  findSession(token: string): ParserSession | undefined;
  /** Slides `expiresAt` forward when the session is older than the update age; true if it did. */
  refreshSession(session: ParserSession): boolean;
  deleteSession(token: string): void;
  ownerUserId(): string | null;
  /** Makes `userId` the owner unless one is set already (`ensureOwnerUserId`); true if it did. */
  ensureOwner(userId: string): boolean;
  getIntegration(userId: string): AllCodexIntegration | undefined;
  /** Upserts the user's integration; `baseUrl` loses one trailing `/`. */
  setIntegration(userId: string, baseUrl: string, token: string): AllCodexIntegration;
  deleteIntegration(userId: string): void;
}

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A better-auth style id: `length` random alphanumeric characters (32 by default). */
function generateId(length = 32): string {
  const bytes = randomBytes(length * 2);
  let out = "";
  for (const b of bytes) {
    if (b >= 248) continue; // 248 = 4 * 62: keeps the choice uniform
    out += ALNUM[b % 62];
    if (out.length === length) return out;
  }
  return out + generateId(length - out.length);
}

/**
 * The id Prisma's `@default(cuid())` gives a row the Parser inserts itself (copilot sessions,
 * batch jobs, relation history, auto-provisioned sessions): `c` and 24 base-36 characters.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.match(cuid(), /^c[0-9a-z]{24}$/); // e.g. "cm3k0v9x0000008l4d2h1e7qz"
 * ```
 */
export function cuid(): string {
  return `c${generateId(24).toLowerCase()}`;
}

function hashPassword(password: string, salt = randomBytes(16).toString("hex")): string {
  // the double needs a one-way hash, not better-auth's scrypt cost
  const digest = createHash("sha256").update(`${salt}:${password}`).digest("hex");
  return `${salt}:${digest}`;
}

function passwordMatches(stored: string, password: string): boolean {
  const [salt] = stored.split(":");
  const a = new TextEncoder().encode(stored);
  const b = new TextEncoder().encode(hashPassword(password, salt));
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Creates an empty Parser store (no users, no owner, bootstrap not run).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const store = createParserStore({ now: () => new Date("2026-01-01T00:00:00Z") });
 * store.appConfig.set("allcodexUrl", "http://core.test");
 * assert.equal(store.users.size, 0); // no users, no owner, bootstrap not run
 * assert.equal(store.bootstrap.ran, false);
 * ```
 */
export function createParserStore(opts: ParserStoreOptions = {}): ParserStore {
  const now = opts.now ?? (() => new Date());
  const store: ParserStore = {
    now,
    users: new Map(),
    passwords: new Map(),
    sessions: new Map(),
    appConfig: new Map(),
    integrations: new Map(),
    bootstrap: { ran: false, userReady: false, etapiReady: false },
    databaseDown: false,
    llmCalls: [],
    recordLlmCall(call) {
      const row = { ...call, createdAt: now() };
      store.llmCalls.push(row);
      return row;
    },
    rag: { chunks: new Map(), meta: new Map() },
    background: new Set(),
    wipeHooks: [],

    createUser({ email, password, name, image = null }) {
      const normalized = email.toLowerCase();
      if (store.findUserByEmail(normalized)) {
        throw new Error(`parser sim: user ${normalized} already exists`);
      }
      const at = now();
      const user: ParserUser = {
        id: generateId(),
        email: normalized,
        emailVerified: false,
        name,
        image,
        createdAt: at,
        updatedAt: at,
      };
      store.users.set(user.id, user);
      store.passwords.set(user.id, hashPassword(password));
      return user;
    },

    findUserByEmail(email) {
      const normalized = email.toLowerCase();
      for (const u of store.users.values()) if (u.email === normalized) return u;
      return undefined;
    },

    verifyPassword(userId, password) {
      const stored = store.passwords.get(userId);
      return stored !== undefined && passwordMatches(stored, password);
    },

    createSession(userId, o = {}) {
      if (!store.users.has(userId)) throw new Error(`parser sim: no user ${userId}`);
      const at = now();
      const session: ParserSession = {
        id: o.id ?? generateId(),
        token: o.token ?? generateId(),
        userId,
        expiresAt: new Date(at.getTime() + (o.expiresInMs ?? SESSION_EXPIRES_IN_MS)),
        createdAt: at,
        updatedAt: at,
        ipAddress: o.ipAddress ?? null,
        userAgent: o.userAgent ?? null,
      };
      store.sessions.set(session.token, session);
      return session;
    },

    findSession(token) {
      if (store.databaseDown) throw new Error("Can't reach database server");
      const session = store.sessions.get(token);
      if (!session || !store.users.has(session.userId)) return undefined;
      if (session.expiresAt.getTime() <= now().getTime()) {
        store.sessions.delete(token); // better-auth deletes an expired row when it meets it
        return undefined;
      }
      return session;
    },

    refreshSession(session) {
      const at = now().getTime();
      const due = session.expiresAt.getTime() - SESSION_EXPIRES_IN_MS + SESSION_UPDATE_AGE_MS;
      if (due > at) return false;
      session.expiresAt = new Date(at + SESSION_EXPIRES_IN_MS);
      session.updatedAt = new Date(at);
      return true;
    },

    deleteSession(token) {
      store.sessions.delete(token);
    },

    ownerUserId() {
      return store.appConfig.get("ownerUserId") ?? null;
    },

    ensureOwner(userId) {
      if (store.appConfig.has("ownerUserId")) return false;
      store.appConfig.set("ownerUserId", userId);
      return true;
    },

    getIntegration(userId) {
      return store.integrations.get(userId);
    },

    setIntegration(userId, baseUrl, token) {
      const at = now();
      const integration: AllCodexIntegration = {
        userId,
        provider: "allcodex",
        baseUrl: baseUrl.replace(/\/$/, ""),
        token,
        tokenLast4: token.slice(-4),
        createdAt: store.integrations.get(userId)?.createdAt ?? at,
        updatedAt: at,
      };
      store.integrations.set(userId, integration);
      return integration;
    },

    deleteIntegration(userId) {
      store.integrations.delete(userId);
    },
  };
  return store;
}
