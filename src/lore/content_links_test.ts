import assert from "node:assert/strict";
import { rootImageLinks, rootImageLinksStream } from "./content_links.ts";

const STORED = '<p>Mira<img src="api/images/AbC123/mira.png" alt="Mira"></p>' +
  "<figure><img width=\"12\" SRC = 'api/attachments/AtT123/image/inline%20image'></figure>" +
  '<p>Küste: "api/images/ in text" <a href="api/images/AbC123/x.png">link</a></p>' +
  '<img data-src="api/images/AbC123/y.png"><img src="https://core.example/api/images/AbC123/z.png">';

const ROOTED = '<p>Mira<img src="/api/images/AbC123/mira.png" alt="Mira"></p>' +
  "<figure><img width=\"12\" SRC = '/api/attachments/AtT123/image/inline%20image'></figure>" +
  '<p>Küste: "api/images/ in text" <a href="api/images/AbC123/x.png">link</a></p>' +
  '<img data-src="api/images/AbC123/y.png"><img src="https://core.example/api/images/AbC123/z.png">';

Deno.test("rootImageLinks: only relative image sources gain a leading slash", () => {
  assert.equal(rootImageLinks(STORED), ROOTED);
  assert.equal(rootImageLinks(ROOTED), ROOTED); // idempotent
  assert.equal(rootImageLinks(""), "");
});

async function streamed(chunks: Uint8Array[]): Promise<string> {
  const body = ReadableStream.from(chunks).pipeThrough(rootImageLinksStream());
  return await new Response(body).text();
}

Deno.test("rootImageLinksStream: the same result however the bytes are split", async () => {
  const bytes = new TextEncoder().encode(STORED);
  // every split point, including inside a reference and inside a multi-byte character
  for (let cut = 0; cut <= bytes.length; cut++) {
    assert.equal(await streamed([bytes.subarray(0, cut), bytes.subarray(cut)]), ROOTED, `${cut}`);
  }
  // one byte at a time
  assert.equal(await streamed([...bytes].map((b) => Uint8Array.of(b))), ROOTED);
});

Deno.test("rootImageLinksStream: output flows before the input ends", async () => {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const out = readable.pipeThrough(rootImageLinksStream()).getReader();
  const writer = writable.getWriter();
  const text = new TextEncoder().encode(`<p>${"lore ".repeat(100)}</p><img src="api/images/A/b">`);
  void writer.write(text);
  // everything but a short tail arrives while the stream is still open
  const first = await out.read();
  assert.ok(first.value!.byteLength >= text.byteLength - 64);
  void writer.close();
  let rest = "";
  for (let r = await out.read(); !r.done; r = await out.read()) {
    rest += new TextDecoder().decode(r.value);
  }
  assert.equal(
    new TextDecoder().decode(first.value) + rest,
    rootImageLinks(
      new TextDecoder().decode(text),
    ),
  );
});
