import assert from "node:assert/strict";
import net from "node:net";
import { startCoreSim } from "../../sims/core.ts";
import { startParserSim } from "../../sims/parser.ts";
import { W } from "../../sims/world.ts";
import { REFUSED_URL, startHarness } from "../../tests/helpers/harness.ts";
import {
  answerMovingTime,
  HANG_GUARD_MS,
  manualDeadlines,
} from "../../tests/helpers/manual_deadlines.ts";
import { ApiError } from "../http/errors.ts";
import { createCoreClient } from "./core.ts";
import { readBodyText, upstreamFetch } from "./fetch.ts";
import { createHttp1Client, type Http1Client, sharedHttp1Client } from "./http1_fetch.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

// --- a raw TCP backend whose every byte a test chooses ----------------------------------------

/** One request as a raw backend read it. */
interface RawRequest {
  head: string;
  /** Lower-cased field names. */
  fields: Map<string, string>;
  body: Uint8Array;
}

/** Reads requests off a connection one at a time (null once the client closed it). */
function requestReader(conn: Deno.Conn) {
  let buf = new Uint8Array(0);
  const more = async () => {
    const chunk = new Uint8Array(64 * 1024);
    const n = await conn.read(chunk);
    if (n === null) return false;
    const next = new Uint8Array(buf.length + n);
    next.set(buf);
    next.set(chunk.subarray(0, n), buf.length);
    buf = next;
    return true;
  };
  const take = (n: number) => {
    const out = buf.slice(0, n);
    buf = buf.slice(n);
    return out;
  };
  const line = async () => {
    for (;;) {
      const at = dec.decode(buf).indexOf("\r\n");
      if (at !== -1) return dec.decode(take(at + 2)).slice(0, -2);
      if (!(await more())) throw new Error("closed mid-request");
    }
  };
  return async (): Promise<RawRequest | null> => {
    const lines: string[] = [];
    try {
      for (let l = await line(); l !== ""; l = await line()) lines.push(l);
    } catch {
      return null;
    }
    const fields = new Map(
      lines.slice(1).map((l) => {
        const at = l.indexOf(":");
        return [l.slice(0, at).toLowerCase(), l.slice(at + 1).trim()];
      }),
    );
    const parts: Uint8Array[] = [];
    const read = async (n: number) => {
      while (buf.length < n) if (!(await more())) throw new Error("closed mid-body");
      parts.push(take(n));
    };
    if (fields.get("transfer-encoding") === "chunked") {
      for (let size = parseInt(await line(), 16); size; size = parseInt(await line(), 16)) {
        await read(size);
        await line();
      }
      await line();
    } else {
      await read(Number(fields.get("content-length") ?? 0));
    }
    const body = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    parts.reduce((at, p) => (body.set(p, at), at + p.length), 0);
    return { head: lines.join("\r\n"), fields, body };
  };
}

/** A backend speaking raw TCP: `serve` handles each connection (numbered from 0). */
interface RawBackend {
  url: string;
  /** Connections accepted so far. */
  accepted(): number;
  /** Connections the client has closed (seen as the end of the stream by `untilClosed`). */
  closedByClient: number;
}

/** Resolves when the client closes the connection (reading and dropping what it sends). */
async function untilClosed(conn: Deno.Conn, backend: RawBackend): Promise<void> {
  const sink = new Uint8Array(64 * 1024);
  try {
    while ((await conn.read(sink)) !== null) { /* drop */ }
  } catch {
    // a reset is a close too
  }
  backend.closedByClient++;
}

const write = async (conn: Deno.Conn, data: string | Uint8Array) => {
  const bytes = typeof data === "string" ? enc.encode(data) : data;
  for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
};

const ok = (body: string, fields = "") =>
  `HTTP/1.1 200 OK\r\n${fields}Content-Length: ${enc.encode(body).length}\r\n\r\n${body}`;

/** Answers every request of every connection with `answer(request, connection index)`. */
const answering = (answer: (req: RawRequest, index: number) => string) =>
async (
  conn: Deno.TcpConn,
  index: number,
) => {
  const next = requestReader(conn);
  for (let req = await next(); req; req = await next()) await write(conn, answer(req, index));
};

/**
 * Runs `fn` against a raw backend and a fresh client (`fetch` adds `redirect: "manual"`, as the
 * service's calls do); closes both afterwards.
 */
