// Tests of reading a response head strictly: fields, framing, keep-alive, and what is refused.
import assert from "node:assert/strict";
import { headEnd, parseResponseHead } from "./response_head.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

Deno.test("parseResponseHead: fields kept in order and repeated, framing and keep-alive read", () => {
  const head = parseResponseHead(
    "HTTP/1.1 201 Created\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nX-Empty:\r\n" +
      "Content-Length: 7, 7\r\nConnection: Keep-Alive, Close",
  );
  assert.equal(head.status, 201);
  assert.equal(head.statusText, "Created");
  assert.deepEqual(head.headers.slice(0, 3), [["Set-Cookie", "a=1"], ["set-cookie", "b=2"], [
    "X-Empty",
    "",
  ]]);
  assert.equal(head.contentLength, 7);
  assert.equal(head.keepAlive, false);
  assert.equal(parseResponseHead("HTTP/1.1 200").keepAlive, true);
  assert.equal(parseResponseHead("HTTP/1.0 200 OK").keepAlive, false);
  assert.equal(parseResponseHead("HTTP/1.0 200 OK\r\nConnection: keep-alive").keepAlive, true);
  assert.equal(parseResponseHead("HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked").chunked, true);
});

Deno.test("parseResponseHead: malformed or ambiguous heads are refused", () => {
  const refused = [
    "HTTP/2 200 OK",
    "HTTP/1.1 20 OK",
    "HTTP/1.1 200 O\u0001K",
    "ICY 200 OK",
    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6",
    "HTTP/1.1 200 OK\r\nContent-Length: 5, 6",
    "HTTP/1.1 200 OK\r\nContent-Length: -1",
    "HTTP/1.1 200 OK\r\nContent-Length: 0x10",
    "HTTP/1.1 200 OK\r\nContent-Length: 9999999999999999",
    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
    "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked",
    "HTTP/1.1 200 OK\r\nX-A: 1\r\n folded",
    "HTTP/1.1 200 OK\r\nX-A : 1",
    "HTTP/1.1 200 OK\r\n: no name",
    "HTTP/1.1 200 OK\r\nno colon",
    "HTTP/1.1 200 OK\r\nX-A: 1\nX-B: 2",
    "HTTP/1.1 200 OK\r\nX-A: a\u0000b",
  ];
  for (const head of refused) {
    assert.throws(() => parseResponseHead(head), TypeError, JSON.stringify(head));
  }
});

Deno.test("headEnd: finds the blank line only within the window", () => {
  const b = bytes("HTTP/1.1 200 OK\r\nA: 1\r\n\r\nbody");
  assert.equal(headEnd(b, 0, b.length), b.length - 4);
  assert.equal(headEnd(b, 0, b.length - 5), -1);
});
