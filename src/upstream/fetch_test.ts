import assert from "node:assert/strict";
import { REFUSED_URL } from "../../tests/helpers/harness.ts";
import { eventually, manualDeadlines } from "../../tests/helpers/manual_deadlines.ts";
import { ApiError } from "../http/errors.ts";
import { ClientAbortError, readBodyText, upstreamFetch } from "./fetch.ts";

/**
 * The deadlines of calls whose test is not about time: a clock that never moves, so a slow
 * machine can never turn their answer into a timeout.
 */
const still = manualDeadlines();

/** A tiny local backend whose behaviour each test chooses. */
async function withBackend(
  handler: (req: Request) => Response | Promise<Response>,
  fn: (url: string) => Promise<void>,
) {
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen() {} },
    handler,
  );
  try {
    await fn(`http://127.0.0.1:${server.addr.port}`);
  } finally {
    ac.abort();
    await server.finished;
  }
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((r) => {
    const t = setTimeout(r, ms);
    signal?.addEventListener("abort", () => (clearTimeout(t), r()));
  });

Deno.test("upstreamFetch: a backend that never answers gives 504 naming the service, not its address", async () => {
  let asked = false;
  await withBackend(async (req) => {
    asked = true;
    await sleep(60_000, req.signal); // until the call gives up
    return new Response("late");
  }, async (url) => {
    const time = manualDeadlines();
    const call = upstreamFetch({ fetch, deadlines: time, timeoutMs: 100 }, "Core", url, {
      path: "/x",
    });
    await eventually("the backend holds the call", () => asked);
    time.advance(100);
    const err = await call.catch((e) => e);
    assert.ok(err instanceof ApiError);
    assert.equal(err.status, 504);
    assert.equal(err.code, "UPSTREAM_TIMEOUT");
    assert.equal(err.message, "Core did not answer in time");
  });
});

Deno.test("upstreamFetch: an unreachable backend gives 503 without the network error's text", async () => {
  const err = await upstreamFetch(
    { fetch, deadlines: still, timeoutMs: 1000 },
    "Core",
    "http://127.0.0.1:9",
    {
      path: "/x",
    },
  )
    .catch((e) => e);
  assert.ok(err instanceof ApiError);
  assert.equal(err.status, 503);
  assert.equal(err.code, "UNREACHABLE");
  assert.ok(!JSON.stringify(err.details).includes("127.0.0.1"));
  assert.ok(!err.message.includes("127.0.0.1"));
});

Deno.test("upstreamFetch: the client's abort cancels the upstream call", async () => {
  let upstreamSawAbort = false;
  await withBackend(async (req) => {
    await sleep(60_000, req.signal);
    upstreamSawAbort = req.signal.aborted;
    return new Response("late");
  }, async (url) => {
    const client = new AbortController();
    setTimeout(() => client.abort(), 50);
    const err = await upstreamFetch(
      { fetch, deadlines: still, timeoutMs: 5000, signal: client.signal },
      "Core",
      url,
      {
        path: "/x",
      },
    ).catch((e) => e);
    assert.ok(err instanceof ClientAbortError);
    await eventually("the backend's request was aborted", () => upstreamSawAbort);
  });
});

Deno.test("upstreamFetch: streamed calls stop the deadline at the head; buffered reads keep it", async () => {
  // the rest of each body comes once the test has let the deadline's time pass
  let sendRest = () => {};
  await withBackend(() => {
    const body = new ReadableStream<Uint8Array>({
      async start(c) {
        c.enqueue(new TextEncoder().encode("a"));
        await new Promise<void>((r) => sendRest = r);
        c.enqueue(new TextEncoder().encode("b"));
        c.close();
      },
    });
    return new Response(body);
  }, async (url) => {
    const time = manualDeadlines();
    const deps = { fetch, deadlines: time, timeoutMs: 100 };
    const streamed = await upstreamFetch(deps, "Core", url, { path: "/", stream: true });
    assert.equal(time.pending(), 0, "the head arrived: no deadline runs");
    time.advance(250);
    sendRest();
    assert.equal(await streamed.res.text(), "ab");
    const buffered = await upstreamFetch(deps, "Core", url, { path: "/" });
    const reading = readBodyText(buffered, {}, "Core", 1000).catch((e) => e);
    time.advance(250);
    const err = await reading;
    assert.equal(err.status, 504);
    sendRest();
  });
});

