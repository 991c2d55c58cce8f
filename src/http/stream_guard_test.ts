import assert from "node:assert/strict";
import { eventually, manualDeadlines } from "../../tests/helpers/manual_deadlines.ts";
import type { Deadlines } from "../util/deadlines.ts";
import { ApiError } from "./errors.ts";
import { guardedBody, type StreamEnd } from "./stream_guard.ts";

const enc = new TextEncoder();

/** A source whose behaviour each test chooses; it records reads and cancellation. */
function source(next: (n: number) => Promise<string | null | Error>) {
  let pulls = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    async pull(c) {
      const v = await next(pulls++);
      if (v === null) c.close();
      else if (v instanceof Error) c.error(v);
      else c.enqueue(enc.encode(v));
    },
    cancel() {
      cancelled = true;
    },
  }, { highWaterMark: 0 });
  return { stream, pulls: () => pulls, cancelled: () => cancelled };
}

const never = () => new Promise<never>(() => {});

function guard(
  src: ReadableStream<Uint8Array>,
  opts: { idleMs?: number; totalMs?: number; signal?: AbortSignal; deadlines?: Deadlines } = {},
) {
  const ends: StreamEnd[] = [];
  const body = guardedBody(src, {
    idleMs: opts.idleMs ?? 5_000,
    totalMs: opts.totalMs ?? 10_000,
    signal: opts.signal,
    deadlines: opts.deadlines,
    service: "Core",
    onEnd: (e) => ends.push(e),
  });
  return { body, ends };
}

Deno.test("guardedBody: passes every byte through and ends cleanly", async () => {
  const parts = ["<p>", "lore", "</p>"];
  const src = source((n) => Promise.resolve(parts[n] ?? null));
  const { body, ends } = guard(src.stream);
  assert.equal(await new Response(body).text(), "<p>lore</p>");
  assert.deepEqual(ends, ["complete"]);
  assert.ok(!src.cancelled());
});

Deno.test("guardedBody: reads nothing ahead of its consumer", async () => {
  const src = source(() => Promise.resolve("x"));
  const { body } = guard(src.stream);
  const reader = body.getReader();
  await reader.read();
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(src.pulls(), 1);
  await reader.cancel();
  assert.ok(src.cancelled());
});

Deno.test("guardedBody: a stall errors the stream (504) and cancels upstream", async () => {
  const src = source((n) => n === 0 ? Promise.resolve("head") : never());
  const { body, ends } = guard(src.stream, { idleMs: 50 });
  const reader = body.getReader();
  assert.equal(new TextDecoder().decode((await reader.read()).value), "head");
  const err = await reader.read().catch((e) => e);
  assert.ok(err instanceof ApiError);
  assert.equal(err.status, 504);
  assert.match(err.message, /stalled/);
  assert.ok(src.cancelled());
  assert.deepEqual(ends, ["idle-timeout"]);
});

Deno.test("guardedBody: a drip inside the idle deadline is cut off by the total one", async () => {
  // a byte every 10 ms of the test's clock, each one read before the next comes
  const time = manualDeadlines();
  let drip = () => {};
  const src = source(() => new Promise((r) => drip = () => r(".")));
  const { body, ends } = guard(src.stream, { idleMs: 1_000, totalMs: 150, deadlines: time });
  const reading = new Response(body).text().catch((e) => e);
  while (ends.length === 0) {
    const pulls = src.pulls();
    time.advance(10);
    drip();
    await eventually(
      "the byte is read, or the stream ended",
      () => src.pulls() > pulls || ends.length > 0,
    );
  }
  const err = await reading;
  assert.ok(err instanceof Error, "the client sees a failed body, not a clean end");
  assert.ok(src.cancelled());
  assert.deepEqual(ends, ["total-timeout"]);
  assert.equal(time.now(), 150);
});

Deno.test("guardedBody: the total deadline also ends a body its client stopped reading", async () => {
  const src = source(() => Promise.resolve("x"));
  const { body, ends } = guard(src.stream, { totalMs: 50 });
  const reader = body.getReader();
  await reader.read();
  await new Promise((r) => setTimeout(r, 120));
  await assert.rejects(reader.read());
  assert.ok(src.cancelled());
  assert.deepEqual(ends, ["total-timeout"]);
});

Deno.test("guardedBody: a broken upstream is a 502 without the upstream's words", async () => {
  const src = source((n) =>
    Promise.resolve(n === 0 ? "a" : new TypeError("reset by http://10.0.0.5:8080"))
  );
  const { body, ends } = guard(src.stream);
  const reader = body.getReader();
  await reader.read();
  const err = await reader.read().catch((e) => e);
  assert.ok(err instanceof ApiError);
  assert.equal(err.status, 502);
  assert.ok(!err.message.includes("10.0.0.5"));
  assert.deepEqual(ends, ["upstream-error"]);
});

Deno.test("guardedBody: the client's abort cancels upstream", async () => {
  const src = source((n) => n === 0 ? Promise.resolve("a") : never());
  const client = new AbortController();
  const { body, ends } = guard(src.stream, { signal: client.signal });
  const reader = body.getReader();
  await reader.read();
  const pending = reader.read().catch((e) => e);
  client.abort();
  assert.ok((await pending) instanceof Error);
  assert.ok(src.cancelled());
  assert.deepEqual(ends, ["client-closed"]);
});
