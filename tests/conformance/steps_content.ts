/**
 * Conformance steps: note content (round trip, sanitized previews), revisions, images (upload,
 * read, portrait) and maps (upload, read with pins).
 *
 * @module
 */
import { z } from "zod";
import { snapshotRevision } from "./core_direct.ts";
import {
  attributeSchema,
  check,
  expectStatus,
  factOf,
  noteOf,
  readLore,
  same,
  type Step,
  type SuiteState,
  TEST_JPEG_BASE64,
  TEST_PNG,
  TEST_PNG_BASE64,
  TEST_PNG_SIZE,
} from "./kit.ts";

const MISSING_ID = "zzConformanceMissing2";

/** Content the previews are checked against: a script, a GM-only part and a visible part. */
const PREVIEW_SOURCE = "<p>Visible part.</p><script>alert(1)</script>" +
  '<p class="gm-only">Hidden from players.</p><p onclick="alert(2)">Clickable?</p>';

const FIRST_CONTENT = "<p>The lighthouse burned <b>twice</b>.</p>";

const uploadSchema = z.object({
  url: z.string(),
  noteId: z.string(),
  mime: z.string(),
  width: z.number().nullable(),
  height: z.number().nullable(),
});

const revisionsSchema = z.object({
  revisions: z.array(z.looseObject({
    revisionId: z.string(),
    noteId: z.string(),
    utcDateCreated: z.string(),
  })),
});

const mapSchema = z.object({
  noteId: z.string(),
  title: z.string(),
  image: z.object({ noteId: z.string(), url: z.string() }).nullable(),
  width: z.number().nullable(),
  height: z.number().nullable(),
  pins: z.array(z.object({
    noteId: z.string(),
    title: z.string(),
    loreType: z.string().nullable(),
    x: z.number(),
    y: z.number(),
  })),
  invalidPins: z.array(z.object({ noteId: z.string(), title: z.string(), value: z.string() })),
});

const mapUploadSchema = z.object({
  noteId: z.string(),
  imageNoteId: z.string(),
  url: z.string(),
  width: z.number().nullable(),
  height: z.number().nullable(),
});

function sandboxed(headers: Headers, what: string): void {
  const csp = headers.get("content-security-policy") ?? "";
  check(csp.includes("sandbox"), `${what} is served without a sandbox CSP`);
}

/** Reads an image route and checks it answers exactly the test PNG. */
async function expectTestPng(s: SuiteState, path: string): Promise<Headers> {
  const a = await s.api.call("GET", path);
  expectStatus(a, 200, `GET ${path}`);
  same(a.headers.get("content-type"), "image/png", `type of ${path}`);
  check(
    a.bytes.length === TEST_PNG.length && a.bytes.every((b, i) => b === TEST_PNG[i]),
    `${path} did not return the uploaded bytes (${a.bytes.length} bytes)`,
  );
  return a.headers;
}

/**
 * Puts a note's content to one pasted image (a `data:` URI) and returns the id of the image
 * attachment Core made of it, read from the rewritten content.
 */
async function pasteImage(s: SuiteState, role: string, mime: string, base64: string) {
  const note = noteOf(s, role);
  // Core re-reads the note 5 s after storing the image: the clean-up must wait for that
  s.keepUntil = Date.now() + s.pasteSettleMs;
  const html = `<p>Pasted: <img src="data:${mime};base64,${base64}"></p>`;
  const put = await s.api.call("PUT", `/api/lore/${note.noteId}/content`, { text: html });
  same(put.status, 204, `content PUT with a pasted ${mime}`);
  const stored = (await s.api.call("GET", `/api/lore/${note.noteId}/content`)).text;
  const id = /api\/attachments\/([A-Za-z0-9_]+)\/image\//.exec(stored)?.[1];
  check(id, `Core did not turn the pasted ${mime} into an attachment: ${stored.slice(0, 60)}`);
  return id;
}

