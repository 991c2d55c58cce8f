/**
 * Pictures on the public site as players and link previews meet them, on the showcase world
 * (real-size portrait, map and landscape): one URL per image on every page, the portrait shown
 * once, no picture enlarged, every page's preview card with a picture of its real size and the
 * card type that suits it, the world's generated card a real PNG drawn from its visible name
 * alone, and a map page described by its own note.
 */
import assert from "node:assert/strict";
import { inflateSync } from "node:zlib";
import { imageSize } from "../../src/media/image_info.ts";
import { type Harness, withHarness } from "../helpers/harness.ts";
import { LANDSCAPE_ID, seedShowcase } from "../../sims/showcase.ts";
import { CHART_PNG, crc32, HARBOR_ALIAS, W } from "../../sims/world.ts";

/** Every kind of page the site has, on the showcase world. */
const PAGES = [
  "/",
  "/?q=ships",
  `/public/lore/${W.charMira}`,
  `/public/lore/${HARBOR_ALIAS}`,
  `/public/lore/${W.guideWelcome}`,
  `/public/lore/${W.locChart}`,
  `/public/lore/${W.imgChart}`,
  `/public/lore/${W.imgPortrait}`,
  `/public/lore/${LANDSCAPE_ID}`,
  `/public/maps/${W.locChart}`,
  "/public/types/character",
  "/public/timeline",
];

async function page(h: Harness, path: string): Promise<string> {
  const res = await h.request(path);
  assert.equal(res.status, 200, path);
  return await res.text();
}

/** The `content` of a page's `<meta>` named `name` (property or name), else undefined. */
function meta(html: string, name: string): string | undefined {
  const tag = new RegExp(`<meta (?:property|name)="${name}" content="([^"]*)">`).exec(html);
  return tag?.[1];
}

/** Every public image URL a page names (markup and preview metadata), origin dropped. */
function imageUrls(html: string, origin: string): string[] {
  return [...html.matchAll(/"((?:https?:\/\/[^/"]+)?\/api\/public\/images\/[^"]+)"/g)]
    .map((m) => m[1].startsWith(origin) ? m[1].slice(origin.length) : m[1]);
}

/** The chunks of a PNG, in order, each checked against its CRC (the sims' own CRC-32). */
function pngChunks(png: Uint8Array): { type: string; data: Uint8Array }[] {
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const out: { type: string; data: Uint8Array }[] = [];
  for (let at = 8; at < png.length;) {
    const length = view.getUint32(at);
    const type = new TextDecoder().decode(png.subarray(at + 4, at + 8));
    assert.equal(
      view.getUint32(at + 8 + length),
      crc32(png.subarray(at + 4, at + 8 + length)),
      type,
    );
    out.push({ type, data: png.subarray(at + 8, at + 8 + length) });
    at += 12 + length;
  }
  return out;
}

async function bytesOf(h: Harness, path: string): Promise<Uint8Array> {
  const res = await h.request(path);
  assert.equal(res.status, 200, path);
  return new Uint8Array(await res.arrayBuffer());
}

Deno.test("site images: one URL per image on every page; the portrait shown once", () =>
  withHarness(async (h) => {
    seedShowcase(h.core.store);
    const urls = new Map<string, Set<string>>();
    const pagesOf = new Map<string, Set<string>>();
    for (const path of PAGES) {
      for (const url of imageUrls(await page(h, path), h.url)) {
        const id = url.split("/")[4];
        urls.set(id, (urls.get(id) ?? new Set()).add(url));
        pagesOf.set(id, (pagesOf.get(id) ?? new Set()).add(path));
      }
    }
    for (const [id, seen] of urls) assert.equal(seen.size, 1, `${id}: ${[...seen].join(" ")}`);
    // the test is about images several pages show
    for (const id of [W.imgPortrait, W.imgChart, LANDSCAPE_ID]) {
      assert.ok((pagesOf.get(id)?.size ?? 0) >= 2, `${id} on ${[...pagesOf.get(id) ?? []]}`);
    }
    // the chart note's page and its map page load the same file
    const chart = imageUrls(await page(h, `/public/lore/${W.locChart}`), h.url);
    const map = imageUrls(await page(h, `/public/maps/${W.locChart}`), h.url);
    assert.ok(map.some((u) => chart.includes(u) && u.includes(W.imgChart)));

    // Mira's content embeds her portrait too: the infobox shows it, the content does not
    const mira = await page(h, `/public/lore/${W.charMira}`);
    const portraits = [...mira.matchAll(/<img [^>]*src="[^"]*wImgPortrt01[^"]*"[^>]*>/g)];
    assert.equal(portraits.length, 1, portraits.map((m) => m[0]).join("\n"));
    assert.match(portraits[0][0], /class="portrait"/);
    assert.match(portraits[0][0], /width="240" height="320"/);
  }));

