import assert from "node:assert/strict";
import { coreNote } from "../../tests/helpers/core_notes.ts";
import { ApiError } from "../http/errors.ts";
import { jsonLogger } from "../http/log.ts";
import type { CoreAttribute, CoreClient, CoreNote } from "../upstream/core.ts";
import type { ParserClient } from "../upstream/parser.ts";
import {
  type ArticleScope,
  buildCopilotBody,
  clipHtml,
  COPILOT_CONTEXT_LIMITS,
  linkedNoteIds,
  loadArticleScope,
  noteCtx,
  relatedPassages,
  writableTargetIds,
} from "./copilot_context.ts";

function attr(noteId: string, type: "label" | "relation", name: string, value = ""): CoreAttribute {
  return {
    attributeId: `${noteId}_${name}_${value}`,
    noteId,
    type,
    name,
    value,
    isInheritable: false,
  };
}

function note(noteId: string, over: Partial<CoreNote> = {}, attrs: CoreAttribute[] = []): CoreNote {
  return coreNote(noteId, { parentBranchIds: [], attributes: attrs, ...over });
}

const lore = (id: string, extra: CoreAttribute[] = [], over: Partial<CoreNote> = {}) =>
  note(id, over, [attr(id, "label", "lore"), attr(id, "label", "loreType", "character"), ...extra]);

/** A CoreClient over fixed notes; logs calls and counts those in flight. */
function fakeCore(notes: CoreNote[], contents: Record<string, string>) {
  const byId = new Map(notes.map((n) => [n.noteId, n]));
  let inFlight = 0;
  const stats = { maxInFlight: 0, calls: [] as string[] };
  const track = async <T>(call: string, fn: () => T): Promise<T> => {
    stats.calls.push(call);
    inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, inFlight);
    await new Promise((r) => setTimeout(r, 2));
    inFlight--;
    return fn();
  };
  const missing = () => new ApiError(404, "NOT_FOUND", "Note not found");
  const core = {
    getNote: (id: string) =>
      track(`note ${id}`, () => {
        const n = byId.get(id);
        if (!n) throw missing();
        return n;
      }),
    // Core's search by ids (`note.noteId = "…" or …`), which sees every note here
    search: (query: string) =>
      track(
        `search ${query}`,
        () => [...query.matchAll(/note\.noteId = "([^"]*)"/g)].flatMap((m) => byId.get(m[1]) ?? []),
      ),
    contentText: (id: string) =>
      track(`content ${id}`, () => {
        if (!byId.has(id)) throw missing();
        return contents[id] ?? "";
      }),
  } as unknown as CoreClient;
  return { core, stats };
}

const link = (id: string) => `<a class="reference-link" href="#root/a/${id}">x</a>`;

Deno.test("linkedNoteIds: relations first, then content links; no self, system or structure", () => {
  const n = note("cur", {}, [
    attr("cur", "relation", "relAlly", "ally1"),
    attr("cur", "relation", "template", "_template_character"),
    attr("cur", "relation", "imageLink", "img1"),
    attr("cur", "relation", "internalLink", "linked1"),
    attr("parent", "relation", "relEnemy", "inherited1"), // inherited: not the note's own
  ]);
  const html = `<p>${link("linked1")} ${link("cur")} <a href='#root/x/linked2'>y</a>` +
    `<a href="https://example.com/#root/linked3">z</a> <a href="#root/_hidden">h</a></p>` +
    `<section class="include-note" data-note-id="incl1"></section>`;
  assert.deepEqual(linkedNoteIds(n, html, 12), ["ally1", "linked1", "linked2", "linked3", "incl1"]);
  assert.deepEqual(linkedNoteIds(n, html, 2), ["ally1", "linked1"]);
});

Deno.test("loadArticleScope: bounded parallel loads; missing, protected and binary notes left out", async () => {
  const ids = Array.from({ length: 20 }, (_, i) => `n${i}`);
  const { core, stats } = fakeCore(
    [
      lore("cur", ids.map((id) => attr("cur", "relation", "relRelatedTo", id))),
      ...ids.slice(2).map((id, i) =>
        i === 0
          ? lore(id, [], { isProtected: true })
          : i === 1
          ? note(id, { type: "image", mime: "image/png" })
          : lore(id)
      ),
    ],
    { cur: "<p>Current<script>x()</script></p>", n5: "<p>Five</p>" },
  );
  const scope = await loadArticleScope(core, "cur", { concurrency: 3, linkedContent: true });
  assert.equal(scope.current.contentHtml, "<p>Current</p>", "sanitized");
  // 12 candidates (the limit): n0, n1 missing, n2 protected, n3 image → 8 left
  assert.deepEqual(scope.linked.map((l) => l.note.noteId), [
    "n4",
    "n5",
    "n6",
    "n7",
    "n8",
    "n9",
    "n10",
    "n11",
  ]);
  assert.equal(scope.linked[1].contentHtml, "<p>Five</p>");
  assert.ok(stats.maxInFlight <= 3, `at most 3 calls at once (${stats.maxInFlight})`);
  assert.ok(stats.maxInFlight > 1, "linked notes load in parallel");
  assert.ok(!stats.calls.includes("content n3"), "an image's bytes are never read");
  const searches = stats.calls.filter((c) => c.startsWith("search "));
  assert.equal(searches.length, 1, "the linked notes are read in one search");
  assert.ok(!searches[0].includes('"n12"'), "nothing beyond the limit is loaded");
  // only what the search did not find is read on its own (and is gone)
  assert.deepEqual(stats.calls.filter((c) => c.startsWith("note ")), [
    "note cur",
    "note n0",
    "note n1",
  ]);

  const bare = await loadArticleScope(core, "cur", { concurrency: 3, linkedContent: false });
  assert.ok(bare.linked.every((l) => l.contentHtml === ""));
});

