// Tests of request heads: values validated, managed fields left to the client.
import assert from "node:assert/strict";
import { headerFields, requestHead } from "./request_head.ts";

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
