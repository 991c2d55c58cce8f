import assert from "node:assert/strict";
import { eventually, manualDeadlines } from "../../tests/helpers/manual_deadlines.ts";
import {
  type BodyCutOff,
  type BodyLimits,
  pacedBody,
  readLimitedText,
  requireUtf8,
} from "./body.ts";
import { ApiError } from "./errors.ts";

const textReq = (type: string) =>
  new Request("http://x/", { method: "PUT", headers: { "content-type": type }, body: "x" });

Deno.test("body: charset absent or UTF-8 passes; any other charset is 415", () => {
  for (const ok of ["text/plain", "text/plain; charset=utf-8", "text/plain;charset=UTF8"]) {
    requireUtf8(textReq(ok));
  }
  requireUtf8(textReq('text/plain; format=flowed; charset="Utf-8"'));
  for (const bad of ["utf-7", "UTF-16LE", "iso-8859-1", "", '"utf-7"']) {
    assert.throws(
      () => requireUtf8(textReq(`text/plain; charset=${bad}`)),
      (e: unknown) => e instanceof ApiError && e.status === 415,
      bad,
    );
  }
});

const LIMITS: BodyLimits = {
  idleMs: 10_000,
  minBytesPerSecond: 100,
  windowMs: 30_000,
  totalMs: 3_600_000,
};

/**
 * A client's body the test sends itself, a chunk at a time: each chunk answers a read that is
 * waiting for one (`waiting()`), so the test knows when the reader waits for the client.
 */
function clientBody() {
  let deliver: ((chunk: Uint8Array | null) => void) | null = null;
  let cancelled: unknown = undefined;
  const stream = new ReadableStream<Uint8Array>({
    pull: (c) =>
      new Promise<void>((resolve) => {
        deliver = (chunk) => {
          deliver = null;
          try {
            if (chunk) c.enqueue(chunk);
            else c.close();
          } catch {
            // the reader gave up on the body: a client writing into a closed connection
          }
          resolve();
        };
      }),
    cancel: (reason) => void (cancelled = reason ?? "cancelled"),
  }, { highWaterMark: 0 });
  return {
    stream,
    waiting: () => deliver !== null && cancelled === undefined,
    send: (text: string) => {
      assert.ok(deliver, "nobody is reading");
      deliver(new TextEncoder().encode(text));
    },
    end: () => deliver?.(null),
    cancelled: () => cancelled,
  };
}

/** `pacedBody` on a manual clock, read by the test one chunk at a time. */
function pacedRead(limits = LIMITS) {
  const time = manualDeadlines();
  const client = clientBody();
  const cuts: BodyCutOff[] = [];
  const reader = pacedBody(client.stream, {
    limits,
    deadlines: time,
    onCutOff: (c) => cuts.push(c),
  })
    .getReader();
  /**
   * Starts a read and waits until it waits for the client (its limits are then armed); the read
   * itself comes back wrapped, so that awaiting this does not await it.
   */
  const read = async () => {
    const next = reader.read();
    next.catch(() => {}); // a cut-off is awaited by the test itself
    await eventually("the read waits", () => client.waiting() || cuts.length > 0);
    return { next };
  };
  return { time, client, cuts, read };
}

Deno.test("body: a body that keeps its pace passes whole; a silent one is idle after idleMs", async () => {
  const { time, client, cuts, read } = pacedRead();
  let text = "";
  // 200 bytes per second for five minutes, in chunks every 3 s
  for (let i = 0; i < 100; i++) {
    const { next } = await read();
    time.advance(3_000);
    client.send("x".repeat(600));
    text += new TextDecoder().decode((await next).value);
  }
  const { next: last } = await read();
  client.end();
  assert.equal((await last).done, true);
  assert.equal(text.length, 60_000);
  assert.deepEqual(cuts, []);
  assert.equal(time.pending(), 0, "no check left behind");

  const silent = pacedRead();
  const { next: waiting } = await silent.read();
  silent.time.advance(9_999);
  assert.equal(silent.cuts.length, 0);
  silent.time.advance(1);
  await assert.rejects(waiting, (e: unknown) => e instanceof ApiError && e.status === 408);
  assert.equal(silent.cuts[0].reason, "idle");
  assert.ok(silent.client.cancelled(), "the client's body is cancelled");
});

Deno.test("body: a byte every 5 s is cut off as too slow when the first window ends", async () => {
  const { time, client, cuts, read } = pacedRead();
  for (let i = 0; i < 5; i++) {
    const { next } = await read();
    time.advance(5_000);
    client.send("a");
    assert.equal((await next).value?.byteLength, 1);
  }
  const { next } = await read();
  time.advance(4_999);
  assert.equal(cuts.length, 0, "within the grace period");
  time.advance(1);
  await assert.rejects(next, (e: unknown) => {
    assert.ok(e instanceof ApiError);
    assert.equal(e.status, 408);
    assert.equal(e.code, "REQUEST_TIMEOUT");
    assert.deepEqual(e.details, {
      reason: "slow",
      minBytesPerSecond: 100,
      windowMs: 30_000,
      receivedBytes: 5,
    });
    return true;
  });
  assert.equal(cuts.length, 1);
  assert.deepEqual(cuts[0].state, { bytes: 5, waitedMs: 30_000, windowBytes: 5 });
  assert.ok(client.cancelled());
  assert.equal(time.pending(), 0);
});

Deno.test("body: time the reader spends elsewhere is not the client's", async () => {
  const { time, client, cuts, read } = pacedRead();
  const { next: first } = await read();
  client.send("{");
  await first;
  time.advance(3_600_000); // the service is busy for an hour (a backend slow to take the bytes)
  const { next: second } = await read();
  client.send("}");
  assert.equal(new TextDecoder().decode((await second).value), "}");
  assert.deepEqual(cuts, []);
});

Deno.test("body: readLimitedText cuts a trickling JSON body off with its 408", async () => {
  const time = manualDeadlines();
  const client = clientBody();
  const req = new Request("http://x/", { method: "POST", body: client.stream });
  let settled = false;
  const text = readLimitedText(req, 1024 * 1024, { limits: LIMITS, deadlines: time });
  text.then(() => settled = true, () => settled = true);
  await eventually("the body is read", () => client.waiting());
  client.send('{"title":"');
  for (let i = 0; !settled; i++) {
    assert.ok(i < 100, "never cut off");
    await eventually("the read waits", () => client.waiting() || settled);
    time.advance(5_000);
    if (client.waiting()) client.send("a"); // (not once the body was cut off)
  }
  await assert.rejects(text, { status: 408, code: "REQUEST_TIMEOUT", message: /too slow/ });
});

Deno.test("body: a served body is read into buffers sized to its traffic", async () => {
  // a byte stream, as a served request's body is: it can be read into the reader's own buffers
  const pending: Uint8Array[] = [];
  const source = new ReadableStream({
    type: "bytes",
    pull(c) {
      const next = pending.shift();
      if (next) return c.enqueue(next);
      c.close();
      c.byobRequest?.respond(0); // the reader's pending read ends with the stream
    },
  });
  pending.push(new Uint8Array(3), new Uint8Array(4096), new Uint8Array(10_000));
  const reader = pacedBody(source, { limits: LIMITS }).getReader();
  const sizes: [number, number][] = [];
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    sizes.push([r.value.byteLength, r.value.buffer.byteLength]);
  }
  assert.deepEqual(sizes, [
    [3, 3], // a small read is copied out at its size, not left in a large buffer
    [4096, 4096], // a read that fills the 4 KiB buffer is handed on as it is...
    [8192, 8192], // ...and the next buffer is twice as large
    [1808, 1808],
  ]);
});