/** The steps of this module, in run order. */
export const contentSteps: Step[] = [
  {
    method: "PUT",
    path: "/api/lore/:id/content",
    check: "204 with no body, as text/plain or text/html (the portal's); JSON 415; unknown 404",
    run: async (s) => {
      const a = noteOf(s, "A");
      const html = await s.api.call("PUT", `/api/lore/${a.noteId}/content`, {
        text: "<p>draft</p>",
        headers: { "content-type": "text/html" },
      });
      same([html.status, html.text], [204, ""], "PUT answer (text/html)");
      const put = await s.api.call("PUT", `/api/lore/${a.noteId}/content`, { text: FIRST_CONTENT });
      same([put.status, put.text], [204, ""], "PUT answer");
      await s.api.error("PUT", `/api/lore/${a.noteId}/content`, 415, "UNSUPPORTED_MEDIA_TYPE", {
        text: "<p>x</p>",
        headers: { "content-type": "application/json" },
      });
      await s.api.error("PUT", `/api/lore/${MISSING_ID}/content`, 404, "NOT_FOUND", { text: "x" });
    },
  },
  {
    method: "GET",
    path: "/api/lore/:id/content",
    check: "PUT content reads back byte for byte, sandboxed; unknown 404",
    run: async (s) => {
      const a = noteOf(s, "A");
      const got = await s.api.call("GET", `/api/lore/${a.noteId}/content`);
      expectStatus(got, 200, "content GET");
      same(got.text, FIRST_CONTENT, "content read back");
      check(got.headers.get("content-type")?.startsWith("text/html"), "content type is not HTML");
      sandboxed(got.headers, "raw content");
      await s.api.error("GET", `/api/lore/${MISSING_ID}/content`, 404, "NOT_FOUND");
    },
  },
  {
    method: "GET",
    path: "/api/lore/:id/revisions",
    check: "a snapshot is listed, newest first, for this note only; unknown 404",
    run: async (s) => {
      const a = noteOf(s, "A");
      // Core snapshots by itself only on notes older than 10 minutes: ask for one directly.
      await snapshotRevision(s.core, a.noteId);
      const put = await s.api.call("PUT", `/api/lore/${a.noteId}/content`, {
        text: PREVIEW_SOURCE,
      });
      same(put.status, 204, "second content PUT");
      const { revisions } = await s.api.json(
        "GET",
        `/api/lore/${a.noteId}/revisions`,
        200,
        revisionsSchema,
      );
      check(revisions.length >= 1, "no revision listed");
      check(revisions.every((r) => r.noteId === a.noteId), "a revision of another note is listed");
      const dates = revisions.map((r) => r.utcDateCreated);
      same(dates, [...dates].sort().reverse(), "revision order (newest first)");
      s.facts.set("revision", revisions[0].revisionId);
      await s.api.error("GET", `/api/lore/${MISSING_ID}/revisions`, 404, "NOT_FOUND");
    },
  },
  {
    method: "GET",
    path: "/api/lore/:id/revisions/:revId/content",
    check: "the snapshot holds the content before the change; other note's 404",
    run: async (s) => {
      const a = noteOf(s, "A");
      const b = noteOf(s, "B");
      const rev = factOf(s, "revision");
      const got = await s.api.call("GET", `/api/lore/${a.noteId}/revisions/${rev}/content`);
      expectStatus(got, 200, "revision content");
      same(got.text, FIRST_CONTENT, "revision content");
      sandboxed(got.headers, "revision content");
      await s.api.error("GET", `/api/lore/${b.noteId}/revisions/${rev}/content`, 404, "NOT_FOUND");
      await s.api.error(
        "GET",
        `/api/lore/${a.noteId}/revisions/${MISSING_ID}/content`,
        404,
        "NOT_FOUND",
      );
    },
  },
  {
    method: "GET",
    path: "/api/lore/:id/preview",
    check: "script and handlers removed; gm shows the GM part, player hides it; ETag 304",
    run: async (s) => {
      const a = noteOf(s, "A");
      const gm = await s.api.call("GET", `/api/lore/${a.noteId}/preview`);
      expectStatus(gm, 200, "gm preview");
      check(gm.headers.get("content-type")?.startsWith("text/html"), "preview is not HTML");
      sandboxed(gm.headers, "the preview");
      check(gm.text.includes("Visible part."), "gm preview lost the visible part");
      check(gm.text.includes("Hidden from players."), "gm preview lost the GM-only part");
      check(gm.text.includes("Clickable?"), "gm preview lost a paragraph");
      check(!/<script|onclick|alert\(/i.test(gm.text), "gm preview keeps script or handlers");
      const player = await s.api.call("GET", `/api/lore/${a.noteId}/preview?mode=player`);
      expectStatus(player, 200, "player preview");
      check(player.text.includes("Visible part."), "player preview lost the visible part");
      check(!player.text.includes("Hidden from players."), "player preview shows the GM-only part");
      const etag = gm.headers.get("etag");
      check(etag, "the preview has no ETag");
      const again = await s.api.call("GET", `/api/lore/${a.noteId}/preview`, {
        headers: { "if-none-match": etag },
      });
      same(again.status, 304, "revalidated preview");
      await s.api.error("GET", `/api/lore/${a.noteId}/preview?mode=nope`, 400, "INVALID_REQUEST");
      await s.api.error("GET", `/api/lore/${MISSING_ID}/preview`, 404, "NOT_FOUND");
    },
  },
  {
    method: "POST",
    path: "/api/lore/upload-image",
    check: "PNG becomes an image note under the given parent, size read; non-image 415",
    run: async (s) => {
      const guide = noteOf(s, "guide");
      const up = await s.api.json(
        "POST",
        `/api/lore/upload-image?parentNoteId=${guide.noteId}`,
        201,
        uploadSchema,
        { bytes: TEST_PNG, headers: { "x-host-filename": `crest-${s.tag}.png` } },
      );
      same(
        [up.mime, up.width, up.height],
        ["image/png", TEST_PNG_SIZE.width, TEST_PNG_SIZE.height],
        "upload answer",
      );
      same(up.url, `/api/images/${up.noteId}/crest-${s.tag}.png`, "image url");
      s.facts.set("image", up.noteId);
      // the portrait picker asks for Core's note type `image`
      const picked = await s.api.json(
        "GET",
        `/api/lore/note-search?q=crest-${s.tag}&type=image`,
        200,
        z.array(z.looseObject({ noteId: z.string(), type: z.string() })),
      );
      same(
        picked.map((p) => [p.noteId, p.type]),
        [[up.noteId, "image"]],
        "image notes picked by title",
      );
      const note = await readLore(s, up.noteId);
      same([note.type, note.parentNoteIds], ["image", [guide.noteId]], "the image note");
      check(note.title.includes(s.tag), `image title "${note.title}" lost the file name`);
      const before = (await readLore(s, guide.noteId)).childNoteIds.length;
      await s.api.error(
        "POST",
        `/api/lore/upload-image?parentNoteId=${guide.noteId}`,
        415,
        "UNSUPPORTED_MEDIA_TYPE",
        {
          bytes: new TextEncoder().encode("not an image at all"),
          headers: { "x-host-filename": `fake-${s.tag}.png` },
        },
      );
      same(
        (await readLore(s, guide.noteId)).childNoteIds.length,
        before,
        "children after a refused upload",
      );
      // the portal names the file in x-vercel-filename
      const dflt = await s.api.json("POST", "/api/lore/upload-image", 201, uploadSchema, {
        bytes: TEST_PNG,
        headers: { "x-vercel-filename": `loose-${s.tag}.png` },
      });
      const loose = await readLore(s, dflt.noteId);
      same(loose.parentNoteIds, [s.scratch.noteId], "default parent");
      same(loose.title, `loose-${s.tag}.png`, "title from x-vercel-filename");
    },
  },
  {
    method: "GET",
    path: "/api/lore/:id/image",
    check: "the uploaded bytes, private 1-day cache, ETag 304; a text note 404",
    run: async (s) => {
      const image = factOf(s, "image");
      const headers = await expectTestPng(s, `/api/lore/${image}/image`);
      same(headers.get("cache-control"), "private, max-age=86400", "cache-control");
      const etag = headers.get("etag");
      if (etag) {
        const again = await s.api.call("GET", `/api/lore/${image}/image`, {
          headers: { "if-none-match": etag },
        });
        same(again.status, 304, "revalidated image");
      }
      await s.api.error("GET", `/api/lore/${noteOf(s, "A").noteId}/image`, 404, "NOT_FOUND");
      await s.api.error("GET", `/api/lore/${MISSING_ID}/image`, 404, "NOT_FOUND");
      const redirect = await s.api.call("GET", `/api/images/${image}/crest.png`);
      same(
        [redirect.status, redirect.headers.get("location")],
        [301, `/api/lore/${image}/image`],
        "editor image URL",
      );
    },
  },
  {
    method: "PUT",
    path: "/api/lore/:id/content",
    check: "an image note's binary content is refused 409 and left intact",
    run: async (s) => {
      const image = factOf(s, "image");
      await s.api.error("PUT", `/api/lore/${image}/content`, 409, "CONFLICT", { text: "oops" });
      await expectTestPng(s, `/api/lore/${image}/image`);
    },
  },
  {
    method: "POST",
    path: "/api/lore/:id/attributes",
    check: "~portraitImage shows as the note's portrait, not among its relations",
    run: async (s) => {
      const a = noteOf(s, "A");
      const image = factOf(s, "image");
      await s.api.json("POST", `/api/lore/${a.noteId}/attributes`, 201, attributeSchema, {
        json: { type: "relation", name: "portraitImage", value: image },
      });
      const note = await readLore(s, a.noteId);
      same(note.portraitImageNoteId, image, "portraitImageNoteId");
      same(
        note.resolvedRelations.filter((r) => r.targetNoteId === image),
        [],
        "the portrait among resolvedRelations",
      );
    },
  },
  {
    method: "GET",
    path: "/api/lore/:id/content",
    check: "an image saved as /api/images/… is read back so, and previews point there",
    run: async (s) => {
      const a = noteOf(s, "A");
      const image = factOf(s, "image");
      // what the portal's editor saves: the rooted form content and uploads give it
      const src = `/api/images/${image}/crest.png`;
      const put = await s.api.call("PUT", `/api/lore/${a.noteId}/content`, {
        text: `<p>Crest</p><p><img src="${src}"></p>`,
        headers: { "content-type": "text/html" },
      });
      same(put.status, 204, "content PUT with an image");
      const got = await s.api.call("GET", `/api/lore/${a.noteId}/content`);
      check(got.text.includes(`src="${src}"`), `content lost the image: ${got.text}`);
      for (const mode of ["gm", "player"]) {
        const preview = await s.api.call("GET", `/api/lore/${a.noteId}/preview?mode=${mode}`);
        check(preview.text.includes(`src="${src}"`), `${mode} preview: ${preview.text}`);
      }
      const put2 = await s.api.call("PUT", `/api/lore/${a.noteId}/content`, {
        text: PREVIEW_SOURCE,
      });
      same(put2.status, 204, "content put back");
    },
  },
  {
    method: "GET",
    path: "/api/lore/:id/map",
    check: "before upload: no image or size; valid pin and invalid pin reported",
    run: async (s) => {
      const map = noteOf(s, "map");
      const pin = noteOf(s, "pin");
      const bad = noteOf(s, "badPin");
      const view = await s.api.json("GET", `/api/lore/${map.noteId}/map`, 200, mapSchema);
      same([view.noteId, view.title, view.image, view.width, view.height], [
        map.noteId,
        map.title,
        null,
        null,
        null,
      ], "map");
      same(
        view.pins,
        [{ noteId: pin.noteId, title: pin.title, loreType: null, x: 10, y: 20 }],
        "pins",
      );
      same(
        view.invalidPins,
        [{ noteId: bad.noteId, title: bad.title, value: "nowhere" }],
        "invalid pins",
      );
      await s.api.error("GET", `/api/lore/${MISSING_ID}/map`, 404, "NOT_FOUND");
    },
  },
  {
    method: "POST",
    path: "/api/lore/:id/map/upload",
    check: "image note under the map, size from the file; unknown map 404",
    run: async (s) => {
      const map = noteOf(s, "map");
      const up = await s.api.json(
        "POST",
        `/api/lore/${map.noteId}/map/upload`,
        201,
        mapUploadSchema,
        {
          bytes: TEST_PNG,
          headers: { "x-host-filename": `chart-${s.tag}.png` },
        },
      );
      same([up.noteId, up.width, up.height], [
        map.noteId,
        TEST_PNG_SIZE.width,
        TEST_PNG_SIZE.height,
      ], "upload answer");
      same(up.url, `/api/lore/${up.imageNoteId}/image`, "image url");
      s.facts.set("mapImage", up.imageNoteId);
      same(
        (await readLore(s, up.imageNoteId)).parentNoteIds,
        [map.noteId],
        "parent of the map image",
      );
      await s.api.error("POST", `/api/lore/${MISSING_ID}/map/upload`, 404, "NOT_FOUND", {
        bytes: TEST_PNG,
        headers: { "x-host-filename": `none-${s.tag}.png` },
      });
    },
  },
  {
    method: "GET",
    path: "/api/lore/:id/map",
    check: "after upload: the new image and its size; pins unchanged; image readable",
    run: async (s) => {
      const map = noteOf(s, "map");
      const image = factOf(s, "mapImage");
      const view = await s.api.json("GET", `/api/lore/${map.noteId}/map`, 200, mapSchema);
      same(view.image, { noteId: image, url: `/api/lore/${image}/image` }, "map image");
      same([view.width, view.height], [TEST_PNG_SIZE.width, TEST_PNG_SIZE.height], "map size");
      same(view.pins.map((p) => p.noteId), [noteOf(s, "pin").noteId], "pins");
      await expectTestPng(s, view.image!.url);
    },
  },
  {
    method: "GET",
    path: "/api/attachments/:attachmentId/image/:filename",
    check: "pasted PNG and JPEG become attachments; bytes, types, private cache, ETag 304",
    run: async (s) => {
      // One image per note: Core converts only the first pasted image of a save at once (the
      // rest about 5 s later, when its image service re-reads the note).
      const id = await pasteImage(s, "E1", "image/png", TEST_PNG_BASE64);
      const jpegId = await pasteImage(s, "E2", "image/jpeg", TEST_JPEG_BASE64);
      const headers = await expectTestPng(s, `/api/attachments/${id}/image/pasted.png`);
      // Core declares pasted JPEGs as `image/jpg`; browsers are given the registered name
      const jpeg = await s.api.call("GET", `/api/attachments/${jpegId}/image/pasted.jpg`);
      expectStatus(jpeg, 200, "pasted JPEG");
      same(jpeg.headers.get("content-type"), "image/jpeg", "type of the pasted JPEG");
      same(btoa(String.fromCharCode(...jpeg.bytes)), TEST_JPEG_BASE64, "bytes of the pasted JPEG");
      same(headers.get("cache-control"), "private, max-age=86400", "cache-control");
      const etag = headers.get("etag");
      check(etag, "the attachment image has no ETag");
      const again = await s.api.call("GET", `/api/attachments/${id}/image/pasted.png`, {
        headers: { "if-none-match": etag },
      });
      same(again.status, 304, "revalidated attachment image");
      await s.api.error("GET", `/api/attachments/${MISSING_ID}/image/x.png`, 404, "NOT_FOUND");
    },
  },
];
