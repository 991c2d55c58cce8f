// Tests of the fetch-compatible facade: what it sends, what it hands to fetch, the retry of a dead
// kept connection, and the client against the doubles and the app.
import assert from "node:assert/strict";
import { startCoreSim } from "../../../sims/core.ts";
import { startParserSim } from "../../../sims/parser.ts";
import { W } from "../../../sims/world.ts";
import { startHarness } from "../../../tests/helpers/harness.ts";
import { answerMovingTime, manualDeadlines } from "../../../tests/helpers/manual_deadlines.ts";
import { createCoreClient } from "../core.ts";
import { createHttp1Client, sharedHttp1Client } from "./client.ts";
import {
  answering,
  dec,
  enc,
  failure,
  ok,
  type RawRequest,
  requestReader,
  sleep,
  withRaw,
  write,
} from "../../../tests/helpers/http1_raw_backend.ts";

Deno.test("http1Fetch: Content-Length answers reuse one connection; the head is what fetch sends", async () => {
  const heads: RawRequest[] = [];
  await withRaw(
    answering((req) => {
      heads.push(req);
      return ok(`answer ${heads.length}`, "Content-Type: text/plain\r\n");
    }),
    async ({ url, backend, fetch }) => {
      for (let i = 1; i <= 3; i++) {
        const res = await fetch(`${url}/etapi/notes/n${i}?a=%20b`, {
          headers: { Authorization: "token" },
        });
        assert.equal(res.status, 200);
        assert.equal(res.headers.get("content-type"), "text/plain");
        assert.equal(await res.text(), `answer ${i}`);
      }
      assert.equal(backend.accepted(), 1);
      const [first] = heads;
      assert.equal(first.head.split("\r\n")[0], "GET /etapi/notes/n1?a=%20b HTTP/1.1");
      assert.equal(first.fields.get("host"), new URL(url).host);
      assert.equal(first.fields.get("authorization"), "token");
      assert.equal(first.fields.get("accept"), "*/*");
      // answers are not decompressed, so none may come compressed
      assert.equal(first.fields.has("accept-encoding"), false);
    },
  );
});

Deno.test("http1Fetch: a kept connection that dies unnoticed is retried once, for idempotent requests only", async () => {
  const closesOnSecond = async (conn: Deno.TcpConn) => {
    const next = requestReader(conn);
    await next();
    await write(conn, ok("first"));
    await next(); // takes the second request, then drops the connection without a word
  };
  await withRaw(closesOnSecond, async ({ url, backend, fetch }) => {
    assert.equal(await (await fetch(url)).text(), "first");
    assert.equal(await (await fetch(url)).text(), "first");
    assert.equal(backend.accepted(), 2);
  });
  await withRaw(closesOnSecond, async ({ url, backend, fetch }) => {
    assert.equal(await (await fetch(url)).text(), "first");
    const e = await failure(fetch(url, { method: "POST", body: "{}" }));
    assert.ok(e instanceof TypeError);
    assert.equal(e.message, "connection closed before message completed");
    assert.equal(backend.accepted(), 1);
  });
  // the retry is on a new connection and happens once: a backend that keeps failing fails it
  await withRaw(async (conn, index) => {
    if (index === 0) return await closesOnSecond(conn);
    await requestReader(conn)();
  }, async ({ url, backend, fetch }) => {
    assert.equal(await (await fetch(url)).text(), "first");
    assert.ok((await failure(fetch(url))) instanceof TypeError);
    assert.equal(backend.accepted(), 2);
  });
});

Deno.test("http1Fetch: what it does not handle goes to fetch; bad headers and GET bodies are refused", async () => {
  const handed: string[] = [];
  const fallback = (input: string | URL | Request) => {
    handed.push(input instanceof Request ? `Request ${input.url}` : String(input));
    return Promise.resolve(new Response("from fetch"));
  };
  const client = createHttp1Client({ fallback });
  assert.equal(
    await (await client.fetch("https://core/x", { redirect: "manual" })).text(),
    "from fetch",
  );
  await client.fetch("http://core/follow");
  await client.fetch(new Request("http://core/request"), { redirect: "manual" });
  const form = new FormData();
  await client.fetch("http://core/form", { redirect: "manual", method: "POST", body: form });
  assert.deepEqual(handed, [
    "https://core/x",
    "http://core/follow",
    "Request http://core/request",
    "http://core/form",
  ]);
  await withRaw(answering(() => ok("ok")), async ({ url, backend, fetch }) => {
    const injected = await fetch(url, { headers: { "x-a": "1\r\nx-b: 2" } }).catch((e) => e);
    assert.ok(injected instanceof TypeError);
    const getBody = await fetch(url, { body: "x" }).catch((e) => e);
    assert.ok(getBody instanceof TypeError);
    await sleep(20);
    assert.equal(backend.accepted(), 0);
  });
});

