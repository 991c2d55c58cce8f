// Tests of the pool: bounded and timed-out idle connections, and one the backend closed while idle.
import assert from "node:assert/strict";
import { HANG_GUARD_MS } from "../../../tests/helpers/manual_deadlines.ts";
import {
  ok,
  type RawBackend,
  requestReader,
  sleep,
  waitUntil,
  withRaw,
  write,
} from "../../../tests/helpers/http1_raw_backend.ts";

const eventually = (check: () => boolean, what: string) => waitUntil(check, what, HANG_GUARD_MS);

Deno.test("http1Fetch: a kept connection the backend closed while idle is not used", async () => {
  await withRaw(async (conn) => {
    await requestReader(conn)();
    await write(conn, ok("then I close"));
    await sleep(10);
    conn.close();
  }, async ({ url, backend, client, fetch }) => {
    assert.equal(await (await fetch(url)).text(), "then I close");
    await eventually(() => client.idleConnections() === 0, "the pool noticed the close");
    // not idempotent, so never retried: it only works when the dead connection was noticed
    assert.equal(await (await fetch(url, { method: "POST", body: "x" })).text(), "then I close");
    assert.equal(backend.accepted(), 2);
  });
});

Deno.test("http1Fetch: idle connections are bounded per origin and closed after the idle timeout", async () => {
  // answers only once three requests are in, so the three calls overlap however slow the machine
  let arrived = 0;
  let allIn = () => {};
  const three = new Promise<void>((r) => allIn = r);
  const serve = async (conn: Deno.TcpConn, _i: number, backend: RawBackend) => {
    const next = requestReader(conn);
    for (let req = await next(); req; req = await next()) {
      if (++arrived === 3) allIn();
      await three;
      await write(conn, ok("ok"));
    }
    backend.closedByClient++;
  };
  // an idle timeout out of reach: the kept connection is reused, whenever the next call comes
  await withRaw(serve, async ({ url, backend, fetch }) => {
    await Promise.all([1, 2, 3].map(async () => await (await fetch(url)).text()));
    assert.equal(backend.accepted(), 3);
    await eventually(() => backend.closedByClient === 2, "all but one idle connection closed");
    await (await fetch(url)).text();
    assert.equal(backend.accepted(), 3); // the kept one was reused
  }, { maxIdlePerOrigin: 1, idleTimeoutMs: 600_000 });
  // a short one: the idle connection is closed once it passes
  arrived = 3;
  await withRaw(serve, async ({ url, backend, fetch }) => {
    await (await fetch(url)).text();
    await eventually(() => backend.closedByClient === 1, "the idle one timed out");
    await (await fetch(url)).text();
    assert.equal(backend.accepted(), 2);
  }, { maxIdlePerOrigin: 1, idleTimeoutMs: 300 });
});