Deno.test("site images: no picture is given a size larger than its own", () =>
  withHarness(async (h) => {
    seedShowcase(h.core.store);
    const { note } = h.core.store.createNote({
      parentNoteId: W.guide,
      title: "Faces of the Coast",
      type: "text",
      content: `<p><img src="api/images/${W.imgPortrait}/mira.png" width="480"></p>` +
        `<p><img src="api/images/${LANDSCAPE_ID}/dusk.png" width="300"></p>`,
    });
    const html = await page(h, `/public/lore/${note.noteId}`);
    assert.match(html, /<img src="[^"]*wImgPortrt01[^"]*"[^>]* width="240" height="320"/);
    // a smaller size the writer chose stays, in the picture's proportions
    assert.match(html, /<img src="[^"]*wImgLandsc01[^"]*"[^>]* width="300" height="150"/);
    assert.doesNotMatch(html, /width="480"/);
  }, { env: { PUBLIC_CACHE_MS: "0" } }));

Deno.test("site images: every page's preview card shows a picture at its real size", () =>
  withHarness(async (h) => {
    seedShowcase(h.core.store);
    const shown = new Map<string, string>();
    for (const path of PAGES) {
      const html = await page(h, path);
      const image = meta(html, "og:image") ?? "";
      assert.ok(image.startsWith(`${h.url}/`), `${path}: og:image ${image}`);
      assert.equal(meta(html, "twitter:image"), image, path);
      const declared = {
        width: Number(meta(html, "og:image:width")),
        height: Number(meta(html, "og:image:height")),
      };
      // the picture is there, of the size the page says, as a raster card consumers read
      const res = await h.request(image.slice(h.url.length));
      assert.equal(res.status, 200, `${path}: ${image}`);
      assert.match(res.headers.get("content-type") ?? "", /^image\/(png|jpeg|gif|webp)$/);
      assert.deepEqual(imageSize(new Uint8Array(await res.arrayBuffer())), declared, path);
      const card = declared.width >= 600 ? "summary_large_image" : "summary";
      assert.equal(meta(html, "twitter:card"), card, path);
      shown.set(path, image.slice(h.url.length));
    }
    const card = shown.get("/")!;
    assert.match(card, /^\/public\/card\/[\w-]+\.png$/);
    // a page's own picture where it has one; the world's card elsewhere
    assert.match(shown.get(`/public/lore/${W.charMira}`)!, /wImgPortrt01/);
    assert.match(shown.get(`/public/lore/${W.locChart}`)!, /wImgChart001/);
    assert.match(shown.get(`/public/maps/${W.locChart}`)!, /wImgChart001/);
    assert.match(shown.get(`/public/lore/${W.guideWelcome}`)!, /wImgLandsc01/);
    for (const path of ["/?q=ships", `/public/lore/${HARBOR_ALIAS}`, "/public/timeline"]) {
      assert.equal(shown.get(path), card, path);
    }
  }));