async function withRaw(
  serve: (conn: Deno.TcpConn, index: number, backend: RawBackend) => Promise<void>,
  fn: (t: {
    url: string;
    backend: RawBackend;
    client: Http1Client;
    fetch: (url: string, init?: RequestInit) => Promise<Response>;
  }) => Promise<void>,
  opts: Parameters<typeof createHttp1Client>[0] = {},
): Promise<void> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.TcpConn>();
  const handlers: Promise<void>[] = [];
  let accepted = 0;
  const backend: RawBackend = {
    url: `http://127.0.0.1:${listener.addr.port}`,
    accepted: () => accepted,
    closedByClient: 0,
  };
  const loop = (async () => {
    for await (const conn of listener) {
      conns.add(conn);
      const handled = serve(conn, accepted++, backend).catch(() => {}).finally(() => {
        conns.delete(conn);
        try {
          conn.close();
        } catch {
          // the handler closed it
        }
      });
      handlers.push(handled);
    }
  })().catch(() => {});
  const client = createHttp1Client(opts);
  try {
    await fn({
      url: backend.url,
      backend,
      client,
      fetch: (url, init) => client.fetch(url, { redirect: "manual", ...init }),
    });
  } finally {
    client.closeIdle();
    listener.close();
    for (const c of conns) {
      try {
        c.close();
      } catch {
        // already closed
      }
    }
    await loop;
    await Promise.all(handlers);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until `check` holds (the other side of a socket acts asynchronously), under the hang
 * guard only: a busy machine makes it slower, never false.
 */
async function eventually(check: () => boolean, what: string): Promise<void> {
  const until = performance.now() + HANG_GUARD_MS;
  while (!check() && performance.now() < until) await sleep(10);
  assert.ok(check(), what);
}

/** The rejection of `p` (or of reading its body), or null when both succeed. */
async function failure(p: Promise<Response>): Promise<unknown> {
  try {
    await (await p).arrayBuffer();
    return null;
  } catch (e) {
    return e;
  }
}

// --- framing and reuse ------------------------------------------------------------------------

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

Deno.test("http1Fetch: a head near its limit and a large body arrive whole through a buffer that grows", async () => {
  // a connection's read buffer starts at a few KiB (a slow upload's connection holds no more)
  const big = "h".repeat(60_000);
  const body = "b".repeat(1024 * 1024 + 3);
  await withRaw(
    answering(() =>
      `HTTP/1.1 200 OK\r\nX-Big: ${big}\r\nContent-Length: ${body.length}\r\n\r\n${body}`
    ),
    async ({ url, backend, fetch }) => {
      for (let i = 0; i < 2; i++) {
        const res = await fetch(url);
        assert.equal(res.headers.get("x-big"), big);
        assert.equal(await res.text(), body);
      }
      assert.equal(backend.accepted(), 1, "the connection was pooled and used again");
    },
  );
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

// --- connections that fail --------------------------------------------------------------------

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

Deno.test("http1Fetch: refused connections and unknown hosts are TypeErrors naming the class, never the URL", async () => {
  const port = new URL(REFUSED_URL).port;
  const client = createHttp1Client();
  const refused = await client.fetch(`${REFUSED_URL}/etapi/x`, { redirect: "manual" })
    .catch((e) => e);
  assert.ok(refused instanceof TypeError);
  assert.equal(refused.message, "connection refused");
  const down = upstreamFetch(
    { fetch: client.fetch, timeoutMs: 5000 },
    "Core",
    `http://127.0.0.1:${port}`,
    {
      path: "/etapi/app-info",
    },
  );
  await assert.rejects(down, { status: 503, message: "Core is unreachable" });
  // the resolver's answer is the test's: what `Deno.connect` throws for a name that does not
  // resolve (this machine's resolver may be slow, or not answer at all)
  const unresolvable = createHttp1Client({
    connect: () =>
      Promise.reject(new Error("failed to lookup address information: Name or service not known")),
  });
  const dns = await unresolvable.fetch("http://no-such-host.invalid/", { redirect: "manual" })
    .catch((e) => e);
  assert.ok(dns instanceof TypeError);
  assert.match(dns.message, /^dns error/);
  assert.equal(String(dns).includes("no-such-host"), false);
  const credentials = await client.fetch(`http://user:s3cret@127.0.0.1:${port}/`, {
    redirect: "manual",
  }).catch((e) => e);
  assert.ok(credentials instanceof TypeError);
  assert.equal(String(credentials).includes("s3cret"), false);
});

Deno.test("http1Fetch: a kept connection the backend closed while idle is not used", async () => {
  await withRaw(async (conn) => {
    await requestReader(conn)();
    await write(conn, ok("then I close"));
    await sleep(10);
    conn.close();
  }, async ({ url, backend, client, fetch }) => {
    assert.equal(await (await fetch(url)).text(), "then I close");
    await eventually(() => client.idleConnections() === 0, "the pool noticed the close");
    // not idempotent, so never retried: it only works when the dead connection was noticed
    assert.equal(await (await fetch(url, { method: "POST", body: "x" })).text(), "then I close");
    assert.equal(backend.accepted(), 2);
  });
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

// --- aborts -----------------------------------------------------------------------------------

Deno.test("http1Fetch: an abort while waiting for the head rejects with the signal's reason and closes", async () => {
  await withRaw(async (conn, _i, backend) => {
    await requestReader(conn)();
    await untilClosed(conn, backend); // a slow backend: it never answers
  }, async ({ url, backend, fetch }) => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const e = await fetch(url, { signal: ac.signal }).catch((e) => e);
    assert.ok(e instanceof DOMException);
    assert.equal(e.name, "AbortError");
    await eventually(() => backend.closedByClient === 1, "the connection was closed");
    const timeout = new AbortController();
    setTimeout(() => timeout.abort(new DOMException("deadline", "TimeoutError")), 50);
    const t = await fetch(url, { signal: timeout.signal }).catch((e) => e);
    assert.equal(t.name, "TimeoutError");
    const before = backend.accepted();
    const early = await fetch(url, { signal: AbortSignal.abort() }).catch((e) => e);
    assert.equal(early.name, "AbortError");
    await sleep(50);
    assert.equal(backend.accepted(), before); // aborted before connecting: nothing was sent
  });
});

Deno.test("http1Fetch: an abort or a cancel mid-body ends the connection instead of pooling it", async () => {
  await withRaw(async (conn, _i, backend) => {
    await requestReader(conn)();
    await write(conn, "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\nthe start");
    await untilClosed(conn, backend);
  }, async ({ url, backend, fetch }) => {
    const ac = new AbortController();
    const reader = (await fetch(url, { signal: ac.signal })).body!.getReader();
    assert.equal(dec.decode((await reader.read()).value), "the start");
    ac.abort();
    const e = await reader.read().catch((e) => e);
    assert.equal(e.name, "AbortError");
    await eventually(() => backend.closedByClient === 1, "the aborted connection was closed");
    const cancelled = (await fetch(url)).body!.getReader();
    assert.equal(dec.decode((await cancelled.read()).value), "the start");
    await cancelled.cancel();
    await eventually(() => backend.closedByClient === 2, "the cancelled connection was closed");
    assert.equal(backend.accepted(), 2);
  });
});

Deno.test("http1Fetch: an abort while a streamed body is being sent cancels the body", async () => {
  let cancelled: unknown = null;
  await withRaw(async (conn, _i, backend) => {
    await untilClosed(conn, backend);
  }, async ({ url, fetch, backend }) => {
    const ac = new AbortController();
    const body = new ReadableStream<Uint8Array>({
      pull: async (c) => {
        await sleep(10);
        c.enqueue(new Uint8Array(1024));
      },
      cancel: (reason) => void (cancelled = reason),
    });
    setTimeout(() => ac.abort(), 50);
    const e = await fetch(url, { method: "PUT", body, signal: ac.signal }).catch((e) => e);
    assert.equal(e.name, "AbortError");
    await eventually(() => cancelled !== null, "the body was cancelled");
    await eventually(() => backend.closedByClient === 1, "the connection was closed");
  });
});

// --- the pool ---------------------------------------------------------------------------------

Deno.test("http1Fetch: idle connections are bounded per origin and closed after the idle timeout", async () => {
  // answers only once three requests are in, so the three calls overlap however slow the machine
  let arrived = 0;
  let allIn = () => {};
  const three = new Promise<void>((r) => allIn = r);
  const serve = async (conn: Deno.TcpConn, _i: number, backend: RawBackend) => {
    const next = requestReader(conn);
    for (let req = await next(); req; req = await next()) {
      if (++arrived === 3) allIn();
      await three;
      await write(conn, ok("ok"));
    }
    backend.closedByClient++;
  };
  // an idle timeout out of reach: the kept connection is reused, whenever the next call comes
  await withRaw(serve, async ({ url, backend, fetch }) => {
    await Promise.all([1, 2, 3].map(async () => await (await fetch(url)).text()));
    assert.equal(backend.accepted(), 3);
    await eventually(() => backend.closedByClient === 2, "all but one idle connection closed");
    await (await fetch(url)).text();
    assert.equal(backend.accepted(), 3); // the kept one was reused
  }, { maxIdlePerOrigin: 1, idleTimeoutMs: 600_000 });
  // a short one: the idle connection is closed once it passes
  arrived = 3;
  await withRaw(serve, async ({ url, backend, fetch }) => {
    await (await fetch(url)).text();
    await eventually(() => backend.closedByClient === 1, "the idle one timed out");
    await (await fetch(url)).text();
    assert.equal(backend.accepted(), 2);
  }, { maxIdlePerOrigin: 1, idleTimeoutMs: 300 });
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

// --- against the doubles ----------------------------------------------------------------------

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
