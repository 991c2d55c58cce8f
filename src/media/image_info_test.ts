import { prng } from "../../tests/helpers/prng.ts";
import assert from "node:assert/strict";
import {
  extensionFor,
  imageSize,
  RASTER_MIMES,
  type RasterMime,
  SNIFF_BYTES,
  sniffImageMime,
} from "./image_info.ts";

// ---------------------------------------------------------------------------------------------
// Byte builders: each format is assembled field by field from its specification.

type Part = number[] | Uint8Array | string;

/** Concatenates parts; strings are written as Latin-1 bytes (all ASCII here). */
function bytes(...parts: Part[]): Uint8Array {
  const arrays = parts.map((p) =>
    typeof p === "string" ? Uint8Array.from(p, (c) => c.charCodeAt(0)) : Uint8Array.from(p)
  );
  const out = new Uint8Array(arrays.reduce((n, a) => n + a.length, 0));
  let at = 0;
  for (const a of arrays) {
    out.set(a, at);
    at += a.length;
  }
  return out;
}

const be16 = (n: number) => [(n >>> 8) & 0xff, n & 0xff];
const be32 = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
const le16 = (n: number) => [n & 0xff, (n >>> 8) & 0xff];
const le24 = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff];
const le32 = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];

function crc32(data: Uint8Array): number {
  let crc = ~0;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return ~crc >>> 0;
}

function pngChunk(type: string, data: Part): Uint8Array {
  const body = bytes(type, data);
  return bytes(be32(body.length - 4), body, be32(crc32(body)));
}

