/**
 * The request log line over HTTP: the client's address (after the `TRUST_PROXY` rules), the
 * class of a backend failure and never a backend address or token; and `LOG_FORMAT=combined`,
 * whose lines parse as the Apache/nginx combined format.
 */
import assert from "node:assert/strict";
import { type Harness, REFUSED_URL, withHarness } from "../helpers/harness.ts";
import { eventually, manualDeadlines } from "../helpers/manual_deadlines.ts";

/** The `request` lines logged so far, parsed. */
function requestLines(h: Harness): Record<string, unknown>[] {
  return h.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request");
}

/**
 * A backend that accepts connections and answers each with `reply` (null: never answers);
 * `accepted` counts the connections.
 */
function fakeBackend(reply: string | null): { url: string; accepted(): number; close(): void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  (async () => {
    for await (const conn of listener) {
      conns.push(conn);
      if (reply === null) continue;
      await conn.read(new Uint8Array(64 * 1024)).catch(() => null);
      await conn.write(new TextEncoder().encode(reply)).catch(() => 0);
      conn.close();
    }
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${listener.addr.port}`,
    accepted: () => conns.length,
    close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch {
          // already closed
        }
      }
    },
  };
}

/** Asserts a log line names neither the backend's address nor the token. */
function assertClean(line: unknown, backendUrl: string, h: Harness): void {
  const text = JSON.stringify(line);
  for (const secret of [backendUrl, new URL(backendUrl).host, h.core.token]) {
    assert.ok(!text.includes(secret), `the line names ${secret}: ${text}`);
  }
}

Deno.test("request log: a refused backend names reason refused, the client, and no address", async () => {
  const backendUrl = REFUSED_URL;
  await withHarness(async (h) => {
    const res = await h.request("/api/lore", { headers: { "x-request-id": "refused-1" } });
    await res.body?.cancel();
    assert.equal(res.status, 503);
    const line = requestLines(h).find((l) => l.requestId === "refused-1")!;
    assert.equal(line.level, "warn");
    assert.equal(line.status, 503);
    assert.equal(line.reason, "refused");
    assert.equal(line.upstream, "core");
    assert.equal(line.client, "127.0.0.1");
    assert.equal(line.route, "/api/lore");
    assertClean(line, backendUrl, h);
    // the answer says as little as before
    const again = await h.requestJson("/api/lore");
    assert.equal(again.body.error, "UNREACHABLE");
    assert.ok(!JSON.stringify(again.body).includes("refused"));
  }, { coreUrlOverride: backendUrl });
});

Deno.test("request log: refused, timeout, garbage and an early close are told apart, by either client", async () => {
  const cases: [string, string | null, string][] = [
    ["timeout", null, "timeout"],
    ["garbage", "SSH-2.0-OpenSSH_9.6\r\n\r\n", "bad_response"],
    ["close", "", "reset"],
  ];
  for (const client of ["fetch", "pooled"]) {
    for (const [name, reply, reason] of [...cases, ["refused", "refused", "refused"] as const]) {
      const backend = name === "refused"
        ? { url: REFUSED_URL, accepted: () => 0, close() {} }
        : fakeBackend(reply);
      const id = `failure-${name}-${client}`;
      // the deadline passes only for the backend that never answers, and only once it holds
      // the call: every other failure shows whatever the machine's speed
      const time = manualDeadlines();
      try {
        await withHarness(async (h) => {
          const answer = h.request("/api/lore", { headers: { "x-request-id": id } });
          if (name === "timeout") {
            await eventually("the backend holds the call", () => backend.accepted() > 0);
            time.advance(300);
          }
          const res = await answer;
          await res.body?.cancel();
          assert.ok(res.status >= 502 && res.status <= 504, `${id}: ${res.status}`);
          const line = requestLines(h).find((l) => l.requestId === id)!;
          assert.equal(line.reason, reason, id);
          assert.equal(line.upstream, "core", id);
          assertClean(line, backend.url, h);
        }, {
          coreUrlOverride: backend.url,
          env: { UPSTREAM_TIMEOUT_MS: "300", UPSTREAM_CLIENT: client },
          deadlines: time,
        });
      } finally {
        backend.close();
      }
    }
  }
});

Deno.test("request log: an answer without a backend failure has no reason", () =>
  withHarness(async (h) => {
    const res = await h.request("/api/lore", { headers: { "x-request-id": "fine-request" } });
    await res.body?.cancel();
    assert.equal(res.status, 200);
    const line = requestLines(h).find((l) => l.requestId === "fine-request")!;
    assert.equal(line.reason, undefined);
    assert.equal(line.client, "127.0.0.1");
    assert.equal(line.upstreamCalls, 1);
  }));

Deno.test("request log: the client is the trusted proxy's X-Forwarded-For entry, else the peer", async () => {
  const forwarded = { "x-forwarded-for": "198.51.100.1, 2001:db8::7" };
  await withHarness(async (h) => {
    await h.request("/healthz", { headers: { ...forwarded, "x-request-id": "proxied-1" } })
      .then((r) => r.body?.cancel());
    await h.request("/healthz", {
      headers: { "x-forwarded-for": "not an address", "x-request-id": "proxied-2" },
    })
      .then((r) => r.body?.cancel());
    const lines = requestLines(h);
    assert.equal(lines.find((l) => l.requestId === "proxied-1")!.client, "2001:db8::7");
    assert.equal(lines.find((l) => l.requestId === "proxied-2")!.client, "127.0.0.1");
  }, { env: { TRUST_PROXY: "true" } });
  await withHarness(async (h) => {
    await h.request("/healthz", { headers: { ...forwarded, "x-request-id": "direct-1" } })
      .then((r) => r.body?.cancel());
    assert.equal(requestLines(h).find((l) => l.requestId === "direct-1")!.client, "127.0.0.1");
  });
});

/** The combined log format: host ident user [time] "request" status bytes "referer" "agent". */
const COMBINED =
  /^(\S+) (\S+) (\S+) \[(\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4})\] "(\S+) (\S+) (HTTP\/\d\.\d)" (\d{3}) (\d+|-) "((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)"$/;

Deno.test("request log: LOG_FORMAT=combined writes lines tools parse, diagnostics apart", async () => {
  const backendUrl = REFUSED_URL;
  await withHarness(async (h) => {
    const agent = 'Mozilla/5.0 "quoted" \\ crawler';
    await h.request("/favicon.svg?token=s3cret", {
      headers: { "user-agent": agent, referer: "https://elsewhere.example/?q=private" },
    }).then((r) => r.body?.cancel());
    await h.request("/api/lore", { headers: { "x-request-id": "combined-down" } })
      .then((r) => r.body?.cancel());
    await h.request("/nope", { method: "POST" }).then((r) => r.body?.cancel());
    assert.equal(h.accessLines.length, 3, h.accessLines.join("\n"));
    const parsed = h.accessLines.map((line) => {
      const m = COMBINED.exec(line);
      assert.ok(m, `not the combined format: ${line}`);
      return m;
    });
    const [robots, down, nope] = parsed;
    assert.equal(robots[1], "127.0.0.1");
    assert.equal(robots[5], "GET");
    assert.equal(robots[6], "/favicon.svg", "the query is never logged");
    assert.equal(robots[8], "200");
    assert.equal(robots[10], "-", "the referer is never logged");
    assert.equal(robots[11], "Mozilla/5.0 \\x22quoted\\x22 \\x5C crawler");
    assert.deepEqual([down[5], down[6], down[8]], ["GET", "/api/lore", "503"]);
    assert.deepEqual([nope[5], nope[6], nope[8]], ["POST", "/nope", "404"]);
    for (const line of h.accessLines) assertClean(line, backendUrl, h);
    // the JSON diagnostics carry no request lines but the failed one, with its reason
    const json = requestLines(h);
    assert.deepEqual(json.map((l) => l.requestId), ["combined-down"]);
    assert.equal(json[0].reason, "refused");
  }, { coreUrlOverride: backendUrl, env: { LOG_FORMAT: "combined" } });
});
