/**
 * One streamed brain dump (`POST …/brain-dump/stream`) read to its end, timed to the first event
 * and to the last byte; and texts that never repeat (the Parser answers a repeated text from its
 * idempotency cache, which would not be a stream).
 *
 * @module
 */

/** Where to post a brain dump: the Parser double directly or the service. */
export interface StreamTarget {
  name: string;
  url: string;
  headers: Record<string, string>;
}

/** Timings of one stream, ms from the request. */
export interface StreamTiming {
  first: number;
  total: number;
  events: number;
}

/**
 * A brain-dump text with capitalised names no other `n` gives (base-26 letters, no digits).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(freshText(1) === freshText(2), false);
 * ```
 */
export function freshText(n: number): string {
  let word = "";
  for (let i = n + 26 * 26; i > 0; i = Math.floor(i / 26)) {
    word = String.fromCharCode(97 + (i % 26)) + word;
  }
  const name = word[0].toUpperCase() + word.slice(1);
  return `Captain ${name} Venn sails from Saltmarrow Harbor to the ${name} Isles.`;
}

/**
 * Posts `text` as a brain dump to `target` and reads the event stream to its end; fails unless
 * it ends with a `done` event.
 */
export async function oneStream(target: StreamTarget, text: string): Promise<StreamTiming> {
  const started = performance.now();
  const res = await fetch(target.url, {
    method: "POST",
    headers: { ...target.headers, "content-type": "application/json" },
    body: JSON.stringify({ rawText: text }),
  });
  if (!res.ok || !res.body) throw new Error(`${target.name}: HTTP ${res.status}`);
  const decoder = new TextDecoder();
  let first = 0;
  let buffered = "";
  for await (const chunk of res.body) {
    buffered += decoder.decode(chunk, { stream: true });
    if (!first && buffered.includes("\n\n")) first = performance.now() - started;
  }
  const events = buffered.split("\n\n").filter((e) => e.startsWith("event: ")).length;
  if (!/event: done\n/.test(buffered)) throw new Error(`${target.name}: stream did not complete`);
  return { first, total: performance.now() - started, events };
}

/**
 * The brain-dump stream straight from the Parser double (`direct`) and through the service
 * (`service`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const [direct, service] = brainDumpTargets(
 *   { url: "http://127.0.0.1:8001", token: "owner-token" },
 *   "http://127.0.0.1:8080",
 * );
 * assert.equal(direct.url, "http://127.0.0.1:8001/brain-dump/stream");
 * assert.equal(direct.headers.authorization, "Bearer owner-token");
 * assert.equal(service.url, "http://127.0.0.1:8080/api/brain-dump/stream");
 * ```
 */
export function brainDumpTargets(
  parser: { url: string; token: string },
  serviceUrl: string,
): [direct: StreamTarget, service: StreamTarget] {
  return [
    {
      name: "direct",
      url: `${parser.url}/brain-dump/stream`,
      headers: { authorization: `Bearer ${parser.token}` },
    },
    { name: "service", url: `${serviceUrl}/api/brain-dump/stream`, headers: {} },
  ];
}

/** Texts this process has posted: every call goes on where the last stopped. */
let textsUsed = 0;

/**
 * One warm-up stream per target, then `streams` per target one at a time, the order alternating
 * each round (each stream sees a world one brain dump larger than the last), each with a fresh
 * text. Timings by target name.
 */
export async function alternateStreams(
  targets: readonly StreamTarget[],
  streams: number,
): Promise<Map<string, StreamTiming[]>> {
  const results = new Map(targets.map((t) => [t.name, [] as StreamTiming[]]));
  for (const t of targets) await oneStream(t, freshText(textsUsed++));
  for (let i = 1; i <= streams; i++) {
    const order = i % 2 ? targets : [...targets].reverse();
    for (const t of order) results.get(t.name)!.push(await oneStream(t, freshText(textsUsed++)));
  }
  return results;
}
