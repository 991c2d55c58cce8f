import assert from "node:assert/strict";
import { coreNote } from "../../tests/helpers/core_notes.ts";
import { callerQueryError, createCoreClient, mapCoreError } from "./core.ts";
import { sha256Hex } from "../util/sha256.ts";

const body = (status: number, code: string) =>
  JSON.stringify({ status, code, message: `Note 'x' secret detail` });

Deno.test("mapCoreError: 404 stays 404 with our own message, never Core's text", () => {
  const e = mapCoreError(404, body(404, "NOTE_NOT_FOUND"), new Headers());
  assert.equal(e.status, 404);
  assert.equal(e.message, "Note not found");
  assert.deepEqual(e.details, { service: "core", upstreamCode: "NOTE_NOT_FOUND" });
});

Deno.test("mapCoreError: every Core status to our error table", () => {
  const cases: [number, string, number, string][] = [
    [401, "NOT_AUTHENTICATED", 401, "UNAUTHORIZED"],
    [403, "", 403, "UPSTREAM_FORBIDDEN"],
    [400, "NOTE_IS_PROTECTED", 403, "FORBIDDEN"],
    [400, "PROPERTY_NOT_ALLOWED", 400, "UPSTREAM_REJECTED"],
    [409, "", 409, "CONFLICT"],
    [422, "", 422, "UPSTREAM_REJECTED"],
    [500, "GENERIC", 502, "UPSTREAM_ERROR"],
    [503, "", 502, "UPSTREAM_ERROR"],
  ];
  for (const [status, code, want, wantCode] of cases) {
    const e = mapCoreError(
      status,
      code ? body(status, code) : "<html>proxy error</html>",
      new Headers(),
    );
    assert.equal(e.status, want, `${status} ${code}`);
    assert.equal(e.code, wantCode);
    assert.ok(!e.message.includes("secret detail"));
  }
});

Deno.test("mapCoreError: 429 keeps a numeric Retry-After, else 60", () => {
  const e = mapCoreError(429, "Too many requests", new Headers({ "retry-after": "12" }));
  assert.equal(e.status, 429);
  assert.equal(new Headers(e.headers).get("retry-after"), "12");
  const e2 = mapCoreError(
    429,
    "",
    new Headers({ "retry-after": "Wed, 21 Oct 2015 07:28:00 GMT<script>" }),
  );
  assert.equal(new Headers(e2.headers).get("retry-after"), "60");
});

Deno.test("mapCoreError: a code that is not code-shaped is not echoed", () => {
  const e = mapCoreError(400, JSON.stringify({ code: "<img src=x>" }), new Headers());
  assert.equal(e.message, "Core rejected the request");
});

Deno.test("callerQueryError: only Core's query failures, as 400 without Core's text", () => {
  const generic = (message: string) => JSON.stringify({ status: 500, code: "GENERIC", message });
  const regex = callerQueryError(500, generic("Invalid regular expression: /[/ms: secret detail"));
  assert.equal(regex?.status, 400);
  assert.equal(regex?.code, "INVALID_REQUEST");
  assert.ok(!JSON.stringify([regex?.message, regex?.details]).includes("secret detail"));
  const blank = callerQueryError(
    500,
    generic("Invalid tokens: empty or whitespace-only tokens are not allowed"),
  );
  assert.match(blank?.message ?? "", /empty quoted search term/);
  for (
    const [status, body] of [
      [500, generic("Can't find note path for note x")],
      [500, "Invalid regular expression (not Core's JSON)"],
      [400, generic("Invalid regular expression: /[/")],
      [500, JSON.stringify({ code: "METRICS_ERROR", message: "Invalid regular expression" })],
    ] as const
  ) {
    assert.equal(callerQueryError(status, body), undefined, body);
  }
});

// ---- titles ------------------------------------------------------------------------------------

/** A client against a stand-in Core that stores titles as sent and records each request. */
function titleClient(stored: Map<string, string>) {
  const sent: { method: string; path: string; body: unknown }[] = [];
  const core = createCoreClient({ baseUrl: "http://core:8080", token: "t" }, {
    timeoutMs: 15_000,
    fetch: (input, init) => Promise.resolve(answer(new URL(String(input)), init)),
  });
  /** What the stand-in Core answers (and stores) for one request. */
  function answer(url: URL, init: RequestInit | undefined): Response {
    const method = init?.method ?? "GET";
    const body = init?.body ? JSON.parse(String(init.body)) : undefined;
    sent.push({ method, path: url.pathname, body });
    const path = url.pathname;
    if (path === "/etapi/create-note") {
      stored.set("new1", body.title);
      return Response.json({
        note: coreNote("new1", { title: body.title }),
        branch: { branchId: "p_new1", noteId: "new1", parentNoteId: "p", notePosition: 10 },
      }, { status: 201 });
    }
    if (path === "/etapi/notes" && url.searchParams.has("search")) {
      const results = [...stored].map(([id, title]) =>
        coreNote(id, { title, isProtected: id === "locked" })
      );
      return new Response(JSON.stringify({ results }));
    }
    const id = path.split("/")[3];
    if (method === "PATCH" && body.title !== undefined) stored.set(id, body.title);
    if (path.endsWith("/revisions")) {
      return Response.json([{
        revisionId: "r1",
        noteId: id,
        type: "text",
        mime: "text/html",
        isProtected: false,
        title: stored.get(id),
      }]);
    }
    if (path.endsWith("/attachments")) {
      return Response.json([{
        attachmentId: "a1",
        ownerId: id,
        role: "image",
        mime: "image/png",
        title: "Tom &amp; Jerry.png",
      }]);
    }
    return Response.json(coreNote(id, { title: stored.get(id)! }));
  }
  return { core, sent };
}

