/**
 * AI calls shared by the instances on one store (`STATE_URL`): a call is claimed under
 * `ai-run:<key>` by the instance that runs it (renewed while it runs, so the claim of an instance
 * that died lapses within {@linkcode CLAIM_LOOKS} looks), and an outcome is kept under
 * `ai-kept:<key>` for whichever instance the retry reaches. Values are JSON: an answer's body as
 * base64, an error as the service's error shape (any other failure is not kept: the retry runs the
 * call again).
 *
 * @module
 */
import { z } from "zod";
import { ApiError, ERROR_CODES } from "../http/errors.ts";
import type { SharedStore } from "../store/shared_store.ts";
import type { Outcome, SharedCalls } from "./ai_calls.ts";

/** How many looks a claim outlives its last renewal by. */
export const CLAIM_LOOKS = 5;

/** How a kept value is written to the store and read back. */
export interface ValueCodec<V> {
  encode(value: V): unknown;
  decode(json: unknown): V;
}

const keptError = z.object({
  status: z.number().int(),
  code: z.enum(ERROR_CODES),
  message: z.string(),
  details: z.unknown().optional(),
  headers: z.array(z.tuple([z.string(), z.string()])).optional(),
});

const keptOutcome = z.union([
  z.object({ ok: z.literal(true), value: z.unknown() }),
  z.object({ ok: z.literal(false), error: keptError }),
]);

/** Options of {@linkcode sharedAiCalls}. */
export interface SharedAiCallsOptions<V> {
  store: SharedStore;
  codec: ValueCodec<V>;
  /** This instance, as its claims name it. */
  instanceId: string;
  /** How often a claim is renewed and another instance's call looked at. */
  pollMs: number;
}

/**
 * The {@linkcode SharedCalls} of `store`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { memoryStore } from "../store/shared_store.ts";
 * const store = memoryStore({ maxKeys: 100 });
 * const codec = { encode: (v: string) => v, decode: (j: unknown) => String(j) };
 * const a = sharedAiCalls({ store, codec, instanceId: "a", pollMs: 500 });
 * const b = sharedAiCalls({ store, codec, instanceId: "b", pollMs: 500 });
 * assert.equal(await a.claim("digest"), true);
 * assert.equal(await b.claim("digest"), false); // a runs it
 * assert.equal(await b.running("digest"), true);
 * await a.finish("digest", { ok: true, value: "a summary" }, 60_000);
 * assert.deepEqual(await b.take("digest"), { ok: true, value: "a summary" });
 * assert.equal(await a.take("digest"), undefined); // handed out once
 * ```
 */
export function sharedAiCalls<V>(opts: SharedAiCallsOptions<V>): SharedCalls<V> {
  const { store, codec, instanceId, pollMs } = opts;
  const claimMs = pollMs * CLAIM_LOOKS;
  const run = (key: string) => `ai-run:${key}`;
  const kept = (key: string) => `ai-kept:${key}`;
  return {
    pollMs,
    async take(key) {
      const text = await store.take(kept(key));
      return text === null ? undefined : decodeOutcome(codec, text);
    },
    claim: (key) => store.set(run(key), instanceId, claimMs, true),
    renew: async (key) => void await store.set(run(key), instanceId, claimMs),
    running: async (key) => (await store.get(run(key))) !== null,
    async finish(key, outcome, ttlMs) {
      const text = outcome && encodeOutcome(codec, outcome);
      if (text) await store.set(kept(key), text, ttlMs);
      await store.delete(run(key));
    },
  };
}

/** JSON of an outcome; undefined for a failure that is not the service's own error. */
function encodeOutcome<V>(codec: ValueCodec<V>, o: Outcome<V>): string | undefined {
  if (o.ok) return JSON.stringify({ ok: true, value: codec.encode(o.value) });
  const e = o.error;
  if (!(e instanceof ApiError)) return undefined;
  const headers = e.headers ? [...new Headers(e.headers)] : undefined;
  return JSON.stringify({
    ok: false,
    error: { status: e.status, code: e.code, message: e.message, details: e.details, headers },
  });
}

/** The outcome JSON stands for; a value that does not parse is not handed out. */
function decodeOutcome<V>(codec: ValueCodec<V>, text: string): Outcome<V> | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = keptOutcome.safeParse(json);
  if (!parsed.success) return undefined;
  const o = parsed.data;
  if (o.ok) return { ok: true, value: codec.decode(o.value) };
  const { status, code, message, details, headers } = o.error;
  return { ok: false, error: new ApiError(status, code, message, details, headers) };
}