function png(width: number, height: number): Uint8Array {
  return bytes(
    [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    pngChunk("IHDR", bytes(be32(width), be32(height), [8, 6, 0, 0, 0])),
    pngChunk("IDAT", [0x78, 0x9c, 0x63, 0, 0, 0, 0x01, 0, 0x01]),
    pngChunk("IEND", []),
  );
}

function jpegSegment(marker: number, payload: Part): Uint8Array {
  const body = bytes(payload);
  return bytes([0xff, marker], be16(body.length + 2), body);
}

interface JpegOptions {
  sof?: number;
  app1Size?: number;
  fillBytes?: number;
}

/** SOI, APP0 JFIF, a large APP1 full of marker-like bytes, DQT, DHT, SOFn, SOS, data, EOI. */
function jpeg(width: number, height: number, opts: JpegOptions = {}): Uint8Array {
  const { sof = 0xc0, app1Size = 9000, fillBytes = 0 } = opts;
  // Bytes that a naive "search for FFC0" sniffer would trip over.
  const decoy = Array.from({ length: app1Size }, (_, i) => [0xff, 0xc0, 0x00, 0x11, 0xd9][i % 5]);
  const fill = new Array(fillBytes).fill(0xff);
  return bytes(
    [0xff, 0xd8],
    jpegSegment(0xe0, bytes("JFIF\0", [1, 1, 0], be16(72), be16(72), [0, 0])),
    jpegSegment(0xe1, bytes("Exif\0\0", decoy)),
    jpegSegment(0xdb, bytes([0], new Array(64).fill(1))),
    // DHT sits in the SOF range (C4) but is not a frame header.
    jpegSegment(0xc4, bytes([0x00], new Array(16).fill(0), be16(0x7777), be16(0x6666))),
    fill,
    jpegSegment(
      sof,
      bytes([8], be16(height), be16(width), [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]),
    ),
    jpegSegment(0xda, bytes([3, 1, 0, 2, 0x11, 3, 0x11, 0, 0x3f, 0])),
    [0x12, 0x34, 0xff, 0x00, 0x56],
    [0xff, 0xd9],
  );
}

function gif(version: "87a" | "89a", width: number, height: number): Uint8Array {
  return bytes("GIF" + version, le16(width), le16(height), [0x80, 0, 0], [0, 0, 0, 255, 255, 255]);
}

function riff(chunks: Uint8Array): Uint8Array {
  return bytes("RIFF", le32(chunks.length + 4), "WEBP", chunks);
}

function riffChunk(type: string, payload: Part): Uint8Array {
  const body = bytes(payload);
  return bytes(type, le32(body.length), body, body.length % 2 ? [0] : []);
}

function webpVP8(width: number, height: number, keyFrame = true): Uint8Array {
  // Frame tag: key-frame bit (0 = key frame), version 0, show_frame 1, first partition size 10.
  const tag = (keyFrame ? 0 : 1) | (1 << 4) | (10 << 5);
  return riff(riffChunk(
    "VP8 ",
    bytes(
      le24(tag),
      [0x9d, 0x01, 0x2a],
      le16(width | (1 << 14)),
      le16(height),
      new Array(10).fill(0),
    ),
  ));
}

function webpVP8L(width: number, height: number): Uint8Array {
  const bits = ((width - 1) | ((height - 1) << 14) | (1 << 28)) >>> 0; // alpha hint set
  return riff(riffChunk("VP8L", bytes([0x2f], le32(bits), [0, 0, 0])));
}

function webpVP8X(width: number, height: number): Uint8Array {
  return riff(bytes(
    riffChunk("VP8X", bytes([0x10, 0, 0, 0], le24(width - 1), le24(height - 1))),
    riffChunk("ALPH", [0, 1, 2]),
    riffChunk("VP8L", bytes([0x2f], le32(0))),
  ));
}

function box(type: string, ...payload: Part[]): Uint8Array {
  const body = bytes(...payload);
  return bytes(be32(body.length + 8), type, body);
}

function fullBox(type: string, ...payload: Part[]): Uint8Array {
  return box(type, [0, 0, 0, 0], ...payload);
}

function ftyp(major: string, compatible: string[]): Uint8Array {
  return box("ftyp", major, be32(0), ...compatible);
}

interface AvifOptions {
  major?: string;
  compatible?: string[];
  /** Put a 64-bit-sized `free` box before `meta`. */
  largeFree?: boolean;
}

function avif(width: number, height: number, opts: AvifOptions = {}): Uint8Array {
  const { major = "avif", compatible = ["avif", "mif1", "miaf", "MA1B"], largeFree } = opts;
  const ipco = box(
    "ipco",
    box("colr", "nclx", be16(1), be16(13), be16(6), [0x80]),
    box("av1C", [0x81, 0x00, 0x0c, 0x00]),
    fullBox("ispe", be32(width), be32(height)),
    fullBox("ispe", be32(7), be32(7)), // a later one (e.g. alpha) must not win
    fullBox("pixi", [3, 8, 8, 8]),
  );
  const meta = fullBox(
    "meta",
    fullBox("hdlr", be32(0), "pict", be32(0), be32(0), be32(0), [0]),
    fullBox("pitm", be16(1)),
    fullBox("iinf", be16(1), box("infe", [2, 0, 0, 0], be16(1), be16(0), "av01", [0])),
    box("iprp", ipco, fullBox("ipma", be32(1), be16(1), [2, 0x81, 0x83])),
  );
  const free = largeFree ? bytes(be32(1), "free", be32(0), be32(20), [1, 2, 3, 4]) : [];
  return bytes(ftyp(major, compatible), free, meta, box("mdat", new Array(32).fill(0xaa)));
}

const SAMPLES: { name: string; data: Uint8Array; mime: RasterMime; w: number; h: number }[] = [
  { name: "png", data: png(640, 480), mime: "image/png", w: 640, h: 480 },
  { name: "png large", data: png(70000, 1), mime: "image/png", w: 70000, h: 1 },
  { name: "jpeg baseline", data: jpeg(1920, 1080), mime: "image/jpeg", w: 1920, h: 1080 },
  {
    name: "jpeg progressive",
    data: jpeg(300, 200, { sof: 0xc2, fillBytes: 3 }),
    mime: "image/jpeg",
    w: 300,
    h: 200,
  },
  { name: "gif89a", data: gif("89a", 32, 16), mime: "image/gif", w: 32, h: 16 },
  { name: "gif87a", data: gif("87a", 65535, 2), mime: "image/gif", w: 65535, h: 2 },
  { name: "webp vp8", data: webpVP8(550, 368), mime: "image/webp", w: 550, h: 368 },
  { name: "webp vp8l", data: webpVP8L(16384, 3), mime: "image/webp", w: 16384, h: 3 },
  { name: "webp vp8x", data: webpVP8X(1 << 24, 1000), mime: "image/webp", w: 1 << 24, h: 1000 },
  { name: "avif", data: avif(1280, 720), mime: "image/avif", w: 1280, h: 720 },
  {
    name: "avif via compatible brand + largesize box",
    data: avif(64, 48, {
      major: "mif1",
      compatible: ["mif1", "miaf", "MA1B", "avif"],
      largeFree: true,
    }),
    mime: "image/avif",
    w: 64,
    h: 48,
  },
  {
    name: "avif sequence",
    data: avif(10, 20, { major: "avis", compatible: ["avis", "msf1", "iso8", "mif1"] }),
    mime: "image/avif",
    w: 10,
    h: 20,
  },
];

// ---------------------------------------------------------------------------------------------
// Valid images

Deno.test("image: sniffs and measures every sample format", () => {
  for (const s of SAMPLES) {
    assert.equal(sniffImageMime(s.data), s.mime, s.name);
    assert.equal(sniffImageMime(s.data.subarray(0, SNIFF_BYTES)), s.mime, `${s.name} head`);
    assert.deepEqual(imageSize(s.data), { width: s.w, height: s.h }, s.name);
  }
});

Deno.test("image: works on a view with an offset into a larger buffer", () => {
  for (const s of SAMPLES) {
    const big = bytes([1, 2, 3, 4, 5], s.data, [9, 9, 9]);
    const view = big.subarray(5, 5 + s.data.length);
    assert.deepEqual(imageSize(view), { width: s.w, height: s.h }, s.name);
  }
});

Deno.test("image: a prefix that contains the header is enough", () => {
  const jpg = jpeg(800, 600);
  const sosAt = jpg.findLastIndex((_, i) => jpg[i] === 0xff && jpg[i + 1] === 0xda);
  assert.deepEqual(imageSize(jpg.subarray(0, sosAt)), { width: 800, height: 600 });
  assert.deepEqual(imageSize(png(5, 6).subarray(0, 33)), { width: 5, height: 6 });
  assert.deepEqual(imageSize(gif("89a", 5, 6).subarray(0, 13)), { width: 5, height: 6 });
  assert.deepEqual(imageSize(webpVP8X(5, 6).subarray(0, 30)), { width: 5, height: 6 });
  assert.deepEqual(imageSize(webpVP8L(5, 6).subarray(0, 25)), { width: 5, height: 6 });
  assert.deepEqual(imageSize(webpVP8(5, 6).subarray(0, 30)), { width: 5, height: 6 });
  const av = avif(5, 6);
  const mdatAt = av.findLastIndex((_, i) =>
    String.fromCharCode(...av.subarray(i, i + 4)) === "mdat"
  );
  assert.deepEqual(imageSize(av.subarray(0, mdatAt + 4)), { width: 5, height: 6 }, "no mdat body");
});

Deno.test("image: extensions and the MIME list agree", () => {
  assert.deepEqual(RASTER_MIMES, [
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/avif",
  ]);
  assert.deepEqual(RASTER_MIMES.map(extensionFor), [".png", ".jpg", ".gif", ".webp", ".avif"]);
  assert.ok(Object.isFrozen(RASTER_MIMES));
  assert.ok(SNIFF_BYTES >= 32);
});

// ---------------------------------------------------------------------------------------------
// Non-images and malformed headers

Deno.test("image: non-images are not sniffed as raster images", () => {
  const cases: [string, Uint8Array][] = [
    ["svg", new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg" width="10"/>')],
    ["svg with xml prolog", new TextEncoder().encode('<?xml version="1.0"?><svg></svg>')],
    ["html", new TextEncoder().encode("<!doctype html><html><body><img src=x></body></html>")],
    ["pdf", new TextEncoder().encode("%PDF-1.7\n%âãÏÓ\n1 0 obj\n<<>>\nendobj\n")],
    ["zip", bytes("PK", [3, 4, 20, 0, 0, 0, 8, 0], new Array(40).fill(0))],
    ["empty", new Uint8Array()],
    ["3 bytes of png", new Uint8Array([0x89, 0x50, 0x4e])],
    ["2 bytes of jpeg", new Uint8Array([0xff, 0xd8])],
    ["wav", bytes("RIFF", le32(100), "WAVEfmt ", new Array(20).fill(0))],
    ["mp4", ftyp("isom", ["isom", "iso2", "mp41"])],
    ["heic", bytes(ftyp("heic", ["mif1", "heic"]), fullBox("meta"))],
    ["ftyp with brand in minor version", box("ftyp", "mif1", "avif", "mif1")],
    ["GIF90a", bytes("GIF90a", le16(1), le16(1))],
  ];
  for (const [name, data] of cases) {
    assert.equal(sniffImageMime(data), null, name);
    assert.equal(imageSize(data), null, name);
  }
});

Deno.test("image: truncated headers give null, never throw", () => {
  // the whole header must be there, not just the size fields: PNG's IHDR with its CRC, GIF's
  // logical screen descriptor, JPEG's whole SOF segment
  const headerEnd: Record<string, number> = {
    png: 33,
    gif89a: 13,
    "webp vp8": 30,
    "webp vp8l": 25,
    "webp vp8x": 30,
  };
  for (const s of SAMPLES) {
    const end = headerEnd[s.name];
    if (end === undefined) continue;
    // Slices of a longer buffer: reading past the view would find the real bytes.
    for (let n = 0; n < end; n++) {
      assert.equal(imageSize(s.data.subarray(0, n)), null, `${s.name}/${n}`);
    }
  }
  const jpg = jpeg(10, 20);
  // The APP1 decoy also contains FF C0 00 11; the real SOF0 is followed by precision 8.
  const sofAt = jpg.findIndex((_, i) =>
    [0xff, 0xc0, 0x00, 0x11, 0x08].every((v, k) => jpg[i + k] === v)
  );
  const sofEnd = sofAt + 2 + 0x11; // marker, then the 17-byte segment its length field names
  for (let n = 0; n < sofEnd; n++) {
    assert.equal(imageSize(jpg.subarray(0, n)), null, `jpeg/${n}`);
  }
  assert.deepEqual(imageSize(jpg.subarray(0, sofEnd)), { width: 10, height: 20 });
  // a bare signature is sniffed as its type but has no size: never an image of "unknown" size
  assert.equal(imageSize(bytes("GIF89a")), null);
  assert.equal(imageSize(bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), null);
  const av = avif(10, 20);
  const ispeAt = av.findIndex((_, i) => String.fromCharCode(...av.subarray(i, i + 4)) === "ispe");
  for (let n = 0; n < ispeAt + 16; n++) {
    assert.equal(imageSize(av.subarray(0, n)), null, `avif/${n}`);
  }
  assert.deepEqual(imageSize(av.subarray(0, ispeAt + 16)), { width: 10, height: 20 });
});

Deno.test("image: malformed headers give null", () => {
  const mutate = (data: Uint8Array, at: number, values: number[]) => {
    const copy = data.slice();
    copy.set(values, at);
    return copy;
  };
  const p = png(3, 4);
  assert.equal(imageSize(mutate(p, 12, [0x49, 0x44, 0x41, 0x54])), null, "first chunk not IHDR");
  assert.equal(imageSize(mutate(p, 16, be32(0))), null, "zero width");
  assert.equal(imageSize(mutate(p, 20, be32(0x80000000))), null, "height over 2^31-1");
  assert.equal(imageSize(gif("89a", 0, 5)), null, "zero-width GIF");

  assert.equal(imageSize(jpeg(10, 0)), null, "height defined by DNL");
  assert.equal(imageSize(bytes([0xff, 0xd8], [0xff, 0xda, 0, 2], [0xff, 0xc0])), null, "SOS first");
  assert.equal(imageSize(bytes([0xff, 0xd8, 0xff, 0xd9])), null, "EOI only");
  assert.equal(
    imageSize(
      bytes(
        [0xff, 0xd8],
        jpegSegment(0xe0, "JFIF\0"),
        [0x00],
        jpegSegment(0xc0, [8, 0, 2, 0, 3, 1, 1, 0x11, 0]),
      ),
    ),
    null,
    "garbage before a segment",
  );
  assert.equal(imageSize(bytes([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x01, 0xff])), null, "length < 2");
  assert.equal(
    imageSize(bytes([0xff, 0xd8, 0xff, 0xc0, 0, 5, 8, 0, 1, 0, 1])),
    null,
    "SOF too short",
  );
  assert.deepEqual(
    imageSize(bytes([0xff, 0xd8, 0xff, 0xd0, 0xff, 0x01], jpegSegment(0xc1, [8, 0, 2, 0, 3, 1]))),
    { width: 3, height: 2 },
    "standalone markers skipped, SOF1 read",
  );

  assert.equal(imageSize(webpVP8(10, 10, false)), null, "VP8 inter frame");
  const vp8 = webpVP8(10, 10);
  assert.equal(imageSize(mutate(vp8, 23, [0x9d, 0x01, 0x2b])), null, "VP8 bad start code");
  assert.equal(imageSize(mutate(webpVP8L(4, 4), 20, [0x2e])), null, "VP8L bad signature");
  assert.equal(imageSize(mutate(webpVP8L(4, 4), 24, [0xe0])), null, "VP8L version ≠ 0");
  assert.equal(imageSize(riff(riffChunk("ICCP", new Array(20).fill(0)))), null, "unknown chunk");
  assert.equal(imageSize(webpVP8(0, 10)), null, "VP8 zero width");

  assert.equal(imageSize(avif(0, 10)), null, "zero-width ispe");
  const av = avif(10, 20);
  const metaAt = av.findIndex((_, i) => String.fromCharCode(...av.subarray(i, i + 4)) === "meta");
  assert.equal(imageSize(mutate(av, metaAt - 4, be32(20))), null, "meta shorter than its children");
  assert.equal(imageSize(mutate(av, metaAt - 4, be32(3))), null, "box size below header");
  assert.equal(
    imageSize(bytes(
      ftyp("avif", ["avif"]),
      fullBox("meta", box("iprp", box("ipco", fullBox("ispe"), fullBox("pixi", [3, 8, 8, 8])))),
    )),
    null,
    "ispe without payload must not read the next box",
  );
  // ipco claims 20 bytes, so the 20-byte ispe inside overflows it.
  const straddling = bytes(be32(20), "ipco", fullBox("ispe", be32(2), be32(3)));
  assert.equal(
    imageSize(bytes(ftyp("avif", ["avif"]), fullBox("meta", box("iprp", straddling)))),
    null,
    "child box larger than its parent",
  );
  assert.equal(imageSize(bytes(ftyp("avif", ["avif"]), box("mdat", [1, 2, 3]))), null, "no meta");
  assert.deepEqual(
    imageSize(
      bytes(
        ftyp("avif", ["avif"]),
        fullBox("meta", box("iprp", bytes(be32(0), "ipco", fullBox("ispe", be32(2), be32(3))))),
      ),
    ),
    { width: 2, height: 3 },
    "size 0 extends to the parent's end",
  );
});

// ---------------------------------------------------------------------------------------------
// Fuzz-ish robustness

function assertSane(data: Uint8Array, label: string): void {
  let mime: RasterMime | null;
  let dims: { width: number; height: number } | null;
  try {
    mime = sniffImageMime(data);
    dims = imageSize(data);
  } catch (err) {
    throw new Error(`${label}: threw on ${JSON.stringify([...data.subarray(0, 64)])}`, {
      cause: err,
    });
  }
  if (dims !== null) {
    assert.ok(mime !== null, `${label}: size without a type`);
    for (const v of [dims.width, dims.height]) {
      assert.ok(Number.isInteger(v) && v > 0 && v <= 0x7fffffff, `${label}: ${v}`);
    }
  }
}

Deno.test("image: thousands of random, truncated and mutated buffers never throw", () => {
  const seed = 0x5eed1;
  const rng = prng(seed);
  const int = (n: number) => Math.floor(rng() * n);
  let checked = 0;
  // Pure noise, sometimes with a real magic number in front.
  for (let i = 0; i < 3000; i++) {
    const noise = Uint8Array.from({ length: int(160) }, () => int(256));
    if (rng() < 0.6) {
      const s = SAMPLES[int(SAMPLES.length)];
      noise.set(s.data.subarray(0, Math.min(noise.length, 4 + int(24))));
    }
    assertSane(noise, `noise #${i} (seed ${seed})`);
    checked++;
  }
  for (const s of SAMPLES) {
    // Every truncation of the first 400 bytes, as views of the full buffer.
    for (let n = 0; n <= Math.min(400, s.data.length); n++) {
      assertSane(s.data.subarray(0, n), `${s.name} truncated to ${n}`);
      checked++;
    }
    // Random byte mutations, with random truncation.
    for (let k = 0; k < 300; k++) {
      const copy = s.data.slice(0, 1 + int(Math.min(s.data.length, 600)));
      for (let m = 1 + int(4); m > 0; m--) copy[int(copy.length)] = int(256);
      assertSane(copy, `${s.name} mutation #${k} (seed ${seed})`);
      checked++;
    }
  }
  assert.ok(checked > 5000);
});