Deno.test("upstreamFetch: a streamed call whose deadline passes as its head comes in is a 504", async () => {
  const time = manualDeadlines();
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({ cancel: () => void (cancelled = true) });
  const headJustLate = () => {
    time.advance(100); // the deadline passes while the head is on its way
    return Promise.resolve(new Response(body));
  };
  const failures: string[] = [];
  const deps = {
    fetch: headJustLate,
    deadlines: time,
    timeoutMs: 100,
    onFailure: (_: string, reason: string) => failures.push(reason),
  };
  const err = await upstreamFetch(deps, "Core", "http://core", { path: "/x", stream: true })
    .catch((e) => e);
  assert.ok(err instanceof ApiError);
  assert.deepEqual([err.status, err.code], [504, "UPSTREAM_TIMEOUT"]);
  assert.deepEqual(failures, ["timeout"]);
  await eventually("the body nobody will read is cancelled", () => cancelled);
});

Deno.test("readBodyText: oversized upstream bodies are refused", async () => {
  await withBackend(() => new Response("x".repeat(5000)), async (url) => {
    const up = await upstreamFetch({ fetch, deadlines: still, timeoutMs: 1000 }, "Core", url, {
      path: "/",
    });
    const err = await readBodyText(up, {}, "Core", 100).catch((e) => e);
    assert.equal(err.status, 502);
  });
});

Deno.test("readBodyText: a small compressed body that inflates past the bound is refused", async () => {
  // 100 KiB of zeros compress to about 100 bytes: the declared length is far below the bound
  const inflated = new TextEncoder().encode("0".repeat(100 * 1024));
  const gzipped = new Uint8Array(
    await new Response(new Blob([inflated]).stream().pipeThrough(new CompressionStream("gzip")))
      .arrayBuffer(),
  );
  await withBackend(
    () =>
      new Response(gzipped, {
        headers: { "content-encoding": "gzip", "content-length": String(gzipped.length) },
      }),
    async (url) => {
      // a caller that asks for compression gets it decoded by fetch, and counted as it inflates
      const up = await upstreamFetch({ fetch, deadlines: still, timeoutMs: 1000 }, "Core", url, {
        path: "/",
        headers: { "accept-encoding": "gzip" },
      });
      assert.ok(Number(up.res.headers.get("content-length")) < 1000, "declared small");
      const err = await readBodyText(up, {}, "Core", 1000).catch((e) => e);
      assert.equal(err.status, 502);
      assert.equal(err.message, "Core sent an oversized response");
    },
  );
});

Deno.test("upstreamFetch: backends are asked for uncompressed answers", async () => {
  const seen: (string | null)[] = [];
  await withBackend((req) => {
    seen.push(req.headers.get("accept-encoding"));
    return new Response("{}");
  }, async (url) => {
    const cases: (Record<string, string> | undefined)[] = [
      undefined,
      { authorization: "t" },
      { "accept-encoding": "gzip" },
    ];
    for (const headers of cases) {
      const up = await upstreamFetch({ fetch, deadlines: still, timeoutMs: 1000 }, "Core", url, {
        path: "/",
        headers,
      });
      await up.res.body?.cancel();
      up.release();
    }
  });
  assert.deepEqual(seen, ["identity", "identity", "gzip"]);
});

Deno.test("upstreamFetch: query values are encoded and timing is reported", async () => {
  let seen = "";
  await withBackend((req) => {
    seen = new URL(req.url).search;
    return new Response("{}");
  }, async (url) => {
    const timings: number[] = [];
    const up = await upstreamFetch(
      { fetch, deadlines: still, timeoutMs: 1000, onTiming: (ms) => timings.push(ms) },
      "Core",
      url,
      {
        path: "/etapi/notes",
        query: { search: '#lore note.title *=* "a&b"', fastSearch: true, limit: undefined },
      },
    );
    await up.res.body?.cancel();
    up.release();
    assert.equal(new URLSearchParams(seen).get("search"), '#lore note.title *=* "a&b"');
    assert.equal(new URLSearchParams(seen).get("fastSearch"), "true");
    assert.ok(!new URLSearchParams(seen).has("limit"));
    assert.equal(timings.length, 1);
  });
});

