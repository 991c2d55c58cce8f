import assert from "node:assert/strict";
import { type ConnectionGuard, guardConnections } from "./connection_deadlines.ts";

/**
 * An inner server behind the guard that answers with what `track` told it (a `POST` gets its
 * own body back).
 */
async function withGuard(
  fn: (
    guard: ConnectionGuard,
    inner: Deno.HttpServer<Deno.NetAddr>,
    kinds: string[],
  ) => Promise<void>,
) {
  const ref: { guard?: ConnectionGuard } = {};
  const inner = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req, info) => {
    const conn = ref.guard?.track(info.remoteAddr, info.completed);
    if (req.method === "POST") return new Response(req.body);
    return Response.json({ relayed: !!conn, client: conn?.remoteAddr.hostname ?? null });
  });
  const kinds: string[] = [];
  const guard = ref.guard = guardConnections({
    hostname: "127.0.0.1",
    port: 0,
    target: inner.addr,
    deadlines: { headerMs: 200, idleMs: 300 },
    onDeadline: (kind) => kinds.push(kind),
  });
  try {
    await fn(guard, inner, kinds);
  } finally {
    guard.stopAccepting();
    await inner.shutdown();
    await guard.closeAll();
  }
}

Deno.test("connection guard: relayed requests are tracked with the client's address", () =>
  withGuard(async (guard, inner) => {
    const relayed = await fetch(`http://127.0.0.1:${guard.addr.port}/`);
    assert.deepEqual(await relayed.json(), { relayed: true, client: "127.0.0.1" });
    // a connection made straight to the inner server is not one of the guard's
    const direct = await fetch(`http://127.0.0.1:${inner.addr.port}/`);
    assert.deepEqual(await direct.json(), { relayed: false, client: null });
  }));

Deno.test("connection guard: an unfinished head and an idle connection are closed", () =>
  withGuard(async (guard, _inner, kinds) => {
    for (const sent of ["GET / HTTP/1.1\r\nHost: x\r\n", ""]) {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: guard.addr.port });
      const hangGuard = setTimeout(() => conn.close(), 30_000);
      try {
        if (sent) await conn.write(new TextEncoder().encode(sent));
        assert.equal(await conn.read(new Uint8Array(64)), null, "closed by the guard");
      } finally {
        clearTimeout(hangGuard);
        conn.close();
      }
    }
    assert.deepEqual(kinds, ["header", "idle"]);
  }));

Deno.test("connection guard: a large body and its echo pass through whole, in any pieces", () =>
  withGuard(async (guard) => {
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
