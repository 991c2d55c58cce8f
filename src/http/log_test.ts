import assert from "node:assert/strict";
import { eventually } from "../../tests/helpers/manual_deadlines.ts";
import { bufferedLines, type ByteWriter, jsonLogger, redact } from "./log.ts";

Deno.test("redact: URLs, bearer/basic credentials and ETAPI-shaped tokens disappear", () => {
  const token = "AbCdEfGh1234_" + "x".repeat(43) + "=";
  const text =
    `fetch http://core.internal:8080/etapi/notes failed; Authorization: Bearer abc.def ` +
    `Basic ZXRhcGk6dG9rZW4= token ${token}`;
  const out = redact(text);
  for (const leaked of ["core.internal", "abc.def", "ZXRhcGk6dG9rZW4", token]) {
    assert.ok(!out.includes(leaked), `${leaked} leaked: ${out}`);
  }
  assert.match(out, /^fetch \[redacted\] failed/);
});

Deno.test("redact: configured literal secrets are masked even when they look harmless", () => {
  assert.equal(redact("the secret is plainword", ["plainword"]), "the secret is [redacted]");
});

Deno.test("jsonLogger: one JSON object per line, level filter, string fields redacted", () => {
  const lines: string[] = [];
  const log = jsonLogger("info", (l) => lines.push(l), ["s3cr3t-value"], () => 0);
  log.log("debug", "hidden");
  log.log("warn", "upstream failed", {
    error: "GET http://10.0.0.5/x with s3cr3t-value",
    status: 502,
  });
  assert.equal(lines.length, 1);
  assert.deepEqual(JSON.parse(lines[0]), {
    ts: "1970-01-01T00:00:00.000Z",
    level: "warn",
    msg: "upstream failed",
    error: "GET [redacted] with [redacted]",
    status: 502,
  });
});

Deno.test("redact: short values skip the patterns only when none could match", () => {
  const secret = "tok-1234";
  for (
    const [text, leaked] of [
      ["http://c:1", "c:1"], // a URL of any length
      ["x ftp://qq", "qq"],
      ["Bearer abc", "abc"],
      ["BASIC\tzzz", "zzz"],
      ["use tok-1234 now", secret], // a literal secret in a short value
      ["a".repeat(12) + "_" + "b".repeat(20), "b".repeat(20)], // the shortest ETAPI shape
      ["f".repeat(48), "f".repeat(48)], // the shortest hex run
    ]
  ) {
    const out = redact(text, [secret]);
    assert.ok(!out.includes(leaked), `${leaked} leaked from ${JSON.stringify(text)}: ${out}`);
  }
  for (const plain of ["GET", "/api/lore/:id", crypto.randomUUID(), "bearer", "basic-auth"]) {
    assert.equal(redact(plain, [secret]), plain);
  }
});

Deno.test("jsonLogger: secrets in the message and in every string field stay redacted", () => {
  const lines: string[] = [];
  const log = jsonLogger("debug", (l) => lines.push(l), ["s3cr3t-value"]);
  log.log("info", "token s3cr3t-value", {
    requestId: "abcdefgh-1",
    short: "Bearer x",
    url: "http://10.0.0.5",
    nested: 1,
  });
  const line = JSON.parse(lines[0]);
  assert.equal(line.msg, "token [redacted]");
  assert.equal(line.requestId, "abcdefgh-1");
  assert.equal(line.short, "[redacted]");
  assert.equal(line.url, "[redacted]");
  assert.ok(!lines[0].includes("s3cr3t"));
});

/** A stdout stand-in that takes at most `chunk` bytes per write, after a tick. */
function slowWriter(chunk: number): ByteWriter & { text(): string; writes: number } {
  const parts: Uint8Array[] = [];
  let writes = 0;
  return {
    async write(bytes) {
      writes++;
      await new Promise((r) => setTimeout(r, 0));
      const n = Math.min(chunk, bytes.length);
      parts.push(bytes.slice(0, n));
      return n;
    },
    text: () => parts.map((p) => new TextDecoder().decode(p, { stream: true })).join(""),
    get writes() {
      return writes;
    },
  };
}

Deno.test("bufferedLines: lines come out whole, in order, across full buffers and partial writes", async () => {
  const out = slowWriter(100);
  const sink = bufferedLines(out, { flushMs: 10_000, maxBytes: 256 });
  const sent = Array.from(
    { length: 300 },
    (_, i) => JSON.stringify({ i, msg: "x".repeat(i % 40) }),
  );
  for (const line of sent) sink.write(line);
  await sink.flush();
  assert.deepEqual(out.text().split("\n"), [...sent, ""]);
  assert.ok(out.writes < sent.length, "lines are batched, not written one by one");
});

