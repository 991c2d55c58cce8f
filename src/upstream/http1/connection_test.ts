// Tests of a connection: its growing read buffer, and the errors of one that cannot be opened.
import assert from "node:assert/strict";
import { REFUSED_URL } from "../../../tests/helpers/harness.ts";
import { upstreamFetch } from "../fetch.ts";
import { createHttp1Client } from "./client.ts";
import { answering, withRaw } from "../../../tests/helpers/http1_raw_backend.ts";

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
