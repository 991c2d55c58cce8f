import assert from "node:assert/strict";
import { upstreamPath } from "./path.ts";

Deno.test("upstreamPath: each value is exactly one encoded segment", () => {
  assert.equal(upstreamPath`/etapi/notes/${"a/b"}/content`, "/etapi/notes/a%2Fb/content");
  assert.equal(upstreamPath`/etapi/attributes/${"../notes/X"}`, "/etapi/attributes/..%2Fnotes%2FX");
  assert.equal(upstreamPath`/etapi/notes/${"x?y#z"}`, "/etapi/notes/x%3Fy%23z");
  assert.equal(upstreamPath`/etapi/notes/${"%2F"}`, "/etapi/notes/%252F");
});

Deno.test("upstreamPath: dot and empty segments are refused (URL normalisation would resolve them)", () => {
  for (const bad of ["..", ".", ""]) {
    assert.throws(() => upstreamPath`/etapi/notes/${bad}`, TypeError);
  }
});
