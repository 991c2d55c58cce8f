/**
 * The production entry point on SIGTERM: the log is buffered, so every line written before the
 * signal, and the shutdown's own, must still reach stdout before the process exits.
 */
import assert from "node:assert/strict";

const REPO = new URL("..", import.meta.url);

Deno.test("main.ts: SIGTERM flushes every buffered log line before exit", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "lpp-main-test-" });
  const keep = ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"];
  const env: Record<string, string> = { HOST: "127.0.0.1", PORT: "0", DATA_DIR: dataDir };
  for (const k of keep) {
    const v = Deno.env.get(k);
    if (v !== undefined) env[k] = v;
  }
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net",
      "--allow-env",
      "--allow-read",
      "--allow-write",
      "--allow-sys",
      "main.ts",
    ],
    cwd: REPO,
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const lines: Record<string, unknown>[] = [];
  const reading = (async () => {
    let rest = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop()!;
      lines.push(...parts.map((l) => JSON.parse(l)));
    }
  })();
  try {
    let port: number | undefined;
    for (let i = 0; i < 600 && port === undefined; i++) {
      await new Promise((r) => setTimeout(r, 50)); // the start-up line, within a flush interval
      port = lines.find((l) => l.msg === "listening")?.port as number | undefined;
    }
    assert.ok(port, "the service logged where it listens");
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      await res.body?.cancel();
      ids.push(res.headers.get("x-request-id")!);
    }
    child.kill("SIGTERM");
    assert.equal((await child.status).code, 0);
    await reading;
    const logged = lines.filter((l) => l.msg === "request").map((l) => l.requestId);
    assert.deepEqual(logged, ids, "every request's line, in order");
    assert.equal(lines.at(-1)?.msg, "shutting down");
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* already exited */ }
    await child.status;
    await reading.catch(() => {});
    await Deno.remove(dataDir, { recursive: true });
  }
});
