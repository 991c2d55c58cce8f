// Tests of request writing: bodies with their length and type, streamed bodies chunked and handed
// over.
import assert from "node:assert/strict";
import { startCoreSim } from "../../../sims/core.ts";
import { W } from "../../../sims/world.ts";
import { createCoreClient } from "../core.ts";
import { createHttp1Client } from "./client.ts";
import {
  answering,
  dec,
  enc,
  ok,
  type RawRequest,
  withRaw,
} from "../../../tests/helpers/http1_raw_backend.ts";

Deno.test("http1Fetch: bodies go out with their length and type, POST without one says 0", async () => {
  const seen: RawRequest[] = [];
  await withRaw(
    answering((req) => (seen.push(req), ok("ok"))),
    async ({ url, fetch }) => {
      await (await fetch(url, { method: "post", body: "héllo" })).text();
      await (await fetch(url, { method: "PATCH", body: new Uint8Array([1, 2, 3]) })).text();
      await (await fetch(url, { method: "POST", body: new URLSearchParams({ q: "a b" }) })).text();
      await (await fetch(url, { method: "PUT", body: new Blob(["xy"], { type: "a/b" }) })).text();
      await (await fetch(url, { method: "POST" })).text();
      const json = { "content-type": "application/json" };
      await (await fetch(url, { method: "DELETE", headers: json, body: "{}" })).text();
      assert.deepEqual(seen.map((r) => r.head.split(" ")[0]), [
        "POST",
        "PATCH",
        "POST",
        "PUT",
        "POST",
        "DELETE",
      ]);
      assert.equal(dec.decode(seen[0].body), "héllo");
      assert.equal(seen[0].fields.get("content-length"), "6");
      assert.equal(seen[0].fields.get("content-type"), "text/plain;charset=UTF-8");
      assert.deepEqual([...seen[1].body], [1, 2, 3]);
      assert.equal(dec.decode(seen[2].body), "q=a+b");
      assert.match(seen[2].fields.get("content-type")!, /^application\/x-www-form-urlencoded/);
      assert.equal(seen[3].fields.get("content-type"), "a/b");
      assert.equal(seen[4].fields.get("content-length"), "0");
      assert.equal(seen[5].fields.get("content-type"), "application/json");
    },
  );
});

Deno.test("http1Fetch: a streamed body's chunks are sent whole, then freed; a shared buffer is left alone", async () => {
  const core = await startCoreSim();
  const client = createHttp1Client();
  try {
    const pooled = createCoreClient({ baseUrl: core.url, token: core.token }, {
      fetch: client.fetch,
      timeoutMs: 5000,
    });
    // chunks of falling sizes share the frame buffer; the last two are views of one buffer
    const owned = [300_000, 70_000, 5].map((n, i) => new Uint8Array(n).fill(97 + i));
    const shared = enc.encode("xxyy");
    const views = [shared.subarray(0, 2), shared.subarray(2)];
    const chunks = [...owned, ...views];
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        const next = chunks.shift();
        if (next) c.enqueue(next);
        else c.close();
      },
    });
    await pooled.putContent(W.locReef, body, "application/octet-stream");
    const expected = "a".repeat(300_000) + "b".repeat(70_000) + "ccccc" + "xxyy";
    assert.equal(await pooled.contentText(W.locReef), expected);
    assert.deepEqual(owned.map((c) => c.byteLength), [0, 0, 0], "sent chunks are freed");
    assert.equal(shared.byteLength, 4, "a buffer shared by several chunks is not touched");
    assert.deepEqual(views.map((v) => v.byteLength), [2, 2]);
  } finally {
    client.closeIdle();
    await core.close();
  }
});

Deno.test("http1Fetch: a large upload is streamed: the client never runs far ahead of the backend", async () => {
  const total = 64 * 1024 * 1024;
  let received = 0;
  let pulled = 0;
  let lead = 0;
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen() {} },
    async (req) => {
      for await (const chunk of req.body!) received += chunk.byteLength;
      return new Response(String(received));
    },
  );
  const client = createHttp1Client();
  try {
    const chunk = new Uint8Array(64 * 1024);
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (pulled >= total) return c.close();
        lead = Math.max(lead, pulled - received);
        pulled += chunk.byteLength;
        c.enqueue(chunk.slice());
      },
    }, { highWaterMark: 0 });
    const res = await client.fetch(`http://127.0.0.1:${server.addr.port}/upload`, {
      redirect: "manual",
      method: "PUT",
      body,
    });
    assert.equal(await res.text(), String(total));
    // socket buffers hold a few MiB; a client that buffered the body would lead by all of it
    assert.ok(lead < 16 * 1024 * 1024, `ran ${lead} bytes ahead`);
  } finally {
    client.closeIdle();
    ac.abort();
    await server.finished;
  }
});
