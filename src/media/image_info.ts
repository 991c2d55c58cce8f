/**
 * Raster image sniffing and pixel size from header bytes, for uploads and proxied image bodies.
 *
 * The type always comes from magic bytes, never from a declared `Content-Type` or file name, so an
 * HTML or SVG body labelled `image/png` is not treated as an image. Parsers work on a prefix of the
 * file, check every read against the bytes they were given, and answer null instead of throwing.
 *
 * @module
 */

/** The raster formats the proxy accepts. SVG is deliberately absent: it is a document. */
export type RasterMime = "image/png" | "image/jpeg" | "image/gif" | "image/webp" | "image/avif";

/**
 * Every {@link RasterMime}, e.g. for an `Accept` header or an allow-list.
 */
export const RASTER_MIMES: readonly RasterMime[] = Object.freeze([
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "image/avif",
]);

/**
 * Bytes needed to sniff (callers buffer at least this much of a stream before deciding). 64 rather
 * than 32 so that an AVIF `ftyp` whose `avif` brand sits among later compatible brands is seen.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readImageHead } from "./image_stream.ts";
 * const { head, stream } = await readImageHead(new Response(new Uint8Array(1000)).body!);
 * assert.equal(head.length >= SNIFF_BYTES, true); // fewer only when the stream is shorter
 * await stream.cancel();
 * ```
 */
export const SNIFF_BYTES = 64;

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** PNG limits dimensions to 2^31-1; other formats have smaller fields, so this bound fits all. */
const MAX_DIMENSION = 0x7fffffff;

// Readers return -1 past the end, so callers cannot mistake missing bytes for zeros.
function u8(b: Uint8Array, i: number): number {
  return i >= 0 && i < b.length ? b[i] : -1;
}

function u16be(b: Uint8Array, i: number): number {
  return i >= 0 && i + 2 <= b.length ? (b[i] << 8) | b[i + 1] : -1;
}

function u16le(b: Uint8Array, i: number): number {
  return i >= 0 && i + 2 <= b.length ? b[i] | (b[i + 1] << 8) : -1;
}

function u24le(b: Uint8Array, i: number): number {
  return i >= 0 && i + 3 <= b.length ? b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) : -1;
}

function u32be(b: Uint8Array, i: number): number {
  return i >= 0 && i + 4 <= b.length
    ? ((b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3]) >>> 0
    : -1;
}

function u32le(b: Uint8Array, i: number): number {
  return i >= 0 && i + 4 <= b.length
    ? (b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)) >>> 0
    : -1;
}

function ascii(b: Uint8Array, i: number, text: string): boolean {
  if (i < 0 || i + text.length > b.length) return false;
  for (let k = 0; k < text.length; k++) if (b[i + k] !== text.charCodeAt(k)) return false;
  return true;
}

function size(width: number, height: number): { width: number; height: number } | null {
  return width > 0 && height > 0 && width <= MAX_DIMENSION && height <= MAX_DIMENSION
    ? { width, height }
    : null;
}

/** ISO-BMFF `ftyp` whose major or compatible brands include `avif` (still) or `avis` (sequence). */
function isAvifFtyp(b: Uint8Array): boolean {
  if (!ascii(b, 4, "ftyp")) return false;
  const boxSize = u32be(b, 0);
  if (boxSize < 16 || boxSize % 4 !== 0) return false;
  const isAvifBrand = (i: number) => ascii(b, i, "avif") || ascii(b, i, "avis");
  if (isAvifBrand(8)) return true;
  // Offset 12 is the minor version, not a brand.
  for (let i = 16; i + 4 <= Math.min(boxSize, b.length); i += 4) if (isAvifBrand(i)) return true;
  return false;
}

/**
 * Detects a raster format from magic bytes only; never trusts a declared type. Pass at least
 * {@link SNIFF_BYTES} bytes when the file has that many.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(sniffImageMime(new Uint8Array([0xff, 0xd8, 0xff, 0xe0])), "image/jpeg");
 * assert.equal(sniffImageMime(new TextEncoder().encode("<svg ")), null);
 * ```
 */