Deno.test("http1Fetch: the Core double answers through it as through fetch; a streamed PUT arrives whole", async () => {
  const core = await startCoreSim();
  const client = createHttp1Client();
  try {
    const creds = { baseUrl: core.url, token: core.token };
    const pooled = createCoreClient(creds, { fetch: client.fetch, timeoutMs: 5000 });
    const plain = createCoreClient(creds, { fetch, timeoutMs: 5000 });
    assert.deepEqual(await pooled.getNote(W.locReef), await plain.getNote(W.locReef));
    assert.deepEqual(
      await pooled.search("#lore"),
      await plain.search("#lore"),
    );
    await assert.rejects(pooled.getNote("noSuchNote01"), { status: 404 });
    const line = "<p>a line of lore, sent in pieces</p>\n";
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent++ === 2000) return c.close();
        c.enqueue(enc.encode(line));
      },
    });
    await pooled.putContent(W.locReef, body, "text/plain");
    assert.equal(await pooled.contentText(W.locReef), line.repeat(2000));
    const content = await pooled.content(W.locReef);
    assert.equal((await content.text()).length, line.length * 2000);
  } finally {
    client.closeIdle();
    await core.close();
  }
});

Deno.test("http1Fetch: the Parser double's event stream arrives event by event", async () => {
  const core = await startCoreSim();
  let sent = 0;
  const time = manualDeadlines(); // the double paces its events on the test's clock
  const parser = await startParserSim({
    core: { url: core.url, token: core.token },
    brainDump: { paceMs: 30, onStreamEvent: () => sent++ },
    deadlines: time,
  });
  const client = createHttp1Client();
  try {
    const res = await client.fetch(`${parser.url}/brain-dump/stream`, {
      redirect: "manual",
      method: "POST",
      headers: {
        authorization: `Bearer ${parser.ownerToken()}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ rawText: "Captain Orla Venn sails from Saltmarrow Harbor." }),
    });
    assert.equal(res.headers.get("content-type")?.startsWith("text/event-stream"), true);
    let text = "";
    let sentWhenFirstArrived = 0;
    const reading = (async () => {
      for await (const chunk of res.body!) {
        text += dec.decode(chunk, { stream: true });
        if (!sentWhenFirstArrived && text.includes("\n\n")) sentWhenFirstArrived = sent;
      }
    })();
    // One paced event each time the test lets the pace pass, once every event sent is in hand:
    // were the stream buffered, the first would never arrive while the double waits.
    const received = () =>
      text.split("\n\n").slice(0, -1).filter((e) => e.startsWith("event: ")).length;
    await answerMovingTime(time, reading, () => time.pendingOf(30) === 1 && received() === sent);
    assert.match(text, /event: done\n/);
    assert.ok(sent >= 3, `${sent} events`);
    assert.equal(sentWhenFirstArrived, 1, "the first event arrived before the second was sent");
  } finally {
    client.closeIdle();
    await parser.close();
    await core.close();
  }
});

Deno.test("http1Fetch: UPSTREAM_CLIENT=pooled serves a pass-through route through it", async () => {
  sharedHttp1Client().closeIdle(); // only this test's connections count
  const h = await startHarness({ env: { UPSTREAM_CLIENT: "pooled" } });
  try {
    const { status, body } = await h.requestJson(`/api/lore/${W.locReef}`);
    assert.equal(status, 200);
    assert.equal(body.noteId, W.locReef);
    const calls = h.core.requests.filter((r) => r.path === `/etapi/notes/${W.locReef}`);
    assert.ok(calls.length > 0);
    // the app's Core calls went through the pooled client: their connection waits in its pool
    assert.ok(sharedHttp1Client().idleConnections() > 0, "no pooled connection");
  } finally {
    await h.close();
    sharedHttp1Client().closeIdle();
  }
});
