import assert from "node:assert/strict";
import { loadConfig } from "./config.ts";
import { bufferedLines, type ByteWriter, jsonLogger } from "./http/log.ts";
import { startServer } from "./server.ts";

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

async function serve(env: Record<string, string>, out: ByteWriter) {
  const dataDir = await Deno.makeTempDir({ prefix: "lpp-server-test-" });
  const config = loadConfig({ HOST: "127.0.0.1", PORT: "0", DATA_DIR: dataDir, ...env });
  const server = await startServer({
    config,
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
    const lines = out.lines();
    assert.equal(lines[0].msg, "request");
    assert.equal(lines[0].requestId, res.headers.get("x-request-id"));
    assert.deepEqual(
      lines.filter((l) => l.msg === "line").map((l) => l.i),
      Array.from({ length: 2000 }, (_, i) => i),
    );
  });
}

Deno.test("server: with client deadlines off an idle connection is left to the reverse proxy", async () => {
  const { server, close } = await serve(
    { CLIENT_DEADLINES: "auto", CLIENT_IDLE_TIMEOUT_MS: "100" }, // auto is off on loopback
    slowStdout(),
  );
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
  try {
    await new Promise((r) => setTimeout(r, 500)); // five idle deadlines
    const head = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    await conn.write(new TextEncoder().encode(head));
    const buf = new Uint8Array(4096);
    const n = await conn.read(buf);
    assert.match(new TextDecoder().decode(buf.subarray(0, n ?? 0)), /^HTTP\/1\.1 200 /);
  } finally {
    conn.close();
    await close();
  }
});