Deno.test("bufferedLines: a batch goes out on its own after flushMs", async () => {
  const out = slowWriter(1 << 20);
  const sink = bufferedLines(out, { flushMs: 5 });
  sink.write("alone");
  await eventually("the batch went out without a flush", () => out.text() !== "");
  assert.equal(out.text(), "alone\n");
  await sink.flush();
});

Deno.test("bufferedLines: a failing writer drops its batch, later lines still go out", async () => {
  let fail = true;
  const got: string[] = [];
  const sink = bufferedLines({
    write(bytes) {
      if (fail) return Promise.reject(new Error("EPIPE"));
      got.push(new TextDecoder().decode(bytes));
      return Promise.resolve(bytes.length);
    },
  });
  sink.write("lost");
  await sink.flush();
  fail = false;
  sink.write("kept");
  await sink.flush();
  assert.deepEqual(got, ["kept\n"]);
});

Deno.test("jsonLogger: a buffered sink's flush is the logger's", async () => {
  const out = slowWriter(1 << 20);
  const log = jsonLogger("info", bufferedLines(out, { flushMs: 10_000 }));
  log.log("info", "one");
  log.log("info", "two");
  assert.equal(out.text(), "");
  await log.flush?.();
  assert.deepEqual(out.text().trim().split("\n").map((l) => JSON.parse(l).msg), ["one", "two"]);
});

Deno.test("bufferedLines: a reader that stops reading costs bounded memory; drops are reported", async () => {
  let release!: () => void;
  const blocked = new Promise<void>((r) => release = r);
  const got: string[] = [];
  const sink = bufferedLines({
    async write(bytes) {
      await blocked; // the pipe is full until the reader comes back
      got.push(new TextDecoder().decode(bytes));
      return bytes.length;
    },
  }, { flushMs: 10_000, maxBytes: 100, maxPendingBytes: 1000 });
  for (let i = 0; i < 500; i++) sink.write(`line ${String(i).padStart(4, "0")} ${"x".repeat(40)}`);
  release();
  await sink.flush();
  sink.write("after");
  await sink.flush();
  const lines = got.join("").split("\n").filter(Boolean);
  const kept = lines.filter((l) => l.startsWith("line "));
  assert.ok(kept.length > 0 && kept.length < 40, `only about 1000 bytes waited (${kept.length})`);
  assert.deepEqual(kept, [...kept].sort(), "kept lines stay in order");
  const notice = JSON.parse(lines.at(-2)!);
  assert.equal(notice.msg, "log lines dropped");
  assert.equal(notice.count, 500 - kept.length);
  assert.equal(lines.at(-1), "after");
});

Deno.test("jsonLogger: a line written from the kept start reads exactly as JSON.stringify writes it", () => {
  const secrets = ["s3cr3t-value", "another-long-token-value"];
  const lines: string[] = [];
  const log = jsonLogger("info", (l) => lines.push(l), secrets, () => 0);
  const strings = [
    "",
    "r1",
    'quote " and \\ backslash',
    "line\nbreak\ttab\u0001",
    "unicode ✓ é 𝄞 and a lone \ud800",
    "has s3cr3t-value inside",
    "GET http://core:8080/etapi failed",
    "Bearer abcdefghijklmnop",
    "a".repeat(60),
  ];
  const values: unknown[] = [
    ...strings,
    0,
    -0,
    304,
    0.1,
    1e21,
    NaN,
    Infinity,
    true,
    null,
    undefined,
    [1, "x"],
    { nested: "s3cr3t-value" },
    () => 1,
  ];
  for (let i = 0; i < 200; i++) {
    const fields: Record<string, unknown> = {};
    for (let k = 0; k < 1 + (i % 7); k++) {
      fields[`f${k}${i % 3}`] = values[(i * 7 + k * 3) % values.length];
    }
    lines.length = 0;
    log.log("info", "request", fields);
    const clean: Record<string, unknown> = { ts: new Date(0).toISOString(), level: "info" };
    clean.msg = "request";
    for (const [k, v] of Object.entries(fields)) {
      clean[k] = typeof v === "string" ? redact(v, secrets) : v;
    }
    assert.equal(lines[0], JSON.stringify(clean), JSON.stringify(fields));
  }
});