Deno.test("upstreamFetch: an upload that keeps sending is not cut off by the deadline", async () => {
  await withBackend(
    async (req) => new Response(String((await req.arrayBuffer()).byteLength)),
    async (url) => {
      const time = manualDeadlines();
      // each chunk goes out 60 ms after the one before: 6 × 60 ms, far past the 100 ms deadline
      let allowed = 0;
      let sent = 0;
      let wake = () => {};
      const allow = () => {
        allowed++;
        wake();
      };
      const body = new ReadableStream<Uint8Array>({
        async pull(c) {
          while (sent === allowed) await new Promise<void>((r) => wake = r);
          if (sent++ === 6) c.close();
          else c.enqueue(new Uint8Array(1000));
        },
      });
      const answer = upstreamFetch({ fetch, deadlines: time, timeoutMs: 100 }, "Core", url, {
        method: "PUT",
        path: "/",
        body,
      }).then((up) => readBodyText(up, {}, "Core", 100));
      for (let i = 0; i < 6; i++) {
        const restarts = time.setAt(100).length;
        time.advance(60);
        allow();
        await eventually(
          `chunk ${i + 1} restarts the deadline`,
          () => time.setAt(100).length > restarts,
        );
      }
      allow();
      assert.equal(await answer, "6000");
      assert.ok(time.now() >= 360);
    },
  );
});

Deno.test("readBodyText: a declared oversized body is refused unread; an undeclared one at the cap", async () => {
  let pulled = 0;
  let cancelled = false;
  await withBackend((req) => {
    if (new URL(req.url).pathname === "/declared") {
      return new Response("x".repeat(5000), { headers: { "content-length": "5000" } });
    }
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (pulled++ < 10_000) c.enqueue(new Uint8Array(1024));
        else c.close();
      },
      cancel() {
        cancelled = true;
      },
    });
    return new Response(body);
  }, async (url) => {
    const declared = await upstreamFetch(
      { fetch, deadlines: still, timeoutMs: 1000 },
      "Core",
      url,
      {
        path: "/declared",
      },
    );
    const e1 = await readBodyText(declared, {}, "Core", 100).catch((e) => e);
    assert.equal(e1.status, 502);
    assert.equal(e1.code, "UPSTREAM_ERROR");
    const endless = await upstreamFetch({ fetch, deadlines: still, timeoutMs: 5000 }, "Core", url, {
      path: "/",
    });
    const e2 = await readBodyText(endless, {}, "Core", 4096).catch((e) => e);
    assert.equal(e2.status, 502);
    await eventually("the backend's body was cancelled, not read to the end", () => cancelled);
    assert.ok(pulled < 10_000);
  });
});

/** A raw TCP backend that answers every request with `answer` (or resets when null). */
async function withRawBackend(
  answer: string | null,
  fn: (url: string) => Promise<void>,
) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const serving = (async () => {
    for await (const conn of listener) {
      await conn.read(new Uint8Array(64 * 1024)).catch(() => null);
      if (answer !== null) await conn.write(new TextEncoder().encode(answer)).catch(() => 0);
      conn.close();
    }
  })();
  try {
    await fn(`http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`);
  } finally {
    listener.close();
    await serving.catch(() => {});
  }
}

Deno.test("upstreamFetch: a backend that answers with no HTTP at all is a 502, not unreachable", async () => {
  for (const answer of ["<html>not http\x00\xff</html>\r\n\r\n", null]) {
    await withRawBackend(answer, async (url) => {
      const err = await upstreamFetch({ fetch, deadlines: still, timeoutMs: 2000 }, "Core", url, {
        path: "/x",
      })
        .catch((e) => e);
      assert.ok(err instanceof ApiError, String(err));
      assert.equal(err.status, 502, JSON.stringify(answer));
      assert.equal(err.code, "UPSTREAM_ERROR");
      assert.ok(!err.message.includes("127.0.0.1") && !err.message.includes("html"));
    });
  }
});

Deno.test("upstreamFetch: a closed port is unreachable (503)", async () => {
  const url = REFUSED_URL;
  const err = await upstreamFetch({ fetch, deadlines: still, timeoutMs: 2000 }, "Parser", url, {
    path: "/",
  })
    .catch((e) => e);
  assert.equal(err.status, 503);
  assert.equal(err.code, "UNREACHABLE");
});
