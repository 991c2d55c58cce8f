import assert from "node:assert/strict";
import {
  bodyDecoder,
  bodyFraming,
  headEnd,
  headerFields,
  parseResponseHead,
  requestHead,
} from "./http1_wire.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | null) => (b ? new TextDecoder().decode(b) : "");

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

Deno.test("bodyFraming: HEAD, 1xx, 204, 205 and 304 carry no body; otherwise the head decides", () => {
  const head = (s: string) => parseResponseHead(s);
  assert.equal(bodyFraming(head("HTTP/1.1 200 OK\r\nContent-Length: 3"), "HEAD"), "none");
  for (const status of [100, 204, 205, 304]) {
    assert.equal(bodyFraming(head(`HTTP/1.1 ${status} X\r\nContent-Length: 3`), "GET"), "none");
  }
  assert.equal(bodyFraming(head("HTTP/1.1 200 OK\r\nContent-Length: 3"), "GET"), "length");
  assert.equal(
    bodyFraming(head("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked"), "GET"),
    "chunked",
  );
  assert.equal(bodyFraming(head("HTTP/1.1 200 OK"), "GET"), "close");
});

Deno.test("bodyDecoder: a chunked body fed one byte at a time comes out whole, trailers dropped", () => {
  const wire = bytes(
    "5;name=value\r\nhello\r\n1A\r\n abcdefghijklmnopqrstuvwxy\r\n0\r\nX-T: 1\r\n\r\n",
  );
  const decoder = bodyDecoder("chunked", 0, 1024);
  const win = { buf: new Uint8Array(wire.length), start: 0, end: 0 };
  let out = "";
  for (const b of wire) {
    win.buf[win.end++] = b;
    out += text(decoder.take(win));
  }
  assert.equal(out, "hello abcdefghijklmnopqrstuvwxy");
  assert.equal(decoder.done, true);
  assert.equal(win.start, wire.length);
});

Deno.test("bodyDecoder: bad chunk sizes, overlong chunks, bare LFs and huge trailers are refused", () => {
  const refused = [
    "zz\r\n",
    "-1\r\n",
    " 5\r\nhello\r\n",
    "5 \r\nhello\r\n",
    "0x5\r\nhello\r\n",
    "1234567890abc\r\n",
    "2\r\nabc\r\n",
    "2\nab\r\n",
    `1;${"e".repeat(5000)}\r\n`,
    `0\r\nX-T: ${"t".repeat(2000)}\r\n\r\n`,
  ];
  for (const wire of refused) {
    const b = bytes(wire);
    assert.throws(
      () => bodyDecoder("chunked", 0, 1024).take({ buf: b, start: 0, end: b.length }),
      TypeError,
      JSON.stringify(wire),
    );
  }
  assert.throws(() => bodyDecoder("chunked", 0, 1024).end(), TypeError);
});

Deno.test("bodyDecoder: a length body stops at its length; a close-delimited one ends at the close", () => {
  const b = bytes("hello, next response");
  const win = { buf: b, start: 0, end: b.length };
  const byLength = bodyDecoder("length", 5, 1024);
  assert.equal(text(byLength.take(win)), "hello");
  assert.equal(byLength.done, true);
  assert.equal(win.start, 5);
  assert.throws(() => bodyDecoder("length", 5, 1024).end(), TypeError);
  const toClose = bodyDecoder("close", 0, 1024);
  assert.equal(text(toClose.take(win)), ", next response");
  assert.equal(toClose.done, false);
  toClose.end();
  assert.equal(toClose.done, true);
});

Deno.test("headEnd: finds the blank line only within the window", () => {
  const b = bytes("HTTP/1.1 200 OK\r\nA: 1\r\n\r\nbody");
  assert.equal(headEnd(b, 0, b.length), b.length - 4);
  assert.equal(headEnd(b, 0, b.length - 5), -1);
});

Deno.test("headerFields and requestHead: values validated, managed fields left to the client", () => {
  assert.throws(() => headerFields({ "x-a": "a\nb" }), TypeError);
  assert.throws(() => headerFields({ "x-a": "a\u0000b" }), TypeError);
  assert.throws(() => headerFields({ "x a": "1" }), TypeError);
  assert.throws(() => headerFields({ "x-a": "\u0100" }), TypeError);
  const fields = headerFields([["Host", "evil"], ["Content-Length", "9"], ["Accept", "text/html"]]);
  const head = requestHead("PUT", "/x", "core:8080", fields, { length: 2, contentType: "a/b" });
  const lines = head.split("\r\n");
  assert.equal(lines.filter((l) => /^host:/i.test(l)).join(), "host: core:8080");
  assert.equal(lines.filter((l) => /^content-length:/i.test(l)).join(), "content-length: 2");
  assert.equal(lines.filter((l) => /^accept:/i.test(l)).join(), "Accept: text/html");
  assert.equal(lines.includes("content-type: a/b"), true);
  assert.equal(lines.some((l) => /^accept-encoding/i.test(l)), false);
  const chunked = requestHead("POST", "/y", "core", [], "chunked").split("\r\n");
  assert.equal(chunked.includes("transfer-encoding: chunked"), true);
  assert.equal(chunked.some((l) => /^content-length/i.test(l)), false);
});