Deno.test("titles: Core's stored HTML is decoded once where notes, revisions, attachments enter", async () => {
  const stored = new Map([
    ["n1", "Salt &amp; Smoke &lt;Tide&gt;"],
    ["n2", "<b>Ash</b> &amp; Ember"],
    ["n3", "Harbor"],
    ["literal", "Tom &amp;amp; Jerry"],
    ["locked", "U2FsdGVk&lt;cipher"],
  ]);
  const { core } = titleClient(stored);
  assert.equal((await core.getNote("n1")).title, "Salt & Smoke <Tide>");
  assert.equal((await core.getNote("n2")).title, "Ash & Ember", "a kept tag reduced to its text");
  assert.equal((await core.getNote("literal")).title, "Tom &amp; Jerry", "decoded once only");
  assert.deepEqual((await core.search("#lore")).map((n) => n.title), [
    "Salt & Smoke <Tide>",
    "Ash & Ember",
    "Harbor",
    "Tom &amp; Jerry",
    "[protected]",
  ]);
  assert.equal((await core.revisions("n1"))[0].title, "Salt & Smoke <Tide>");
  assert.equal((await core.attachments("n1"))[0].title, "Tom & Jerry.png");
});

Deno.test("titles: a list with a title decoded is never passed on as Core's text", async () => {
  const plain = titleClient(new Map([["n3", "Harbor"]])).core;
  const untouched = await plain.listCallerQuery("#lore");
  assert.equal(untouched.resultsJson, JSON.stringify([coreNote("n3", { title: "Harbor" })]));
  const escaped = titleClient(new Map([["n3", "Harbor"], ["n1", "A &amp; B"]])).core;
  const decoded = await escaped.listCallerQuery("#lore");
  assert.equal(decoded.resultsJson, null);
  assert.deepEqual(decoded.results.map((n) => n.title), ["Harbor", "A & B"]);
});

Deno.test("titles: create and rename send create-note's stored form; a round trip is stable", async () => {
  const stored = new Map<string, string>();
  const { core, sent } = titleClient(stored);
  const created = await core.createNote({
    parentNoteId: "p",
    title: "Salt & Smoke <Tide>",
    type: "text",
    content: "",
  });
  assert.equal(created.note.title, "Salt & Smoke <Tide>");
  assert.equal(stored.get("new1"), "Salt &amp; Smoke &lt;Tide&gt;");
  const read = await core.getNote("new1");
  const renamed = await core.patchNote("new1", { title: read.title });
  assert.equal(renamed.title, "Salt & Smoke <Tide>");
  assert.equal(stored.get("new1"), "Salt &amp; Smoke &lt;Tide&gt;", "the same bytes as create");
  await core.patchNote("new1", { title: "Tom &amp; Jerry" });
  assert.equal(stored.get("new1"), "Tom &amp;amp; Jerry");
  assert.equal((await core.getNote("new1")).title, "Tom &amp; Jerry");
  await core.patchNote("new1", { type: "code" });
  assert.deepEqual(sent.at(-1)?.body, { type: "code" }, "no title: none sent");
});

Deno.test("searchUnlessSame: the answer read before goes unparsed; any other is parsed and checked", async () => {
  let body = JSON.stringify({ results: [coreNote("n1", { title: "Harbor" })] });
  const core = createCoreClient({ baseUrl: "http://core:8080", token: "t" }, {
    timeoutMs: 15_000,
    fetch: () => Promise.resolve(new Response(body)),
  });
  const first = await core.searchUnlessSame("note.noteId != ''", { ancestorNoteId: "root" });
  assert.deepEqual(first.results?.map((n) => n.title), ["Harbor"]);
  assert.equal(first.digest, await sha256Hex(body));
  // the same bytes again: not even parsed, so what they say no longer matters
  assert.deepEqual(
    await core.searchUnlessSame("note.noteId != ''", {}, first.digest),
    { results: null, digest: first.digest },
  );
  // other bytes are read as any answer: a changed note, or a 502 for a body of the wrong shape
  body = JSON.stringify({ results: [coreNote("n1", { title: "Harbour" })] });
  const changed = await core.searchUnlessSame("note.noteId != ''", {}, first.digest);
  assert.deepEqual(changed.results?.map((n) => n.title), ["Harbour"]);
  assert.notEqual(changed.digest, first.digest);
  body = '{"results": "not a list"}';
  await assert.rejects(core.searchUnlessSame("note.noteId != ''", {}, first.digest), {
    status: 502,
    message: "Core sent an unexpected response",
  });
});