Deno.test("writableTargetIds: the note and its linked lore notes, never system or protected", () => {
  const scope: ArticleScope = {
    current: { note: note("cur"), contentHtml: "" },
    linked: [
      { note: lore("a"), contentHtml: "" },
      { note: note("plain"), contentHtml: "" },
      { note: lore("_hidden"), contentHtml: "" },
      { note: lore("p", [], { isProtected: true }), contentHtml: "" },
    ],
  };
  assert.deepEqual(writableTargetIds(scope), ["cur", "a"]);
  assert.deepEqual(
    writableTargetIds({ ...scope, current: { note: note("_share"), contentHtml: "" } }),
    ["a"],
  );
});

Deno.test("noteCtx: own labels and relations, descriptions from #relationNote", () => {
  const n = lore("cur", [
    attr("cur", "relation", "relAlly", "oskar"),
    attr("cur", "relation", "relMemberOf", "guild"),
    attr("cur", "relation", "internalLink", "oskar"),
    attr("cur", "relation", "template", "_template_character"),
    attr("cur", "label", "relationNote", "ally:oskar: Sailed together"),
    attr("other", "label", "inheritedLabel", "x"),
  ]);
  const ctx = noteCtx({ note: n, contentHtml: "<p>x</p>" });
  assert.equal(ctx.loreType, "character");
  assert.deepEqual(ctx.labels.map((l) => l.name), ["lore", "loreType", "relationNote"]);
  assert.deepEqual(ctx.relations, [
    { name: "relAlly", targetNoteId: "oskar", description: "Sailed together" },
    { name: "relMemberOf", targetNoteId: "guild" },
  ]);
  assert.equal(noteCtx({ note: note("plain"), contentHtml: "" }).loreType, "");
});

function fakeParser(json: (body: unknown) => Promise<unknown>) {
  const sent: unknown[] = [];
  return {
    sent,
    parser: {
      json: (_m: string, _p: string, body: unknown) => {
        sent.push(body);
        return json(body);
      },
    } as unknown as ParserClient,
  };
}

Deno.test("relatedPassages: mapped, bounded, without the current note; failures give none", async () => {
  const lines: string[] = [];
  const log = jsonLogger("debug", (l) => lines.push(l));
  const long = "x".repeat(5000);
  const ok = fakeParser(() =>
    Promise.resolve({
      results: [
        { noteId: "cur", noteTitle: "Self", content: "me", score: 0.9 },
        { noteId: "reef", noteTitle: "The Reef", content: long, score: 0.5 },
      ],
    })
  );
  const got = await relatedPassages(ok.parser, "q".repeat(3000), {
    excludeNoteId: "cur",
    log,
    requestId: "r1",
  });
  assert.deepEqual(got, [{
    noteId: "reef",
    title: "The Reef",
    excerpt: "x".repeat(COPILOT_CONTEXT_LIMITS.ragExcerptChars),
    score: 0.5,
  }]);
  assert.deepEqual(ok.sent, [{
    text: "q".repeat(COPILOT_CONTEXT_LIMITS.ragQueryChars),
    topK: COPILOT_CONTEXT_LIMITS.ragTopK,
  }]);

  for (
    const answer of [
      () => Promise.reject(new ApiError(404, "NOT_FOUND", "Not found in the Parser")),
      () => Promise.resolve({ unexpected: true }),
    ]
  ) {
    const none = await relatedPassages(fakeParser(answer).parser, "q", {
      excludeNoteId: "cur",
      log,
      requestId: "r2",
    });
    assert.deepEqual(none, []);
  }
  assert.equal(lines.filter((l) => l.includes("copilot: related lore unavailable")).length, 2);
  // anything but a Parser error (the client left) is not swallowed
  const boom = fakeParser(() => Promise.reject(new TypeError("client closed")));
  await assert.rejects(
    relatedPassages(boom.parser, "q", { excludeNoteId: "cur", log, requestId: "r3" }),
    TypeError,
  );
});

Deno.test("buildCopilotBody: the contract's body from both sources", async () => {
  const { core } = fakeCore(
    [lore("cur", [attr("cur", "relation", "relAlly", "a")]), lore("a")],
    { cur: `<p>${link("a")}</p>`, a: "<p>A</p>" },
  );
  const { parser } = fakeParser(() => Promise.resolve({ results: [] }));
  const transcript = [
    { role: "user" as const, content: "first" },
    { role: "assistant" as const, content: "answer" },
    { role: "user" as const, content: "second" },
  ];
  const body = await buildCopilotBody(core, parser, { noteId: "cur", transcript }, {
    concurrency: 4,
    log: jsonLogger("silent"),
    requestId: "r",
  });
  assert.equal(body.noteId, "cur");
  assert.ok(!("sessionId" in body));
  assert.deepEqual(body.transcript, transcript);
  assert.deepEqual(body.linkedNotes.map((n) => [n.noteId, n.contentHtml]), [["a", "<p>A</p>"]]);
  assert.deepEqual(body.writableTargetIds, ["cur", "a"]);
  assert.deepEqual(body.ragContext, []);
});

Deno.test("clipHtml: cut before a tag that would be split, then sanitized", async () => {
  assert.equal(await clipHtml("<p>abc</p><p>def</p>", 14), "<p>abc</p><p>d</p>");
  assert.equal(await clipHtml("<p>abc</p><p>def</p>", 12), "<p>abc</p>");
  assert.equal(await clipHtml("<p>ok</p>", 100), "<p>ok</p>");
  assert.equal(await clipHtml("", 10), "");
});
