// Tests of response reading: framings, interim answers, malformed answers and connections that fail
// mid-body.
import assert from "node:assert/strict";
import net from "node:net";
import { ApiError } from "../../http/errors.ts";
import { readBodyText, upstreamFetch } from "../fetch.ts";
import { createHttp1Client } from "./client.ts";
import {
  answering,
  dec,
  enc,
  failure,
  ok,
  requestReader,
  withRaw,
  write,
} from "../../../tests/helpers/http1_raw_backend.ts";

Deno.test("http1Fetch: a chunked answer dribbled byte by byte arrives whole, trailers dropped", async () => {
  const answer = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
    "3;ext=1\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nX-Trailer: t\r\n\r\n";
  await withRaw(async (conn) => {
    const next = requestReader(conn);
    for (let req = await next(); req; req = await next()) {
      for (const byte of enc.encode(answer)) await write(conn, new Uint8Array([byte]));
    }
  }, async ({ url, backend, fetch }) => {
    assert.equal(await (await fetch(url)).text(), "abc0123456789abcdef");
    assert.equal(await (await fetch(url)).text(), "abc0123456789abcdef");
    assert.equal(backend.accepted(), 1);
  });
});

Deno.test("http1Fetch: a body read to the close, or after Connection: close, ends its connection", async () => {
  await withRaw(async (conn, index) => {
    const next = requestReader(conn);
    await next();
    await write(
      conn,
      index % 2 === 0
        ? "HTTP/1.1 200 OK\r\n\r\nuntil the end"
        : ok("last one", "Connection: close\r\n"),
    );
  }, async ({ url, backend, fetch }) => {
    assert.equal(await (await fetch(url)).text(), "until the end");
    assert.equal(await (await fetch(url)).text(), "last one");
    assert.equal(await (await fetch(url)).text(), "until the end");
    assert.equal(backend.accepted(), 3);
  });
});

Deno.test("http1Fetch: interim answers skipped, Set-Cookie kept apart, no body for HEAD, 204 and 304", async () => {
  const answers = [
    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" +
    ok("cookies", "Set-Cookie: a=1; Path=/\r\nSet-Cookie: b=2\r\n"),
    "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n",
    "HTTP/1.1 204 No Content\r\n\r\n",
    'HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\nContent-Length: 50\r\n\r\n',
    ok("still in step"),
  ];
  await withRaw(answering(() => answers.shift()!), async ({ url, backend, fetch }) => {
    const cookies = await fetch(url);
    assert.equal(cookies.status, 200);
    assert.deepEqual(cookies.headers.getSetCookie(), ["a=1; Path=/", "b=2"]);
    assert.equal(await cookies.text(), "cookies");
    const head = await fetch(url, { method: "HEAD" });
    assert.equal(head.headers.get("content-length"), "1000");
    assert.equal(await head.text(), "");
    const none = await fetch(url);
    assert.equal(none.status, 204);
    assert.equal(none.body, null);
    const same = await fetch(url, { headers: { "if-none-match": '"v1"' } });
    assert.equal(same.status, 304);
    assert.equal(same.body, null);
    assert.equal(await (await fetch(url)).text(), "still in step");
    assert.equal(backend.accepted(), 1);
  });
});

Deno.test("http1Fetch: bytes after a complete answer are not trusted: that connection is closed", async () => {
  await withRaw(
    answering(() => ok("one") + "HTTP/1.1 200 OK\r\n"),
    async ({ url, backend, fetch }) => {
      assert.equal(await (await fetch(url)).text(), "one");
      assert.equal(await (await fetch(url)).text(), "one");
      assert.equal(backend.accepted(), 2);
    },
  );
});

Deno.test("http1Fetch: malformed answers fail like fetch's network errors, mapped to 502", async () => {
  const bad = [
    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
    "HTTP/1.1 200 OK\r\nX-A: 1\r\n folded\r\nContent-Length: 0\r\n\r\n",
    "HTTP/1.1 200 OK\r\nX-A : 1\r\nContent-Length: 0\r\n\r\n",
    "HTTP/1.1 600 Odd\r\nContent-Length: 0\r\n\r\n",
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n",
    "HTTP/2 200\r\n\r\n",
    "garbage\r\n\r\n",
    `HTTP/1.1 200 OK\r\nX-Big: ${"a".repeat(70_000)}\r\nContent-Length: 0\r\n\r\n`,
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
  ];
  for (const answer of bad) {
    await withRaw(answering(() => answer), async ({ url, backend, client, fetch }) => {
      const e = await failure(fetch(url));
      assert.ok(e instanceof TypeError, `${answer.slice(0, 60)}: ${e}`);
      assert.match(e.message, /^invalid HTTP response: /);
      const err = await upstreamFetch({ fetch: client.fetch, timeoutMs: 5000 }, "Core", url, {
        path: "/etapi/app-info",
      }).then((up) => readBodyText(up, {}, "Core", 1 << 20)).catch((e) => e);
      assert.ok(err instanceof ApiError);
      assert.equal(err.status, 502);
      // a connection that answered badly is never reused
      assert.equal(backend.accepted(), 2, answer.slice(0, 60));
    });
  }
});

Deno.test("http1Fetch: a close mid-body errors the body; readBodyText makes it a 502", async () => {
  await withRaw(async (conn) => {
    await requestReader(conn)();
    await write(conn, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten..");
  }, async ({ url, client, fetch }) => {
    const res = await fetch(url);
    assert.equal(res.status, 200);
    const e = await res.text().catch((e) => e);
    assert.ok(e instanceof TypeError);
    assert.equal(e.message, "connection closed before message completed");
    const up = await upstreamFetch({ fetch: client.fetch, timeoutMs: 5000 }, "Core", url, {
      path: "/x",
    });
    await assert.rejects(readBodyText(up, {}, "Core", 1 << 20), {
      status: 502,
      message: "Core dropped the connection mid-response",
    });
  });
});

Deno.test("http1Fetch: a reset mid-body errors the body stream with a TypeError", async () => {
  // node:net can reset a connection (SO_LINGER 0); Deno.Conn only closes it
  let readFirst = () => {};
  const firstRead = new Promise<void>((r) => readFirst = r);
  const server = net.createServer((socket) => {
    socket.write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\nfirst part");
    firstRead.then(() => socket.resetAndDestroy());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as net.AddressInfo;
  const client = createHttp1Client();
  try {
    const res = await client.fetch(`http://127.0.0.1:${port}/`, { redirect: "manual" });
    const reader = res.body!.getReader();
    assert.equal(dec.decode((await reader.read()).value), "first part");
    readFirst();
    const e = await reader.read().catch((e) => e);
    assert.ok(e instanceof TypeError, String(e));
    assert.equal(e.message, "connection reset by peer");
  } finally {
    client.closeIdle();
    await new Promise((r) => server.close(r));
  }
});
