import assert from "node:assert/strict";
import { type ConnectionGuard, guardConnections } from "./connection_deadlines.ts";
import {
  eventually,
  type ManualDeadlines,
  manualDeadlines,
} from "../../tests/helpers/manual_deadlines.ts";
import { type RawConnection, rawConnection } from "../../tests/helpers/raw_http.ts";

// The relay's limits, on a clock the tests move: distinct durations, so `pendingOf` tells the
// deadline armed apart.
const HEADER_MS = 200;
const IDLE_MS = 300;
const LINGER_MS = 700;
/** Far past every limit: a wait this long closes anything a deadline can close. */
const LONG_MS = 100 * (HEADER_MS + IDLE_MS + LINGER_MS);

interface Guarded {
  guard: ConnectionGuard;
  inner: Deno.HttpServer<Deno.NetAddr>;
  time: ManualDeadlines;
  /** The deadlines that closed a connection, in order. */
  kinds: string[];
  /** Requests `GET /hold` has taken and not answered yet. */
  held(): number;
  /** Answers every held request. */
  release(): void;
  /** A raw connection to the guard, sending `request` first. */
  connect(request?: string): Promise<RawConnection>;
}

/**
 * An inner server behind the guard, on a manual clock: `GET /` answers with what `track` told
 * it, `POST /` echoes its body, `GET /hold` answers when the test releases it, and `POST /close`
 * answers at once without reading its body and ends the connection after its answer.
 */
async function withGuard(fn: (g: Guarded) => Promise<void>) {
  const time = manualDeadlines();
  const ref: { guard?: ConnectionGuard } = {};
  let holds: (() => void)[] = [];
  const inner = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req, info) => {
      const conn = ref.guard?.track(info.remoteAddr, info.completed);
      const path = new URL(req.url).pathname;
      if (path === "/hold") {
        await new Promise<void>((r) => holds.push(r));
        return new Response("held");
      }
      if (path === "/close") {
        conn?.closeAfterResponse();
        return new Response("closing", { status: 408 });
      }
      if (req.method === "POST") return new Response(req.body);
      return Response.json({ relayed: !!conn, client: conn?.remoteAddr.hostname ?? null });
    },
  );
  const kinds: string[] = [];
  const guard = ref.guard = guardConnections({
    hostname: "127.0.0.1",
    port: 0,
    target: inner.addr,
    limits: { headerMs: HEADER_MS, idleMs: IDLE_MS, lingerMs: LINGER_MS },
    deadlines: time,
    onDeadline: (kind) => kinds.push(kind),
  });
  const url = `http://127.0.0.1:${guard.addr.port}`;
  const opened: RawConnection[] = [];
  try {
    await fn({
      guard,
      inner,
      time,
      kinds,
      held: () => holds.length,
      release() {
        for (const r of holds) r();
        holds = [];
      },
      async connect(request = "") {
        const conn = await rawConnection(url, request);
        opened.push(conn);
        return conn;
      },
    });
  } finally {
    for (const r of holds) r();
    guard.stopAccepting();
    await inner.shutdown();
    await guard.closeAll();
    await Promise.all(opened.map((c) => c.done()));
  }
}

/** Waits until the relay has armed exactly these deadlines (by duration) and no others. */
const armed = (time: ManualDeadlines, what: string, header: number, idle: number, linger = 0) =>
  eventually(
    what,
    () =>
      time.pendingOf(HEADER_MS) === header && time.pendingOf(IDLE_MS) === idle &&
      time.pendingOf(LINGER_MS) === linger && time.pending() === header + idle + linger,
  );

const GET = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";

Deno.test("connection guard: relayed requests are tracked with the client's address", () =>
  withGuard(async ({ guard, inner }) => {
    const relayed = await fetch(`http://127.0.0.1:${guard.addr.port}/`);
    assert.deepEqual(await relayed.json(), { relayed: true, client: "127.0.0.1" });
    // a connection made straight to the inner server is not one of the guard's
    const direct = await fetch(`http://127.0.0.1:${inner.addr.port}/`);
    assert.deepEqual(await direct.json(), { relayed: false, client: null });
  }));

Deno.test("connection guard: a head has the header time from its first byte; unfinished, it is closed then", () =>
  withGuard(async ({ time, kinds, connect }) => {
    const conn = await connect();
    await armed(time, "a new connection waits on the idle deadline", 0, 1);
    time.advance(IDLE_MS - 1); // a pause before the first byte, shorter than the idle limit
    await conn.send("GET / HTTP/1.1\r\nHost: x\r\n");
    // the first byte of a request starts the header deadline, in place of the idle one
    await armed(time, "the head's deadline is armed", 1, 0);
    time.advance(HEADER_MS - 1);
    await conn.send("Connection: close\r\n"); // more of the head does not restart it
    await conn.send("\r\n");
    const answered = await conn.done();
    assert.equal(answered.status, 200, "complete in time: answered");
    assert.deepEqual(time.setAt(HEADER_MS), [IDLE_MS - 1], "armed once, at the first byte");

    const unfinished = await connect("GET / HTTP/1.1\r\nHost: x\r\n");
    await armed(time, "the second head's deadline is armed", 1, 0);
    time.advance(HEADER_MS - 1);
    assert.deepEqual(kinds, [], "still open a moment before");
    time.advance(1);
    const r = await unfinished.done();
    assert.ok(r.closedByServer, "the relay closed the connection");
    assert.equal(r.text, "", "no answer: the head never completed");
    assert.deepEqual(kinds, ["header"]);
  }));

