/** The conformance client: cookies kept like a browser's, rate limits waited out. */
import assert from "node:assert/strict";
import { serviceClient } from "./kit.ts";

Deno.test("conformance client: keeps cookies, drops expired ones, waits out a 429 once", async () => {
  let calls = 0;
  const seen: (string | null)[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    calls++;
    seen.push(req.headers.get("cookie"));
    const path = new URL(req.url).pathname;
    if (path === "/limited" && calls === 1) {
      return new Response("{}", { status: 429, headers: { "retry-after": "1" } });
    }
    const headers = new Headers();
    if (path === "/login") headers.append("set-cookie", "a=1; Path=/; HttpOnly");
    if (path === "/logout") headers.append("set-cookie", "a=; Path=/; Max-Age=0");
    return new Response("{}", { headers });
  });
  try {
    const url = `http://127.0.0.1:${server.addr.port}`;
    // a budget far above the one wait (Retry-After: 1), so a slow first answer cannot use it up;
    // the wait is recorded, not slept: what matters is how long the client means to wait
    const waits: number[] = [];
    const sleep = (ms: number) => {
      waits.push(ms);
      return Promise.resolve();
    };
    const api = serviceClient(url, { cookies: true, rateLimitWaitMs: 60_000, sleep });
    assert.equal((await api.call("GET", "/limited")).status, 200);
    assert.deepEqual(waits, [1_000], "one wait, as long as Retry-After said");
    assert.equal(calls, 2, "the 429 was sent again after Retry-After");
    await api.call("POST", "/login");
    await api.call("GET", "/x");
    assert.equal(seen.at(-1), "a=1");
    await api.call("POST", "/logout");
    await api.call("GET", "/x");
    assert.equal(seen.at(-1), null);
    assert.equal(api.cookies.size, 0);
    const impatient = serviceClient(url, { sleep });
    calls = 0;
    assert.equal((await impatient.call("GET", "/limited")).status, 429, "no wait by default");
    assert.equal(waits.length, 1, "the impatient client did not wait");
  } finally {
    await server.shutdown();
  }
});
