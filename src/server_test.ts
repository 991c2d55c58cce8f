import assert from "node:assert/strict";
import { loadConfig } from "./config/service_config.ts";
import { bufferedLines, type ByteWriter, jsonLogger } from "./http/log.ts";
import { startServer } from "./server.ts";
import type { Deadlines } from "./util/deadlines.ts";
import { manualDeadlines } from "../tests/helpers/manual_deadlines.ts";

/** A stdout stand-in that is slow: each write takes a timer tick. */
function slowStdout(): ByteWriter & { lines(): Record<string, unknown>[] } {
  let text = "";
  return {
    async write(bytes) {
      await new Promise((r) => setTimeout(r, 1));
      text += new TextDecoder().decode(bytes);
      return bytes.length;
    },
    lines: () => text.split("\n").filter(Boolean).map((l) => JSON.parse(l)),
  };
}

async function serve(env: Record<string, string>, out: ByteWriter, deadlines?: Deadlines) {
  const dataDir = await Deno.makeTempDir({ prefix: "lpp-server-test-" });
  const config = loadConfig({ HOST: "127.0.0.1", PORT: "0", DATA_DIR: dataDir, ...env });
  const server = await startServer({
    config,
    deadlines,
    log: jsonLogger("debug", bufferedLines(out, { flushMs: 60_000 })),
  });
  return {
    server,
    async close() {
      await server.stop();
      await Deno.remove(dataDir, { recursive: true });
    },
  };
}

for (const deadlines of ["on", "off"]) {
  Deno.test(`server stop: every line logged before it is written, in order (client deadlines ${deadlines})`, async () => {
    const out = slowStdout();
    const { server, close } = await serve({ CLIENT_DEADLINES: deadlines }, out);
    const res = await fetch(`${server.url}/healthz`);
    assert.equal(res.status, 200);
    await res.body?.cancel();
    for (let i = 0; i < 2000; i++) server.app.log.log("info", "line", { i });
    await close();
    // after what the app said when it was made: the request, then the lines, in order
    const lines = out.lines().filter((l) => l.msg === "request" || l.msg === "line");
    assert.equal(lines[0].msg, "request");
    assert.equal(lines[0].requestId, res.headers.get("x-request-id"));
    assert.deepEqual(
      lines.filter((l) => l.msg === "line").map((l) => l.i),
      Array.from({ length: 2000 }, (_, i) => i),
    );
  });
}

Deno.test("server: with client deadlines off an idle connection is left to the reverse proxy", async () => {
  const time = manualDeadlines();
  const { server, close } = await serve(
    // auto is off on loopback
    { CLIENT_DEADLINES: "auto", CLIENT_IDLE_TIMEOUT_MS: "100", CLIENT_HEADER_TIMEOUT_MS: "200" },
    slowStdout(),
    time,
  );
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
  try {
    time.advance(500); // five idle deadlines
    const head = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    await conn.write(new TextEncoder().encode(head));
    const buf = new Uint8Array(4096);
    const n = await conn.read(buf);
    assert.match(new TextDecoder().decode(buf.subarray(0, n ?? 0)), /^HTTP\/1\.1 200 /);
    // a relay would have set the idle deadline on accepting the connection, before any answer
    assert.deepEqual([time.setAt(100), time.setAt(200)], [[], []], "no client deadline was set");
  } finally {
    conn.close();
    await close();
  }
});
