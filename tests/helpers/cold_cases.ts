/**
 * Requests that need the HTML engine, each meant to be the first one a fresh process serves
 * (tests/routes/cold_html_engine_test.ts runs each in its own worker): the request itself must
 * load the engine and come back sanitized exactly as later ones do.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Harness, HarnessOptions } from "./harness.ts";
import { W } from "../../sims/world.ts";

/** One first request and what its answer must show. */
export interface ColdCase {
  harness?: HarnessOptions;
  run(h: Harness): Promise<void>;
}

const XSS = '<p onclick="steal()">Hi<script>alert(1)</script></p>' +
  '<a href="javascript:alert(2)">x</a><p class="gm-only">GM whisper</p>';

const PARSER = { parser: true, parserSession: true, env: { LORE_ROOT_NOTE_ID: W.loreRoot } };

async function text(h: Harness, path: string, init?: RequestInit & { json?: unknown }) {
  const res = await h.request(path, init);
  return { status: res.status, body: await res.text() };
}

/** The Parser request to `path` the service sent, its JSON body parsed. */
function sentTo(h: Harness, path: string) {
  const sent = h.parser!.requests.find((r) => r.path === path);
  assert.ok(sent, `nothing sent to ${path}`);
  return JSON.parse(sent.bodyText!);
}

/** A text note with {@linkcode XSS} as content under `parentNoteId`. */
function xssNote(h: Harness, parentNoteId: string): string {
  const { note } = h.core.store.createNote({
    parentNoteId,
    title: "Tide table",
    type: "text",
    content: XSS,
  });
  return note.noteId;
}

/**
 * The cases by name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.ok("public note page" in COLD_CASES);
 * ```
 */
export const COLD_CASES: Readonly<Record<string, ColdCase>> = {
  "public note page": {
    run: async (h) => {
      const page = await text(h, `/public/lore/${xssNote(h, W.guide)}`);
      assert.equal(page.status, 200);
      assert.match(page.body, /<p>Hi<\/p>/);
      // the page's one script is the site's own theme switch, from our origin
      const scripts = page.body.match(/<script\b[^>]*>/g) ?? [];
      assert.deepEqual(scripts.map((t) => /src="\/public\/theme\.js\?v=[\w-]+"/.test(t)), [true]);
      assert.doesNotMatch(page.body, /onclick|javascript:|GM whisper/);
    },
  },
  "public page of an image note": {
    run: async (h) => {
      const page = await text(h, `/public/lore/${W.imgChart}`);
      assert.equal(page.status, 200);
      assert.match(page.body, new RegExp(`<img src="/api/public/images/${W.imgChart}/`));
    },
  },
  "public note API": {
    run: async (h) => {
      const res = await h.requestJson<{ contentHtml: string }>(`/api/public/lore/${W.charMira}`);
      assert.equal(res.status, 200);
      assert.match(res.body.contentHtml, /She trusts/);
      assert.doesNotMatch(res.body.contentHtml, /mother still lives|gm-only/);
    },
  },
  "public search": {
    run: async (h) => {
      const found = await h.requestJson<{ results: { id: string }[] }>(
        "/api/public/search?q=copper%20fathom",
      );
      assert.equal(found.status, 200);
      assert.deepEqual(found.body.results.map((r) => r.id), [W.charMira]);
      const secret = await h.requestJson("/api/public/search?q=mother");
      assert.deepEqual(secret.body, { results: [] }, "gm-only words are not searchable");
    },
  },
  "gm preview": {
    run: async (h) => {
      const preview = await text(h, `/api/lore/${xssNote(h, W.loreRoot)}/preview`);
      assert.equal(preview.status, 200);
      assert.equal(preview.body, '<p>Hi</p><a>x</a><p class="gm-only">GM whisper</p>');
    },
  },
  "player preview": {
    run: async (h) => {
      const preview = await text(h, `/api/lore/${xssNote(h, W.loreRoot)}/preview?mode=player`);
      assert.equal(preview.status, 200);
      assert.equal(preview.body, "<p>Hi</p><a>x</a>");
    },
  },
  "lore note whose stored title holds markup": {
    run: async (h) => {
      const { note } = h.core.store.createNote(
        { parentNoteId: W.loreRoot, title: "<b>Salt</b> &amp; Smoke", type: "text", content: "" },
        { rawTitle: true },
      );
      const res = await h.requestJson<{ title: string }>(`/api/lore/${note.noteId}`);
      assert.equal(res.status, 200);
      assert.equal(res.body.title, "Salt & Smoke", "the title reduced to its text");
    },
  },
  "graph node whose stored title holds markup (relayed by the Parser)": {
    harness: PARSER,
    run: async (h) => {
      const { note } = h.core.store.createNote(
        { parentNoteId: W.loreRoot, title: "<b>Salt</b> &amp; Smoke", type: "text", content: "" },
        { rawTitle: true },
      );
      const res = await h.requestJson<{ nodes: { title: string }[] }>(
        `/api/lore/${note.noteId}/graph`,
      );
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.nodes.map((n) => n.title), ["Salt & Smoke"]);
    },
  },
  "brain dump review": {
    harness: PARSER,
    run: async (h) => {
      h.parser!.fault({
        path: "/brain-dump",
        status: 200,
        times: 1,
        body: JSON.stringify({
          mode: "review",
          summary: "s",
          proposedEntities: [{ title: "Evil", type: "character", action: "create", content: XSS }],
        }),
      });
      const review = await h.requestJson<{ proposedEntities: { content: string }[] }>(
        "/api/brain-dump",
        { method: "POST", json: { rawText: "Evil lurks in the harbor.", mode: "review" } },
      );
      assert.equal(review.status, 200);
      assert.equal(
        review.body.proposedEntities[0].content,
        '<p>Hi</p><a>x</a><p class="gm-only">GM whisper</p>',
      );
    },
  },
  "brain dump commit": {
    harness: PARSER,
    run: async (h) => {
      const res = await h.request("/api/brain-dump/commit", {
        method: "POST",
        json: {
          rawText: "reviewed",
          approvedEntities: [{
            title: "Ila Thorn",
            type: "character",
            action: "create",
            content: XSS,
          }],
        },
      });
      await res.body?.cancel();
      assert.equal(res.status, 200);
      assert.equal(
        sentTo(h, "/brain-dump/commit").approvedEntities[0].content,
        '<p>Hi</p><a>x</a><p class="gm-only">GM whisper</p>',
      );
    },
  },
  "system pack import": {
    harness: PARSER,
    run: async (h) => {
      const res = await h.request("/api/import/system-pack", {
        method: "POST",
        json: { notes: [{ name: "Reef Drake", content: XSS }] },
      });
      await res.body?.cancel();
      assert.equal(res.status, 200);
      assert.equal(
        sentTo(h, "/import/system-pack").notes[0].content,
        '<p>Hi</p><a>x</a><p class="gm-only">GM whisper</p>',
      );
    },
  },
};
