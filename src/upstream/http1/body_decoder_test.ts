// Tests of body framing and decoding: chunked bodies fed a byte at a time, what is refused, lengths
// and the close.
import assert from "node:assert/strict";
import { bodyDecoder, bodyFraming } from "./body_decoder.ts";
import { parseResponseHead } from "./response_head.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | null) => (b ? new TextDecoder().decode(b) : "");

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
