// Tests of aborts: while waiting for the head, mid-body, and while a streamed body is sent.
import assert from "node:assert/strict";
import { HANG_GUARD_MS } from "../../../tests/helpers/manual_deadlines.ts";
import {
  dec,
  requestReader,
  sleep,
  untilClosed,
  waitUntil,
  withRaw,
  write,
} from "../../../tests/helpers/http1_raw_backend.ts";

const eventually = (check: () => boolean, what: string) => waitUntil(check, what, HANG_GUARD_MS);

Deno.test("http1Fetch: an abort while waiting for the head rejects with the signal's reason and closes", async () => {
  await withRaw(async (conn, _i, backend) => {
    await requestReader(conn)();
    await untilClosed(conn, backend); // a slow backend: it never answers
  }, async ({ url, backend, fetch }) => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const e = await fetch(url, { signal: ac.signal }).catch((e) => e);
    assert.ok(e instanceof DOMException);
    assert.equal(e.name, "AbortError");
    await eventually(() => backend.closedByClient === 1, "the connection was closed");
    const timeout = new AbortController();
    setTimeout(() => timeout.abort(new DOMException("deadline", "TimeoutError")), 50);
    const t = await fetch(url, { signal: timeout.signal }).catch((e) => e);
    assert.equal(t.name, "TimeoutError");
    const before = backend.accepted();
    const early = await fetch(url, { signal: AbortSignal.abort() }).catch((e) => e);
    assert.equal(early.name, "AbortError");
    await sleep(50);
    assert.equal(backend.accepted(), before); // aborted before connecting: nothing was sent
  });
});

Deno.test("http1Fetch: an abort or a cancel mid-body ends the connection instead of pooling it", async () => {
  await withRaw(async (conn, _i, backend) => {
    await requestReader(conn)();
    await write(conn, "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\nthe start");
    await untilClosed(conn, backend);
  }, async ({ url, backend, fetch }) => {
    const ac = new AbortController();
    const reader = (await fetch(url, { signal: ac.signal })).body!.getReader();
    assert.equal(dec.decode((await reader.read()).value), "the start");
    ac.abort();
    const e = await reader.read().catch((e) => e);
    assert.equal(e.name, "AbortError");
    await eventually(() => backend.closedByClient === 1, "the aborted connection was closed");
    const cancelled = (await fetch(url)).body!.getReader();
    assert.equal(dec.decode((await cancelled.read()).value), "the start");
    await cancelled.cancel();
    await eventually(() => backend.closedByClient === 2, "the cancelled connection was closed");
    assert.equal(backend.accepted(), 2);
  });
});

Deno.test("http1Fetch: an abort while a streamed body is being sent cancels the body", async () => {
  let cancelled: unknown = null;
  await withRaw(async (conn, _i, backend) => {
    await untilClosed(conn, backend);
  }, async ({ url, fetch, backend }) => {
    const ac = new AbortController();
    const body = new ReadableStream<Uint8Array>({
      pull: async (c) => {
        await sleep(10);
        c.enqueue(new Uint8Array(1024));
      },
      cancel: (reason) => void (cancelled = reason),
    });
    setTimeout(() => ac.abort(), 50);
    const e = await fetch(url, { method: "PUT", body, signal: ac.signal }).catch((e) => e);
    assert.equal(e.name, "AbortError");
    await eventually(() => cancelled !== null, "the body was cancelled");
    await eventually(() => backend.closedByClient === 1, "the connection was closed");
  });
});