export function sniffImageMime(head: Uint8Array): RasterMime | null {
  if (!(head instanceof Uint8Array)) return null;
  if (head.length >= 8 && PNG_SIGNATURE.every((v, i) => head[i] === v)) return "image/png";
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) {
    return "image/jpeg";
  }
  if (ascii(head, 0, "GIF87a") || ascii(head, 0, "GIF89a")) return "image/gif";
  if (ascii(head, 0, "RIFF") && ascii(head, 8, "WEBP")) return "image/webp";
  if (isAvifFtyp(head)) return "image/avif";
  return null;
}

/** Signature, then IHDR: length, type, 13 bytes of data and its CRC. */
const PNG_HEADER_BYTES = 8 + 4 + 4 + 13 + 4;
/** Signature and logical screen descriptor. */
const GIF_HEADER_BYTES = 6 + 7;

function pngSize(b: Uint8Array) {
  // IHDR must be the first chunk and is always 13 bytes long; a header cut short is no image.
  if (b.length < PNG_HEADER_BYTES || u32be(b, 8) !== 13 || !ascii(b, 12, "IHDR")) return null;
  const width = u32be(b, 16);
  const height = u32be(b, 20);
  return width < 0 || height < 0 ? null : size(width, height);
}

function gifSize(b: Uint8Array) {
  if (b.length < GIF_HEADER_BYTES) return null;
  const width = u16le(b, 6);
  const height = u16le(b, 8);
  return width < 0 || height < 0 ? null : size(width, height);
}

/** SOF0–SOF15 carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) share the range but do not. */
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 &&
    marker !== 0xcc;
}

function jpegSize(b: Uint8Array) {
  let i = 2; // after SOI
  while (i < b.length) {
    if (b[i] !== 0xff) return null; // segments must follow each other back to back
    while (i < b.length && b[i] === 0xff) i++; // marker prefix plus optional fill bytes
    const marker = u8(b, i++);
    if (marker < 0) return null;
    // Markers without a length field.
    if (marker === 0x01 || marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7)) continue;
    // End of image, or entropy-coded data starts: no frame header came first.
    if (marker === 0xd9 || marker === 0xda || marker === 0x00) return null;
    const length = u16be(b, i); // includes the two length bytes
    if (length < 2) return null;
    if (isStartOfFrame(marker)) {
      // length(2) precision(1) height(2) width(2) components(1); the whole segment must be there
      if (length < 8 || i + length > b.length) return null;
      const height = u16be(b, i + 3);
      const width = u16be(b, i + 5);
      // Height 0 means "defined later by DNL", which a header cannot tell us.
      return width < 0 || height < 0 ? null : size(width, height);
    }
    i += length;
  }
  return null;
}

