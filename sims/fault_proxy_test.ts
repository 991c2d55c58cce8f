/** The fault proxy itself: each mode looks to a client the way its description says. */
import assert from "node:assert/strict";
import { FAULT_MARK, type FaultMode, startFaultProxy } from "./fault_proxy.ts";

const JSON_BODY = JSON.stringify({ notes: Array.from({ length: 20 }, (_, i) => `note ${i}`) });

/** Longer than any client here waits: a drip that never completes while the test looks. */
const DRIP_MS = 60_000;

async function withProxy(
  fn: (proxy: Awaited<ReturnType<typeof startFaultProxy>>) => Promise<void>,
) {
  const backend = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) =>
      new URL(req.url).pathname === "/empty"
        ? new Response(null, { status: 204 })
        : new Response(JSON_BODY, { headers: { "content-type": "application/json" } }),
  );
  const proxy = await startFaultProxy({
    target: `http://127.0.0.1:${backend.addr.port}`,
    dripMs: DRIP_MS,
    padBytes: 256 * 1024,
  });
  try {
    await fn(proxy);
  } finally {
    await proxy.close();
    await backend.shutdown();
  }
}

/** What a client sees: "refused"/"failed" before the head, or status + body or "body-error". */
async function outcome(url: string, signal?: AbortSignal): Promise<string> {
  let res: Response;
  try {
    res = await fetch(url, { signal });
  } catch (e) {
    return /\(Connect\)|refused/i.test(String((e as Error).cause ?? e)) ? "refused" : "failed";
  }
  try {
    return `${res.status} ${await res.text()}`;
  } catch {
    return `${res.status} body-error`;
  }
}

Deno.test("fault proxy: each mode fails the way it says; pass is transparent", () =>
  withProxy(async (proxy) => {
    const expect: [FaultMode, (o: string) => boolean][] = [
      ["pass", (o) => o === `200 ${JSON_BODY}`],
      ["refuse", (o) => o === "refused"],
      ["reset", (o) => o === "200 body-error"],
      ["garbage", (o) => o === "failed"],
      ["truncate", (o) => o === "200 body-error"],
      ["oversize", (o) => o.startsWith(`200 ${JSON_BODY}  `) && o.length > 256 * 1024],
      ["invalid-json", (o) => o === `200 {"${FAULT_MARK}": [1, 2, `],
      ["html-500", (o) => o.startsWith("500 <!doctype html>") && o.includes(FAULT_MARK)],
      ["pass", (o) => o === `200 ${JSON_BODY}`],
    ];
    for (const [mode, ok] of expect) {
      await proxy.setMode(mode);
      const o = await outcome(`${proxy.url}/x`);
      assert.ok(ok(o), `${mode}: ${o.slice(0, 120)}`);
    }
    assert.ok(await proxy.drained(5_000));
  }));

Deno.test("fault proxy: hang, stall and drip hold the connection until the client gives up", () =>
  withProxy(async (proxy) => {
    for (const mode of ["hang", "stall", "drip"] as const) {
      await proxy.setMode(mode);
      const client = new AbortController();
      const res = fetch(`${proxy.url}/x`, { signal: client.signal })
        .then((r) => r.text().then(() => "complete", () => "body-error"), () => "aborted");
      // hang holds at once, stall after the head, drip from the head on
      for (let i = 0; i < 2_000 && proxy.held() === 0; i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.equal(proxy.openConnections(), 1, mode);
      assert.equal(proxy.held(), 1, mode);
      client.abort();
      assert.notEqual(await res, "complete", mode);
      assert.ok(await proxy.drained(20_000), `${mode}: the proxy saw the client leave`);
      assert.equal(proxy.held(), 0, mode);
    }
    assert.ok(proxy.cutShort() >= 2, "stall and drip answers were cut short");
  }));

Deno.test("fault proxy: a bodiless answer fails before its head instead of passing", () =>
  withProxy(async (proxy) => {
    for (const mode of ["reset", "truncate"] as const) {
      await proxy.setMode(mode);
      assert.equal(await outcome(`${proxy.url}/empty`), "failed", mode);
    }
  }));
