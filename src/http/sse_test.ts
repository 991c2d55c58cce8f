import assert from "node:assert/strict";
import { createSseTracker, encodeSseEvent, sseResponse } from "./sse.ts";
import { ApiError } from "./errors.ts";

const enc = new TextEncoder();

Deno.test("tracker: event names across arbitrary splits and line endings", () => {
  const stream =
    "event: status\r\ndata: {}\r\n\r\n: keepalive\n\nevent: token\rdata: x\r\revent: done\ndata: {}\n\n";
  for (let cut = 1; cut < stream.length; cut++) {
    const t = createSseTracker();
    const seen = [
      ...t.push(enc.encode(stream.slice(0, cut))),
      ...t.push(enc.encode(stream.slice(cut))),
    ];
    assert.deepEqual(seen, ["status", "token", "done"], `split at ${cut}`);
    assert.ok(t.terminated());
    assert.ok(t.atBoundary());
  }
});

Deno.test("tracker: a comment alone is not an event, and half an event is not a boundary", () => {
  const t = createSseTracker();
  assert.deepEqual(t.push(enc.encode(": keepalive\n\n")), []);
  assert.ok(t.atBoundary());
  t.push(enc.encode("event: error\ndata: {"));
  assert.ok(!t.atBoundary());
  assert.ok(!t.terminated());
  t.push(enc.encode('"a":1}\n\n'));
  assert.ok(t.terminated());
});

Deno.test("tracker: with onEvent, each event's data across splits (multi-line data joined)", () => {
  const stream = 'event: token\ndata: {"a":\ndata: 1}\n\n: keepalive\n\ndata: plain\r\n\r\n';
  for (let cut = 1; cut < stream.length; cut++) {
    const seen: [string, string][] = [];
    const t = createSseTracker((name, data) => seen.push([name, data]));
    t.push(enc.encode(stream.slice(0, cut)));
    t.push(enc.encode(stream.slice(cut)));
    assert.deepEqual(seen, [["token", '{"a":\n1}'], ["message", "plain"]], `split at ${cut}`);
  }
});

function upstream(chunks: string[], opts: { hangAfter?: boolean; breakAfter?: boolean } = {}) {
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const ch of chunks) c.enqueue(enc.encode(ch));
      if (opts.breakAfter) c.error(new TypeError("connection reset"));
      else if (!opts.hangAfter) c.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  return { res: new Response(body), cancelled: () => cancelled };
}

const opts = (signal = new AbortController().signal) => ({
  idleMs: 100,
  totalMs: 10_000,
  signal,
  requestId: "r1",
});

Deno.test("sseResponse: passes bytes through unchanged and sets stream headers", async () => {
  const src = ['event: status\ndata: {"a":1}\n\n', ": keepalive\n\n", "event: done\ndata: {}\n\n"];
  const res = sseResponse((w) => w.pipe(upstream(src).res), opts());
  assert.equal(res.headers.get("content-type"), "text/event-stream; charset=utf-8");
  assert.equal(res.headers.get("x-accel-buffering"), "no");
  assert.equal(await res.text(), src.join(""));
});

Deno.test("sseResponse: a stall ends with one terminal error event and cancels upstream", async () => {
  const up = upstream(['event: token\ndata: {"content":"a"}\n\nevent: tok'], { hangAfter: true });
  const res = sseResponse((w) => w.pipe(up.res), opts());
  const text = await res.text();
  assert.ok(text.startsWith('event: token\ndata: {"content":"a"}\n\nevent: tok\n\nevent: error\n'));
  const data = JSON.parse(text.split("event: error\ndata: ")[1]);
  assert.equal(data.error, "UPSTREAM_TIMEOUT");
  assert.equal(data.requestId, "r1");
  assert.ok(up.cancelled());
});

Deno.test("sseResponse: an upstream that ends or breaks without done gets an error event", async () => {
  for (const flags of [{}, { breakAfter: true }]) {
    const res = sseResponse(
      (w) => w.pipe(upstream(["event: token\ndata: {}\n\n"], flags).res),
      opts(),
    );
    const text = await res.text();
    assert.match(text, /event: error\ndata: \{"error":"UPSTREAM_ERROR"/);
    assert.equal(text.match(/event: error/g)?.length, 1);
  }
});

Deno.test("sseResponse: an upstream error event is terminal: nothing is added", async () => {
  const src = ['event: error\ndata: {"type":"error","code":"BRAIN_DUMP_FAILED","message":"x"}\n\n'];
  const res = sseResponse((w) => w.pipe(upstream(src).res), opts());
  assert.equal(await res.text(), src[0]);
});

Deno.test("sseResponse: events of our own, and a thrown ApiError in our shape", async () => {
  const res = sseResponse(async (w) => {
    await w.event("status", { stage: "context" });
    throw new ApiError(404, "NOT_FOUND", "Note not found");
  }, opts());
  assert.equal(
    await res.text(),
    new TextDecoder().decode(encodeSseEvent("status", { stage: "context" })) +
      'event: error\ndata: {"error":"NOT_FOUND","message":"Note not found","requestId":"r1"}\n\n',
  );
});

Deno.test("sseResponse: the client cancelling cancels the upstream body", async () => {
  const up = upstream(["event: status\ndata: {}\n\n"], { hangAfter: true });
  let reason = "";
  const res = sseResponse((w) => w.pipe(up.res), {
    ...opts(),
    idleMs: 10_000,
    onEnd: (r) => (reason = r),
  });
  const reader = res.body!.getReader();
  await reader.read();
  await reader.cancel();
  await new Promise((r) => setTimeout(r, 10));
  assert.ok(up.cancelled());
  assert.equal(reason, "client-closed");
});

Deno.test("sseResponse: a stream that keeps dripping ends at the total deadline", async () => {
  let cancelled = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      timer = setInterval(() => c.enqueue(enc.encode(": keepalive\n\n")), 20);
    },
    cancel() {
      cancelled = true;
      clearInterval(timer);
    },
  });
  const res = sseResponse((w) => w.pipe(new Response(body)), { ...opts(), totalMs: 300 });
  const text = await res.text();
  const last = text.split("\n\n").filter(Boolean).at(-1)!;
  assert.match(last, /^event: error\ndata: \{"error":"UPSTREAM_TIMEOUT"/);
  assert.ok(cancelled, "the upstream body was cancelled");
});

Deno.test("sseResponse: the total deadline also ends work that never reaches the upstream", async () => {
  const res = sseResponse(async (w) => {
    await w.event("status", { stage: "context" });
    await new Promise(() => {}); // context building that never finishes
  }, { ...opts(), totalMs: 200 });
  const text = await res.text();
  assert.match(text, /event: error\ndata: \{"error":"UPSTREAM_TIMEOUT"/);
  assert.equal(text.match(/event: error/g)?.length, 1);
});