function webpSize(b: Uint8Array) {
  // The first chunk after "WEBP" decides the variant; its payload starts at offset 20.
  if (ascii(b, 12, "VP8 ")) {
    // 3-byte frame tag (bit 0 clear = key frame), start code, then 14-bit sizes + 2 scale bits.
    if (u8(b, 20) < 0 || (b[20] & 1) !== 0) return null;
    if (u8(b, 23) !== 0x9d || u8(b, 24) !== 0x01 || u8(b, 25) !== 0x2a) return null;
    const w = u16le(b, 26);
    const h = u16le(b, 28);
    return w < 0 || h < 0 ? null : size(w & 0x3fff, h & 0x3fff);
  }
  if (ascii(b, 12, "VP8L")) {
    // Signature byte, then width-1 and height-1 in 14 bits each and a 3-bit version that must be 0.
    if (u8(b, 20) !== 0x2f) return null;
    const bits = u32le(b, 21);
    if (bits < 0 || bits >>> 29 !== 0) return null;
    return size((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (ascii(b, 12, "VP8X")) {
    // Flags(1) reserved(3), then canvas width-1 and height-1 as 24-bit little-endian.
    const w = u24le(b, 24);
    const h = u24le(b, 27);
    return w < 0 || h < 0 ? null : size(w + 1, h + 1);
  }
  return null;
}

interface Box {
  type: string;
  /** Offset of the payload. */
  body: number;
  /** Declared end; may lie beyond the bytes we have when given a prefix. */
  end: number;
}

/** Reads the ISO-BMFF box header at `at`; null if it is not fully present or is inconsistent. */
function boxAt(b: Uint8Array, at: number, parentEnd: number): Box | null {
  const declared = u32be(b, at);
  if (declared < 0 || at + 8 > b.length) return null;
  const type = String.fromCharCode(b[at + 4], b[at + 5], b[at + 6], b[at + 7]);
  let body = at + 8;
  let boxSize = declared;
  if (declared === 1) {
    // 64-bit size; doubles lose precision past 2^53, which only matters for absurd sizes.
    const high = u32be(b, at + 8);
    const low = u32be(b, at + 12);
    if (high < 0 || low < 0) return null;
    boxSize = high * 2 ** 32 + low;
    body = at + 16;
  } else if (declared === 0) {
    boxSize = parentEnd - at; // extends to the end of its parent
  }
  if (boxSize < body - at) return null;
  const end = at + boxSize;
  return end > parentEnd ? null : { type, body, end };
}

/** First child of the given type in [start, end); null if absent within the available bytes. */
function findChild(b: Uint8Array, start: number, end: number, type: string): Box | null {
  for (let at = start; at < end;) {
    const box = boxAt(b, at, end);
    if (!box) return null;
    if (box.type === type) return box;
    at = box.end; // always advances: a box is at least its 8-byte header
  }
  return null;
}

function avifSize(b: Uint8Array) {
  // meta and ispe are FullBoxes: 4 bytes of version and flags precede their payload.
  const meta = findChild(b, 0, Number.POSITIVE_INFINITY, "meta");
  const iprp = meta && findChild(b, meta.body + 4, meta.end, "iprp");
  const ipco = iprp && findChild(b, iprp.body, iprp.end, "ipco");
  const ispe = ipco && findChild(b, ipco.body, ipco.end, "ispe");
  if (!ispe || ispe.body + 12 > ispe.end) return null;
  const width = u32be(b, ispe.body + 4);
  const height = u32be(b, ispe.body + 8);
  return width < 0 || height < 0 ? null : size(width, height);
}

/**
 * Pixel size from the header; `bytes` may be a prefix of the file (JPEG: scan segments until SOFn;
 * WebP: VP8, VP8L, VP8X; AVIF: ftyp brand avif/avis + first `ispe` box in meta; GIF logical
 * screen; PNG IHDR). null when not found within the prefix or malformed. Never throws, never
 * reads out of bounds.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * // a GIF's header: signature, logical screen width and height (little-endian), 3 more bytes
 * const gif = new Uint8Array([...new TextEncoder().encode("GIF89a"), 0x80, 7, 0x38, 4, 0, 0, 0]);
 * assert.deepEqual(imageSize(gif), { width: 1920, height: 1080 });
 * assert.equal(imageSize(new TextEncoder().encode("<svg>")), null);
 * ```
 */
export function imageSize(bytes: Uint8Array): { width: number; height: number } | null {
  switch (sniffImageMime(bytes)) {
    case "image/png":
      return pngSize(bytes);
    case "image/jpeg":
      return jpegSize(bytes);
    case "image/gif":
      return gifSize(bytes);
    case "image/webp":
      return webpSize(bytes);
    case "image/avif":
      return avifSize(bytes);
    default:
      return null;
  }
}

const EXTENSIONS: Readonly<Record<RasterMime, string>> = Object.freeze({
  "image/png": ".png",
  "image/jpeg": ".jpg",
  "image/gif": ".gif",
  "image/webp": ".webp",
  "image/avif": ".avif",
});

/**
 * File extension (with the dot) for a sniffed type, e.g. for a download file name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(extensionFor("image/jpeg"), ".jpg");
 * ```
 */
export function extensionFor(mime: RasterMime): string {
  return Object.hasOwn(EXTENSIONS, mime) ? EXTENSIONS[mime] : "";
}