Deno.test("connection guard: a silent connection is closed at the idle deadline, not before", () =>
  withGuard(async ({ time, kinds, connect }) => {
    const conn = await connect();
    await armed(time, "a new connection waits on the idle deadline", 0, 1);
    time.advance(IDLE_MS - 1);
    assert.deepEqual(kinds, [], "still open a moment before");
    assert.equal(conn.ended(), false);
    time.advance(1);
    const r = await conn.done();
    assert.ok(r.closedByServer);
    assert.equal(r.text, "");
    assert.deepEqual(kinds, ["idle"]);
  }));

Deno.test("connection guard: a kept-alive connection's idle time restarts after each answer", () =>
  withGuard(async ({ time, kinds, connect }) => {
    const conn = await connect(GET);
    await eventually("the first answer", () => conn.responses() === 1);
    await armed(time, "idle again once the answer is delivered", 0, 1);
    time.advance(IDLE_MS - 1); // a gap between requests, shorter than the idle limit
    await conn.send(GET);
    await eventually("the second answer", () => conn.responses() === 2);
    await armed(time, "idle again", 0, 1);
    assert.deepEqual(time.setAt(IDLE_MS), [0, 0, IDLE_MS - 1], "connect, each answer");
    time.advance(IDLE_MS - 1);
    assert.deepEqual(kinds, [], "the idle time counts from the last answer");
    time.advance(1);
    const r = await conn.done();
    assert.ok(r.closedByServer);
    assert.equal(conn.responses(), 2);
    assert.deepEqual(kinds, ["idle"]);
  }));

Deno.test("connection guard: a request in progress is never timed out, however long it takes", () =>
  withGuard(async ({ time, kinds, held, release, connect }) => {
    const conn = await connect("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n");
    await eventually("the request is being answered", () => held() === 1);
    await armed(time, "no deadline while a request is in progress", 0, 0);
    time.advance(LONG_MS);
    assert.deepEqual(kinds, []);
    release();
    await eventually("the answer", () => conn.responses() === 1);
    assert.match(conn.text(), /^HTTP\/1\.1 200 [^]*\r\n\r\nheld$/);
    await armed(time, "idle after the answer", 0, 1);
    assert.deepEqual(time.setAt(IDLE_MS), [0, LONG_MS]);

    // a body sent slowly is not taken for the next request's head
    const post = await connect("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc");
    await eventually("the echo has begun", () => post.text().includes("abc"));
    await armed(time, "still only the first connection's idle deadline", 0, 1);
    time.advance(IDLE_MS - 1);
    await post.send("defghij");
    await eventually("the whole echo", () => post.text().includes("defghij"));
    assert.deepEqual(kinds, []);
    assert.deepEqual(time.setAt(HEADER_MS).length, 2, "one head each, no body byte counted");
  }));

Deno.test("connection guard: after an answer that ends its connection, the client may go on sending for the linger time", () =>
  withGuard(async ({ time, kinds, connect }) => {
    const conn = await connect("POST /close HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nab");
    await eventually("the answer, then the end of input", () => conn.ended());
    assert.match(conn.text(), /^HTTP\/1\.1 408 [^]*\r\n\r\nclosing$/);
    await armed(time, "the relay lingers", 0, 0, 1);
    // the rest of the body the server did not read is taken and dropped meanwhile
    await conn.send("c".repeat(500));
    time.advance(LINGER_MS - 1);
    assert.deepEqual(kinds, []);
    time.advance(1);
    assert.deepEqual(kinds, ["idle"]);
    assert.equal(time.pending(), 0);
    const r = await conn.done();
    assert.equal(r.status, 408);
    assert.equal(r.body, "closing");
  }));

Deno.test("connection guard: a large body and its echo pass through whole, in any pieces", () =>
  withGuard(async ({ guard }) => {
    // the relay's buffers grow for a fast transfer and shrink for a trickle: no byte is lost
    const body = new Uint8Array(3 * 1024 * 1024 + 17);
    for (let i = 0; i < body.length; i += 65_536) {
      crypto.getRandomValues(body.subarray(i, Math.min(body.length, i + 65_536)));
    }
    const url = `http://127.0.0.1:${guard.addr.port}/`;
    const echoed = await (await fetch(url, { method: "POST", body })).bytes();
    assert.equal(echoed.length, body.length);
    assert.ok(echoed.every((b, i) => b === body[i]));
    const trickled = new ReadableStream<Uint8Array>({
      start(c) {
        for (
          const piece of [
            body.subarray(0, 3),
            body.subarray(3, 70_000),
            body.subarray(70_000, 70_001),
          ]
        ) {
          c.enqueue(piece.slice());
        }
        c.close();
      },
    });
    const back = await (await fetch(url, { method: "POST", body: trickled })).bytes();
    assert.deepEqual(back, body.subarray(0, 70_001));
  }));
