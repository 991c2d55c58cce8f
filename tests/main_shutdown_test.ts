/**
 * The production entry point on SIGTERM: the log is buffered, so every line written before the
 * signal, and the shutdown's own, must still reach stdout before the process exits.
 */
import assert from "node:assert/strict";
import { spawnMain } from "./helpers/main_process.ts";

Deno.test("main.ts: SIGTERM flushes every buffered log line before exit", async () => {
  const main = await spawnMain();
  try {
    await main.until((lines) => lines.some((l) => l.msg === "listening"));
    const port = main.lines.find((l) => l.msg === "listening")?.port as number | undefined;
    assert.ok(port, "the service logged where it listens");
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      await res.body?.cancel();
      ids.push(res.headers.get("x-request-id")!);
    }
    main.child.kill("SIGTERM");
    assert.equal((await main.child.status).code, 0);
    await main.reading;
    const logged = main.lines.filter((l) => l.msg === "request").map((l) => l.requestId);
    assert.deepEqual(logged, ids, "every request's line, in order");
    assert.equal(main.lines.at(-1)?.msg, "shutting down");
  } finally {
    await main.close();
  }
});