Deno.test("site images: the generated card is a 1200 × 630 PNG, cached for good by its digest", () =>
  withHarness(async (h) => {
    const home = await page(h, "/");
    const path = meta(home, "og:image")!.slice(h.url.length);
    const res = await h.request(path);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "image/png");
    assert.equal(res.headers.get("cache-control"), "public, max-age=31536000, immutable");
    const etag = res.headers.get("etag")!;
    const png = new Uint8Array(await res.arrayBuffer());
    const chunks = pngChunks(png);
    assert.deepEqual(chunks.map((c) => c.type), ["IHDR", "PLTE", "IDAT", "IEND"]);
    const ihdr = new DataView(chunks[0].data.buffer, chunks[0].data.byteOffset, 13);
    assert.deepEqual([ihdr.getUint32(0), ihdr.getUint32(4)], [1200, 630]);
    assert.deepEqual([...chunks[0].data.subarray(8)], [8, 3, 0, 0, 0]); // 8-bit indexed
    const rows = new Uint8Array(inflateSync(chunks[2].data));
    assert.equal(rows.length, 630 * (1 + 1200));
    // drawn: more than one colour
    assert.ok(new Set(rows.filter((_, i) => i % 1201 !== 0)).size > 1);
    assert.equal((await h.request(path, { headers: { "if-none-match": etag } })).status, 304);
    const other = await h.request("/public/card/AAAAAAAAAAAAAAAAAAAAAA.png");
    assert.equal(other.status, 404);
    await other.body?.cancel();
  }));

Deno.test("site images: the card is the world's visible name alone, whatever is hidden", () =>
  withHarness(async (h) => {
    const card = async () => {
      const path = meta(await page(h, "/"), "og:image")!.slice(h.url.length);
      return { path, bytes: await bytesOf(h, path) };
    };
    const before = await card();
    // the same world with more hidden notes, hidden ones renamed, a hidden card configured
    const secret = h.core.store.createNote({
      parentNoteId: W.guide,
      title: "The True Name of the Coast",
      type: "image",
      mime: "image/png",
      content: CHART_PNG,
    }).note.noteId;
    h.core.store.createAttribute({ noteId: secret, type: "label", name: "draft", value: "" });
    h.core.store.patchNote(W.guideGmOnly, { title: "The Coast Beneath" });
    h.core.store.createAttribute({
      noteId: W.guide,
      type: "relation",
      name: "shareCard",
      value: secret,
    });
    const after = await card();
    assert.equal(after.path, before.path);
    assert.deepEqual(after.bytes, before.bytes);
    // while the visible name drawn is another, so is the card (and the old one is gone)
    h.core.store.patchNote(W.guide, { title: "Guide to the Coast" });
    const renamed = await card();
    assert.notEqual(renamed.path, before.path);
    assert.notDeepEqual(renamed.bytes, before.bytes);
    const old = await h.request(before.path);
    assert.equal(old.status, 404);
    await old.body?.cancel();
  }, { env: { PUBLIC_CACHE_MS: "0" } }));

Deno.test("site images: ~shareCard on the share root names the world's card", () =>
  withHarness(async (h) => {
    seedShowcase(h.core.store);
    h.core.store.createAttribute({
      noteId: W.guide,
      type: "relation",
      name: "shareCard",
      value: LANDSCAPE_ID,
    });
    for (const path of ["/", "/public/timeline", `/public/lore/${HARBOR_ALIAS}`]) {
      const html = await page(h, path);
      assert.match(meta(html, "og:image") ?? "", /\/api\/public\/images\/wImgLandsc01\/[^/]+$/);
      assert.equal(meta(html, "og:image:width"), "1200", path);
      assert.equal(meta(html, "og:image:height"), "600", path);
      assert.equal(meta(html, "twitter:card"), "summary_large_image", path);
    }
  }));

Deno.test("site images: a map page is described by its own note", () =>
  withHarness(async (h) => {
    seedShowcase(h.core.store);
    const map = await page(h, `/public/maps/${W.locChart}`);
    const home = await page(h, "/");
    assert.equal(meta(map, "og:description"), "The pilots&#39; chart of the coast.");
    assert.match(map, /<meta name="description" content="The pilots&#39; chart of the coast.">/);
    assert.notEqual(meta(home, "og:description"), meta(map, "og:description"));
    // every page's description is its own, not the world's
    const world = meta(home, "description");
    for (const path of PAGES.filter((p) => p !== "/")) {
      assert.notEqual(meta(await page(h, path), "description"), world, path);
    }
  }));
