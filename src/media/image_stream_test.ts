import assert from "node:assert/strict";
import { readImageHead } from "./image_stream.ts";
import { makePng } from "../../sims/world.ts";

/** A stream of `bytes` one byte per chunk, as a client trickling them would send. */
const byteByByte = (bytes: Uint8Array) => {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(c) {
      if (at < bytes.length) c.enqueue(bytes.slice(at, ++at));
      else c.close();
    },
  });
};

Deno.test("readImageHead: a head sent a byte at a time is assembled whole, then every byte follows", async () => {
  const png = makePng(64, 64, (x, y) => [x * 4, y * 4, (x * y) % 256]);
  let looks = 0;
  const until = (head: Uint8Array) => {
    looks++;
    return head.byteLength >= 5000;
  };
  const { mime, head, stream } = await readImageHead(byteByByte(png), undefined, until);
  assert.equal(mime, "image/png");
  assert.ok(png.length > 5000);
  assert.equal(head.byteLength, 5000);
  assert.deepEqual(head, png.subarray(0, head.byteLength));
  assert.ok(looks > 1000, "the head is looked at as it grows");
  assert.deepEqual(await new Response(stream).bytes(), png);
});

Deno.test("readImageHead: a first chunk holding the whole head is passed on as it is", async () => {
  const png = makePng(4, 4, () => [1, 2, 3]);
  const { head, stream } = await readImageHead(new Blob([png.slice()]).stream());
  assert.deepEqual(head, png);
  assert.deepEqual(await new Response(stream).bytes(), png);
});
