import assert from "node:assert/strict";
import { idleDeadline, requireUtf8 } from "./body.ts";
import { ApiError } from "./errors.ts";

const textReq = (type: string) =>
  new Request("http://x/", { method: "PUT", headers: { "content-type": type }, body: "x" });

Deno.test("body: charset absent or UTF-8 passes; any other charset is 415", () => {
  for (const ok of ["text/plain", "text/plain; charset=utf-8", "text/plain;charset=UTF8"]) {
    requireUtf8(textReq(ok));
  }
  requireUtf8(textReq('text/plain; format=flowed; charset="Utf-8"'));
  for (const bad of ["utf-7", "UTF-16LE", "iso-8859-1", "", '"utf-7"']) {
    assert.throws(
      () => requireUtf8(textReq(`text/plain; charset=${bad}`)),
      (e: unknown) => e instanceof ApiError && e.status === 415,
      bad,
    );
  }
});

Deno.test("body: the idle deadline passes bytes through and ends a stalled body with 408", async () => {
  const flowing = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new Uint8Array([1, 2]));
      c.enqueue(new Uint8Array([3]));
      c.close();
    },
  });
  const all = await new Response(idleDeadline(flowing, 10_000)).bytes();
  assert.deepEqual([...all], [1, 2, 3]);

  let cancelled = false;
  let timedOut = false;
  const stalled = new ReadableStream<Uint8Array>({
    start: (c) => c.enqueue(new Uint8Array([1])), // then nothing, ever
    cancel: () => void (cancelled = true),
  });
  const reader = idleDeadline(stalled, 20, () => timedOut = true).getReader();
  assert.deepEqual([...(await reader.read()).value!], [1]);
  await assert.rejects(
    reader.read(),
    (e: unknown) => e instanceof ApiError && e.status === 408 && e.code === "REQUEST_TIMEOUT",
  );
  assert.ok(timedOut && cancelled, "the source is cancelled");
});
