/**
 * How many request bodies the service receives at once: at most `total`, and at most
 * `perClient` from one client address. Each body in progress holds a connection, buffers and,
 * for an upload, a half-made note and a call to Core; even bodies that keep the minimum rate
 * (http/body_pace.ts) can hold that for as long as their total limit, so without a bound a flood
 * of them takes as much memory as it has connections. A body over the bound is refused before a
 * byte of it is read, with `Retry-After` and `Connection: close` (nothing is drained).
 *
 * @module
 */
import { ApiError } from "./errors.ts";

/** The bounds. */
export interface BodySlotLimits {
  /** Bodies received at once, all clients together. */
  total: number;
  /** Bodies received at once from one client address. */
  perClient: number;
}

/** The bodies in progress: {@linkcode bodySlots}. */
export interface BodySlots {
  /**
   * Takes a slot for a body from `client` (its rate-limit key); returns the function that gives
   * it back (idempotent). Throws 429 `RATE_LIMITED` when this client has `perClient` bodies in
   * progress, 503 `SERVICE_BUSY` when everyone together has `total`.
   */
  enter(client: string): () => void;
  /** Bodies in progress now. */
  inProgress(): number;
  /**
   * Resolves once no body is in progress (shutdown waits for it: the runtime's own shutdown
   * cuts off bodies still arriving).
   */
  drained(): Promise<void>;
}

/** Seconds a refused client is asked to wait: bodies end in seconds, or are cut off. */
export const BODY_RETRY_AFTER_SECONDS = 5;

/**
 * Counts the bodies in progress. Memory is one entry per client with a body in progress.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const slots = bodySlots({ total: 3, perClient: 2 });
 * const done = slots.enter("203.0.113.7");
 * slots.enter("203.0.113.7");
 * assert.throws(() => slots.enter("203.0.113.7"), { status: 429, code: "RATE_LIMITED" });
 * slots.enter("198.51.100.2");
 * assert.throws(() => slots.enter("192.0.2.1"), { status: 503, code: "SERVICE_BUSY" });
 * done();
 * done(); // once only
 * assert.equal(slots.inProgress(), 2);
 * ```
 */
export function bodySlots(limits: BodySlotLimits): BodySlots {
  const byClient = new Map<string, number>();
  let total = 0;
  let waiting: (() => void)[] = [];
  return {
    enter(client) {
      const mine = byClient.get(client) ?? 0;
      if (mine >= limits.perClient) {
        throw refused(
          429,
          "RATE_LIMITED",
          `Too many request bodies from this client at once (at most ${limits.perClient})`,
          { limit: limits.perClient },
        );
      }
      if (total >= limits.total) {
        throw refused(
          503,
          "SERVICE_BUSY",
          `The service is receiving too many request bodies at once (at most ${limits.total})`,
          { limit: limits.total },
        );
      }
      byClient.set(client, mine + 1);
      total++;
      let left = false;
      return () => {
        if (left) return;
        left = true;
        total--;
        const n = (byClient.get(client) ?? 1) - 1;
        if (n > 0) byClient.set(client, n);
        else byClient.delete(client);
        if (total === 0) {
          for (const resolve of waiting) resolve();
          waiting = [];
        }
      };
    },
    inProgress: () => total,
    drained: () => total === 0 ? Promise.resolve() : new Promise((r) => void waiting.push(r)),
  };
}

function refused(
  status: 429 | 503,
  code: "RATE_LIMITED" | "SERVICE_BUSY",
  message: string,
  details: Record<string, unknown>,
): ApiError {
  return new ApiError(status, code, message, {
    ...details,
    retryAfterSeconds: BODY_RETRY_AFTER_SECONDS,
  }, {
    "retry-after": String(BODY_RETRY_AFTER_SECONDS),
    // the body was not read: end the connection after the answer rather than drain it
    connection: "close",
  });
}
